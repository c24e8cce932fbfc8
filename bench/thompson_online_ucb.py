"""The sceptic's alternative to the shutdown, tuned with the same budget: Bayes-UCB on the exact DP.

    python bench/thompson_online_ucb.py              # T ∈ {50, 200, 400}, grid 1601
    python bench/thompson_online_ucb.py --discount   # only (re)compute the discount scan, keep the rest

Bayes-UCB pulls iff m + c·s_n ≥ 0: greedy plus the linear regulariser c·s_n·x everywhere (no condition). Its one
parameter c gets the shutdown's 9-point grid (both are thresholds on m/s), evaluated by the exact backward
induction of `theorybook.thompson_online.dynamics` at the pre-registered horizons of
bench/thompson_online_tuning.py. It also scans the discounted row's discount at T = 200: the stationary policy of
γ = 1 − k/T for k ∈ {0.5, 1, 2, 3, 10} (k = 1 the row's matched discount, k = 3 its plant), each against the
finite-horizon optimum. Writes bench/results/thompson_online_ucb.json, which the chapter reads.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.thompson_online.dynamics import solve_bandit  # noqa: E402
from theorybook.thompson_online.verdicts import DISCOUNT_FACTORS, UCB_GRID  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--discount", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    G = 1601
    path = pathlib.Path(__file__).parent / "results" / "thompson_online_ucb.json"
    out = {"machine": machine_info(), "grid": G, "ucb_grid": list(UCB_GRID), "horizons": {}}
    if args.discount:
        out = json.loads(path.read_text())
    t0 = time.process_time()
    opt = float(solve_bandit(200, policies=("optimal",), grid=G).regret[0, 200])
    out["discount_scan"] = {"horizon": 200, "optimal": opt, "discounted": {
        str(k): float(solve_bandit(200, policies=("discounted",), gamma=1 - k / 200, grid=G).regret[0, 200])
        for k in DISCOUNT_FACTORS}}
    print(out["discount_scan"], flush=True)
    for T in () if args.discount else (50, 200, 400):
        r = {c: float(solve_bandit(T, policies=("bayes_ucb",), ucb_c=c, grid=G).regret[0, T]) for c in UCB_GRID}
        out["horizons"][str(T)] = {"bayes_ucb": {str(c): v for c, v in r.items()}, "ucb_best": min(r, key=r.get)}
        print(T, out["horizons"][str(T)], flush=True)
    out["cpu_seconds" if not args.discount else "cpu_seconds_discount"] = time.process_time() - t0
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
