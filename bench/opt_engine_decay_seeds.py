"""OPT-Engine's TSP decay row on seeds it was not run on: the row's own test (z of the 4-city accuracy against the
pooled 6–12-city accuracy, 1000 records per size, threshold 3.29) for the method (multi-start 2-opt) and its rival
(the same search with Or-opt moves) on the streams ``decay_test(seed, "tsp")`` uses, for each unseen seed (the
chapter's neighbours 2025/2027, the TSP pilot's neighbours 9000/9002, then 31, 32, …). The repeated-sample and SIR
parts of the bench are left out (the first is exact by construction at 4 cities, the second reported only).

    python bench/opt_engine_decay_seeds.py [n_seeds]    # ≈ 25 s CPU a seed; writes after every seed

Written by the sceptic's review: the bench row is one seed (2026), so this is how its robustness is shown. Both
searches are exact at 4 cities (2-opt reaches all three tours of 4 cities), so z = √(M / (1 − M/4000)) with M the
misses at 6–12 cities: the row's z passes 3.29 exactly when M ≥ 11.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.opt_engine.experiment import CLASSES, DECAY, _decay_hits, _z  # noqa: E402

SEEDS = (2027, 9000, 9002, 2025, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46)


def main() -> None:
    todo = SEEDS[: int(sys.argv[1])] if len(sys.argv) > 1 else SEEDS
    out = pathlib.Path(__file__).parent / "results" / "opt_engine_decay_seeds.json"
    sizes, k, _ = DECAY["tsp"]
    ci = CLASSES.index("tsp")
    res = {"machine": machine_info(), "design": {"sizes": list(sizes), "count": k, "planned": list(todo)},
           "seeds": {}}
    for s in todo:
        t0 = time.process_time()
        acc, riv = [], []
        for n in sizes:
            h, _, r = _decay_hits("tsp", n, k, np.random.default_rng([s, ci, n, 7]), 0,
                                  np.random.default_rng([s, ci, n, 9]))
            acc.append(h / k)
            riv.append(r / k)
        m = k * (len(sizes) - 1)
        z = _z(acc[0], k, float(np.mean(acc[1:])), m)
        zr = _z(riv[0], k, float(np.mean(riv[1:])), m)
        res["seeds"][str(s)] = {"acc": acc, "rival": riv, "z": z, "z_rival": zr,
                                "cpu_seconds": round(time.process_time() - t0, 1)}
        out.write_text(json.dumps(res, indent=1) + "\n")
        print(s, f"z = {z:.2f}, z_rival = {zr:.2f}", flush=True)
    assert all(math.isfinite(r["z"]) for r in res["seeds"].values())


if __name__ == "__main__":
    main()
