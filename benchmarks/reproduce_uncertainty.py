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
3. The task-weighting finding of §3.3 (Figs. 3-5): Rotation wins where structured tasks
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
        "simulation": sim,
        "ternary": tern,
        "args": vars(args),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
