"""The chapter's experiment at CPU scale: the (τ, α, γ) maps, their noise-free control, and the statistics the
verdict rows read (seeded; every size is an argument of :func:`~.dynamics.heatmap`, so a GPU run can raise it).

Design [reconstruction]. Least squares with n = 1024, d = 16, label noise σ = ``NOISE``; τ-nice batches
τ ∈ {1, 2, …, 1024 = n} (the grid reaches the full batch, so an optimum could sit anywhere inside it); α ∈ {1, ½,
…, 1/128}; 13 step sizes γ. The metric is the samples N = τT until the running mean of the seed-averaged
‖∇f(x_t)‖_* falls to ε = ``EPS_REL``·‖∇f(x₀)‖_*; N*(τ) = min over (α, γ), α*(τ) its argmin in α.

Control (:func:`noise_free_maps`): the same maps with every minibatch gradient replaced by the exact gradient
(``oracle="full"``), still charged τ samples per step and censored at the budget only. Its trajectory does not
depend on τ, so its α*(τ) cannot move and its N*(τ) = τ·N*(1) is smallest at τ = 1: a claim about the effect of
the batch's *noise* must fail on it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from ..device import one_thread, resolve_device
from ..validate import integer, one_of
from .dynamics import HeatmapResult, Problem, heatmap, least_squares, matrix_regression

__all__ = [
    "N", "D", "P", "NOISE", "EPS_REL", "BUDGET", "SEEDS", "TAUS", "ALPHAS", "GAMMAS", "MUON_TAUS", "MUON_SEEDS",
    "MUON_BUDGET", "MUON_GAMMAS", "CHAPTER_SEEDS", "VARIANCE_TAUS", "VARIANCE_DRAWS", "chapter_problem",
    "chapter_maps", "noise_free_maps", "alpha_shift", "interior_depth",
]

# The chapter's scale (CPU). Every size is an argument of heatmap(...): raise n, seeds and budget on a GPU.
N, D, P = 1024, 16, 8
NOISE = 2.0  # label noise σ (the plan's σ = 1 needs ~4× the steps for the same noise-to-ε ratio; see the chapter)
EPS_REL = 0.2  # ε = 0.2·‖∇f(x₀)‖_*
BUDGET = 2**13
SEEDS = 8
TAUS = tuple(2**k for k in range(11))  # 1 … 1024 = n: the full batch closes the grid
ALPHAS = tuple(2.0**-k for k in range(8))
GAMMAS = tuple(float(g) for g in np.logspace(-3, 0, 13))
MUON_TAUS = (1, 4, 16, 64)
MUON_SEEDS = 2
MUON_BUDGET = 2**12
MUON_GAMMAS = GAMMAS[::2]
CHAPTER_SEEDS = (2026,)
VARIANCE_TAUS = (1, 4, 16, 64)
VARIANCE_DRAWS = 4000
_TINY = {"taus": (1, 4, 16), "alphas": (1.0, 0.25), "gammas": (0.01, 0.1),
         "kw": {"budget": 256, "eps_rel": 0.5, "seeds": 2, "chunk": 32}}


@lru_cache(maxsize=4)
def _problem(kind: str, device: str) -> Problem:
    if kind == "least_squares":
        return least_squares(N, D, NOISE, seed=0, device=device)
    return matrix_regression(N, P, P, NOISE, seed=0, device=device)


def chapter_problem(kind: str = "least_squares", device: str | torch.device | None = None) -> Problem:
    """The chapter's least-squares (n = 1024, d = 16) or matrix-regression (8 × 8) problem, σ = NOISE, seed 0."""
    one_of("kind", kind, ("least_squares", "matrix_regression"))
    return _problem(kind, str(resolve_device(device)))


def _scale(scale: str) -> tuple[tuple, tuple, tuple, dict]:
    one_of("scale", scale, ("chapter", "tiny"))
    if scale == "tiny":
        return _TINY["taus"], _TINY["alphas"], _TINY["gammas"], dict(_TINY["kw"])
    return TAUS, ALPHAS, GAMMAS, dict(budget=BUDGET, eps_rel=EPS_REL, seeds=SEEDS, chunk=64)


def chapter_maps(seed: int, scale: str = "chapter", muon: bool = False) -> dict[str, HeatmapResult]:
    """The chapter's (τ, α, γ) maps: ``l2`` and ``linf`` on least squares (8 seeds), and with ``muon=True`` the
    ``spectral`` map on matrix regression (Newton–Schulz, τ ∈ MUON_TAUS, 2 seeds). ``scale="tiny"`` is a smoke
    scale for tests."""
    sd = integer("seed", seed, 0, 2**62)
    taus, alphas, gammas, kw = _scale(scale)
    if not isinstance(muon, bool):
        raise TypeError(f"Invalid muon: {muon!r} (must be a bool)")
    with one_thread():
        ls = chapter_problem("least_squares")
        out = {norm: heatmap(ls, norm, taus, alphas, gammas, seed=sd + j, **kw) for j, norm in
               enumerate(("l2", "linf"))}
        if muon:
            mr = chapter_problem("matrix_regression")
            mkw = {**kw, "seeds": 2}
            if scale == "chapter":
                mkw["budget"] = MUON_BUDGET
            out["spectral"] = heatmap(mr, "spectral", MUON_TAUS if scale == "chapter" else (1, 4), alphas,
                                      MUON_GAMMAS if scale == "chapter" else gammas, seed=sd + 2, orth="ns", **mkw)
    return out


@lru_cache(maxsize=2)
def _noise_free(scale: str) -> dict[str, HeatmapResult]:
    taus, alphas, gammas, kw = _scale(scale)
    kw["seeds"] = 1  # exact gradients: every seed would run the same trajectory
    with one_thread():
        ls = chapter_problem("least_squares")
        return {norm: heatmap(ls, norm, taus, alphas, gammas, seed=0, oracle="full", censor=None, **kw)
                for norm in ("l2", "linf")}


def noise_free_maps(scale: str = "chapter") -> dict[str, HeatmapResult]:
    """The control: the ``l2`` and ``linf`` maps of :func:`chapter_maps` with the exact gradient in place of every
    τ-nice minibatch (still τ samples per step), censored at the budget only. Deterministic, so one seed (every
    seed would give the same trajectory); cached."""
    one_of("scale", scale, ("chapter", "tiny"))
    return _noise_free(scale)


def alpha_shift(r: HeatmapResult) -> tuple[bool, float]:
    """(α* non-decreasing over the uncensored τ, α*(last uncensored τ)/α*(1)); ``(False, nan)`` with fewer than
    two uncensored τ or a censored τ = 1."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult)")
    a = np.asarray(r.alpha_star, dtype=float)
    f = a[np.isfinite(a)]
    if f.size < 2 or not np.isfinite(a[0]):
        return False, float("nan")
    return bool(np.all(np.diff(f) >= 0)), float(f[-1] / a[0])


def interior_depth(r: HeatmapResult) -> float:
    """How far the best interior batch beats both ends of the τ grid: ``min(N*(τ₁), N*(τ_max))/min_{1<i<k} N*(τᵢ)
    − 1`` (> 0: an interior optimum; ≤ 0: the optimum sits at an end). A censored N* counts as +∞ (it exceeds the
    censoring level, itself ≥ the best count); NaN when every interior τ is censored."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult)")
    ns = np.asarray(r.n_star, dtype=float)
    if ns.size < 3:
        raise ValueError(f"Invalid r: {ns.size} batch sizes (need ≥ 3 for an interior)")
    inner = float(np.min(ns[1:-1]))
    if not np.isfinite(inner):
        return float("nan")
    return float(min(ns[0], ns[-1]) / inner - 1.0)
