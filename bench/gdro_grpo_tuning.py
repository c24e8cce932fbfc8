"""GDRO-for-GRPO: the step sizes tuned with equal budgets, on the pilot seeds (issue 44: GRPO's baseline was left at an
untuned step size while η_q was tuned).

    python bench/gdro_grpo_tuning.py      # ≈ 10 s on a 2-core CPU; writes bench/results/gdro_grpo_tuning.json

Protocol, fixed before any run: the criterion is the mean worst-topic pass@8 after 60 steps (8 runs per seed, the
chapter's world and defaults otherwise), averaged over the pilot seeds 9001–9003 (theorybook.check.PILOT_SEEDS).
GRPO's step size lr gets a grid of 4 values — the budget η_q got: {0.1, 0.3, 1, 3}. Prompt-GDRO then runs at GRPO's
tuned lr (matched step sizes: its weights are normalised to batch mean 1) and η_q gets the same 4-value grid.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.gdro_grpo.experiment import simulate  # noqa: E402

GRID = (0.1, 0.3, 1.0, 3.0)
PILOTS = (9001, 9002, 9003)


def worst(method: str, **kw) -> float:
    return float(sum(simulate(method, seed=s, curves=False, **kw).topic_pass8[:, -1].min(1).mean() for s in PILOTS)
                 / len(PILOTS))


def main() -> None:
    info = machine_info()
    t0 = time.process_time()
    grpo = {lr: worst("grpo", lr=lr) for lr in GRID}
    lr_star = max(grpo, key=grpo.get)
    gdro = {eq: worst("prompt_gdro", lr=lr_star, eta_q=eq) for eq in GRID}
    eq_star = max(gdro, key=gdro.get)
    res = {"machine": info, "cpu_seconds": round(time.process_time() - t0, 2), "pilot_seeds": list(PILOTS),
           "criterion": "mean worst-topic pass@8 after 60 steps, 8 runs per seed", "grid": list(GRID),
           "grpo_lr": {str(k): v for k, v in grpo.items()}, "lr_star": lr_star,
           "prompt_gdro_eta_q_at_lr_star": {str(k): v for k, v in gdro.items()}, "eta_q_star": eq_star}
    out = pathlib.Path(__file__).parent / "results" / "gdro_grpo_tuning.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps({k: v for k, v in res.items() if k != "machine"}, indent=1))


if __name__ == "__main__":
    main()
