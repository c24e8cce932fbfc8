"""Small vs large data sets, issue 57: the second half of the interventions claim — a larger second-layer
*learning rate* — at the scan's points where the repeated set wins.

    python bench/small_vs_large_lr.py

Design, fixed before this ran (the review digest of 2026-12-06 had reported a pilot at (24, 4,096): the win
persists at 1.15×, z = 4.1, and the ×1 − ×4 difference has z = 2.3). The same race, points, seed sets and seeds as
the committed scan (``SCAN``), with the second layer's init at ×1 and its learning rate ×4 (η_a = 4·η_w, the
factor of the init ablation) in place of the ×4 init, at the points where the scan's repeated set wins beyond
chance (z ≥ z_threshold(1e-3, 9)). The row's test is the init row's: the smallest z of the paired difference of
log speed-ups (×1 − η_a ×4) over those points ≥ the one-sided z_threshold(1e-3); the control is the same
difference for the second fresh stream. If the test fails, the row reads "inconclusive": the claim ("shrinks or
removes") gives no size for the shrink, so no plant at the paper's size is possible.
Writes bench/results/small_vs_large_lr.json.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.check import z_threshold  # noqa: E402
from theorybook.device import one_thread  # noqa: E402
from theorybook.small_vs_large.experiment import SCAN, load_results  # noqa: E402
from theorybook.small_vs_large.scan import paired_stats, race_point  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "small_vs_large_lr.json"
LR_A = (1.0, 4.0)


def main() -> None:
    info = machine_info()
    t0 = time.perf_counter()
    pts = load_results()["scan"]["points"]
    thr = z_threshold(1e-3, len(pts))
    eff = [(p["d"], p["n"]) for p in pts if paired_stats(p["rep"])["z"] >= thr]
    kw = {**SCAN["race"], "scales": (1.0, 1.0), "lr_a": LR_A}
    points = []
    with one_thread():
        for d, n in eff:
            t = time.perf_counter()
            p = race_point(d, n, seed_sets=SCAN["seed_sets"], seeds=SCAN["seeds"], **kw)
            p = {"d": d, "n": n, "rep": p["rep"], "ctrl": p["ctrl"], "rep_lr4": p["rep_x4"],
                 "ctrl_lr4": p["ctrl_x4"], "censored": p["censored"]}
            points.append(p)
            print(f"d = {d}, N = {n}: η_a ×4 speed-up z {paired_stats(p['rep_lr4'])['z']:.2f}, difference z "
                  f"{paired_stats([a - b for a, b in zip(p['rep'], p['rep_lr4'], strict=True)])['z']:.2f} "
                  f"({time.perf_counter() - t:.0f} s)", flush=True)
    out = {"race": {**kw, "scales": list(kw["scales"]), "lr_a": list(LR_A)}, "seed_sets": list(SCAN["seed_sets"]),
           "seeds": SCAN["seeds"], "points": points,
           "machine": {**info, "wall_s": round(time.perf_counter() - t0, 1)}}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
