"""Tuning the shutdown and its unconditional competitor with the same budget, on the exact DP, at three horizons.

    python bench/thompson_online_tuning.py            # T ∈ {50, 200, 400}, grid 1601
    python bench/thompson_online_tuning.py --quick    # T ∈ {50, 200}, grid 801

Conditional shutdown (TS with x = 0 once m/s < −z₀) and tempered TS (x = Φ(m/(κ s)), the regulariser shrunk
everywhere: the sceptic's "it only explores less") each get a 9-point grid of their one parameter, evaluated by
the exact backward induction of `theorybook.thompson_online.dynamics` (no Monte Carlo noise, so no seeds). For
the tuned pair it also records tempered TS with the condition added (what the condition adds on top of the best
tempering), and the discounted stationary policy γ = 1 − 1/T next to the finite-horizon optimum.
Writes bench/results/thompson_online_tuning.json, which the chapter reads.
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
from theorybook.thompson_online.verdicts import KAPPA_GRID, Z0_GRID  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    horizons, G = ((50, 200), 801) if args.quick else ((50, 200, 400), 1601)
    out = {"machine": machine_info(), "grid": G, "z0_grid": list(Z0_GRID), "kappa_grid": list(KAPPA_GRID),
           "horizons": {}}
    t0 = time.process_time()
    for T in horizons:
        base = solve_bandit(T, policies=("ts", "optimal", "greedy", "discounted"), gamma=1 - 1 / T, grid=G).regret
        sd = {z: float(solve_bandit(T, policies=("shutdown",), shutdown_z=z, grid=G).regret[0, T]) for z in Z0_GRID}
        tp = {k: float(solve_bandit(T, policies=("tempered",), temper=k, grid=G).regret[0, T]) for k in KAPPA_GRID}
        z_best, k_best = min(sd, key=sd.get), min(tp, key=tp.get)
        both = float(solve_bandit(T, policies=("tempered_shutdown",), temper=k_best, shutdown_z=z_best,
                                  grid=G).regret[0, T])
        out["horizons"][str(T)] = {
            "ts": float(base[0, T]), "optimal": float(base[1, T]), "greedy": float(base[2, T]),
            "discounted": float(base[3, T]), "shutdown": {str(z): r for z, r in sd.items()},
            "tempered": {str(k): r for k, r in tp.items()}, "z0_best": z_best, "kappa_best": k_best,
            "tempered_shutdown_best": both}
        print(T, out["horizons"][str(T)], flush=True)
    out["cpu_seconds"] = time.process_time() - t0
    path = pathlib.Path(__file__).parent / "results" / "thompson_online_tuning.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
