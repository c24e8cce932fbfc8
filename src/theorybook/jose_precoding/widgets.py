"""The chapter's control panel: posture (extended → flexed), latent dimension k, power P, noise σ and the channel
(true, or the model learned from 6000 play steps) → the water-filling picture, capacity against k, and the
synergies Θ(s) as a tendon × mode map. One ``mj_forward``, one SVD and 16 water-fillings per update.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ..device import to_numpy
from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .core import jose, water_filling
from .experiment import NOISE, POSTURES, VERDICT_PLAY, _finger
from .model import Dynamics, fit_dynamics
from .plant import TENDONS

__all__ = ["Summary", "summarize", "render", "explorer"]

_LEARNED: dict[str, Dynamics] = {}


def _learned(device) -> Dynamics:
    key = str(device)
    if key not in _LEARNED:
        f = _finger(NOISE, device)
        _LEARNED[key] = fit_dynamics(f.play(VERDICT_PLAY, 0))
    return _LEARNED[key]


class Summary(NamedTuple):
    """Singular values of G̃, water-filled powers and level, capacity for k = 1..16, the precoder, status line."""

    singular_values: np.ndarray
    powers: np.ndarray
    level: float
    capacity_k: np.ndarray
    precoder: np.ndarray
    label: str


def summarize(posture: float = 0.0, k: int = 4, log10_power: float = 0.0, noise: float = NOISE,
              model: str = "true") -> Summary:
    """JoSE at the posture ``(1 − t)·extended + t·flexed``, ``t = posture``."""
    t = number("posture", posture, 0.0, 1.0)
    k = integer("k", k, 1, 16)
    P = 10 ** number("log10_power", log10_power, -4.0, 2.0)
    noise = number("noise", noise, 0.01, 2.0)
    model = one_of("model", model, ("true", "learned"))
    f = _finger(NOISE, torch.device("cpu"))
    q = (1 - t) * np.asarray(POSTURES["extended"]) + t * np.asarray(POSTURES["flexed"])
    if model == "true":
        G = f.G(q)
    else:
        G = _learned(f.device).G(torch.as_tensor(q, dtype=torch.float64))
    Q = noise**2 * torch.eye(4, dtype=torch.float64, device=G.device)
    jo = jose(G, Q, P, k=k)
    s = to_numpy(jo.singular_values)
    gains = torch.as_tensor(np.concatenate([s**2, np.zeros(12)]), dtype=torch.float64)
    caps = np.array([float(water_filling(gains[:j], P).capacity) for j in range(1, 17)])
    wf = water_filling(gains[:min(k, 4)], P)
    active = int((jo.powers > 0).sum())
    label = (f"{model} channel · JoSE-{k} = {float(jo.capacity):.3f} nats at P = {P:.3g}, σ = {noise:g} · "
             f"{active} of {min(k, 4)} modes active, water level ν = {float(wf.level):.3g}")
    return Summary(s, to_numpy(wf.powers), float(wf.level), caps, to_numpy(jo.precoder), label)


def render(posture: float = 0.0, k: int = 4, log10_power: float = 0.0, noise: float = NOISE, model: str = "true"):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    s = summarize(posture, k, log10_power, noise, model)
    fig, (ax, ax2, ax3) = figure(3, width=3.6, height=3.2)
    m = s.powers.size
    floor = 1.0 / np.maximum(s.singular_values[:m] ** 2, 1e-300)
    x = np.arange(1, m + 1)
    ax.bar(x, np.minimum(floor, 10 * max(s.level, 1e-12)), color="0.6", label="1/σᵢ² (floor)")
    ax.bar(x, s.powers, bottom=floor, color=COLORS[0], label="pᵢ (water)")
    if math.isfinite(s.level):
        ax.axhline(s.level, color="black", ls="--", lw=1.2, label="level ν")
    ax.set_ylim(0, 1.6 * max(s.level, 1e-12))
    ax.set_xticks(x)
    label_axes(ax, "mode i", "1/σᵢ² and power", "water-filling")
    kk = np.arange(1, 17)
    ax2.plot(kk, s.capacity_k, marker="o", ms=3, color=COLORS[1])
    ax2.axvline(k, color="0.5", ls=":")
    label_axes(ax2, "latent dimension k", "JoSE capacity (nats)", "capacity vs k", legend=False)
    lim = float(np.abs(s.precoder).max()) or 1.0
    ax3.imshow(s.precoder, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    # every other tendon named, at the size of the rest of the frame's small text (16 names at 6 pt overlapped, and
    # the explorer's frame is drawn so that its smallest text is legible)
    ax3.set_yticks(range(0, 16, 2), TENDONS[::2], fontsize=8)
    ax3.set_xticks(range(s.precoder.shape[1]), [str(i + 1) for i in range(s.precoder.shape[1])])
    ax3.grid(False)
    label_axes(ax3, "synergy (column of Θ)", "tendon", "Θ(s)", legend=False)
    return fig, s


def explorer():
    """The panel: posture, k, log₁₀ P, σ and true/learned channel."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "posture": w.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.05, description="posture (0 ext → 1 flex)",
                                 style=style),
        "k": w.IntSlider(value=4, min=1, max=16, step=1, description="latent k", style=style),
        "log10_power": w.FloatSlider(value=0.0, min=-4.0, max=2.0, step=0.1, description="log₁₀ P", style=style),
        "noise": w.FloatSlider(value=NOISE, min=0.01, max=2.0, step=0.01, description="noise σ", style=style),
        "model": w.ToggleButtons(options=["true", "learned"], value="true", description="channel", style=style),
    }
    return live_panel(controls, render, rows=[["posture", "k", "log10_power"], ["noise", "model"]])
