"""OPT-Engine's TSP decay row at the scale it needs: the stronger stand-in (multi-start 2-opt: nearest neighbour from
every city, then 2-opt) against Held–Karp on 1000 seeded instances per size (4, 6, 8, 10, 12 cities), its rival (the
same multi-start search with Or-opt moves added) on the same records, a second sample at 4 cities, and (reported
only) the SIR proxy (HiGHS DFJ on the parsed text) on the first 100 records at 4 and 12 cities.

    python bench/opt_engine_decay.py            # the chapter's seed (CHAPTER_SEEDS[0]); ≈ 90 s on a loaded 2-core CPU

The stronger stand-in's accuracy falls only from 1.00 to ≈ 0.97 over the scan, so the chapter's per-seed budget
(≈ 1 s) cannot resolve it; the chapter and its verdict row read bench/results/opt_engine_decay.json (machine named).
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.opt_engine.experiment import CHAPTER_SEEDS, DECAY, decay_test  # noqa: E402


def main() -> None:
    out = pathlib.Path(__file__).parent / "results" / "opt_engine_decay.json"
    info = machine_info()
    t0 = time.process_time()
    d = decay_test(CHAPTER_SEEDS[0], "tsp")
    res = {"machine": info, "cpu_seconds": round(time.process_time() - t0, 2), "seed": CHAPTER_SEEDS[0],
           "design": {"sizes": list(DECAY["tsp"][0]), "count": DECAY["tsp"][1], "sir_count": DECAY["tsp"][2]},
           "tsp": {k: (list(v) if isinstance(v, tuple) else v) for k, v in d._asdict().items()}}
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res["tsp"]))


if __name__ == "__main__":
    main()
