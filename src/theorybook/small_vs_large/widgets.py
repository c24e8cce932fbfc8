"""The chapter's control panel: the toy of Theorem 1 (population GD vs two-phase, true or random labels) and the
MLP's layer-norm ratio under the interventions (second-layer init scale, ``η_a/η_w``). One seed per update, the
toy at ``d ≤ 200`` capped at 3,000 steps and a small MLP (width 128, batch 64, 200 steps): ≈ 0.1–0.2 s on a CPU.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch
from matplotlib.ticker import NullLocator

from ..device import to_numpy
from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .dynamics import _DT, _gen, _moments, _simulate, _sphere, mlp_norm_ratio, single_threaded

__all__ = ["Summary", "explorer", "render", "summarize"]

CAP = 3000


class Summary(NamedTuple):
    """What the panel shows for one setting."""

    a: np.ndarray  # (T + 1, 2): a_t for two-phase, population
    align: np.ndarray  # (T + 1, 2): w₁² + w₂²
    steps: tuple[int, int]  # steps to alignment (two-phase, population); −1 = not within CAP
    phase1: int
    mlp_ratio: np.ndarray  # (2, steps + 1): ‖a‖/‖W‖_F for N = 1,024 and fresh samples
    label: str


@lru_cache(maxsize=128)
def _toy(dd: int, r: float, e: float, ast: float, lab: str) -> tuple[np.ndarray, np.ndarray, tuple[int, int], int, int]:
    n = max(1, round(r * dd))
    gen = _gen(0)
    w0 = _sphere(1, dd, gen)
    mh = _moments(n, dd, 1, gen, lab, torch.device("cpu"))
    run = _simulate(w0.repeat(2, 1), torch.full((2,), 0.01, dtype=_DT), e, ast, 1e-2, CAP, mh, True,
                    torch.tensor([0]))
    steps = (int(run.steps[0]), int(run.steps[1]))
    return to_numpy(run.a), to_numpy(run.align), steps, int(run.phase1_steps[0]), n


@lru_cache(maxsize=64)
def _mlp(sc: float, mult: float) -> np.ndarray:
    mlp = mlp_norm_ratio((1024, None), width=128, batch=64, steps=200, init_scale=sc, lr_a_mult=mult, seeds=1,
                         seed=0, device="cpu")
    return to_numpy(mlp.ratio[:, 0, :])


@single_threaded
def summarize(d: int = 100, n_over_d: float = 1.0, eta: float = 0.1, a_star: float = 0.3, labels: str = "true",
              init_scale: float = 1.0, lr_a_mult: float = 1.0) -> Summary:
    """One seed (0): two-phase with ``N = n_over_d·d`` vs population GD from the same ``w₀``; the MLP (width 128,
    batch 64, 200 steps, 1 seed) on a repeated set of 1,024 vs fresh samples. The toy and the MLP are cached
    separately, so moving a control of one part does not recompute the other."""
    dd = integer("d", d, 3, 200)
    r = number("n_over_d", n_over_d, 1e-3, 1e3, low_open=True)
    e = number("eta", eta, 1e-3, 1.0)
    ast = number("a_star", a_star, 0.0, 1.0, low_open=True)
    lab = one_of("labels", labels, ("true", "random"))
    sc = number("init_scale", init_scale, 0.0, 100.0)
    mult = number("lr_a_mult", lr_a_mult, 0.0, 100.0)
    a, align, steps, phase1, n = _toy(dd, float(r), float(e), float(ast), lab)
    ratio = _mlp(float(sc), float(mult))
    show = [str(s) if s >= 0 else f"> {CAP}" for s in steps]
    label = (f"N = {n}: two-phase {show[0]} steps (Phase 1: {phase1}) vs population {show[1]}"
             f" · MLP ‖a‖/‖W‖_F at step 200: N = 1,024 / fresh = {ratio[0, -1] / ratio[1, -1]:.2f}")
    return Summary(a, align, steps, phase1, ratio, label)


def render(d: int = 100, n_over_d: float = 1.0, eta: float = 0.1, a_star: float = 0.3, labels: str = "true",
           init_scale: float = 1.0, lr_a_mult: float = 1.0):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    s = summarize(d, n_over_d, eta, a_star, labels, init_scale, lr_a_mult)
    fig, (ax, ax2, ax3) = figure(3, width=3.4, height=2.9)
    t = np.arange(s.a.shape[0])
    names = (f"two-phase ({labels} labels)", "population GD")
    for j in range(2):
        ax.plot(t, np.abs(s.a[:, j]), color=COLORS[j], label=names[j])
        ax2.semilogy(t, np.maximum(1 - s.align[:, j], 1e-6), color=COLORS[j], label=names[j])
    ax.axhline(a_star, color="black", lw=0.8, ls=":", label="a⋆")
    label_axes(ax, "step t", "|a_t|", "second layer")
    ax2.axhline(1e-2, color="black", lw=0.8, ls=":", label="ε")
    label_axes(ax2, "step t", "1 − (w₁² + w₂²)", "misalignment", legend=False)
    # log-axis minor ticks cost most of a frame's drawing (constrained layout measures each): without them the
    # static explorer's CPU budget covers every control's extremes, so each control moves the precomputed frame
    ax2.yaxis.set_minor_locator(NullLocator())
    tm = np.arange(s.mlp_ratio.shape[1])
    ax3.plot(tm, s.mlp_ratio[0], color=COLORS[2], label="N = 1,024 (repeated)")
    ax3.plot(tm, s.mlp_ratio[1], color=COLORS[3], label="fresh samples")
    label_axes(ax3, "SGD step", "‖a‖ / ‖W‖_F", "MLP on (20, 3)-parity")
    return fig, s


def explorer():
    """The live panel: toy controls (d, N/d, η, a⋆, labels) and MLP interventions (init scale, η_a/η_w)."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "d": w.IntSlider(value=100, min=10, max=200, step=10, description="d", style=style),
        "n_over_d": w.FloatLogSlider(value=1.0, base=2, min=-2, max=4, step=1, description="N / d", style=style),
        "eta": w.FloatLogSlider(value=0.1, base=10, min=-1.3, max=-0.3, step=0.1, description="η", style=style),
        "a_star": w.FloatSlider(value=0.3, min=0.05, max=1.0, step=0.05, description="a⋆", style=style),
        "labels": w.Dropdown(options=["true", "random"], value="true", description="Phase-1 labels", style=style),
        "init_scale": w.FloatLogSlider(value=1.0, base=2, min=-2, max=3, step=1, description="MLP: a init ×",
                                       style=style),
        "lr_a_mult": w.FloatLogSlider(value=1.0, base=2, min=-2, max=3, step=1, description="MLP: η_a/η_w",
                                      style=style),
    }
    rows = [["d", "n_over_d", "eta"], ["a_star", "labels"], ["init_scale", "lr_a_mult"]]
    return live_panel(controls, render, rows)
