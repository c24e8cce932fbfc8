"""The chapter's control panel: move k, β₁, β₂, η and the horizon; see the loss, the regime and where the
setting sits on the phase diagram. One trajectory runs on the scalar reference (≈ 10 ms for 20k steps), so a
slider update stays well under 0.25 s on a laptop CPU; ``bench/widgets.py`` measures it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..plotting import COLORS, figure, label_axes, theory_line
from ..sweep import floor_cut
from ..widgets import live_panel
from .dynamics import _path
from .theory import existence_boundary, linear_rate, regime, signgd_loss_level, stability_boundary

__all__ = ["Summary", "floor_loss", "summarize", "render", "explorer"]


class Summary(NamedTuple):
    """What the panel reports for one setting."""

    regime: str  # theory's regime (Theorem 6.1); "—" for k = 2 where the theory does not apply
    min_loss: float | None  # None when no step had a finite loss
    final_loss: float | None  # None when the run diverged
    diverged: bool
    predicted_rate: float | None  # β₂^{1/(2(k−2))}; None when not in the stable regime
    label: str


K_CHOICES = (2, 4, 6, 8, 10)
MAX_STEPS = 100_000


def _check(k, beta1, beta2, lr, steps) -> tuple[int, float, float, float, int]:
    kk = validate.integer("k", k, 2, max(K_CHOICES))
    validate.one_of("k", kk, K_CHOICES)
    return (kk, validate.number("beta1", beta1, 0.0, 1.0, high_open=True),
            validate.number("beta2", beta2, 0.0, 1.0, high_open=True),
            validate.number("lr", lr, 0.0, 1.0, low_open=True),
            validate.integer("steps", steps, 1, MAX_STEPS))


def floor_loss(k: int) -> float:
    """The loss at which a float64 run freezes (g² = x^{2k−2} below tiny·1e6): x_floor^k/k."""
    k = validate.integer("k", k, 2, 100)
    return floor_cut(torch.float64) ** (k / (2 * k - 2)) / k


def summarize(k: int, beta1: float, beta2: float, lr: float, steps: int) -> tuple[np.ndarray, Summary]:
    """Run one trajectory and classify it; never raises for slider values in the panel's ranges
    (k ∈ {2, 4, 6, 8, 10}, β ∈ [0, 1), η ∈ (0, 1], 1 ≤ steps ≤ 10⁵); a diverging run is reported, not raised."""
    k, beta1, beta2, lr, steps = _check(k, beta1, beta2, lr, steps)
    xs = _path(k, beta1, beta2, lr, steps).x
    with np.errstate(all="ignore"):
        loss = np.abs(xs) ** k / k
    finite = np.isfinite(loss)
    diverged = not bool(finite.all())
    theory = regime(k, beta1, beta2) if k >= 4 else "—"
    rate = linear_rate(k, beta2) if theory == "stable" else None
    lmin = float(np.min(loss[finite])) if finite.any() else None
    lfin = float(loss[-1]) if finite[-1] else None
    if diverged:
        label = "diverged (non-finite loss)"
    else:
        label = f"theory: {theory} · min L = {lmin:.2e} · final L = {lfin:.2e}"
    return loss, Summary(theory, lmin, lfin, diverged, rate, label)


def render(k: int = 4, beta1: float = 0.9, beta2: float = 0.93, lr: float = 1e-3, steps: int = 10_000):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    loss, s = summarize(k, beta1, beta2, lr, steps)
    k = int(k)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    # draw at most ~2000 points (the stride keeps every regime's shape; all steps were simulated)
    t = np.arange(0, loss.size, max(1, loss.size // 2000))
    shown = np.where(np.isfinite(loss[t]), np.maximum(loss[t], 1e-320), np.nan)
    ax.semilogy(t, shown, color=COLORS[0], label="Adam (measured)")
    if s.regime == "stable" and s.predicted_rate is not None and beta2 > 0:
        # theory: ln L falls by k·ln β₂/(2(k−2)) per step. Anchor it where the run is still 20 decades above the
        # float floor (a frozen run would drag the line below it): at T/3, or half-way to the floor if earlier.
        floor = floor_loss(k)
        with np.errstate(invalid="ignore"):
            above = np.nonzero(~(loss > 1e20 * floor))[0]
        reach = int(above[0]) if above.size else loss.size
        t0 = min(loss.size // 3, reach // 2)
        if t0 > 0 and np.isfinite(loss[t0]) and loss[t0] > 1e20 * floor:
            slope = k * math.log(beta2) / (2 * (k - 2))
            after = np.arange(t0, loss.size, max(1, loss.size // 2000))
            line = loss[t0] * np.exp(slope * (after - t0))
            keep = line >= floor
            theory_line(ax, after[keep], line[keep], label=rf"rate $\beta_2^{{1/(2(k-2))}}$ = {s.predicted_rate:.5f}")
        ax.axhline(floor, color="grey", lw=0.6, ls="--", label="float64 floor")
    if k >= 2:
        ax.axhline(signgd_loss_level(k, lr), color=COLORS[3], lw=0.8, ls=":", label=r"SignGD level $(\eta/2)^k/k$")
    label_axes(ax, "step t", "loss L(xₜ)", title=s.label if len(s.label) < 60 else None)
    if k >= 4:
        b2 = np.linspace(0.0, 0.999, 300)
        ax2.plot(b2, stability_boundary(k, b2), color="black", label=r"stability $\beta_2^{k/(2(k-2))}$")
        ax2.plot(b2, existence_boundary(k, b2), color="black", ls="--", label=r"existence $\beta_2^{(k-1)/(2(k-2))}$")
        ax2.fill_between(b2, 0, stability_boundary(k, b2), color=COLORS[2], alpha=0.15)
        ax2.plot([beta2], [beta1], "o", color=COLORS[3], ms=9, label=f"you ({s.regime})")
        ax2.set_xlim(0, 1)
        ax2.set_ylim(0, 1)
        label_axes(ax2, "β₂", "β₁", title=f"phase diagram, k = {k}")
    else:
        ax2.text(0.5, 0.5, "k = 2: strongly convex,\nno degenerate fixed point", ha="center", va="center")
        ax2.set_axis_off()
    return fig, s


def explorer():
    """The ipywidgets panel: k, β₁, β₂, log₁₀ η, steps → figure + regime label."""
    import ipywidgets as w

    controls = {
        "k": w.Dropdown(options=[2, 4, 6, 8, 10], value=4, description="k"),
        "beta1": w.FloatSlider(value=0.9, min=0.0, max=0.99, step=0.005, description="β₁", readout_format=".3f"),
        "beta2": w.FloatSlider(value=0.93, min=0.0, max=0.999, step=0.001, description="β₂", readout_format=".3f"),
        "lr": w.FloatLogSlider(value=1e-3, base=10, min=-5, max=0, step=0.25, description="η"),
        "steps": w.IntSlider(value=10_000, min=500, max=30_000, step=500, description="steps"),
    }
    return live_panel(controls, render, rows=[["k", "steps"], ["beta1", "beta2", "lr"]])
