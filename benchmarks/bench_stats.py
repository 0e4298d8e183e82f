"""Timing of the honest-rankings engine (LA-UR-24-25289 report, 2024) on VTAB-1k-sized data.

1. Bootstrap: 2,000 replicates of 16 models x 19 tasks, with the per-scope leaderboard
   (target: within 0.5 s).
2. Rank intervals under the five schemes of §3.2 from those replicates (no target).
3. Task-weighting grid with 101 points per side (5,151 weightings), category stats
   included (target: within 1 s); the python-ternary rendering of that grid is timed too.
4. Beta-binomial hierarchical model, 4 chains x 2,000 draws (+1,000 warm-up) on VTAB-1k
   (target: within 30 s), with its largest R-hat and smallest ESS.
5. The simulation study of §2.2 (Table 1), whose intervals the Benchmarks page records.

Data: the VTAB-1k leaderboard bundled under ``data/vtab1k/`` (16 models x 19 tasks). Timings are wall-clock minima and medians over repeats on a shared 2-core machine,
so expect noise. Run: ``.venv/bin/python -m benchmarks.bench_stats``.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from lifelong_core.stats import (
    CountTable,
    bootstrap,
    category_stats,
    fit_hierarchical,
    leaderboard,
    rank_intervals,
    weight_regions,
)
from lifelong_core.stats.simulation import PRIOR_MEANS, TEST_SIZES, simulation_study
from lifelong_core.stats.vtab import LEADERBOARD_CSV, counts_from_leaderboard

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "bench_stats.json"
VTAB = LEADERBOARD_CSV


def vtab_counts() -> tuple[CountTable, str]:
    return counts_from_leaderboard(VTAB), "VTAB-1k leaderboard (data/vtab1k/)"


def timed(fn, repeats: int) -> tuple[float, float, object]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), result


def main() -> None:
    table, source = vtab_counts()
    rows = []

    best, med, _ = timed(lambda: leaderboard(bootstrap(table, n_boot=2000, seed=0)), repeats=7)
    rows.append(("bootstrap 2,000 x 16 models x 19 tasks + leaderboard", best, med, 0.5))

    boot = bootstrap(table, n_boot=2000, seed=0)
    best, med, _ = timed(lambda: rank_intervals(boot.scores, table.models), repeats=3)
    rows.append(("rank intervals, five schemes, 2,000 replicates", best, med, None))

    best, med, grid = timed(
        lambda: weight_regions(category_stats(table), step=0.01, se_mult=1.0, rho=0.0), repeats=7
    )
    rows.append(
        (f"ternary grid, 101 points per side ({len(grid.weights):,} weightings)", best, med, 1.0)
    )

    from ui.ternary import matplotlib_ternary  # presentation; timed for the page's sake

    best_r, med_r, _fig = timed(lambda: matplotlib_ternary(grid, "bench"), repeats=1)
    rows.append(("python-ternary figure of that grid (render, not a target)", best_r, med_r, None))

    best, med, fit = timed(
        lambda: fit_hierarchical(table, chains=4, draws=2000, warmup=1000, seed=0), repeats=1
    )
    diag = fit.diagnostics()
    rows.append(("hierarchical model, 4 chains x 2,000 draws (+1,000 warm-up)", best, med, 30.0))

    sim = simulation_study(seed=0)

    print(f"Data: {source}\n")
    print("| step | best (s) | median (s) | target (s) | ok |")
    print("|---|---:|---:|---:|:-:|")
    for name, b, m, target in rows:
        ok = "" if target is None else ("yes" if b <= target else "NO")
        print(f"| {name} | {b:.3f} | {m:.3f} | {'' if target is None else f'{target:g}'} | {ok} |")
    print(
        f"\nHierarchical model: largest split R-hat {diag['rhat'].max():.4f}, smallest ESS {diag['ess'].min():.0f}"
    )
    print(
        "Simulation study (§2.2, Table 1; sizes "
        f"{TEST_SIZES}, prior means A {PRIOR_MEANS['Model A']}, B {PRIOR_MEANS['Model B']}):\n"
        f"  bootstrap 95% CI of mean_A - mean_B: ({sim.bootstrap[1]:.3f}, {sim.bootstrap[2]:.3f})\n"
        f"  hierarchical 95% credible interval:  ({sim.hierarchical[1]:.3f}, {sim.hierarchical[2]:.3f})"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "data": source,
                "timings": [
                    {
                        "step": name,
                        "best_s": round(b, 4),
                        "median_s": round(m, 4),
                        "target_s": target,
                    }
                    for name, b, m, target in rows
                ],
                "bhm_max_rhat": float(diag["rhat"].max()),
                "bhm_min_ess": float(diag["ess"].min()),
                "simulation": {
                    "test_sizes": list(TEST_SIZES),
                    "prior_means": PRIOR_MEANS,
                    "bootstrap_95": list(sim.bootstrap),
                    "hierarchical_95": list(sim.hierarchical),
                    "max_rhat": sim.max_rhat,
                    "min_ess": sim.min_ess,
                },
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
