"""Pilot: Landing at its best (λ_L, η) within POGO's budget — the control of the 'hyperparameters' row (issue 57).

The rule, fixed before running: on the chapter's Procrustes experiment (``PROCRUSTES``: 32 float32 problems of
16 × 16, 150 steps, POGO's budget), Landing runs on every cell of the grid λ_L ∈ {0.1, 0.3, 1, 3, 10, 30, 100} ×
η·L ∈ {0.5, 1, 2, 4} (its safe step ε = ½, its authors' default) on pilot seeds 9001–9005 (disjoint from the chapter's
seed 0 and the robustness seeds). A run's score is the row's own statistic,
max(gap₁₅₀ / 1e-2, ‖XXᵀ − I‖_F,₁₅₀ / 1e-5) — ≤ 1 means optimised (gap ≤ 1e-2, the chapter's progress bound) *and*
on the manifold (float32 level) at the end of the budget. The tuned cell minimises the median score over the five
pilot seeds. POGO-SGD at η = 1/L (its only hyperparameter, not tuned) is scored on the same seeds for reference.

    python bench/pogo_landing_tuning.py     # ≈ 1–2 min of CPU

Writes bench/results/pogo_landing_tuning.json (read by tests/test_pogo_orthogonal.py, which checks that
``verdicts.LANDING_TUNING`` holds the tuned cell).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import torch

from theorybook.pogo_orthogonal.dynamics import procrustes_problem, run_method
from theorybook.pogo_orthogonal.verdicts import F32_LEVEL, LANDING_GRID, PROCRUSTES, score

OUT = Path(__file__).resolve().parent / "results" / "pogo_landing_tuning.json"


def main() -> None:
    torch.set_num_threads(1)
    steps, seeds = PROCRUSTES["steps"], LANDING_GRID["pilot_seeds"]
    probs = {s: procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], s, dtype=torch.float32) for s in seeds}
    cells = []
    for lam in LANDING_GRID["lam"]:
        for etaL in LANDING_GRID["eta_L"]:
            runs = [run_method(probs[s], "landing", etaL / probs[s].lipschitz, steps, landing_lam=lam)
                    for s in seeds]
            scores = [score(r.gap[-1], r.infeas[-1]) for r in runs]
            cells.append({"lam": lam, "eta_L": etaL, "median_score": statistics.median(scores), "scores": scores,
                          "gap": [r.gap[-1] for r in runs], "infeas": [r.infeas[-1] for r in runs]})
            print(f"λ_L {lam:>5}  η·L {etaL:>4}  median score {cells[-1]['median_score']:.3g}  "
                  f"gaps {min(cells[-1]['gap']):.1e}–{max(cells[-1]['gap']):.1e}  "
                  f"infeas {min(cells[-1]['infeas']):.1e}–{max(cells[-1]['infeas']):.1e}", flush=True)
    best = min(cells, key=lambda c: c["median_score"])
    pogo = [run_method(probs[s], "pogo-sgd", 1 / probs[s].lipschitz, steps) for s in seeds]
    out = {"rule": __doc__.split("\n\n")[1], "grid": {k: list(v) for k, v in LANDING_GRID.items()},
           "steps": steps, "f32_level": F32_LEVEL, "cells": cells,
           "best": {"lam": best["lam"], "eta_L": best["eta_L"], "median_score": best["median_score"]},
           "pogo_sgd": {"scores": [score(r.gap[-1], r.infeas[-1]) for r in pogo],
                        "gap": [r.gap[-1] for r in pogo], "infeas": [r.infeas[-1] for r in pogo]}}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print("best", out["best"], "POGO scores", out["pogo_sgd"]["scores"])


if __name__ == "__main__":
    main()
