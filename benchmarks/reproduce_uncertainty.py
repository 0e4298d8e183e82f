"""Rebuild the uncertainty report's VTAB results and simulation study from the repository's
files and the public VTAB-1k leaderboard, and print them beside the published numbers.

"Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine
Learning Benchmarks" (Los Alamos report LA-UR-24-25289, 2024):

1. Table A.3: 83.4% intervals of every model's average accuracy per category and overall,
   three blocks: bootstrap, beta-binomial hierarchical model (posterior predictive),
   bootstrap on normalised accuracy. Input: the leaderboard's ``results.csv`` (per-task
   accuracies, ``--leaderboard``, default ``stats.vtab.LEADERBOARD_CSV``: the bundled
   ``data/vtab1k/leaderboard_results.csv`` or ``$LBE_VTAB_LEADERBOARD``) and ``data/vtab1k/tasks.csv`` (test-set sizes); counts = accuracy x size,
   rounded, as the report does. Published figures: ``data/vtab1k/published_table_a3.csv``.
2. The simulation study of §2.2 (Table 1): 95% intervals of mean_A - mean_B; published
   bootstrap (-0.059, 0.097), hierarchical (-0.021, -0.003).
3. Table 3: the top three models' pairwise differences with Bonferroni over their three
   pairs (bootstrap, hierarchical model, normalised), as ``rank --pairwise --models``.
4. Table A.3's rank intervals (Tables 4 and 5) and Table 11 under the five schemes.
5. The normalised block against the number of replicates of the normalised bootstrap (the
   report does not give it; the bounds are the most extreme replicate of each task).
6. The task-weighting finding of §3.3 (Figs. 3-5): Rotation wins where structured tasks
   weigh most, from bootstrap counts, normalised accuracy and the hierarchical model,
   with rho = 0 and 0.5.

    .venv/bin/python -m benchmarks.reproduce_uncertainty [--leaderboard results.csv] [--boot 2000] [--draws 1000]
        [--chains 4] [--seed 0]

Writes ``benchmarks/results/reproduce_uncertainty.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SCOPES = ("natural", "specialized", "structured", "overall")
PUBLISHED_SIMULATION = {"bootstrap": (-0.059, 0.097), "hierarchical": (-0.021, -0.003)}


def table_a3(path: Path, boot_n: int, chains: int, draws: int, seed: int) -> dict:
    """Ours vs published, per block: one row per model and scope; worst absolute gaps."""
    from lifelong_core.stats import bootstrap, fit_hierarchical, leaderboard, normalize
    from lifelong_core.stats.vtab import counts_from_leaderboard, load_published

    table = counts_from_leaderboard(path)
    boot = bootstrap(table, n_boot=boot_n, seed=seed)
    fit = fit_hierarchical(table, chains=chains, draws=draws, warmup=draws // 2, seed=seed)
    ours = {
        ("bootstrap", False): leaderboard(boot, level=0.834),
        ("bayesian", False): fit.aggregate_intervals(level=0.834, seed=seed),
        ("bootstrap", True): leaderboard(normalize(boot), level=0.834),
    }
    published = load_published()
    blocks = {}
    for (method, normalized), got in ours.items():
        pub = published[(published["method"] == method) & (published["normalized"] == normalized)]
        merged = pub.merge(got, on=["model", "scope"], validate="one_to_one")
        for col in ("mean", "lo", "hi"):
            merged[f"{col}_ours"] = (merged[col] * 100).round(2)
        name = f"{method}{' normalised' if normalized else ''}"
        rows = merged[
            ["model", "scope", "mean_pct", "lo_pct", "hi_pct", "mean_ours", "lo_ours", "hi_ours"]
        ]
        gaps = {
            c: float((merged[f"{c}_ours"] - merged[f"{c}_pct"]).abs().max())
            for c in ("mean", "lo", "hi")
        }
        blocks[name] = {"rows": rows.to_dict(orient="records"), "max_abs_gap_points": gaps}
    diag = fit.diagnostics()
    return {
        "blocks": blocks,
        "hierarchical_max_rhat": float(diag["rhat"].max()),
        "fit": fit,
        "boot": boot,
    }


TOP3 = ["Sup-Rotation-100%", "Sup-Exemplar-100%", "Sup-100%"]
# Numbers of replicates of the normalised bootstrap compared with Table A.3 (the report does
# not give its own), and the seeds each is run with.
NORMALISED_REPLICATES = (50, 60, 80, 100, 200, 500, 2000)
NORMALISED_SEEDS = 5


def table_3(table, boot, fit, seed: int) -> list[dict]:
    """Table 3: the top three models' differences (overall), Bonferroni over their three
    pairs, each method beside the paper's. The hierarchical model twice: differences of
    the posterior means (parameters) and of posterior predictive scores (a new test set of
    the same sizes, the reading of Table A.3's Bayesian block)."""
    from lifelong_core.stats import normalize
    from lifelong_core.stats.hierarchical_views import pairwise_by_scope
    from lifelong_core.stats.vtab import load_published_pairwise

    pub = load_published_pairwise()
    ours = {
        ("bootstrap", False, "bootstrap"): pairwise_by_scope(boot, models=TOP3),
        ("bayesian", False, "hierarchical (parameters)"): pairwise_by_scope(fit, models=TOP3),
        ("bayesian", False, "hierarchical (predictive)"): pairwise_by_scope(
            fit, models=TOP3, predictive=True, seed=seed
        ),
        ("bootstrap", True, "bootstrap normalised"): pairwise_by_scope(
            normalize(boot), models=TOP3
        ),
    }
    rows = []
    for (method, normalized, name), got in ours.items():
        got = got[got["scope"] == "overall"]
        want = pub[(pub["method"] == method) & (pub["normalized"] == normalized)]
        merged = want.merge(got, on=["model_a", "model_b"], validate="one_to_one")
        for r in merged.itertuples():
            rows.append(
                dict(
                    block=name,
                    comparison=f"{r.model_a} - {r.model_b}",
                    published=[r.diff_pct, r.lo_pct, r.hi_pct],
                    ours=[round(100 * r.diff, 2), round(100 * r.lo, 2), round(100 * r.hi, 2)],
                    level=r.level,
                )
            )
    return rows


def _rank_gaps(got, pub) -> dict:
    """Per scheme: the largest |ours - published| of mean, lo and hi over the models."""
    merged = pub.merge(got, on=["model", "scheme"], suffixes=("_pub", ""), validate="one_to_one")
    return {
        s: {c: round(float((g[c] - g[f"{c}_pub"]).abs().max()), 2) for c in ("mean", "lo", "hi")}
        for s, g in merged.groupby("scheme", sort=False)
    }


def rank_tables(table, boot, fit, seed: int) -> dict:
    """Table A.3's rank blocks (Tables 4, 5) and Table 11: 95% rank intervals under the
    five schemes, largest gap per scheme."""
    from lifelong_core.stats import normalize, rank_intervals
    from lifelong_core.stats.hierarchical_views import hierarchical_rank_intervals
    from lifelong_core.stats.vtab import load_published_ranks

    pub = load_published_ranks()
    ours = {
        ("bootstrap", False): rank_intervals(boot.scores, table.models, seed=seed),
        ("bootstrap", True): rank_intervals(normalize(boot).scores, table.models, seed=seed),
        ("bayesian", False): hierarchical_rank_intervals(fit, seed=seed),
    }
    out = {}
    for (method, normalized), got in ours.items():
        want = pub[(pub["method"] == method) & (pub["normalized"] == normalized)]
        name = {
            ("bootstrap", False): "bootstrap (Table 4)",
            ("bootstrap", True): "bootstrap normalised (Table 5)",
            ("bayesian", False): "hierarchical (Table 11)",
        }[(method, normalized)]
        out[name] = _rank_gaps(got, want)
    return out


def normalised_replicates(table, seeds: int) -> list[dict]:
    """The normalised block of Table A.3 and its geometric-mean ranks against the number of
    replicates of the normalised bootstrap (bounds and intervals from the same replicates,
    as §2.4 reads), each over ``seeds`` seeds: median and range of the largest gaps."""
    from lifelong_core.stats import bootstrap, leaderboard, normalize, rank_intervals
    from lifelong_core.stats.vtab import load_published, load_published_ranks

    pub = load_published()
    pub = pub[(pub["method"] == "bootstrap") & pub["normalized"]]
    ranks = load_published_ranks()
    ranks = ranks[(ranks["method"] == "bootstrap") & ranks["normalized"]]
    ranks = ranks[ranks["scheme"] == "geometric"]
    out = []
    for n in NORMALISED_REPLICATES:
        a3, geo = [], []
        for s in range(seeds):
            nb = normalize(bootstrap(table, n_boot=n, seed=s))
            got = pub.merge(leaderboard(nb, level=0.834), on=["model", "scope"])
            a3.append(
                max(
                    float((got[c] * 100 - got[f"{c}_pct"]).abs().max())
                    for c in ("mean", "lo", "hi")
                )
            )
            r = rank_intervals(nb.scores, table.models, schemes=["geometric"], seed=s)
            geo.append(max(_rank_gaps(r, ranks)["geometric"].values()))
        out.append(
            dict(
                replicates=n,
                a3_normalised_max_gap_points=[
                    round(min(a3), 2),
                    round(float(np.median(a3)), 2),
                    round(max(a3), 2),
                ],
                geometric_rank_max_gap=[
                    round(min(geo), 2),
                    round(float(np.median(geo)), 2),
                    round(max(geo), 2),
                ],
            )
        )
    return out


def simulation(seed: int, chains: int, draws: int) -> dict:
    from lifelong_core.stats.simulation import simulation_study

    res = simulation_study(seed=seed, chains=chains, draws=draws)
    return {
        "bootstrap": res.bootstrap,
        "hierarchical": res.hierarchical,
        "published": PUBLISHED_SIMULATION,
        "max_rhat": res.max_rhat,
    }


def ternary(boot, fit, seed: int) -> list[dict]:
    """Winner at each corner and the share of the simplex each top model wins."""
    from lifelong_core.stats import category_stats_from_bootstrap, normalize, weight_regions
    from lifelong_core.stats.hierarchical_views import category_stats_from_hierarchical

    sources = {
        "bootstrap": category_stats_from_bootstrap(boot),
        "bootstrap normalised": category_stats_from_bootstrap(normalize(boot)),
        "hierarchical (Fig. 5)": category_stats_from_hierarchical(fit, seed=seed),
    }
    out = []
    for name, cs in sources.items():
        for rho in (0.0, 0.5):
            reg = weight_regions(cs, step=0.05, rho=rho).to_frame()
            cats = list(cs.categories)
            corner = {c: reg.loc[np.isclose(reg[c], 1.0), "winner"].item() for c in cats}
            share = reg["winner"].value_counts(normalize=True).round(3).to_dict()
            heavy = reg[reg["structured"] >= 0.6]
            out.append(
                {
                    "source": name,
                    "rho": rho,
                    "corner_winner": corner,
                    "share": share,
                    "rotation_share_where_structured_ge_0.6": round(
                        float((heavy["winner"] == "Rotation").mean()), 3
                    ),
                }
            )
    return out


def main(argv: list[str] | None = None) -> int:
    from lifelong_core.stats.vtab import LEADERBOARD_CSV

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--leaderboard",
        default=str(LEADERBOARD_CSV),
        help="the VTAB leaderboard's results.csv (google-research/task_adaptation docs/data)",
    )
    ap.add_argument("--boot", type=int, default=2000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--out", default=str(ROOT / "benchmarks" / "results" / "reproduce_uncertainty.json")
    )
    args = ap.parse_args(argv)
    if not Path(args.leaderboard).is_file():
        print(
            f"error: the VTAB-1k leaderboard file {args.leaderboard} is not there; pass "
            "--leaderboard with a file in the format of google-research/task_adaptation's "
            "docs/data/results.csv.",
            file=sys.stderr,
        )
        return 2

    a3 = table_a3(Path(args.leaderboard), args.boot, args.chains, args.draws, args.seed)
    print("Table A.3, 83.4% intervals, percent: published -> ours (overall)")
    for name, block in a3["blocks"].items():
        print(
            f"\n{name}: largest |ours - published| over 16 models x 4 scopes: "
            + ", ".join(f"{k} {v:.2f}" for k, v in block["max_abs_gap_points"].items())
            + " points"
        )
        rows = pd.DataFrame(block["rows"])
        ov = rows[rows["scope"] == "overall"]
        for _, r in ov.iterrows():
            print(
                f"  {r['model']:<20} {r['mean_pct']:5.1f} ({r['lo_pct']:.1f}, {r['hi_pct']:.1f})  ->  "
                f"{r['mean_ours']:5.2f} ({r['lo_ours']:.2f}, {r['hi_ours']:.2f})"
            )
    print(f"\nhierarchical model: max split R-hat {a3['hierarchical_max_rhat']:.3f}")

    from lifelong_core.stats.vtab import counts_from_leaderboard

    table = counts_from_leaderboard(Path(args.leaderboard))
    t3 = table_3(table, a3["boot"], a3["fit"], args.seed)
    print(
        "\nTable 3: differences of average accuracy, points, 95% with Bonferroni over the three "
        "pairs (rank --pairwise P --models A,B,C): published -> ours"
    )
    for r in t3:
        p, o = r["published"], r["ours"]
        print(
            f"  {r['block']:<27} {r['comparison']:<38} {p[0]:5.1f} ({p[1]:5.1f}, {p[2]:5.1f})  ->  "
            f"{o[0]:5.2f} ({o[1]:5.2f}, {o[2]:5.2f})"
        )

    ranks = rank_tables(table, a3["boot"], a3["fit"], args.seed)
    print(
        "\nRank intervals (Table A.3's rank blocks; Table 11), 95%: largest |ours - published| of "
        "mean / lo / hi over the 16 models"
    )
    for name, per in ranks.items():
        print(
            f"  {name}: "
            + "; ".join(f"{s} {g['mean']:.2f}/{g['lo']:.2f}/{g['hi']:.2f}" for s, g in per.items())
        )

    reps = normalised_replicates(table, NORMALISED_SEEDS)
    print(
        "\nNormalised accuracy (§2.4): the bounds are the most extreme replicate of each task, so "
        "the normalised figures depend on the number of replicates, which the report does not "
        f"give. Largest gap, min / median / max over seeds 0-{NORMALISED_SEEDS - 1}:"
    )
    for r in reps:
        a, g = r["a3_normalised_max_gap_points"], r["geometric_rank_max_gap"]
        print(
            f"  {r['replicates']:>5} replicates: Table A.3 normalised block {a[0]:.2f} / {a[1]:.2f} / "
            f"{a[2]:.2f} points; geometric-mean ranks {g[0]:.2f} / {g[1]:.2f} / {g[2]:.2f}"
        )
    print(
        "  With n replicates the lowest model of a task scores exactly 0 in the replicate that sets "
        "the task's lower bound, so its geometric mean is 0 there and it ranks last; "
        "Uncond-BigGAN is lowest on 2 tasks and 10th otherwise, so its mean geometric rank is "
        "10 + 12 / n: the published 10.2 (10.0, 13.4) points to n between 49 and 80, and the "
        "normalised block's gap is no larger there than at 2,000. The product keeps the text's "
        "reading with the replicates asked for (2,000 by default)."
    )

    sim = simulation(args.seed, args.chains, 2 * args.draws)
    print("\nSimulation study (Table 1), 95% interval of mean_A - mean_B:")
    for k in ("bootstrap", "hierarchical"):
        lo, hi = sim["published"][k]
        print(
            f"  {k:<13} published ({lo:+.3f}, {hi:+.3f})  ours ({sim[k][1]:+.3f}, {sim[k][2]:+.3f})"
            f"  mean {sim[k][0]:+.4f}"
        )

    tern = ternary(a3["boot"], a3["fit"], args.seed)
    print(
        "\nTask weighting (step 0.05, 1 SE gray zone): winner at each corner; published: Rotation where "
        "structured weighs most, in every plot"
    )
    for t in tern:
        print(
            f"  {t['source']:<24} rho={t['rho']:.1f}  corners {t['corner_winner']}  Rotation wins "
            f"{t['rotation_share_where_structured_ge_0.6']:.0%} of points with structured >= 0.6"
        )

    res = {
        "table_a3": {k: v for k, v in a3.items() if k not in ("fit", "boot")},
        "table_3": t3,
        "rank_intervals_max_gaps": ranks,
        "normalised_replicates": reps,
        "simulation": sim,
        "ternary": tern,
        "args": vars(args),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
