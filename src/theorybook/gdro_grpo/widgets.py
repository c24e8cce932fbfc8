"""The chapter's control panel: Prompt-GDRO's η_q, γ, EMA β, the number of bins, hysteresis δ, n̄, the largest
rollout arm and the topic skew → the worst-topic pass@8 curve against GRPO and a step × bin heat map (adversary
weight for Prompt-GDRO, rollout share for Rollout-GDRO). One seed, 60 steps; GRPO's run is cached, so a move of an
adversary knob re-runs one method (≈ 0.1–0.2 s of CPU, ≈ 0.17–0.27 s with the figure).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..device import one_thread
from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .experiment import simulate

__all__ = ["Summary", "summarize", "render", "explorer"]


class Summary(NamedTuple):
    """What the panel reports for one setting (one seed)."""

    worst_grpo: np.ndarray  # (T+1,) worst-topic pass@8 of GRPO
    worst_gdro: np.ndarray  # (T+1,) worst-topic pass@8 of the chosen GDRO variant
    heat: np.ndarray  # (T, B) weight (prompt_gdro) or rollout share (rollout_gdro)
    label: str


@lru_cache(maxsize=64)
def _grpo_baseline(n_bar: int, arm_max: int, skew: float):
    """GRPO's run does not depend on the adversary's knobs: cached, so most slider moves re-run one method."""
    with one_thread("cpu"):
        return simulate("grpo", steps=60, batch=64, seeds=1, seed=0, n_prompts=1000, n_bar=n_bar,
                        arms=range(2, arm_max + 1), skew=skew)


def summarize(method: str = "prompt_gdro", eta_q: float = 3.0, gamma: float = 0.15, beta: float = 0.1,
              bins: int = 6, hysteresis: float = 0.0, n_bar: int = 4, arm_max: int = 12,
              skew: float = 1.0) -> Summary:
    """Run GRPO and ``method`` on one world (seed 0, 60 steps, batch 64, 1000 prompts); arms ``2..arm_max``."""
    one_of("method", method, ("prompt_gdro", "rollout_gdro"))
    am = integer("arm_max", arm_max, 2, 32)
    nb = min(integer("n_bar", n_bar, 2, 32), am)  # the panel clamps n̄ into the arm range
    kw = dict(steps=60, batch=64, seeds=1, seed=0, n_prompts=1000, n_bar=nb, arms=range(2, am + 1),
              bins=integer("bins", bins, 1, 20), skew=number("skew", skew, 0.0, 5.0))
    with one_thread("cpu"):  # tiny ops: a second thread only adds synchronisation (a no-op for the work on CUDA)
        base = _grpo_baseline(nb, am, kw["skew"])
        run = simulate(method, eta_q=number("eta_q", eta_q, 0.0, 100.0, low_open=True),
                       gamma=number("gamma", gamma, 0.0, 1.0, high_open=True),
                       beta=number("beta", beta, 0.0, 1.0, low_open=True),
                       hysteresis=number("hysteresis", hysteresis, 0.0, 1.0), **kw)
    wg = base.topic_pass8[0].min(1)
    wd = run.topic_pass8[0].min(1)
    heat = run.weight[0] if method == "prompt_gdro" else run.rollout_share[0]
    name = "Prompt-GDRO" if method == "prompt_gdro" else "Rollout-GDRO"
    label = (f"worst-topic pass@8 after 60 steps: GRPO {wg[-1]:.3f} · {name} {wd[-1]:.3f} "
             f"(overall {base.overall_pass8[0, -1]:.3f} vs {run.overall_pass8[0, -1]:.3f})")
    return Summary(wg, wd, heat, label)


def render(method: str = "prompt_gdro", eta_q: float = 3.0, gamma: float = 0.15, beta: float = 0.1, bins: int = 6,
           hysteresis: float = 0.0, n_bar: int = 4, arm_max: int = 12, skew: float = 1.0):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    s = summarize(method, eta_q, gamma, beta, bins, hysteresis, n_bar, arm_max, skew)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.1)
    t = np.arange(s.worst_grpo.size)
    ax.plot(t, s.worst_grpo, color=COLORS[0], label="GRPO")
    ax.plot(t, s.worst_gdro, color=COLORS[1], label=method.replace("_", "-"))
    ax.set_ylim(0, 1)
    label_axes(ax, "step", "worst-topic pass@8", "worst topic")
    im = ax2.imshow(s.heat.T, aspect="auto", origin="lower", cmap="viridis", vmin=0.0)
    fig.colorbar(im, ax=ax2, shrink=0.8)
    label_axes(ax2, "step", "bin (0 = lowest accuracy)",
               "adversary weight q" if method == "prompt_gdro" else "rollout share", legend=False)
    return fig, s


def explorer():
    """The panel: GDRO variant and its knobs → worst-topic curves and a step × bin heat map."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "method": w.Dropdown(options=[("Prompt-GDRO", "prompt_gdro"), ("Rollout-GDRO", "rollout_gdro")],
                             value="prompt_gdro", description="variant", style=style),
        "eta_q": w.FloatSlider(value=3.0, min=0.1, max=10.0, step=0.1, description="η_q", style=style),
        "gamma": w.FloatSlider(value=0.15, min=0.0, max=0.95, step=0.05, description="γ", style=style),
        "beta": w.FloatSlider(value=0.1, min=0.01, max=1.0, step=0.01, description="EMA β", style=style),
        "bins": w.IntSlider(value=6, min=1, max=12, description="bins", style=style),
        "hysteresis": w.FloatSlider(value=0.0, min=0.0, max=0.3, step=0.01, description="hysteresis δ",
                                    style=style),
        "n_bar": w.IntSlider(value=4, min=2, max=12, description="n̄", style=style),
        "arm_max": w.IntSlider(value=12, min=2, max=16, description="largest arm", style=style),
        "skew": w.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.1, description="topic skew", style=style),
    }
    # The largest arm acts only on Rollout-GDRO's allocation (Prompt-GDRO and GRPO use n̄ rollouts per prompt); the
    # static explorer moves each other control with the variant at its default, Prompt-GDRO, where it cannot change
    # the picture: live only there.
    return live_panel(controls, render, rows=[["method", "eta_q", "gamma"], ["beta", "bins", "hysteresis"],
                                              ["n_bar", "arm_max", "skew"]], live_only=["arm_max"])
