"""Pilot for the non-smooth-family row (issue 57): f = δ|x + 1|, pilot seeds 9101–9112 (theorybook.check.PILOT_SEEDS,
disjoint from the quadratic pilot 9001–9012, the chapter's seed and the robustness seeds). Fits the envelope exponent
over ρ ∈ [4, 64] for linear and quadratic decay, the fixed stepsize and the fixed stepsize with iterate averaging,
at the chapter's scale (T = 1024, 7 δ, 16384 paths). Prints per-seed exponents and mean ± SD per arm.

Run: .venv/bin/python bench/annealing_robustness_abs_pilot.py
"""
import statistics
import sys
import time

import torch

from theorybook.annealing_robustness.theory import fit_exponent
from theorybook.annealing_robustness.worst_case import (
    EXPERIMENT_PATHS,
    EXPERIMENT_RHO,
    EXPERIMENT_T,
    WINDOW_ANNEALED,
    default_deltas,
    family_run,
)

SCHED = (("fixed", None), ("polynomial", 1), ("polynomial", 2))
seeds = range(9101, 9113) if len(sys.argv) < 2 else [int(s) for s in sys.argv[1:]]
out = {k: [] for k in ("fixed", "linear", "quadratic", "averaged")}
for s in seeds:
    t0 = time.time()
    run = family_run(SCHED, torch.tensor(EXPERIMENT_RHO, dtype=torch.float64), EXPERIMENT_T, family="abs",
                     deltas=default_deltas(EXPERIMENT_T, 7), n_paths=EXPERIMENT_PATHS, seed=s, averaged=True,
                     dtype=torch.float32)
    lo, hi = WINDOW_ANNEALED
    for i, lab in enumerate(("fixed", "linear", "quadratic")):
        out[lab].append(fit_exponent(run.rho, run.envelope[i], rho_min=lo, rho_max=hi).slope)
    out["averaged"].append(fit_exponent(run.rho, run.averaged_envelope, rho_min=lo, rho_max=hi).slope)
    print(s, {k: round(v[-1], 4) for k, v in out.items()}, f"{time.time() - t0:.1f}s", flush=True)
for k, v in out.items():
    print(k, f"mean {statistics.mean(v):.4f} SD {statistics.stdev(v) if len(v) > 1 else 0:.4f} "
             f"min {min(v):.4f} max {max(v):.4f}")
