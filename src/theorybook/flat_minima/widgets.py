"""The chapter's control panel: draw an unseen-coordinates instance (d ≤ 512), run SA-GD (from 0) or SAM (from −ρ
on the seen coordinates) and watch ``S_ρ``, ``F̂`` and ``F`` along the run; the status line gives the counts and the
flat ERM's numbers (``F̂ = S_ρ = 0``, ``F = c²/4``) when it exists in the unit ball.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .dynamics import sa_gd, sam
from .instance import expected_unseen, unseen_instance

__all__ = ["Summary", "summarize", "render", "explorer"]

_ALGS = ("SA-GD", "SAM")


class Summary(NamedTuple):
    """One panel setting: the run's trajectory and the counts (``flat_population`` is ``None`` when the flat ERM
    does not exist)."""

    t: np.ndarray
    sharpness: np.ndarray  # S_ρ where in_orthant (0.0 elsewhere: not computed)
    in_orthant: np.ndarray
    empirical: np.ndarray
    population: np.ndarray
    n_seen: int
    n_unseen: int
    flat_population: float | None
    label: str


def summarize(d: int = 256, n: int = 6, rho_scale: float = 1.0, c: float = 0.8, algorithm: str = "SA-GD",
              log2_steps: int = 12) -> Summary:
    """One instance (seed 0) with ``ρ = rho_scale/(2√d)``; ``2^log2_steps`` steps of the chosen algorithm."""
    dd = integer("d", d, 1, 512)
    nn = integer("n", n, 1, 30)
    rs = number("rho_scale", rho_scale, 0.0, 20.0, low_open=True)
    cc = number("c", c, 0.0, 1.0)
    alg = one_of("algorithm", algorithm, _ALGS)
    T = 2 ** integer("log2_steps", log2_steps, 0, 14)
    rho = rs / (2.0 * math.sqrt(dd))
    inst = unseen_instance(dd, nn, 0, "cpu")
    seen = inst.seen
    n_seen, n_unseen = int(seen.sum()), int((~seen).sum())
    zero = torch.zeros_like(inst.a)
    if alg == "SA-GD":
        tr = sa_gd(inst.Z, zero, 1.0, rho, T)
    else:
        tr = sam(inst.Z, torch.where(seen, torch.full_like(inst.a, -rho), zero), 1.0, rho, T)
    inside = n_seen * rho * rho + cc * cc <= 1.0
    if n_unseen == 0:
        flat = None
        flat_text = "no unseen coordinate: no flat ERM with Ω(1) risk here (raise d or lower n)"
    elif not inside:
        flat = None
        flat_text = f"flat ERM leaves the unit ball (#seen·ρ² + c² = {n_seen * rho * rho + cc * cc:.2f} > 1)"
    else:
        flat = cc * cc / 4
        flat_text = f"flat ERM: F̂ = S_ρ = 0, F = c²/4 = {flat:.3f}"
    last = tr.sharpness[-1]
    sh = f"{last:.2e}" if bool(tr.in_orthant[-1]) else "n/a (a seen coordinate is negative)"
    label = (f"{n_seen} seen, {n_unseen} unseen (expected {expected_unseen(dd, nn):.2f}) · {flat_text} · {alg} after "
             f"{T} steps: S_ρ {sh}, F̂ {tr.empirical[-1]:.2e}, F {tr.population[-1]:.2e}")
    return Summary(tr.t, tr.sharpness, tr.in_orthant, tr.empirical, tr.population, n_seen, n_unseen, flat, label)


def render(d: int = 256, n: int = 6, rho_scale: float = 1.0, c: float = 0.8, algorithm: str = "SA-GD",
           log2_steps: int = 12):
    """Draw ``S_ρ``, ``F̂`` and ``F`` against the step (log–log; zeros drawn at the floor); returns
    ``(fig, summary)``."""
    s = summarize(d, n, rho_scale, c, algorithm, log2_steps)
    fig, (ax,) = figure(1, width=6.0, height=3.3)
    t = s.t + 1
    floor = 1e-12
    sharp = np.where(s.in_orthant, s.sharpness, np.nan)  # drawn only where the closed form applies
    for y, name, col in ((sharp, "S_ρ(w_t) (where w ≥ 0 on seen)", COLORS[0]), (s.empirical, "F̂(w_t)", COLORS[1]),
                         (s.population, "F(w_t)", COLORS[2])):
        ax.plot(t, np.clip(y, floor, None), color=col, label=name)
    if s.flat_population is not None:
        ax.axhline(s.flat_population, color="black", ls="--", lw=1.2, label="F of the flat ERM (c²/4)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 1.0)
    label_axes(ax, "step t + 1", "value (zeros at 1e-12)", f"{algorithm} on one instance")
    return fig, s


def explorer():
    """The panel: d, n, ρ (in units of 1/(2√d)), c, algorithm and steps → S_ρ, F̂, F along the run."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "d": w.IntSlider(value=256, min=16, max=512, step=16, description="d (coordinates)", style=style),
        "n": w.IntSlider(value=6, min=1, max=12, step=1, description="n (samples)", style=style),
        "rho_scale": w.FloatSlider(value=1.0, min=0.1, max=4.0, step=0.1, description="ρ · 2√d", style=style),
        "c": w.FloatSlider(value=0.8, min=0.0, max=1.0, step=0.05, description="c (flat ERM)", style=style),
        "algorithm": w.Dropdown(options=list(_ALGS), value="SA-GD", description="algorithm", style=style),
        "log2_steps": w.IntSlider(value=12, min=0, max=14, step=1, description="log₂ steps", style=style),
    }
    return live_panel(controls, render, rows=[["d", "n", "rho_scale"], ["c", "algorithm", "log2_steps"]])
