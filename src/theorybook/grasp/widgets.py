"""The chapter's control panel: noise σ, scale c, budget T and the scoring rule → the exact ‖∇F‖/‖∇F(x₀)‖ of every
Grasp-style candidate (our reconstruction) against its step η_k/η̄*, its score (√score/‖∇F(x₀)‖, drawn, so that
the scoring rule visibly changes the panel), the chosen candidate, and the
oracle's tuned step η* (best constant step in hindsight, same budget, one seed). T ≤ 2¹⁰ keeps an update < 0.25 s.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch

from ..device import one_thread, to_numpy
from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .experiment import DIM, LAM
from .methods import RobustRegression, grad_norm, grasp, oracle, robust_regression

__all__ = ["PanelResult", "panel", "render", "explorer"]

_N = 2000
_T_OPTIONS = (2**6, 2**7, 2**8, 2**9, 2**10)


@lru_cache(maxsize=16)
def _problem(sigma: float, c: float) -> RobustRegression:
    return robust_regression(sigma, c, n=_N, d=DIM, lam=LAM, seed=0)


class PanelResult(NamedTuple):
    """What the panel reports for one setting."""

    chosen: int  # k of the chosen candidate
    chosen_norm: float  # its ‖∇F‖/‖∇F(x₀)‖
    best_candidate_norm: float  # the best candidate in hindsight
    oracle_norm: float  # oracle SGD (T steps)
    oracle_eta_rel: float  # η*/η̄*
    label: str


def panel(sigma: float = 0.01, c: float = 1.0, T: int = 1024, score: str = "ustat",
          seed: int = 0) -> tuple[PanelResult, dict[str, np.ndarray]]:
    """Pure compute behind the panel (validated); returns the result and the curves to draw."""
    s = number("sigma", sigma, 0.0, 100.0)
    cv = number("c", c, 1e-6, 1e6)
    t = integer("T", T, 64, 2**10)
    one_of("score", score, ("ustat", "naive"))
    sd = integer("seed", seed, 0, 2**63 - 1)
    prob = _problem(s, cv)
    with one_thread(prob.device):
        g0 = float(torch.linalg.vector_norm(prob.gradient(prob.x0(1))))
        gr = grasp(prob, t, seeds=1, seed=sd, score=score)
        orc = oracle(prob, t, seeds=1, seed=sd + 1)
        cand = grad_norm(prob, gr.candidates)[0, :, 0] / g0
    eb = float(orc.eta_bar[0])
    k = int(gr.chosen[0, 0])
    sc = to_numpy(gr.scores[0, :, 0])
    score_rel = np.sqrt(np.clip(sc, 0.0, None)) / g0  # √score estimates ‖∇F‖; 0 where the U-statistic is ≤ 0
    curves = {"eta": to_numpy(gr.etas[0, :, 0]) / eb, "cand": to_numpy(cand), "score": sc, "score_rel": score_rel,
              "orc_eta": to_numpy(orc.etas[0]) / eb, "orc": to_numpy(orc.grad_norm[0, :, 0]) / g0}
    res = PanelResult(k, float(cand[k]), float(cand.min()), float(orc.best_grad_norm[0, 0]) / g0,
                      float(orc.best_eta[0, 0]) / eb, "")
    label = (f"Grasp-style (our reconstruction) picks k = {k} of {len(curves['eta'])}: ‖∇F‖/‖∇F(x₀)‖ = "
             f"{res.chosen_norm:.3f} (best candidate {res.best_candidate_norm:.3f}; {gr.steps} steps each) · oracle "
             f"SGD ({t} steps): {res.oracle_norm:.3f} at η*/η̄* = 2^{np.log2(res.oracle_eta_rel):.2f}")
    return res._replace(label=label), curves


def render(sigma: float = 0.01, c: float = 1.0, T: int = 1024, score: str = "ustat"):
    """Draw the panel for one setting; returns ``(fig, result)``."""
    res, cv = panel(sigma, c, T, score)
    fig, (ax,) = figure(1, width=6.4, height=3.4)
    finite = np.isfinite(cv["orc"])
    ax.plot(cv["orc_eta"][finite], cv["orc"][finite], color=COLORS[7], lw=0.9, alpha=0.6,
            label=f"constant-step SGD, {int(T)} steps")
    ax.plot(cv["eta"], cv["cand"], "o-", color=COLORS[0], ms=4, label="Grasp-style candidates (exact ‖∇F‖)")
    name = "U-statistic" if score == "ustat" else "naive ‖ĝ‖²"
    ax.plot(cv["eta"], np.where(cv["score_rel"] > 0, cv["score_rel"], np.nan), "x--", color=COLORS[1], ms=6, lw=0.8,
            label=f"√score ({name}; missing where ≤ 0)")
    ax.plot(cv["eta"][res.chosen], res.chosen_norm, "*", color=COLORS[3], ms=14, label="chosen by the score")
    ax.axvline(res.oracle_eta_rel, color=COLORS[2], ls=":", label="oracle η*")
    ax.axvspan(cv["eta"].min(), cv["eta"].max(), color=COLORS[0], alpha=0.07, label="grid [η̄/T, η̄]")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    label_axes(ax, "step η / η̄* (exact anchor)", "‖∇F‖ / ‖∇F(x₀)‖", f"σ = {sigma:g}, c = {c:g}, T = {int(T)}")
    return fig, res


def explorer():
    """The chapter's panel (``theorybook.widgets.live_panel``)."""
    import ipywidgets as w

    controls = {
        "sigma": w.SelectionSlider(options=[0.0, 0.001, 0.01, 0.1, 0.3, 1.0, 3.0, 10.0], value=0.01, description="σ"),
        "c": w.SelectionSlider(options=[2.0**k for k in range(-12, 13, 3)], value=1.0, description="c"),
        "T": w.SelectionSlider(options=list(_T_OPTIONS), value=1024, description="T"),
        "score": w.ToggleButtons(options=["ustat", "naive"], value="ustat", description="score"),
    }
    return live_panel(controls, render, rows=[["sigma", "c"], ["T", "score"]])
