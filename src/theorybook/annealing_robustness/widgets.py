"""The chapter's control panel: pick a schedule, its degree p, the misspecification ρ and the horizon T.

Left: SGD's loss curves on a small logistic problem at the bound's ideal stepsize η* = e*_h·D/G (D = 2R, the
ball's diameter — :func:`ideal_eta` is in units of D/G) and at ρ times it. Right: against ρ, in the classical
normalisation η* = D/(G√T), the [reconstruction] bound for the schedule and for the fixed stepsize, and the
*measured* worst-case error over the 1-D family f = δx²/2 (:func:`family_run`, 256 paths, ± one standard error).

The compute (:func:`explore`) is one batched :func:`run_sgd` call (2 stepsizes × 4 seeds, T ≤ 1000), one small
:func:`family_run` and two :func:`suffix_bound` curves — about 0.2 s on a laptop CPU. It never raises inside the
sliders' ranges; a non-finite loss is reported as "diverged" (the projection onto the ball makes that impossible
in practice).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import to_numpy
from ..plotting import COLORS, figure, label_axes
from ..widgets import live_panel
from .dynamics import Problem, make_problem, run_sgd
from .theory import classical_eta, ideal_eta, schedule, suffix_bound
from .worst_case import default_deltas, family_run

__all__ = ["Exploration", "explore", "render", "explorer", "SCHEDULE_CHOICES"]

SCHEDULE_CHOICES = ("fixed", "inverse_sqrt", "polynomial", "cosine")
WIDGET_RHO = (1.0, 4.0, 16.0, 64.0, 256.0, 1000.0)


class Exploration(NamedTuple):
    """Panel data: loss curves (steps, tuned, off), the bound curves (rho_grid, bound, bound_fixed; classical
    normalisation) and the measured worst case over the 1-D family (family_rho, measured, measured_sem)."""

    label: str
    steps: np.ndarray
    tuned: np.ndarray  # seed-mean excess loss at η*
    off: np.ndarray  # seed-mean excess loss at ρη*
    rho_grid: np.ndarray
    bound: np.ndarray
    bound_fixed: np.ndarray
    family_rho: np.ndarray
    measured: np.ndarray
    measured_sem: np.ndarray
    rho: float
    eta_star: float
    diverged: bool


@lru_cache(maxsize=2)
def _default_problem() -> Problem:
    return make_problem("logistic", n=400, d=10, seed=0)


def _sched(name: str, p: float):
    return schedule(name, p if name == "polynomial" else None)


def explore(name: str = "polynomial", p: float = 1.0, rho: float = 8.0, T: int = 500,
            problem: Problem | None = None) -> Exploration:
    """SGD at η* = e*_h·D/G and ρη* (4 seeds); the [reconstruction] bound vs ρ for the schedule and for the
    fixed stepsize, and the measured worst case over f = δx²/2, both at the classical η* = D/(G√T).

    ``p`` in [1, 100] is used by ``polynomial`` only (the panel's slider always has a value); ``rho`` in
    [1, 10⁶]; ``T`` in [10, 20000] (a panel must stay interactive).
    """
    p = validate.number("p", p, 1.0, 100.0)
    rho = validate.number("rho", rho, 1.0, 1e6)
    T = validate.integer("T", T, 10, 20_000)
    h = _sched(name, p)
    prob = _default_problem() if problem is None else problem
    if not isinstance(prob, Problem):
        raise ValueError(f"Invalid problem: {type(prob).__name__} (must be a Problem from make_problem)")
    eta_star = ideal_eta(h, T) * prob.diameter / prob.lipschitz
    run = run_sgd(prob, torch.tensor([eta_star, float(rho) * eta_star], dtype=torch.float64), h, T, seeds=4,
                  record_every=max(1, T // 40), device="cpu")
    curves = to_numpy(run.excess.mean(-1))  # (K, 2)
    diverged = not bool(np.isfinite(curves).all())
    rho_grid = np.logspace(0, 3, 25)
    rg = torch.from_numpy(rho_grid)
    bound = to_numpy(suffix_bound(rg, h, T, eta_star=classical_eta(h, T), device="cpu"))
    bound_fixed = to_numpy(suffix_bound(rg, "fixed", T, eta_star=classical_eta("fixed", T), device="cpu"))
    fam = family_run(h, torch.tensor(WIDGET_RHO, dtype=torch.float64), T, deltas=default_deltas(T, 7),
                     n_paths=256, seed=0, dtype=torch.float32, device="cpu")
    measured, measured_sem = to_numpy(fam.envelope[0]), to_numpy(fam.envelope_sem[0])
    if diverged:
        label = f"{h.label}: diverged (non-finite loss)"
    else:
        ratio = curves[-1, 1] / max(curves[-1, 0], 1e-300)
        label = (f"{h.label}, ρ = {rho:.3g}: logistic excess {curves[-1, 1]:.3g} vs {curves[-1, 0]:.3g} at "
                 f"η* = {eta_star:.3g} (× {ratio:.2f}); worst case over δ at ρ = {WIDGET_RHO[-1]:g}: "
                 f"{measured[-1]:.3g} DG/√T")
    return Exploration(label, to_numpy(run.steps), curves[:, 0], curves[:, 1], rho_grid, bound, bound_fixed,
                       np.asarray(WIDGET_RHO), measured, measured_sem, float(rho), float(eta_star), diverged)


def render(name: str = "polynomial", p: float = 1.0, rho: float = 8.0, T: int = 500):
    """Draw the panel's figure; returns ``(fig, exploration)``."""
    ex = explore(name, p, rho, T)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    floor = 1e-12
    ax.semilogy(ex.steps, np.maximum(ex.tuned, floor), color=COLORS[0], label="η = η* (bound's ideal)")
    ax.semilogy(ex.steps, np.maximum(ex.off, floor), color=COLORS[3], label=f"η = {ex.rho:.3g}·η*")
    label_axes(ax, "step t", "excess loss f(x_t) − f*", title="logistic SGD, mean of 4 seeds")
    ax2.loglog(ex.rho_grid, ex.bound, color=COLORS[2], label="bound, this schedule")
    ax2.loglog(ex.rho_grid, ex.bound_fixed, color="black", ls="--", label="bound, fixed")
    ax2.errorbar(ex.family_rho, np.maximum(ex.measured, floor), yerr=ex.measured_sem, fmt="s", ms=4,
                 color=COLORS[1], label="measured worst case (δx²/2)")
    ax2.axvline(ex.rho, color=COLORS[3], lw=1, ls=":", label=f"ρ = {ex.rho:.3g}")
    label_axes(ax2, "misspecification ρ (η = ρ·D/(G√T))", "error × √T/(DG)", title=f"T = {T}")
    return fig, ex


def explorer():
    """The ipywidgets panel: schedule, p, log₁₀ ρ, T → loss curves, the bound and the measured worst case."""
    import ipywidgets as w

    controls = {
        "name": w.Dropdown(options=list(SCHEDULE_CHOICES), value="polynomial", description="schedule"),
        "p": w.FloatSlider(value=1.0, min=1.0, max=4.0, step=0.5, description="p (poly)"),
        "rho": w.FloatLogSlider(value=8.0, base=10, min=0, max=3, step=0.125, description="ρ"),
        "T": w.IntSlider(value=500, min=100, max=1000, step=100, description="T"),
    }
    return live_panel(controls, render, rows=[["name", "p"], ["rho", "T"]])
