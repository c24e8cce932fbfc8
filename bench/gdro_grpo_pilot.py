"""GDRO-for-GRPO: the pilot of the simulated-policy rows rebuilt for issue 57, on pilot seeds only.

    python bench/gdro_grpo_pilot.py      # ≈ 1 min on a 2-core CPU; writes bench/results/gdro_grpo_pilot.json

The rows, their statistics and their controls were fixed before this pilot ran (see the chapter's verdicts notes);
the pilot records their spread on the pilot seeds 9004–9013 (theorybook.check.PILOT_SEEDS; disjoint from the tuning
seeds 9001–9003, the chapter's seed 28 and the robustness seeds 7001–7040):

* worst-topic area (mean over steps 1..60 of min-over-topics pass@8), Prompt-GDRO − GRPO, 8 paired runs, at the
  intermediate matched step lr 3 (η_q and the rival's κ tuned there) and at GRPO's tuned step lr 30;
* the lead–lag gap |Δµ̃| (weight restricted to the batch's non-empty bins) over the first 10 steps minus the last 10
  at lr 3, for the adversary and for its two controls on the same runs (a fixed difficulty prior, uniform weight);
* the matched-lr scan of the area gain over GRPO's lr grid, for the chapter's prose.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.device import one_thread  # noqa: E402
from theorybook.gdro_grpo.experiment import lead_lag, simulate, tuning_results, worst_auc  # noqa: E402

PILOTS = tuple(range(9004, 9014))


def lcb(d: np.ndarray, t: float) -> float:
    return float(d.mean() - t * d.std(ddof=1) / np.sqrt(d.size))


def main() -> None:
    from scipy.stats import t as student

    info = machine_info()
    tune = tuning_results()
    t7 = float(student.ppf(1 - 1e-3 / 2, 7))
    t0 = time.process_time()
    out: dict[str, list] = {k: [] for k in ("mid_gain", "mid_rival", "mid_lcb", "mid_rival_lcb", "star_gain",
                                            "star_room", "star_planted", "ll_adv", "ll_prior", "ll_uniform",
                                            "ll_adv_mean", "ll_prior_mean", "ll_uniform_mean")}
    scan: dict[str, list] = {}
    with one_thread("cpu"):
        for s in PILOTS:
            lm, ls = tune["lr_mid"], tune["lr_star"]
            g = simulate("grpo", seed=s, lr=lm)
            p = simulate("prompt_gdro", seed=s, lr=lm, eta_q=tune["eta_q_mid"])
            d = simulate("difficulty_weighted", seed=s, lr=lm, eta_q=tune["kappa_mid"])
            dg, dd = worst_auc(p) - worst_auc(g), worst_auc(d) - worst_auc(g)
            out["mid_gain"].append(float(dg.mean()))
            out["mid_rival"].append(float(dd.mean()))
            out["mid_lcb"].append(lcb(dg, t7))
            out["mid_rival_lcb"].append(lcb(dd, t7))
            B = p.weight.shape[2]
            prior = np.exp(tune["eta_q_mid"] * (1.0 - (np.arange(B) + 0.5) / B))
            for key, w in (("ll_adv", None), ("ll_prior", prior), ("ll_uniform", np.ones(B))):
                a = np.abs(lead_lag(p, w))
                e = a[:, :10].mean(1) - a[:, -10:].mean(1)
                out[key].append(lcb(e, t7))
                out[key + "_mean"].append(float(e.mean()))
            g3 = simulate("grpo", seed=s, lr=ls)
            p3 = simulate("prompt_gdro", seed=s, lr=ls, eta_q=tune["eta_q_star"])
            wg, wp = g3.topic_pass8[:, 1:].min(2), p3.topic_pass8[:, 1:].min(2)
            out["star_gain"].append(float((wp.mean(1) - wg.mean(1)).mean()))
            out["star_room"].append(float(1.0 - wg.mean()))
            out["star_planted"].append(float((np.minimum(wp + 0.0568, 1.0).mean(1) - wg.mean(1)).mean()))
            if s in PILOTS[:3]:
                for lr in (0.3, 1.0, 3.0, 10.0, 30.0):
                    gg = worst_auc(simulate("grpo", seed=s, lr=lr))
                    pp = worst_auc(simulate("prompt_gdro", seed=s, lr=lr, eta_q=3.0))
                    scan.setdefault(f"{lr:g}", []).append(float((pp - gg).mean()))
    summary = {k: {"mean": float(np.mean(v)), "min": float(np.min(v)), "max": float(np.max(v))}
               for k, v in out.items()}
    res = {"machine": info, "cpu_seconds": round(time.process_time() - t0, 1), "pilot_seeds": list(PILOTS),
           "t_7df_two_sided_1e-3": t7, "per_seed": out, "summary": summary,
           "matched_lr_gain_eta_q_3 (seeds 9004-9006)": {k: float(np.mean(v)) for k, v in scan.items()}}
    path = pathlib.Path(__file__).parent / "results" / "gdro_grpo_pilot.json"
    path.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps({k: res[k] for k in ("summary", "matched_lr_gain_eta_q_3 (seeds 9004-9006)", "cpu_seconds")},
                     indent=1))


if __name__ == "__main__":
    main()
