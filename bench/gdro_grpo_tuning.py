"""GDRO-for-GRPO: the step sizes tuned with equal budgets, on the pilot seeds, by a ceiling-free criterion.

    python bench/gdro_grpo_tuning.py      # ≈ 1 min on a 2-core CPU; writes bench/results/gdro_grpo_tuning.json

History. Issue 44: GRPO's baseline was left at an untuned step size while η_q was tuned; it was then tuned by the
worst-topic pass@8 after 60 steps, which picked lr 3, the edge of the grid {0.1, 0.3, 1, 3}, where GRPO ends at 0.99
— a ceiling at which no method can gain (the review of 2026-12-06, issue 57). This protocol replaces it.

Protocol, fixed before any run: the criterion is the area under the worst-topic pass@8 curve, the mean over steps
1..60 of min over topics of pass@8 (8 runs per seed, the chapter's world and defaults otherwise), averaged over the
pilot seeds 9001–9003 (theorybook.check.PILOT_SEEDS). GRPO's step size lr gets a grid of 5 values, {0.3, 1, 3, 10,
30} (the old grid moved up past its edge). Prompt-GDRO then runs at GRPO's tuned lr (matched step sizes: its weights
are normalised to batch mean 1) and η_q gets a 5-value grid, {0.3, 1, 3, 10, 30}; the sceptic's rival, the
per-prompt difficulty weighting without bins, EMA or adversary (``method="difficulty_weighted"``), runs at the same
lr and its temperature κ gets the same 5-value grid. Equal budgets: 5 values each. The same two tunings are repeated at
the intermediate matched step lr = 3 (``LR_MID``: the step the previous, final-step tuning chose, at which the worst
topic is learned over the whole run rather than in the first few steps).
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.device import one_thread  # noqa: E402
from theorybook.gdro_grpo.experiment import simulate, worst_auc  # noqa: E402

GRID = (0.3, 1.0, 3.0, 10.0, 30.0)
LR_MID = 3.0
PILOTS = (9001, 9002, 9003)


def auc(method: str, **kw) -> float:
    return float(sum(worst_auc(simulate(method, seed=s, **kw)).mean() for s in PILOTS) / len(PILOTS))


def main() -> None:
    info = machine_info()
    t0 = time.process_time()
    with one_thread("cpu"):
        grpo = {lr: auc("grpo", lr=lr) for lr in GRID}
        lr_star = max(grpo, key=grpo.get)
        gdro = {eq: auc("prompt_gdro", lr=lr_star, eta_q=eq) for eq in GRID}
        dw = {k: auc("difficulty_weighted", lr=lr_star, eta_q=k) for k in GRID}
        gdro_mid = {eq: auc("prompt_gdro", lr=LR_MID, eta_q=eq) for eq in GRID}
        dw_mid = {k: auc("difficulty_weighted", lr=LR_MID, eta_q=k) for k in GRID}
    res = {"machine": info, "cpu_seconds": round(time.process_time() - t0, 2), "pilot_seeds": list(PILOTS),
           "criterion": "area under the worst-topic pass@8 curve (mean over steps 1..60), 8 runs per seed",
           "grid": list(GRID), "grpo_lr": {str(k): v for k, v in grpo.items()}, "lr_star": lr_star,
           "prompt_gdro_eta_q_at_lr_star": {str(k): v for k, v in gdro.items()},
           "eta_q_star": max(gdro, key=gdro.get),
           "difficulty_weighted_kappa_at_lr_star": {str(k): v for k, v in dw.items()},
           "kappa_star": max(dw, key=dw.get), "lr_mid": LR_MID,
           "prompt_gdro_eta_q_at_lr_mid": {str(k): v for k, v in gdro_mid.items()},
           "eta_q_mid": max(gdro_mid, key=gdro_mid.get),
           "difficulty_weighted_kappa_at_lr_mid": {str(k): v for k, v in dw_mid.items()},
           "kappa_mid": max(dw_mid, key=dw_mid.get)}
    out = pathlib.Path(__file__).parent / "results" / "gdro_grpo_tuning.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    main()
