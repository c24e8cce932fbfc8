"""The chapter's control panel: move k, β₁, β₂, η and the horizon; see the loss, the regime and where the
setting sits on the phase diagram. One trajectory runs on the scalar reference (≈ 10 ms for 20k steps), so a
slider update stays well under 0.25 s on a laptop CPU; ``bench/widgets.py`` measures it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..plotting import COLORS, figure, label_axes, theory_line
from ..widgets import live_panel
from .dynamics import adam_reference
from .theory import existence_boundary, linear_rate, regime, signgd_loss_level, stability_boundary

__all__ = ["Summary", "summarize", "render", "explorer"]


class Summary(NamedTuple):
    """What the panel reports for one setting."""

    regime: str  # theory's regime (Theorem 6.1); "—" for k = 2 where the theory does not apply
    min_loss: float
    final_loss: float
    diverged: bool
    predicted_rate: float  # β₂^{1/(2(k−2))}, NaN when not in the stable regime
    label: str


def summarize(k: int, beta1: float, beta2: float, lr: float, steps: int) -> tuple[np.ndarray, Summary]:
    """Run one trajectory and classify it; never raises for slider values in the panel's ranges."""
    xs = adam_reference(k, beta1, beta2, lr, steps)
    with np.errstate(all="ignore"):
        loss = np.abs(xs) ** k / k
    finite = np.isfinite(loss)
    diverged = not bool(finite.all())
    theory = regime(k, beta1, beta2) if k >= 4 else "—"
    rate = linear_rate(k, beta2) if theory == "stable" else float("nan")
    lmin = float(np.min(loss[finite])) if finite.any() else float("nan")
    lfin = float(loss[-1]) if finite[-1] else float("inf")
    if diverged:
        label = "diverged (non-finite loss)"
    else:
        label = f"theory: {theory} · min L = {lmin:.2e} · final L = {lfin:.2e}"
    return loss, Summary(theory, lmin, lfin, diverged, rate, label)


def render(k: int = 4, beta1: float = 0.9, beta2: float = 0.93, lr: float = 1e-3, steps: int = 10_000):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    loss, s = summarize(k, beta1, beta2, lr, steps)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    # draw at most ~2000 points (the stride keeps every regime's shape; all steps were simulated)
    t = np.arange(0, loss.size, max(1, loss.size // 2000))
    shown = np.where(np.isfinite(loss[t]), np.maximum(loss[t], 1e-320), np.nan)
    ax.semilogy(t, shown, color=COLORS[0], label="Adam (measured)")
    if s.regime == "stable":
        # theory: ln L falls by k·ln β₂/(2(k−2)) per step, drawn through the measured point at t = T/3
        t0 = loss.size // 3
        if np.isfinite(loss[t0]) and loss[t0] > 1e-300:
            slope = k * math.log(beta2) / (2 * (k - 2))
            after = t[t >= t0]
            line = loss[t0] * np.exp(slope * (after - t0))
            keep = line > 1e-320
            theory_line(ax, after[keep], line[keep], label=f"rate β₂^(1/(2(k−2))) = {s.predicted_rate:.5f}")
    if k >= 2:
        ax.axhline(signgd_loss_level(k, lr), color=COLORS[3], lw=0.8, ls=":", label="SignGD level (η/2)^k/k")
    label_axes(ax, "step t", "loss L(x_t)", title=s.label if len(s.label) < 60 else None)
    if k >= 4:
        b2 = np.linspace(0.0, 0.999, 300)
        ax2.plot(b2, stability_boundary(k, b2), color="black", label="stability β₂^{k/(2(k−2))}")
        ax2.plot(b2, existence_boundary(k, b2), color="black", ls="--", label="existence β₂^{(k−1)/(2(k−2))}")
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
