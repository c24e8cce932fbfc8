"""The chapter's control panel: sample size s, actions n, outcomes m, confidence δ and the tie rule → the true
utility U(α) and the empirical Û_s(α) of one sample, the optimal contract α*, EUM's α̂, the exact
sup_α |Û_s − U|, the band U ± q_δ that holds Û_s for a 1 − δ share of samples (q_δ the (1 − δ)-quantile of the exact
sup-deviation over :data:`BAND_REPS` samples of size s) and Theorem 1.1's bound √(3456 ln(4/δ)/s). The population
(2,000 types of the chapter's family) is drawn once per (n, m) and cached with its kinks; one update is a batch of
samples, one cumulative sum each, and a plot.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch

from ..device import one_thread, to_numpy
from ..plotting import COLORS, figure, label_axes, theory_line
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .engine import (
    TIES,
    ContractTypes,
    _deviation_eum,
    engine_utility,
    kinks,
    optimal_contract,
    random_types,
    reward_at_kinks,
    sample_types,
)
from .theory import deviation_bound

__all__ = ["PanelResult", "panel", "render", "explorer", "BAND_REPS"]

_N_TYPES = 2000
_GRID = 1501
BAND_REPS = 100  # samples behind the (1 − δ)-quantile band (at δ = 0.001 it is their largest deviation)


@lru_cache(maxsize=16)
def _population(n_actions: int, n_outcomes: int) -> ContractTypes:
    types = random_types(_N_TYPES, n_actions, n_outcomes, seed=0)
    kinks(types)
    return types


class PanelResult(NamedTuple):
    """What the panel reports for one setting."""

    alpha_star: float  # argmax U (principal ties: attained)
    u_star: float  # sup U
    alpha_hat: float  # EUM's choice on the sample
    u_alpha_hat: float  # U(α̂)
    sup_deviation: float  # sup_α |Û_s − U|, exact
    band: float  # q_δ: the (1 − δ)-quantile of the exact sup-deviation over BAND_REPS samples of size s
    bound: float  # √(3456 ln(4/δ)/s) [secondary constant]
    agent_best: float  # best value attained under agent-favouring ties (= u_star under principal ties)
    label: str
    alpha_attained: float = float("nan")  # where agent_best is attained (= alpha_star under principal ties)


def panel(s: int = 800, n_actions: int = 10, n_outcomes: int = 6, delta: float = 0.05, tie: str = "principal",
          seed: int = 0) -> tuple[PanelResult, dict[str, np.ndarray]]:
    """Pure compute behind the panel (validated); returns the result and the curves to draw."""
    S = integer("s", s, 1, 1_000_000)
    n = integer("n_actions", n_actions, 1, 200)
    m = integer("n_outcomes", n_outcomes, 2, 50)
    d = number("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    one_of("tie", tie, TIES)
    sd = integer("seed", seed, 0, 2**63 - 1)
    types = _population(n, m)
    idx = sample_types(_N_TYPES, S, 1, sd, device=types.device)
    a_star, u_star = optimal_contract(types)
    grid = torch.linspace(0.0, 1.0, _GRID, dtype=torch.float64, device=types.device)
    w_hat = torch.zeros(_N_TYPES, dtype=torch.float64, device=types.device)
    w_hat.scatter_add_(0, idx[0], torch.ones(S, dtype=torch.float64, device=types.device))
    w_hat /= S
    sup_t, e = _deviation_eum(types, w_hat[None])
    sup = float(sup_t[0])
    U = engine_utility(types, grid)
    U_hat = engine_utility(types, grid, w_hat)
    kk = kinks(types)
    R_steps = reward_at_kinks(types)
    last = torch.nonzero(kk.last).ravel()
    R_left = torch.cat([R_steps[:1], R_steps[last[:-1]]])  # value just before each kink group
    if tie == "agent":  # U at each kink under agent ties: (1 − α) × R just before it; U(1) = 0
        attained = (1.0 - kk.points[last]) * R_left
        j = int(attained.argmax())
        agent_best, alpha_att = float(attained[j]), float(kk.points[last][j])
        if agent_best <= 0.0:
            agent_best, alpha_att = 0.0, 1.0
    else:
        agent_best, alpha_att = u_star, a_star
    bound = deviation_bound(S, d)
    # the band: multinomial counts (cost independent of s) of BAND_REPS further samples, drawn on the CPU
    counts = np.random.default_rng(sd + 1).multinomial(S, np.full(_N_TYPES, 1.0 / _N_TYPES), size=BAND_REPS)
    sups, _ = _deviation_eum(types, torch.as_tensor(counts / S, dtype=torch.float64, device=types.device))
    band = float(np.quantile(to_numpy(sups), 1.0 - d))
    res = PanelResult(a_star, u_star, float(e.alpha_hat[0]), float(e.utility[0]), sup, band, bound, agent_best,
                      "", alpha_att)
    tail = (f"sup|Û−U| = {sup:.4f}; its {1 - d:.1%} quantile over {BAND_REPS} samples {band:.4f}; Thm 1.1 bound "
            f"{bound:.3g}")
    if tie == "principal":
        label = (f"α* = {a_star:.4f} (U = {u_star:.4f}, attained) · α̂ = {res.alpha_hat:.4f} (U(α̂) = "
                 f"{res.u_alpha_hat:.4f}) · {tail}")
    else:
        label = (f"agent ties: sup U = {u_star:.5f} is not attained; best attained {agent_best:.5f} at "
                 f"α = {alpha_att:.4f} (short by {u_star - agent_best:.2e}) · {tail}")
    curves = {"alpha": to_numpy(grid), "U": to_numpy(U), "U_hat": to_numpy(U_hat)}
    return res._replace(label=label), curves


def render(s: int = 800, n_actions: int = 10, n_outcomes: int = 6, delta: float = 0.05, tie: str = "principal"):
    """Draw the panel for one setting; returns ``(fig, result)``."""
    with one_thread():  # many small ops: a second intra-op thread only adds synchronisation
        res, c = panel(s, n_actions, n_outcomes, delta, tie)
    fig, (ax,) = figure(1, width=6.4, height=3.2)
    ax.fill_between(c["alpha"], c["U"] - res.band, c["U"] + res.band, color=COLORS[0], alpha=0.15, lw=0,
                    label=f"U ± {res.band:.3f}: {1 - float(delta):.1%} quantile of sup|Û_s − U| ({BAND_REPS} samples)")
    ax.plot(c["alpha"], c["U_hat"], color=COLORS[1], lw=1.0, label=f"Û_s (s = {int(s):,} sampled types)")
    theory_line(ax, c["alpha"], c["U"], label="U (exact population)")
    ax.axvline(res.alpha_star, color="black", lw=0.8, ls=":", label=f"α* = {res.alpha_star:.3f}")
    ax.axvline(res.alpha_hat, color=COLORS[1], lw=0.8, ls=":", label=f"α̂ (EUM) = {res.alpha_hat:.3f}")
    attained = (f"attained at α*: U = {res.agent_best:.5f}" if tie == "principal" else
                f"agent ties: best attained U = {res.agent_best:.5f} < sup")
    ax.plot([res.alpha_attained], [res.agent_best], "o" if tie == "principal" else "v", color="black", ms=6,
            mfc="black" if tie == "principal" else "white", label=attained)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, max(float(np.max(c["U"])) + res.band, float(np.max(c["U_hat"]))) * 1.15 + 1e-9)
    label_axes(ax, "linear contract α", "principal's utility", f"n = {int(n_actions)}, m = {int(n_outcomes)}")
    return fig, res


def explorer():
    """The chapter's panel (``theorybook.widgets.live_panel``)."""
    import ipywidgets as w

    controls = {
        "s": w.SelectionSlider(options=[50 * 2**j for j in range(12)], value=800, description="s"),
        "n_actions": w.Dropdown(options=[2, 5, 10, 30, 100], value=10, description="n actions"),
        "n_outcomes": w.IntSlider(value=6, min=2, max=12, description="m outcomes"),
        "delta": w.SelectionSlider(options=[0.001, 0.01, 0.05, 0.1, 0.2, 0.5], value=0.05, description="δ"),
        "tie": w.ToggleButtons(options=list(TIES), value="principal", description="ties"),
    }
    return live_panel(controls, render, rows=[["s", "n_actions", "n_outcomes"], ["delta", "tie"]])
