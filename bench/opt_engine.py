"""OPT-Engine benchmark: generation vs exact solving vs stand-in vs the specialised exact algorithms, per class, up a
longer size ladder than the chapter's; the paper's formulations (TSP MTZ, bin-packing assignment) against the fast
ones (TSP DFJ subtour cuts in a loop, bin-packing arc flow); time-limit hits at the paper's 30 s.

    python bench/opt_engine.py                 # full ladder: TSP to 16, BinPacking to 30, JobShop to 7×7
    python bench/opt_engine.py --quick         # TSP to 12, BinPacking to 20, JobShop to 5×5, MTZ ≤ 10 cities
    python bench/opt_engine.py --repeats 5 --instances 3

For every (class, size) and each of ``--instances`` seeded instances, each method runs once warm, then
``--repeats`` times; the row reports the median over instances of the per-instance median. "generate" is sampling
plus the template (no solve); "HiGHS" is the SIR proxy's model (DFJ / arc flow where those apply); "paper model" is
the paper's formulation (MTZ / assignment) with the paper's 30 s limit, run once per instance (not repeated: it
can take the whole limit) and counted as a time-limit hit when HiGHS stops there. Writes
bench/results/opt_engine.json with the machine context (bench/_machine.py) and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.opt_engine.problems import (  # noqa: E402
    CLASSES,
    _dist,
    _gen,
    held_karp,
    knapsack_dp,
    solve,
    stand_in,
    to_text,
)

FULL = {"tsp": (4, 8, 12, 14, 16), "knapsack": (5, 15, 30), "bin_packing": (10, 20, 30), "job_shop": (3, 5, 7),
        "inventory": (5, 20), "pollution": (3, 10), "portfolio": (5, 20), "transportation": (3, 10),
        "production": (3, 10), "network_flow": (3, 10)}
QUICK = {**FULL, "tsp": (4, 8, 12), "bin_packing": (10, 20), "job_shop": (3, 5)}
FAST = {"tsp": "dfj", "bin_packing": "arcflow"}
PAPER = {"tsp": "mtz", "bin_packing": "assignment"}


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shorter ladder (TSP 12, BinPacking 20, JobShop 5×5)")
    ap.add_argument("--repeats", type=int, default=5, help="warm repeats per method and instance (median)")
    ap.add_argument("--instances", type=int, default=3, help="seeded instances per size")
    ap.add_argument("--time-limit", type=float, default=30.0, help="HiGHS limit for the paper's models (paper: 30 s)")
    ap.add_argument("--mtz-max", type=int, default=16, help="largest TSP size for the MTZ model")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "opt_engine.json"))
    return ap.parse_args(argv)


def _median_time(f, repeats: int) -> float:
    f()  # warm
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main(argv=None) -> dict:
    args = parse(argv)
    ladder = QUICK if args.quick else FULL
    info = machine_info()
    rows = []
    for c in CLASSES:
        for n in ladder[c]:
            cols: dict[str, list[float]] = {}
            hits, paper_runs, agree = 0, 0, True
            for s in range(args.instances):
                rng = np.random.default_rng([s, CLASSES.index(c), n])
                params = _gen(c, n, rng)
                meth = {
                    "generate": lambda c=c, n=n, s=s: to_text(
                        c, _gen(c, n, np.random.default_rng([s, CLASSES.index(c), n]))),
                    "highs": lambda c=c, p=params: solve(c, p, formulation=FAST.get(c)).objective,
                    "stand_in": lambda c=c, p=params: stand_in(c, p),
                }
                if c == "tsp" and n <= 16:
                    meth["specialised"] = lambda p=params: held_karp(_dist(p["coords"]))
                if c == "knapsack":
                    meth["specialised"] = lambda p=params: knapsack_dp(p["weights"], p["values"], p["capacity"])
                for name, f in meth.items():
                    cols.setdefault(name, []).append(_median_time(f, args.repeats))
                best = solve(c, params, formulation=FAST.get(c)).objective
                if "specialised" in meth:
                    agree &= abs(meth["specialised"]() - best) <= 1e-9 * abs(best)
                if c in PAPER and not (c == "tsp" and n > args.mtz_max):
                    sol = solve(c, params, formulation=PAPER[c], time_limit=args.time_limit)
                    cols.setdefault("paper_model", []).append(sol.seconds)
                    paper_runs += 1
                    hits += sol.status == "time_limit"
                    if sol.status == "optimal":
                        agree &= abs(sol.objective - best) <= 1e-9 * abs(best)
            med = {k: statistics.median(v) for k, v in cols.items()}
            row = {"class": c, "size": n, "instances": args.instances, "median_s": med,
                   "solve_over_generate": med["highs"] / med["generate"],
                   "highs_over_specialised": med["highs"] / med["specialised"] if "specialised" in med else None,
                   "paper_over_fast": med["paper_model"] / med["highs"] if "paper_model" in med else None,
                   "paper_time_limit_hits": hits if paper_runs else None, "paper_runs": paper_runs,
                   "exact_methods_agree": bool(agree)}
            rows.append(row)
            extra = (f" paper/fast {row['paper_over_fast']:.1f}× (hits {hits}/{paper_runs})"
                     if row["paper_over_fast"] else "")
            spec = f" HiGHS/spec {row['highs_over_specialised']:.1f}×" if row["highs_over_specialised"] else ""
            print(f"{c:15s} n={n:3d} gen {med['generate'] * 1e3:7.2f} ms  HiGHS {med['highs'] * 1e3:8.1f} ms  "
                  f"stand-in {med['stand_in'] * 1e3:6.2f} ms  solve/gen {row['solve_over_generate']:7.1f}×"
                  f"{spec}{extra}", flush=True)
    out = {"machine": info, "load_avg_end": [round(x, 2) for x in os.getloadavg()],
           "args": {k: v for k, v in vars(args).items() if k != "out"},
           "ladder": {k: list(v) for k, v in ladder.items()},
           "rows": rows}
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
