"""The chapter's control panel: move (m, s) to see the regularised objective and its argmax; move the horizon T,
the prior variance σ₀² and the shutdown threshold z₀ to see the four exact regret curves.

The regret curves come from the same backward induction as the chapter, on a 401-point grid and T ≤ 100; the
FFT kernels and each policy's solution are cached, so moving (m, s) only redraws, and a new (T, σ₀², z₀) costs
one small DP. ``bench/widgets.py`` times :func:`render`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import validate
from ..device import to_numpy
from ..plotting import COLORS, figure, label_axes
from ..widgets import live_panel
from .dynamics import POLICIES, solve_bandit
from .theory import regularised_objective, ts_probability

__all__ = ["WIDGET_GRID", "WIDGET_MAX_T", "Summary", "render", "explorer"]

WIDGET_GRID = 401
WIDGET_MAX_T = 100
_LABELS = {"ts": "Thompson sampling", "greedy": "greedy", "optimal": "Bayes-optimal", "shutdown": "TS + shutdown"}


class Summary(NamedTuple):
    """What the panel reports for one setting."""

    x_ts: float  # Φ(m/s)
    x_grid: float  # argmax of the objective on a 2001-point grid in x
    regret: dict  # policy → R_T
    label: str


def render(m: float = -0.3, s: float = 0.6, horizon: int = 50, prior_var: float = 1.0, shutdown_z: float = 2.0):
    """Draw the panel for one setting; returns ``(fig, summary)``. Raises ``ValueError`` on invalid settings."""
    m = validate.number("m", m, -10.0, 10.0)
    s = validate.number("s", s, 0.01, 10.0)
    T = validate.integer("horizon", horizon, 1, WIDGET_MAX_T)
    v0 = validate.number("prior_var", prior_var, 0.01, 100.0)
    z0 = validate.number("shutdown_z", shutdown_z, 0.0, 10.0, low_open=True)
    xs = np.linspace(0.0, 1.0, 2001)
    obj = to_numpy(regularised_objective(xs, np.full_like(xs, m), np.full_like(xs, s)))
    x_ts = float(ts_probability(m, s))
    x_grid = float(xs[int(np.argmax(obj))])
    # one DP at the largest horizon gives R_T for every T ≤ 100 (cached per policy: moving T only slices, moving
    # z₀ re-solves the shutdown policy alone, moving σ₀² re-solves all four)
    sol = solve_bandit(WIDGET_MAX_T, policies=POLICIES, prior_var=v0, shutdown_z=z0, grid=WIDGET_GRID)
    R = to_numpy(sol.regret)[:, : T + 1]
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    ax.plot(xs, obj, color=COLORS[0], label="x·m + s·φ(Φ⁻¹(x))")
    ax.plot(xs, xs * m, color=COLORS[1], lw=1, ls=":", label="greedy part x·m")
    ax.axvline(x_ts, color="black", ls="--", lw=1.2, label=f"Φ(m/s) = {x_ts:.3f}")
    ax.plot([x_grid], [obj.max()], "o", color=COLORS[3], label="argmax (grid)")
    label_axes(ax, "pull probability x", "objective", f"m = {m:.2f}, s = {s:.2f}")
    t = np.arange(T + 1)
    for k, p in enumerate(POLICIES):
        ax2.plot(t, R[k], color=COLORS[k], label=_LABELS[p])
    label_axes(ax2, "horizon T", "Bayesian regret R_T (exact DP)", f"σ₀² = {v0:.2f}, z₀ = {z0:.2f}")
    regret = {p: float(R[k, T]) for k, p in enumerate(POLICIES)}
    label = (f"argmax {x_grid:.3f} vs Φ(m/s) = {x_ts:.3f} · R_{T}: "
             + ", ".join(f"{p} {r:.3f}" for p, r in regret.items()))
    if not math.isfinite(sum(regret.values())):  # pragma: no cover - defensive; the DP is finite by construction
        raise ValueError("non-finite regret")
    return fig, Summary(x_ts, x_grid, regret, label)


def explorer():
    """The ipywidgets panel: m, s → objective and argmax; T, σ₀², z₀ → the four regret curves."""
    import ipywidgets as w

    controls = {
        "m": w.FloatSlider(value=-0.3, min=-3.0, max=3.0, step=0.05, description="m"),
        "s": w.FloatSlider(value=0.6, min=0.05, max=3.0, step=0.05, description="s"),
        "horizon": w.IntSlider(value=50, min=1, max=100, step=1, description="T"),
        "prior_var": w.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.1, description="σ₀²"),
        "shutdown_z": w.FloatSlider(value=2.0, min=0.25, max=4.0, step=0.25, description="z₀"),
    }
    return live_panel(controls, render, rows=[["m", "s"], ["horizon", "prior_var", "shutdown_z"]])
