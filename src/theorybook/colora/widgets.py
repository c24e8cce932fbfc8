"""The chapter's control panel: task similarity τ, samples per task n, number of tasks k, rank r, noise σ and the
number of alternating rounds → the median recovery error of CoLoRA, independent LoRA and FedAvg-LoRA (one global
adapter; with the oracle's), and CoLoRA's subspace error sin Θ(Â_t, A*) round by round. One data draw (seed 0,
d = 16) and three fits per update (≈ 0.05 s of compute at the defaults).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..device import to_numpy
from ..plotting import COLORS, figure, label_axes, theory_line
from ..validate import integer, number
from ..widgets import live_panel
from .experiment import (
    colora_fit,
    independent_fit,
    make_tasks,
    oracle_error,
    relative_error,
    sample_threshold,
    sin_theta,
)

__all__ = ["Summary", "summarize", "render", "explorer"]

WIDTH = 16
_NAMES = ("CoLoRA", "independent LoRA", "FedAvg-LoRA")


class Summary(NamedTuple):
    """Median relative errors (CoLoRA, independent, shared), the oracle's (inf when n ≤ r² + 1), CoLoRA's sin Θ per
    round and the status line."""

    errors: np.ndarray
    oracle: float
    sin_theta: np.ndarray
    label: str


def summarize(tau: float = 0.0, n: int = 24, k: int = 16, r: int = 2, sigma: float = 0.01,
              iters: int = 15) -> Summary:
    """Draw one task family (d = 16, seed 0) and fit the three methods."""
    tau = number("tau", tau, 0.0, 2.0)
    n = integer("n", n, 1, 256)
    k = integer("k", k, 1, 32)
    r = integer("r", r, 1, 4)
    sigma = number("sigma", sigma, 0.0, 1.0)
    iters = integer("iters", iters, 1, 60)
    T = make_tasks(k, WIDTH, r, n, tau=tau, sigma=sigma, seed=0)
    fits = (colora_fit(T.X, T.y, r, iters=iters), independent_fit(T.X, T.y, r, iters=iters),
            colora_fit(T.X, T.y, r, iters=iters, shared_core=True))
    errs = np.array([float(relative_error(f.M, T.M).median()) for f in fits])
    orc = float(oracle_error(T.M, sigma, r, n).median()) if n >= r * r + 2 else math.inf  # infinite risk
    st = np.asarray(to_numpy(sin_theta(fits[0].A_history, T.A.expand_as(fits[0].A_history))), dtype=np.float64)
    th = sample_threshold(WIDTH, r, k, "colora")
    label = (f"median relative error — CoLoRA {errs[0]:.3g} · independent {errs[1]:.3g} · FedAvg-LoRA {errs[2]:.3g}"
             + (f" · oracle {orc:.3g}" if math.isfinite(orc) else "")
             + f"  (counting thresholds n ≥ {th:.1f} CoLoRA, {sample_threshold(WIDTH, r, k, 'independent'):.0f} solo)")
    return Summary(errs, orc, st, label)


def render(tau: float = 0.0, n: int = 24, k: int = 16, r: int = 2, sigma: float = 0.01, iters: int = 15):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    s = summarize(tau, n, k, r, sigma, iters)
    fig, (ax, ax2) = figure(2, width=4.2, height=3.0)
    x = np.arange(3)
    ax.bar(x, np.maximum(s.errors, 1e-16), color=COLORS[:3])
    if math.isfinite(s.oracle) and s.oracle > 0:
        ax.axhline(s.oracle, color="black", ls="--", lw=1.2, label="oracle (A, B known)")
    ax.set_yscale("log")
    ax.set_xticks(x, _NAMES, rotation=12)
    label_axes(ax, "method", "median ‖M̂ − M*‖ / ‖M*‖", f"τ = {tau:g}, n = {n}, k = {k}")
    t = np.arange(s.sin_theta.size)
    ax2.semilogy(t, np.maximum(s.sin_theta, 1e-16), color=COLORS[0], marker="o", ms=3, label="CoLoRA")
    if s.sin_theta.size > 2 and s.sin_theta[2] > 0:
        theory_line(ax2, t[2:], s.sin_theta[2] * 0.8 ** (t[2:] - 2), label="rate 0.8 (verdict bound)")
    label_axes(ax2, "round t", "sin Θ(Â_t, A*)", "shared subspace error")
    return fig, s


def explorer():
    """The panel: τ, n, k, r, σ and rounds → errors of the three methods and CoLoRA's sin Θ curve."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "tau": w.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.05, description="τ (dissimilarity)", style=style),
        "n": w.IntSlider(value=24, min=2, max=128, step=2, description="n per task", style=style),
        "k": w.IntSlider(value=16, min=1, max=32, step=1, description="k tasks", style=style),
        "r": w.IntSlider(value=2, min=1, max=4, step=1, description="rank r", style=style),
        "sigma": w.FloatSlider(value=0.01, min=0.0, max=0.5, step=0.01, description="noise σ", style=style),
        "iters": w.IntSlider(value=15, min=1, max=32, step=1, description="rounds", style=style),
    }
    return live_panel(controls, render, rows=[["tau", "n", "k"], ["r", "sigma", "iters"]])
