"""The chapter's control panel: share ξ, sample size n, order p, confidence δ, retrainings T and the drift
factor ρ = ε(1 + L_a) → the Theorem 3.13 bound split into its components, set beside the gap measured on the
synthetic population (one self-negating / self-fulfilling round, retrained by Newton). The population
(N = 10⁵) is drawn once and cached; one update is two batched Newton fits and a few passes over N points.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..plotting import COLORS, figure, label_axes
from ..validate import in_range, integer
from ..widgets import live_panel
from .experiment import population, tradeoff
from .theory import drift_bound, thm313_bound

__all__ = ["PanelResult", "panel", "render", "explorer", "synthetic_bound"]

_N_POP = 100_000


@lru_cache(maxsize=1)
def _population():
    return population(_N_POP, seed=0)


class PanelResult(NamedTuple):
    """What the panel reports for one setting (nats)."""

    complexity: float
    performative: float  # 2 L_ℓ R, times Σ_{s<T} ρ^s after T retrainings [reconstruction]
    sampling: float
    total: float
    measured_gap: float  # 𝓡(d_1, θ̂_2) − 𝓡(d̂_1, θ̂_2), one round, full performativity
    r: float  # response rate used by the bound: max(m/n, m_pop/N)
    label: str


def synthetic_bound(tr, i: int, *, n: int, p: float = 2.0, delta: float = 0.05):
    """Theorem 3.13 with the synthetic problem's own constants for entry ``i`` of a :class:`Tradeoff`:
    𝒟_𝒵 = √5, L_ℓ = L_ℓ(θ̂_2), L_f = ‖w‖/4, F = C_∞ = sup_z ℓ(θ̂_2; z), r = max(m/n, m_pop/N)."""
    r = max(float(tr.r_sample[i]), float(tr.r_pop[i]), 1.0 / n)
    c_inf = float(tr.C_inf[i])
    return thm313_bound(n, min(r, 1.0), p=p, delta=delta, diam=math.sqrt(5.0), L_loss=float(tr.L_loss[i]),
                        L_f=float(tr.L_f[i]), F=c_inf, C_inf=c_inf), r


def panel(share: float = 0.1, n: int = 20_000, p: float = 2.0, delta: float = 0.05, rounds: int = 1,
          rho: float = 1.0) -> PanelResult:
    """Pure compute behind the panel; validates its arguments like every public function."""
    in_range("share", share, 0.0, 1.0, low_open=True)
    integer("n", n, 100)
    in_range("p", p, 1.0, float("inf"))
    in_range("delta", delta, 0.0, 1.0, low_open=True)
    integer("rounds", rounds, 1)
    in_range("rho", rho, 0.0, float("inf"))
    pop = _population()
    tr = tradeoff(pop, min(n, _N_POP), [share], mode="full")
    b, r = synthetic_bound(tr, 0, n=min(n, _N_POP), p=p, delta=delta)
    perf = b.performative * drift_bound(rounds, rho, 1.0)
    total = b.complexity + b.sampling + perf
    gap = float(tr.gap[0])
    finite = math.isfinite(total)
    label = (f"r = {r:.3f} · bound {total:.3g} nats ≥ measured gap {gap:.3g}" if finite
             else "bound overflowed (ρ^T too large)")
    return PanelResult(b.complexity, perf, b.sampling, total, gap, r, label)


def render(share: float = 0.1, n: int = 20_000, p: float = 2.0, delta: float = 0.05, rounds: int = 1,
           rho: float = 1.0):
    """Draw the panel for one setting; returns ``(fig, result)``."""
    res = panel(share, n, p, delta, rounds, rho)
    fig, (ax,) = figure(1, width=6.0, height=3.2)
    names = ["complexity", "performative", "sampling", "total bound", "measured gap"]
    vals = np.array([res.complexity, res.performative, res.sampling, res.total, res.measured_gap])
    shown = np.where(np.isfinite(vals), np.maximum(np.abs(vals), 1e-4), 1e300)
    ax.barh(names, shown, color=[COLORS[0], COLORS[3], COLORS[2], "black", COLORS[1]])
    ax.set_xscale("log")
    label_axes(ax, "nats (log scale; |gap| shown)", "", title=res.label)
    return fig, res


def explorer():
    """The ipywidgets panel; each update recomputes :func:`panel` and redraws."""
    import ipywidgets as w

    controls = {
        "share": w.FloatSlider(value=0.1, min=0.01, max=0.5, step=0.01, description="share ξ"),
        "n": w.IntSlider(value=20_000, min=1_000, max=_N_POP, step=1_000, description="n"),
        "p": w.FloatSlider(value=2.0, min=1.0, max=4.0, step=0.5, description="p"),
        "delta": w.FloatLogSlider(value=0.05, base=10, min=-4, max=-0.1, step=0.1, description="δ"),
        "rounds": w.IntSlider(value=1, min=1, max=30, description="rounds T"),
        "rho": w.FloatSlider(value=1.0, min=0.5, max=3.0, step=0.05, description="ε(1+L_a)"),
    }
    return live_panel(controls, render, rows=[["share", "n", "p"], ["delta", "rounds", "rho"]])
