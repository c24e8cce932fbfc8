"""The chapter's deterministic studies beyond the one world: random heterogeneous worlds (is the maximal lottery
sensitive to heterogeneity?), the robust LP against a direct worst-case search, and the axioms of our reconstructed
LP (neutrality, monotonicity).

Worlds of :func:`random_worlds` [reconstruction]: ``K = 3`` groups with shares ``w₀ ~ Dirichlet(1, 1, 1)`` (sorted,
largest first), utilities ``u_k = q + σ_u ξ_k`` (q = linspace(1, −1, m), ξ ~ N(0, 1)) and **no** designed boost or
dislike: the heterogeneity is random, of size σ_u.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import numpy as np

from ..device import to_numpy
from ..validate import finite_tensor, integer, number
from .experiment import CHAPTER_SEEDS, RHO_STAR, PreferenceWorld, preference_world
from .lotteries import _maximal_raw, _robust_raw, _simplex

__all__ = ["SENSITIVITY_SIGMAS", "BAD_GUARANTEE", "Sensitivity", "sensitivity_study", "group_guarantee",
           "random_worlds", "TVSearch",
           "tv_direct_search", "Axioms", "axiom_checks"]

#: The heterogeneity scan of the ml-sensitive row (σ_u of the random worlds), registered before any run.
SENSITIVITY_SIGMAS = (0.05, 0.3, 0.6, 1.0)
#: "Badly underperforms for some subpopulation": the model's guaranteed win rate in some group is below 0.4.
BAD_GUARANTEE = 0.4
N_WORLDS = 40


def group_guarantee(P: np.ndarray) -> np.ndarray:
    """Per model i, ``min_k min_{j≠i} P_k[i, j]`` — its worst guaranteed win rate over the groups (P: (K, m, m))."""
    g = np.array(to_numpy(finite_tensor("P", P)), dtype=np.float64, copy=True)
    if g.ndim != 3 or g.shape[1] != g.shape[2] or g.shape[1] < 2:
        raise ValueError(f"Invalid P: shape {g.shape} (must be (K, m, m) with m ≥ 2)")
    idx = np.arange(g.shape[-1])
    g[:, idx, idx] = 1.0
    return g.min(2).min(0)


class Sensitivity(NamedTuple):
    """Per σ_u of the scan: the share of the random worlds in which the maximal lottery's (resp. the robust
    lottery's, ρ = 0.4) support holds a model whose group-conditional guarantee is below :data:`BAD_GUARANTEE`, and
    the mean probability mass on such models."""

    sigmas: tuple[float, ...]
    n_worlds: int
    ml_share: np.ndarray
    robust_share: np.ndarray
    ml_mass: np.ndarray
    robust_mass: np.ndarray


def random_worlds(sigma: float, n: int = N_WORLDS, seed: int = CHAPTER_SEEDS[0], m: int = 8) -> list[PreferenceWorld]:
    """``n`` random heterogeneous worlds of size σ_u = ``sigma`` (module docstring), seeded."""
    sd = number("sigma", sigma, 0.0, 10.0)
    n = integer("n", n, 1, 10_000)
    s = integer("seed", seed, 0)
    rng = np.random.default_rng(s)
    out = []
    for i in range(n):
        sh = np.sort(rng.dirichlet(np.ones(3)))[::-1].copy()
        out.append(preference_world(m, sh, 0.0, s * 1000 + i, noise=sd, boost=0.0, device="cpu"))
    return out


def sensitivity_study(sigmas: Any = SENSITIVITY_SIGMAS, n: int = N_WORLDS, seed: int = CHAPTER_SEEDS[0],
                      rho: float = RHO_STAR) -> Sensitivity:
    """The ml-sensitive study: for each σ_u, ``n`` random worlds (the same draws of shares and ξ at every σ_u)."""
    sg = tuple(number("sigmas", x, 0.0, 10.0) for x in np.atleast_1d(np.asarray(sigmas, dtype=float)))
    r = number("rho", rho, 0.0, 1.0)
    out = np.zeros((4, len(sg)))
    for a, sigma in enumerate(sg):
        for w in random_worlds(sigma, n, seed):
            P = np.asarray(to_numpy(w.P), dtype=np.float64)
            M, w0 = 2.0 * P - 1.0, np.asarray(to_numpy(w.shares), dtype=np.float64)
            bad = group_guarantee(P) < BAD_GUARANTEE
            ml = _maximal_raw(np.einsum("k,kij->ij", w0, M)).p
            rb = _robust_raw(M, w0, r).p
            out[:, a] += ((ml[bad] > 1e-7).any(), (rb[bad] > 1e-7).any(), ml[bad].sum(), rb[bad].sum())
    out /= n
    return Sensitivity(sg, n, out[0], out[1], out[2], out[3])


def _grid(w0: np.ndarray, rho: float, h: float) -> np.ndarray:
    """All points of the simplex grid of step ``h`` (K = 3) inside the TV ball of radius ρ around w₀."""
    k = int(round(1.0 / h))
    pts = np.array([(a, b, k - a - b) for a in range(k + 1) for b in range(k + 1 - a)], dtype=float) / k
    return pts[0.5 * np.abs(pts - w0).sum(1) <= rho + 1e-12]


def _direct(p: np.ndarray, Ms: np.ndarray, W: np.ndarray) -> float:
    """``min_{w ∈ W} min_j Σ_k w_k (M_kᵀ p)_j`` by enumeration of the grid W."""
    C = np.einsum("kij,i->kj", Ms, p)
    return float((W @ C).min())


class TVSearch(NamedTuple):
    """The robust LP's value ``t`` against a direct search: the grid worst case at the LP's ``p``, the best grid worst
    case over ``n_search`` other lotteries, and the same for the LP solved with the radius halved (the control)."""

    t_lp: float
    direct_at_lp: float
    best_searched: float
    n_grid: int
    n_search: int
    t_half: float
    direct_at_half: float


def tv_direct_search(world: PreferenceWorld, rho: float = RHO_STAR, *, h: float = 0.01, n_search: int = 3000,
                     seed: int = CHAPTER_SEEDS[0]) -> TVSearch:
    """The LP against a direct worst-case search: the TV ball enumerated on a simplex grid of step ``h`` (its
    vertices lie on the grid when w₀ and ρ are multiples of h), the outer maximum searched over ``n_search`` lotteries
    (half uniform on the simplex, half perturbations of the LP's p). Needs K = 3 groups."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    r = number("rho", rho, 0.0, 1.0)
    hh = number("h", h, 1e-3, 0.5)
    ns = integer("n_search", n_search, 1, 100_000)
    s = integer("seed", seed, 0)
    Ms = 2.0 * np.asarray(to_numpy(world.P), dtype=np.float64) - 1.0
    w0 = _simplex("shares", np.asarray(to_numpy(world.shares), dtype=np.float64))
    if Ms.shape[0] != 3:
        raise ValueError(f"Invalid world: {Ms.shape[0]} groups (the grid search needs K = 3)")
    W = _grid(w0, r, hh)
    lot = _robust_raw(Ms, w0, r)
    rng = np.random.default_rng(s)
    m = Ms.shape[-1]
    cand = np.vstack([rng.dirichlet(np.ones(m), size=ns - ns // 2),
                      np.abs(lot.p + 0.02 * rng.standard_normal((ns // 2, m)))])
    cand /= cand.sum(1, keepdims=True)
    best = max(_direct(q, Ms, W) for q in cand)
    half = _robust_raw(Ms, w0, r / 2.0)
    return TVSearch(lot.value, _direct(lot.p, Ms, W), best, W.shape[0], ns, half.value, _direct(half.p, Ms, W))


class Axioms(NamedTuple):
    """Our reconstructed LP under relabelling and improvement: the largest |p(πM) − πp(M)| over ``n_perm``
    permutations π of the models, and the smallest change of p_i when model i's margins against every opponent in
    every group are raised by ε (over every model i)."""

    neutrality_gap: float
    n_perm: int
    monotonicity_min: float
    eps: float


def axiom_checks(world: PreferenceWorld, rho: float = RHO_STAR, *, n_perm: int = 6, eps: float = 0.05,
                 seed: int = CHAPTER_SEEDS[0]) -> Axioms:
    """Neutrality (relabel the models: the lottery relabels) and monotonicity (raise one model's margins: its
    probability does not fall) of the robust LP at radius ρ, on ``world``."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    r = number("rho", rho, 0.0, 1.0)
    npm = integer("n_perm", n_perm, 1, 1000)
    e = number("eps", eps, 1e-6, 0.5)
    s = integer("seed", seed, 0)
    Ms = 2.0 * np.asarray(to_numpy(world.P), dtype=np.float64) - 1.0
    w0 = np.asarray(to_numpy(world.shares), dtype=np.float64)
    m = Ms.shape[-1]
    p = _robust_raw(Ms, w0, r).p
    rng = np.random.default_rng(s)
    gap = 0.0
    for pi in itertools.islice((rng.permutation(m) for _ in itertools.count()), npm):
        q = _robust_raw(Ms[:, pi][:, :, pi], w0, r).p  # model a of the new labels is model pi[a]
        gap = max(gap, float(np.abs(q - p[pi]).max()))
    worst = np.inf
    for i in range(m):
        M2 = Ms.copy()
        up = np.minimum(M2[:, i, :] + e, 1.0)
        up[:, i] = 0.0
        M2[:, i, :] = up
        M2[:, :, i] = -up
        worst = min(worst, float(_robust_raw(M2, w0, r).p[i] - p[i]))
    return Axioms(gap, npm, worst, e)
