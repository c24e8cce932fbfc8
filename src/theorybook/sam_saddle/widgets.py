"""Play: SAM on the quadratic saddle x² − y² — trajectory on the contours and distance to the saddle.

:func:`explore_compute` is the callback's pure compute (tested at extreme slider values); :func:`explorer`
wires it to ipywidgets. A diverging run is reported as ``"diverged"``, never raised.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ..plotting import figure, label_axes
from ..widgets import live_panel
from .dynamics import saddle_quadratic_grad, simulate_sam
from .theory import attractor_threshold

__all__ = ["ExploreResult", "explore_compute", "explorer", "render"]

_LAM = (2.0, -2.0)


class ExploreResult(NamedTuple):
    """One widget update: trajectory (steps+1, 2) as numpy (non-finite rows dropped), distance to the
    saddle per step, and a status line."""

    path: np.ndarray
    distance: np.ndarray
    status: str


def explore_compute(rho: float = 0.5, lr: float = 0.01, normalized: bool = True, momentum: float = 0.0,
                    x0: float = -3.0, y0: float = -0.01, steps: int = 500) -> ExploreResult:
    """Run SAM (or GD at ρ = 0) on x² − y² from (x0, y0); never raises for slider values in range."""
    with np.errstate(all="ignore"):
        tr = simulate_sam(saddle_quadratic_grad(_LAM), torch.tensor([x0, y0], dtype=torch.float64), lr, rho,
                          steps, normalized=normalized, momentum=momentum, device="cpu")
        path = tr.w.numpy()
        dist = np.linalg.norm(path, axis=-1)
        finite = np.isfinite(dist) & (dist < 1e12)
        final = dist[-1]
    rho_star = attractor_threshold(-2.0)
    kind = "normalised" if normalized else f"unnormalised (Theorem 1 threshold ρ* = {rho_star:g})"
    if not finite.all():
        status = f"diverged at step {int(np.argmin(finite))} — {kind}"
    elif final < 0.5 * max(dist[0], 1e-300) and final < 1.0:
        status = f"captured: ‖w_T − d‖ = {final:.3g} — {kind}"
    else:
        status = f"escaping: ‖w_T − d‖ = {final:.3g} — {kind}"
    return ExploreResult(path[finite], np.where(finite, dist, np.nan), status)


_GRID = np.meshgrid(np.linspace(-4, 4, 81), np.linspace(-4, 4, 81))


def render(rho: float = 0.5, lr: float = 0.01, normalized: bool = True, momentum: float = 0.0,
           x0: float = -3.0, y0: float = -0.01):
    """Draw the panel's figure (contours + trajectory, distance to the saddle); returns ``(fig, result)``."""
    res = explore_compute(rho=rho, lr=lr, normalized=normalized, momentum=momentum, x0=x0, y0=y0)
    gx, gy = _GRID
    fig, ax = figure(2, width=4.0, height=3.4)
    ax[0].contour(gx, gy, gx**2 - gy**2, levels=21, cmap="coolwarm", linewidths=0.7)
    ax[0].plot(res.path[:, 0], res.path[:, 1], ".-", ms=2, lw=0.8)
    ax[0].plot([0], [0], "k*", ms=10, label="saddle d")
    ax[0].set_xlim(-4, 4)
    ax[0].set_ylim(-4, 4)
    label_axes(ax[0], "x", "y", "trajectory on x² − y²")
    ax[1].semilogy(res.distance)
    label_axes(ax[1], "step t", "‖w_t − d‖", "distance to the saddle", legend=False)
    return fig, res


def explorer():
    """ipywidgets panel: ρ, lr, normalised on/off, momentum, start point → contours + distance vs step."""
    import ipywidgets as W

    controls = {
        "rho": W.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.05, description="ρ"),
        "lr": W.FloatLogSlider(value=0.01, base=10, min=-3, max=0, description="lr η"),
        "normalized": W.Checkbox(value=True, description="normalised ascent"),
        "momentum": W.FloatSlider(value=0.0, min=0.0, max=0.95, step=0.05, description="momentum γ"),
        "x0": W.FloatSlider(value=-3.0, min=-4.0, max=4.0, step=0.1, description="x₀"),
        "y0": W.FloatSlider(value=-0.01, min=-1.0, max=1.0, step=0.01, description="y₀"),
    }
    return live_panel(controls, render, rows=[["rho", "lr", "normalized"], ["momentum", "x0", "y0"]])
