"""Small vs large data sets (issues 44 and 45): the MLP race as a regime scan over the parity dimension d and the
repeated-set size N at equal compute, and full-batch GD against the data-set size.

    python bench/small_vs_large.py            # the scan (9 points × 48 paired seeds) and the full-batch trend
    python bench/small_vs_large.py --quick    # one point, one seed set (does not overwrite the results)

The design is fixed in :data:`theorybook.small_vs_large.experiment.SCAN` and ``FULL_BATCH`` (written before this
ran); the tests in :func:`theorybook.small_vs_large.verdicts.scan_verdicts`. Writes bench/results/small_vs_large.json
with the machine context (bench/_machine.py); the chapter reads it and re-runs one seed set of one point to check
that it reproduces.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.device import one_thread  # noqa: E402
from theorybook.small_vs_large.experiment import FULL_BATCH, RESULTS, SCAN  # noqa: E402
from theorybook.small_vs_large.scan import full_batch_race, race_point  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--part", choices=("all", "scan", "full"), default="all",
                    help="run only the scan or only the full-batch trend (merged into the existing results)")
    ap.add_argument("--ds", type=str, default="", help="comma-separated parity dimensions (default: SCAN's)")
    ap.add_argument("--out", type=str, default="", help="write here instead of bench/results/small_vs_large.json")
    args = ap.parse_args()
    info = machine_info()
    t0 = time.perf_counter()
    points = []
    ds = tuple(int(x) for x in args.ds.split(",")) if args.ds else SCAN["ds"]
    ns = SCAN["ns"]
    sets = SCAN["seed_sets"][:1] if args.quick else SCAN["seed_sets"]
    with one_thread():
        for d in () if args.part == "full" else ds[-1:] if args.quick else ds:
            for n in ns[1:2] if args.quick else ns:
                t = time.perf_counter()
                p = race_point(d, n, seed_sets=sets, seeds=SCAN["seeds"], **SCAN["race"])
                points.append({"d": d, "n": n, **p})
                if not args.quick and args.out:  # a partial file after every point (merged by hand if interrupted)
                    pathlib.Path(args.out).write_text(json.dumps({"points": points}) + "\n")
                print(f"d = {d}, N = {n}: set speed-ups {[round(x, 3) for x in p['set_speedup']]}, control "
                      f"{[round(x, 3) for x in p['set_speedup_control']]} ({time.perf_counter() - t:.0f} s)",
                      flush=True)
        fb = None
        if args.part != "scan":
            fb = full_batch_race(**{**FULL_BATCH, "seeds": 1 if args.quick else FULL_BATCH["seeds"]})
            print("full batch:", fb, flush=True)
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() and args.part != "all" else {}
    out = {"scan": {**SCAN, "seed_sets": list(sets), "points": points} if args.part != "full" else old.get("scan"),
           "full_batch": {**FULL_BATCH, **fb} if fb is not None else old.get("full_batch"),
           "machine": {**info, "wall_s": round(time.perf_counter() - t0, 1), "part": args.part}}
    dest = pathlib.Path(args.out) if args.out else RESULTS
    if not args.quick:
        dest.write_text(json.dumps(out, indent=1) + "\n")
        print("wrote", dest)


if __name__ == "__main__":
    main()
