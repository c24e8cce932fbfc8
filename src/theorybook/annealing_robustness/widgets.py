"""The chapter's control panel: pick a schedule, its degree p, the misspecification ρ and the horizon T; see
SGD's loss curves at the ideal stepsize and at ρ times it, and where ρ sits on the bound-vs-ρ curve.

The compute (:func:`explore`) is one batched :func:`run_sgd` call (2 stepsizes × 4 seeds, T ≤ 1000 steps) and
two :func:`suffix_bound` curves, well under 0.25 s on a laptop CPU. It never raises inside the sliders'
ranges;
a non-finite loss is reported as "diverged" (the projection onto the ball makes that impossible in practice).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch

from ..plotting import COLORS, figure, label_axes
from ..widgets import live_panel
from .dynamics import Problem, make_problem, run_sgd
from .theory import ideal_eta, schedule, suffix_bound

__all__ = ["Exploration", "explore", "render", "explorer", "SCHEDULE_CHOICES"]

SCHEDULE_CHOICES = ("fixed", "inverse_sqrt", "polynomial", "cosine")


class Exploration(NamedTuple):
    """Panel data: loss curves (steps, tuned, off) and bound curves (rho_grid, bound, bound_fixed)."""

    label: str
    steps: np.ndarray
    tuned: np.ndarray  # seed-mean excess loss at η*
    off: np.ndarray  # seed-mean excess loss at ρη*
    rho_grid: np.ndarray
    bound: np.ndarray
    bound_fixed: np.ndarray
    rho: float
    diverged: bool


@lru_cache(maxsize=2)
def _default_problem() -> Problem:
    return make_problem("logistic", n=400, d=10, seed=0)


def explore(name: str = "polynomial", p: float = 1.0, rho: float = 8.0, T: int = 500,
            problem: Problem | None = None) -> Exploration:
    """SGD at η* and ρη* (η* = the bound's ideal stepsize, :func:`ideal_eta`, in units R/G), 4 seeds,
    and the [reconstruction] bound vs ρ for the schedule and for the fixed stepsize."""
    h = schedule(name, p if name == "polynomial" else None)
    prob = _default_problem() if problem is None else problem
    eta_star = ideal_eta(h, T) * prob.radius / prob.lipschitz
    run = run_sgd(prob, torch.tensor([eta_star, rho * eta_star]), h, T, seeds=4,
                  record_every=max(1, T // 40), device="cpu")
    curves = run.excess.mean(-1).numpy()  # (K, 2)
    diverged = not bool(np.isfinite(curves).all())
    rho_grid = np.logspace(0, 3, 25)
    bound = suffix_bound(torch.from_numpy(rho_grid), h, T, device="cpu").numpy()
    bound_fixed = suffix_bound(torch.from_numpy(rho_grid), "fixed", T, device="cpu").numpy()
    if diverged:
        label = f"{h.label}: diverged (non-finite loss)"
    else:
        ratio = curves[-1, 1] / max(curves[-1, 0], 1e-300)
        label = (f"{h.label}, ρ = {rho:.3g}: final excess {curves[-1, 1]:.3g} vs {curves[-1, 0]:.3g} at η* "
                 f"(× {ratio:.2f})")
    return Exploration(label, run.steps.numpy(), curves[:, 0], curves[:, 1], rho_grid, bound, bound_fixed,
                       float(rho), diverged)


def render(name: str = "polynomial", p: float = 1.0, rho: float = 8.0, T: int = 500):
    """Draw the panel's figure; returns ``(fig, exploration)``."""
    ex = explore(name, p, rho, T)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    floor = 1e-12
    ax.semilogy(ex.steps, np.maximum(ex.tuned, floor), color=COLORS[0], label="η = η*")
    ax.semilogy(ex.steps, np.maximum(ex.off, floor), color=COLORS[3], label=f"η = {ex.rho:.3g}·η*")
    label_axes(ax, "step t", "excess loss f(x_t) − f*", title="SGD, mean of 4 seeds")
    ax2.loglog(ex.rho_grid, ex.bound, color=COLORS[2], label="this schedule")
    ax2.loglog(ex.rho_grid, ex.bound_fixed, color="black", ls="--", label="fixed")
    b_at = float(suffix_bound(ex.rho, schedule(name, p if name == "polynomial" else None), T, device="cpu"))
    ax2.plot([ex.rho], [b_at], "o", color=COLORS[3], ms=8, label=f"ρ = {ex.rho:.3g}")
    label_axes(ax2, "misspecification ρ", "bound × √T/(DG) [reconstruction]", title=f"T = {T}")
    return fig, ex


def explorer():
    """The ipywidgets panel: schedule, p, log₁₀ ρ, T → loss curves and the bound-vs-ρ curve."""
    import ipywidgets as w

    controls = {
        "name": w.Dropdown(options=list(SCHEDULE_CHOICES), value="polynomial", description="schedule"),
        "p": w.FloatSlider(value=1.0, min=1.0, max=4.0, step=0.5, description="p (poly)"),
        "rho": w.FloatLogSlider(value=8.0, base=10, min=0, max=3, step=0.125, description="ρ"),
        "T": w.IntSlider(value=500, min=100, max=1000, step=100, description="T"),
    }
    return live_panel(controls, render, rows=[["name", "p"], ["rho", "T"]])
