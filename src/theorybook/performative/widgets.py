"""The chapter's control panel. Every slider changes what is *measured*, not only the theory:

* share ξ and sample size n → one round of full performativity on the chapter's population
  (N = :data:`~theorybook.performative.verdicts.POPULATION_SIZE`): the measured generalisation gap beside the
  Theorem 3.13 bound with this problem's constants;
* retrainings T and the drift factor ρ = ε(1 + L_a) → repeated RERM under the gaming transition with
  ε = ρ/(1 + L_a), L_a = ‖ŵ₁‖ of the initial fit: the measured drift W₂(d̂₀, d̂_t) beside Theorem 3.10's
  Σ_{s<t} ρ^s δ₁, and the out-of-sample risk increase of θ̂₀ beside Corollary 3.11's observed-drift bound.

The population is drawn once and cached; one update is two batched Newton fits and T warm-started ones.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch

from ..device import one_thread, to_numpy
from ..plotting import COLORS, figure, label_axes, theory_line
from ..validate import integer, number
from ..widgets import live_panel
from .echo import tradeoff
from .experiment import fit_logistic, loss_lipschitz, population, retrain, risk
from .theory import drift_bound
from .verdicts import CHAPTER_SEEDS, POPULATION_SIZE, RETRAIN_SIZE, SAMPLE_SIZE, synthetic_bound

__all__ = ["PanelResult", "panel", "render", "explorer"]


@lru_cache(maxsize=1)
def _population():
    return population(POPULATION_SIZE, seed=CHAPTER_SEEDS[0])


@lru_cache(maxsize=1)
def _retrain_base():
    pop = _population()
    idx = torch.randperm(POPULATION_SIZE, generator=torch.Generator().manual_seed(CHAPTER_SEEDS[0] + 2))
    idx = idx.to(pop.X.device)
    tr, held = idx[:RETRAIN_SIZE], idx[RETRAIN_SIZE:]
    X, y = pop.X[tr], pop.y[tr]
    fit = fit_logistic(X, y)
    return X, y, pop.X[held], pop.y[held], fit


class PanelResult(NamedTuple):
    """What the panel reports for one setting (nats; drifts in feature units)."""

    complexity: float
    performative: float
    sampling: float
    total: float
    measured_gap: float  # 𝓡(d_1, θ̂_2) − 𝓡(d̂_1, θ̂_2), one round, full performativity
    r: float  # response rate used by the bound: max(m/n, m_pop/N)
    eps: float  # ε = ρ/(1 + L_a) used by the retraining run
    drift: np.ndarray  # measured W₂(d̂₀, d̂_t), t = 1 … T
    drift_theory: np.ndarray  # Σ_{s<t} ρ^s δ₁
    oos_increase: float  # measured 𝓡(d_T, θ̂₀) − 𝓡(d₀, θ̂₀) on held-out units
    oos_bound: float  # L_ℓ(θ̂₀) Σ_t δ_t (Cor 3.11)
    label: str


def panel(share: float = 0.1, n: int = SAMPLE_SIZE, rounds: int = 10, rho: float = 1.2) -> PanelResult:
    """Pure compute behind the panel; validates its arguments like every public function."""
    share = number("share", share, 0.0, 1.0, low_open=True, high_open=True)
    n = integer("n", n, 100, POPULATION_SIZE)
    rounds = integer("rounds", rounds, 1, 20)
    rho = number("rho", rho, 0.0, 1.3, low_open=True)
    with one_thread():
        pop = _population()
        tr = tradeoff(pop, n, [share], mode="full", seed=CHAPTER_SEEDS[0] + 1)
        b, r = synthetic_bound(tr, 0, n=n)
        X, y, Xh, yh, fit = _retrain_base()
        L_a = float(torch.linalg.vector_norm(fit.w))
        eps = min(rho / (1.0 + L_a), 1.0)
        run = retrain(X, y, rounds, eps)
        drift = to_numpy(run.total_drift)
        delta1 = float(run.step_drift[0])
        theory = np.array([drift_bound(t, run.rho, delta1) for t in range(1, rounds + 1)])
        v_T = run.shifts[-1].to(Xh.device, Xh.dtype)
        oos = float(risk(fit, Xh + v_T, yh) - risk(fit, Xh, yh))
        oos_bound = float(loss_lipschitz(fit)) * float(run.step_drift.sum())
    gap = float(tr.gap[0])
    label = (f"r = {r:.3f}: gap {gap:.3g} ≤ Thm 3.13 bound {b.total:.3g} nats · ρ = {run.rho:.2f}: drift after "
             f"T = {rounds} is {drift[-1]:.3g} (theory {theory[-1]:.3g}) · θ̂₀'s risk +{oos:.3g} ≤ {oos_bound:.3g}")
    return PanelResult(b.complexity, b.performative, b.sampling, b.total, gap, r, eps, drift, theory, oos,
                       oos_bound, label)


def render(share: float = 0.1, n: int = SAMPLE_SIZE, rounds: int = 10, rho: float = 1.2):
    """Draw the panel for one setting; returns ``(fig, result)``."""
    res = panel(share, n, rounds, rho)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    names = ["complexity", "performative", "sampling", "Thm 3.13 total", "measured gap"]
    vals = np.array([res.complexity, res.performative, res.sampling, res.total, res.measured_gap])
    ax.barh(names, np.maximum(np.abs(vals), 1e-4), color=[COLORS[0], COLORS[3], COLORS[2], "black", COLORS[1]])
    ax.set_xscale("log")
    label_axes(ax, "nats (log scale; |gap| shown)", "", title=f"one round, ξ = {share:.2f}, n = {n:,}")
    t = np.arange(1, len(res.drift) + 1)
    ax2.semilogy(t, res.drift, "o", color=COLORS[1], label="measured W₂(d̂₀, d̂ₜ)")
    theory_line(ax2, t, res.drift_theory, label=r"$\sum_{s<t}\rho^s\delta_1$")
    label_axes(ax2, "retrainings t", "drift", title=f"ε(1 + Lₐ) = {rho:.2f}" + (" (ε capped at 1)"
                                                                                  if res.eps >= 1.0 else ""))
    ax2.legend(fontsize=7)
    if not math.isfinite(res.total):  # pragma: no cover - bounds are validated finite
        ax.set_title("bound out of range")
    return fig, res


def explorer():
    """The ipywidgets panel; each update re-runs the experiment (:func:`panel`) and redraws."""
    import ipywidgets as w

    controls = {
        "share": w.FloatSlider(value=0.1, min=0.02, max=0.5, step=0.02, description="share ξ"),
        "n": w.IntSlider(value=SAMPLE_SIZE, min=1_000, max=POPULATION_SIZE, step=1_000, description="n"),
        "rounds": w.IntSlider(value=10, min=1, max=20, description="rounds T"),
        "rho": w.FloatSlider(value=1.2, min=0.3, max=1.3, step=0.05, description="ε(1+L_a)"),
    }
    return live_panel(controls, render, rows=[["share", "n"], ["rounds", "rho"]])
