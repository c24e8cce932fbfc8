"""The chapter's control panel: method, batch τ, fresh-gradient weight α and step γ → that cell's ‖∇f(x_t)‖_* and
its running mean (one seed, ≤ 2¹² samples — 2¹⁰ for Muon — the numpy one-cell path), next to the precomputed
(τ, α) map of samples-to-ε (min over γ) with the cell marked and our derivation's ridge α* ∝ 1/σ_τ² through the
measured τ = 1 point.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..plotting import COLORS, figure, label_axes, theory_line
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .dynamics import NORMS, HeatmapResult, run_cell

__all__ = ["PanelResult", "ridge", "plot_map", "render", "explorer"]

_MAPS: dict[str, HeatmapResult] = {}
_LABEL = {"l2": "normalised SGD-M (ℓ2)", "linf": "sign-SGD-M (ℓ∞)", "spectral": "Muon (spectral, 8×8)"}
PANEL_SAMPLES = 2**12
SPECTRAL_PANEL_SAMPLES = 2**10  # one 8×8 SVD per step: 2¹² of them take ~0.5 s on a loaded CPU


class PanelResult(NamedTuple):
    hit_samples: float  # samples until the running mean ≤ ε (inf: not within the panel's 2¹² samples)
    final_grad: float
    eps: float
    label: str


def ridge(taus, alpha1: float, n: int) -> np.ndarray:
    """Our derivation's ridge through the measured α*(1): α(τ) = min(1, α*(1)·σ₁²/σ_τ²) = min(1, α*(1)·τ(n−1)/(n−τ))."""
    a1 = number("alpha1", alpha1, 0.0, 1.0, low_open=True)
    nn = integer("n", n, 2)
    t = np.asarray(taus, dtype=float).reshape(-1)
    if t.size == 0 or not np.all(np.isfinite(t)) or np.any(t < 1) or np.any(t >= nn):
        raise ValueError(f"Invalid taus: must be finite and in [1, n) = [1, {nn})")
    return np.minimum(1.0, a1 * t * (nn - 1) / (nn - t))


def render(method: str = "l2", tau: int = 4, alpha: float = 0.5, gamma: float = 0.1):
    """Draw one setting; returns ``(fig, PanelResult)``."""
    from .experiment import chapter_problem

    one_of("method", method, NORMS)
    prob = chapter_problem("matrix_regression" if method == "spectral" else "least_squares", device="cpu")
    from .experiment import EPS_REL

    budget = SPECTRAL_PANEL_SAMPLES if method == "spectral" else PANEL_SAMPLES
    run = run_cell(prob, method, tau, alpha, gamma, samples=budget, eps_rel=EPS_REL, seed=0)
    fig, (ax, ax2) = figure(2, width=4.3, height=3.3)
    ax.semilogy(run.samples_axis, run.grad_norm, color=COLORS[0], lw=0.7, alpha=0.6, label="‖∇f(x_t)‖_*")
    ax.semilogy(run.samples_axis, run.running_mean, color=COLORS[1], lw=1.6, label="running mean")
    ax.axhline(run.eps, color="black", ls=":", lw=0.9, label="ε")
    if np.isfinite(run.hit_samples):
        ax.axvline(run.hit_samples, color=COLORS[2], lw=0.9, label=f"hit at {run.hit_samples:,.0f}")
    label_axes(ax, "samples", "dual norm of the full gradient", f"{_LABEL[method]}: one seed, ≤ {budget:,} samples")
    r = _MAPS.get(method)
    if r is None:
        ax2.text(0.5, 0.5, "map not computed\n(pass maps= to explorer)", ha="center", va="center",
                 transform=ax2.transAxes)
    else:
        plot_map(ax2, r, prob.n, "samples to ε, min over γ")
        ti = list(r.taus).index(int(tau)) if int(tau) in list(r.taus) else None
        ai = int(np.argmin(np.abs(np.log2(r.alphas) - np.log2(float(alpha)))))
        if ti is not None:
            ax2.plot(ti, ai, "s", mfc="none", mec="red", ms=14, mew=2, label="this (τ, α)")
            ax2.legend(loc="lower right", fontsize=7)
    hit = "not reached" if not np.isfinite(run.hit_samples) else f"{run.hit_samples:,.0f} samples"
    label = (f"{_LABEL[method]}, τ = {int(tau)}, α = {float(alpha):g} (β = {1 - float(alpha):g}), γ = "
             f"{float(gamma):.3g}: running mean ≤ ε after {hit}; final ‖∇f‖_* = {run.grad_norm[-1]:.3g}")
    return fig, PanelResult(run.hit_samples, float(run.grad_norm[-1]), run.eps, label)


def plot_map(ax, r: HeatmapResult, n: int, title: str | None = None) -> None:
    """Draw a (τ, α) map of log₁₀ samples-to-ε (min over γ; blank = censored), the measured α*(τ) (white dots) and
    our derivation's ridge α ∝ τ(n−1)/(n−τ) through the measured α*(1), capped at 1 (dashed)."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult)")
    nn = integer("n", n, 2)
    z = np.log10(np.where(np.isfinite(r.best), r.best, np.nan)).T  # (α, τ); α = 1 on top
    im = ax.imshow(z, origin="upper", aspect="auto", cmap="viridis")
    ax.figure.colorbar(im, ax=ax, shrink=0.8, label="log₁₀ samples to ε")
    ax.set_xticks(range(len(r.taus)), [str(int(t)) for t in r.taus])
    ax.set_yticks(range(len(r.alphas)), [f"1/{round(1 / a)}" if a < 1 else "1" for a in r.alphas])
    ok = np.isfinite(r.alpha_star)
    ia = np.array([int(np.argmin(np.abs(r.alphas - a))) if np.isfinite(a) else -1 for a in r.alpha_star])
    ax.plot(np.arange(len(r.taus))[ok], ia[ok], "o", color="white", mec="black", label="measured α*(τ)")
    below = np.asarray(r.taus) < nn  # the ridge reaches 1 before τ = n (the full batch has no noise)
    if np.isfinite(r.alpha_star[0]) and below.sum() >= 2:
        rd = np.ones(len(r.taus))
        rd[below] = ridge(np.asarray(r.taus)[below], float(r.alpha_star[0]), nn)
        theory_line(ax, np.arange(len(r.taus)), np.log2(r.alphas[0] / rd), label="ridge ∝ τ(n−1)/(n−τ) (ours)")
    label_axes(ax, "batch τ", "fresh-gradient weight α  (β = 1 − α)", title, legend=False)
    ax.legend(loc="lower right", fontsize=7)


def explorer(maps: dict[str, HeatmapResult] | None = None):
    """The chapter's panel; ``maps`` (from ``chapter_maps``) supplies the heat maps."""
    import ipywidgets as w

    if maps is not None:
        if not isinstance(maps, dict) or not all(isinstance(r, HeatmapResult) for r in maps.values()):
            raise TypeError("Invalid maps: must be chapter_maps(...)'s dict of HeatmapResult")
        _MAPS.update(maps)
    from .experiment import ALPHAS, GAMMAS, TAUS

    controls = {
        "method": w.ToggleButtons(options=list(NORMS), value="l2", description="LMO"),
        "tau": w.SelectionSlider(options=list(TAUS), value=4, description="τ"),
        "alpha": w.SelectionSlider(options=list(ALPHAS), value=0.5, description="α"),
        "gamma": w.SelectionSlider(options=[round(g, 4) for g in GAMMAS], value=round(GAMMAS[8], 4),
                                   description="γ"),
    }
    return live_panel(controls, render, rows=[["method"], ["tau", "alpha", "gamma"]])
