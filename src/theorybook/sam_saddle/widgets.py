"""Play: SAM on the quadratic saddle x² − y² — trajectory on the contours, |y_t| against the theory.

:func:`explore_compute` is the callback's pure compute (tested at extreme slider values); :func:`explorer`
wires it to ipywidgets. The status line reports what the *trajectory* did (the escape coordinate |y| grew or
shrank over the last half of the run; the run diverged) next to what the theory predicts: Theorem 1's
threshold ρ* = −1/λ₁ = 0.5 for unnormalised SAM (with momentum, the spectral radius of the linear heavy-ball
map), the [derived] ρ-ball rule for normalised SAM. A diverging run is reported, never raised.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import to_numpy
from ..plotting import figure, label_axes
from ..widgets import live_panel
from .dynamics import saddle_quadratic_grad, simulate_sam
from .theory import attractor_threshold

__all__ = ["ExploreResult", "explore_compute", "explorer", "render", "linear_growth"]

_LAM = (2.0, -2.0)
_MAX_WIDGET_STEPS = 5000


class ExploreResult(NamedTuple):
    """One widget update: trajectory (k+1, 2) as numpy (non-finite rows dropped), |y_t| per step (inf once
    diverged), the theory's |y_t| (unnormalised: |y₀|·r^t; normalised: an empty array), the measured regime
    (``"escaping"``, ``"captured"``, ``"neutral"``, ``"diverged"``), the predicted one, and a status line."""

    path: np.ndarray
    abs_y: np.ndarray
    theory_y: np.ndarray
    measured: str
    predicted: str
    status: str


def linear_growth(lam: float, rho: float, lr: float, momentum: float) -> float:
    r"""Spectral radius of unnormalised heavy-ball SAM along eigen-direction λ: the map
    :math:`(w, b) \mapsto (w - \eta(\gamma b + a w),\ \gamma b + a w)`, a = λ(1+ρλ). > 1: |w| grows."""
    lam = validate.number("lam", lam)
    rho = validate.number("rho", rho, 0.0)
    lr = validate.number("lr", lr, 0.0, low_open=True)
    g = validate.number("momentum", momentum, 0.0, 1.0, high_open=True)
    a = lam * (1 + rho * lam)
    m = np.array([[1 - lr * a, -lr * g], [a, g]])
    if not np.isfinite(m).all():
        raise ValueError(f"Invalid arguments: the linear map overflows (lam={lam}, rho={rho}, lr={lr})")
    with np.errstate(all="ignore"):
        r = float(np.abs(np.linalg.eigvals(m)).max())
    if not math.isfinite(r):
        raise ValueError(f"Invalid arguments: the spectral radius overflows (lam={lam}, rho={rho}, lr={lr})")
    return r


def _linear_y(y0: float, lam: float, rho: float, lr: float, momentum: float, steps: int) -> np.ndarray:
    """|y_t| of the linearised (here exact) unnormalised heavy-ball SAM map along λ, by its own recurrence."""
    a = lam * (1 + rho * lam)
    out = np.empty(steps + 1)
    w, b = y0, 0.0
    out[0] = abs(w)
    with np.errstate(all="ignore"):
        for k in range(1, steps + 1):
            b = momentum * b + a * w
            w = w - lr * b
            out[k] = abs(w)
            if not math.isfinite(w):
                out[k:] = np.inf
                break
    return out


def _regime(abs_y: np.ndarray, finite: np.ndarray) -> tuple[str, float]:
    if not finite.all():
        return "diverged", math.inf
    half, last = abs_y[len(abs_y) // 2], abs_y[-1]
    if half == 0.0 and last == 0.0:
        return "neutral", 1.0
    ratio = last / half if half > 0 else math.inf
    if ratio > 1 + 1e-9:
        return "escaping", ratio
    if ratio < 1 - 1e-9:
        return "captured", ratio
    return "neutral", ratio


def explore_compute(rho: float = 0.5, lr: float = 0.01, normalized: bool = True, momentum: float = 0.0,
                    x0: float = -3.0, y0: float = -0.01, steps: int = 500) -> ExploreResult:
    """Run SAM (or GD at ρ = 0) on x² − y² from (x0, y0) for ``steps`` steps; never raises for slider values in
    range (ρ ≥ 0, η > 0, γ ∈ [0, 1), finite start, 1 ≤ steps ≤ 5000)."""
    steps = validate.integer("steps", steps, 1, _MAX_WIDGET_STEPS)
    x0, y0 = validate.number("x0", x0), validate.number("y0", y0)
    rho = validate.number("rho", rho, 0.0)
    lr = validate.number("lr", lr, 0.0, low_open=True)
    momentum = validate.number("momentum", momentum, 0.0, 1.0, high_open=True)
    if not isinstance(normalized, bool):
        raise TypeError(f"Invalid normalized: {normalized!r} (must be True or False)")
    with np.errstate(all="ignore"):
        tr = simulate_sam(saddle_quadratic_grad(_LAM), torch.tensor([x0, y0], dtype=torch.float64), lr, rho,
                          steps, normalized=normalized, momentum=momentum, device="cpu")
        path = to_numpy(tr.w)
        dist = np.linalg.norm(path, axis=-1)
        finite = np.isfinite(dist) & (dist < 1e12)
        abs_y = np.abs(path[:, 1])
        measured, ratio = _regime(abs_y, finite)
    rho_star = attractor_threshold(-2.0)
    if normalized:
        theory_y = np.empty(0)  # no closed-form overlay for normalised SAM
        inside = bool((dist[finite] < rho).any()) if rho > 0 else False
        predicted = "captured" if inside else "escaping"
        r_x = r_y = 1.0
        why = (f"normalised: [derived] captured once ‖w‖ < ρ = {rho:g}; the run "
               f"{'enters' if inside else 'never enters'} that ball (Theorem 1's threshold is for unnormalised SAM)")
        if lr >= 1.0:  # x ← x(1 − 2η(1 + ρ/‖w‖)): |factor| > 1 for η ≥ 1
            predicted, why = "diverged", f"η = {lr:g} ≥ 1 makes the stable direction's factor |1 − 2η(1 + ρ/‖w‖)| > 1"
    else:
        r_y, r_x = linear_growth(-2.0, rho, lr, momentum), linear_growth(2.0, rho, lr, momentum)
        theory_y = _linear_y(y0, -2.0, rho, lr, momentum, steps)
        predicted = "escaping" if r_y > 1 + 1e-12 else "captured" if r_y < 1 - 1e-12 else "neutral"
        if r_x > 1 + 1e-12:
            predicted = "diverged"
        side = "<" if rho < rho_star else ">" if rho > rho_star else "="
        why = (f"Theorem 1: ρ = {rho:g} {side} ρ* = {rho_star:g}; linear map |y| factor r = {r_y:.4g}"
               + (f", x factor {r_x:.4g}" if r_x > 1 else ""))
    if y0 == 0.0:
        predicted, why = "neutral", "y₀ = 0 lies on the stable manifold: y stays 0 (exactly)"
    if measured == "diverged":
        k = int(np.argmin(finite))
        head = f"measured: diverged at step {k}"
    else:
        head = f"measured: {measured} (|y| ×{ratio:.3g} over the last half, ‖w_T‖ = {dist[-1]:.3g})"
    ok = predicted == measured or (measured == "diverged" and max(r_x, r_y) > 1) or (
        predicted == "diverged" and measured == "escaping")
    agree = "agrees" if ok else "DISAGREES"
    status = f"{head} · predicted: {predicted} — {why} · {agree}"
    return ExploreResult(path[finite], np.where(finite, abs_y, np.inf), theory_y, measured, predicted, status)


_GRID = np.meshgrid(np.linspace(-4, 4, 81), np.linspace(-4, 4, 81))


def render(rho: float = 0.5, lr: float = 0.01, normalized: bool = True, momentum: float = 0.0,
           x0: float = -3.0, y0: float = -0.01, steps: int = 500):
    """Draw the panel's figure (contours + trajectory; |y_t| with the theory overlay); returns ``(fig, result)``."""
    res = explore_compute(rho=rho, lr=lr, normalized=normalized, momentum=momentum, x0=x0, y0=y0, steps=steps)
    gx, gy = _GRID
    fig, ax = figure(2, width=4.0, height=3.4)
    ax[0].contour(gx, gy, gx**2 - gy**2, levels=21, cmap="coolwarm", linewidths=0.7)
    ax[0].plot(res.path[:, 0], res.path[:, 1], ".-", ms=2, lw=0.8, label="SAM path")
    ax[0].plot([0], [0], "k*", ms=10, label="saddle d")
    if normalized and rho > 0:
        th = np.linspace(0, 2 * np.pi, 100)
        r = float(rho)  # a 0-d tensor or numpy scalar times an array: a plain float, no __array_wrap__ warning
        ax[0].plot(r * np.cos(th), r * np.sin(th), "k:", lw=0.8, label="ρ-ball")
    ax[0].set_xlim(-4, 4)
    ax[0].set_ylim(-4, 4)
    label_axes(ax[0], "x", "y", "trajectory on x² − y²")
    with np.errstate(all="ignore"):
        ax[1].semilogy(res.abs_y, label="measured |y_t|")
        if res.theory_y.size and np.isfinite(res.theory_y).any():
            ax[1].semilogy(res.theory_y, "k--", lw=1, label="theory: linear map")
    label_axes(ax[1], "step t", "|y_t| (escape coordinate)", f"measured {res.measured}, predicted {res.predicted}")
    return fig, res


def explorer():
    """ipywidgets panel: ρ, lr, normalised on/off, momentum, start point, steps → contours + |y_t| vs theory."""
    import ipywidgets as W

    controls = {
        "rho": W.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.05, description="ρ"),
        "lr": W.FloatLogSlider(value=0.01, base=10, min=-3, max=0, description="lr η"),
        "normalized": W.Checkbox(value=True, description="normalised ascent"),
        "momentum": W.FloatSlider(value=0.0, min=0.0, max=0.95, step=0.05, description="momentum γ"),
        "x0": W.FloatSlider(value=-3.0, min=-4.0, max=4.0, step=0.1, description="x₀"),
        "y0": W.FloatSlider(value=-0.01, min=-1.0, max=1.0, step=0.01, description="y₀"),
        "steps": W.IntSlider(value=500, min=100, max=2000, step=100, description="steps"),
    }
    return live_panel(controls, render, rows=[["rho", "lr", "normalized"], ["momentum", "x0", "y0"], ["steps"]])
