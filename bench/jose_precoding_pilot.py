"""Pilot for the JoSE downstream experiment (issue 57): how many seeds does the paired t of AUC need to see the
paper's ≈2× speed-up planted in the JoSE arm itself?

The review (findings 2026-12-06, §2.16) found that at 20 seeds a 2× speed-up planted in the JoSE arm gives
t = 2.26 < t₁₉(0.999) = 3.58 (bootstrap P(caught) = 0.15): the downstream rows could not have seen the paper's
effect. This pilot fixes the number of seeds of the bench *before* the bench runs, on the pilot seeds
(``theorybook.check.PILOT_SEEDS``, disjoint from the bench's, the chapter's and the robustness seeds):

* run the full-space, JoSE-4 and PCA-4 arms of ``cem_reaching`` (the bench's configuration, ``BENCH_CEM``) on
  ``PILOT`` seeds;
* plant the paper's effect in the JoSE arm: its best-so-far curve compressed 2× in rollouts (after j iterations it
  has what it had after 2j, capped at its own final value) — ``downstream.compress``;
* the standardised paired effect δ = mean(d)/sd(d) of d = AUC(rival) − AUC(JoSE 2×) for both rivals (full space,
  PCA latent);
* the design: the smallest n (a multiple of 10) with noncentral-t power P(T_{n−1}(δ√n) > t_{n−1}(0.999)) ≥ 0.99
  at the smaller δ — so a true 2× speed-up would be missed with probability ≤ 1 %.

    python bench/jose_precoding_pilot.py      # writes bench/results/jose_precoding_pilot.json
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.check import PILOT_SEEDS  # noqa: E402
from theorybook.device import one_thread  # noqa: E402
from theorybook.jose_precoding.downstream import cem_reaching, compress  # noqa: E402
from theorybook.jose_precoding.experiment import BENCH_CEM  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "jose_precoding_pilot.json"
PILOT = tuple(PILOT_SEEDS)[:60]  # 9001–9060
POWER, ALPHA = 0.99, 1e-3


def design_n(delta: float) -> tuple[int, float]:
    """The smallest n (multiple of 10, ≥ 20) whose one-sided paired t at ALPHA has power ≥ POWER at effect δ."""
    from scipy.stats import nct
    from scipy.stats import t as student_t

    for n in range(20, 2001, 10):
        thr = student_t.ppf(1 - ALPHA, n - 1)
        pw = float(nct.sf(thr, n - 1, delta * np.sqrt(n)))
        if pw >= POWER:
            return n, pw
    raise RuntimeError(f"δ = {delta:.3f}: no n ≤ 2000 reaches power {POWER}")


def main() -> None:
    cfg = {k: v for k, v in BENCH_CEM.items() if k != "seeds"}
    info = machine_info()
    t0 = time.perf_counter()
    with one_thread():
        res = cem_reaching(PILOT, arms=("full", "jose", "pca"), **cfg)
    secs = time.perf_counter() - t0
    auc = {a: c.mean(1) for a, c in res.curves.items()}
    auc_2x = compress(res.curves["jose"], 2.0).mean(1)
    deltas = {}
    for rival in ("full", "pca"):
        d = auc[rival] - auc_2x
        deltas[rival] = float(d.mean() / d.std(ddof=1))
    d_unplanted = auc["full"] - auc["jose"]
    n, pw = design_n(min(deltas.values()))
    out = {"machine": info, "seconds": round(secs, 1), "seeds": list(PILOT), "config": cfg,
           "delta_2x": deltas, "delta_unplanted_vs_full": float(d_unplanted.mean() / d_unplanted.std(ddof=1)),
           "power": POWER, "alpha": ALPHA, "design_n": n, "design_power": pw,
           "auc": {a: v.tolist() for a, v in auc.items()}, "auc_jose_2x": auc_2x.tolist()}
    print(json.dumps({k: out[k] for k in ("delta_2x", "delta_unplanted_vs_full", "design_n", "design_power")}))
    print(f"{secs:.0f} s on {info['cpu']} ({info['cores']} cores)")
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
