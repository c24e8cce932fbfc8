"""The chapter's studies beyond the one world: random heterogeneous worlds (is the maximal lottery sensitive to
heterogeneity?), worlds with a top cycle (is a maximal lottery fitted on sampled votes unexploitable on the true
preferences, where a pure winner is not?), the robust LP against a direct worst-case search, and the axioms of our
reconstructed LP (neutrality, monotonicity, continuity).

Worlds of :func:`random_worlds` [reconstruction]: ``K = 3`` groups with shares ``w₀ ~ Dirichlet(1, 1, 1)`` (sorted,
largest first), utilities ``u_k = q + σ_u ξ_k`` (q = linspace(1, −1, m), ξ ~ N(0, 1)) and **no** designed boost or
dislike: the heterogeneity is random, of size σ_u.

Worlds of :func:`cycling_worlds` [reconstruction]: the same utilities with ``σ_u =`` :data:`CYCLE_SIGMA` (each group
close to a ranking of its own) and shares ``w₀ ~ Dirichlet(κ, κ, κ)``, κ = :data:`CYCLE_KAPPA` (groups of comparable
size); a drawn world is kept only if its true pooled margin ``M̄ = Σ_k w₀_k M_k`` has **no Condorcet winner** (every
model loses to some model: a top cycle), the regime where a maximal lottery and a pure winner part.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import to_numpy
from ..validate import finite_tensor, integer, memory_guard, number
from .experiment import (
    CHAPTER_SEEDS,
    PER_PAIR,
    RHO_STAR,
    PreferenceWorld,
    _bt_fit,
    _pooled,
    _votes_per_group,
    preference_world,
)
from .lotteries import _maximal_raw, _robust_raw, _simplex, _worst_raw

__all__ = ["SENSITIVITY_SIGMAS", "BAD_GUARANTEE", "Sensitivity", "sensitivity_study", "group_guarantee",
           "random_worlds", "TVSearch", "tv_direct_search", "Axioms", "axiom_checks", "CYCLE_SIGMA", "CYCLE_KAPPA",
           "CYCLE_WORLDS", "GUARANTEE_PER_PAIR", "GUARANTEE_ALPHA", "BT_RIDGE", "CyclingWorlds", "cycling_worlds",
           "condorcet_winner", "guarantee_tolerance", "GuaranteeStudy", "guarantee_study", "CONTINUITY_EPS",
           "LIPSCHITZ_CAP", "robust_winner"]

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
    the mean probability mass on such models; and the share of worlds whose Bradley–Terry winner (fitted to the pooled
    true P, the infinite-data leaderboard) is such a model — the sceptic's rival on the ml-sensitive row."""

    sigmas: tuple[float, ...]
    n_worlds: int
    ml_share: np.ndarray
    robust_share: np.ndarray
    ml_mass: np.ndarray
    robust_mass: np.ndarray
    bt_share: np.ndarray  # the same share for the Bradley–Terry winner of the pooled true P (the leaderboard's pick)


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
    out = np.zeros((5, len(sg)))
    for a, sigma in enumerate(sg):
        for w in random_worlds(sigma, n, seed):
            P = np.asarray(to_numpy(w.P), dtype=np.float64)
            M, w0 = 2.0 * P - 1.0, np.asarray(to_numpy(w.shares), dtype=np.float64)
            bad = group_guarantee(P) < BAD_GUARANTEE
            ml = _maximal_raw(np.einsum("k,kij->ij", w0, M)).p
            rb = _robust_raw(M, w0, r).p
            bt = int(np.argmax(to_numpy(_bt_fit(torch.einsum("k,kij->ij", w.shares, w.P), 0.0))))
            out[:, a] += ((ml[bad] > 1e-7).any(), (rb[bad] > 1e-7).any(), ml[bad].sum(), rb[bad].sum(), bad[bt])
    out /= n
    return Sensitivity(sg, n, out[0], out[1], out[2], out[3], out[4])


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


#: The continuity scan: perturbation sizes ε = ‖ΔM‖_max (fixed before any run).
CONTINUITY_EPS = (1e-3, 1e-4, 1e-5, 1e-6)
#: The continuity row's cap on the Lipschitz-type ratio ‖Δp‖₁/‖ΔM‖_max (fixed before any run): a jump of a lottery
#: moves ‖Δp‖₁ by up to 2 at any ε, i.e. a ratio 2/ε = 2e6 at the smallest ε; a Lipschitz map keeps it bounded.
LIPSCHITZ_CAP = 1e3


def robust_winner(Ms: Any, w0: Any, rho: float) -> int:
    """The tie-broken argmax: the single model whose pure strategy has the best worst case over the TV ball,
    ``argmax_i min_{TV(w, w₀) ≤ ρ} min_j Σ_k w_k M_k[i, j]`` (ties to the lowest index) — a pure winner read off the
    robust objective, the continuity row's control."""
    A = np.asarray(to_numpy(finite_tensor("Ms", Ms, ndim=3)), dtype=np.float64)
    if A.shape[1] != A.shape[2] or A.shape[1] < 1:
        raise ValueError(f"Invalid Ms: shape {A.shape} (must be (K, m, m))")
    w = _simplex("w0", w0, A.shape[0])
    return _robust_winner_raw(A, w, number("rho", rho, 0.0, 1.0))


def _robust_winner_raw(A: np.ndarray, w: np.ndarray, r: float) -> int:
    m = A.shape[-1]
    return int(np.argmax([_worst_raw(np.eye(m)[i], A, w, r).value for i in range(m)]))


class Axioms(NamedTuple):
    """Our reconstructed LP under relabelling, improvement and perturbation: the largest |p(πM) − πp(M)| over
    ``n_perm`` permutations π of the models; the smallest change of p_i when model i's margins against every opponent
    in every group are raised by ε (over the models of the support; ``monotonicity_off`` over the others); and
    continuity at a tie of the pure robust winner — the
    largest ``‖Δp‖₁/‖ΔM‖_max`` per perturbation size of ``cont_eps`` (over ``n_dir`` random directions and the
    direction through the tie, both signs), for the robust lottery (``cont_ratio``) and for the tie-broken argmax
    (``winner_ratio``: ‖Δe_winner‖₁ = 2 when it jumps)."""

    neutrality_gap: float
    n_perm: int
    monotonicity_min: float  # over the models on the robust lottery's support (off-support ones start at p_i = 0)
    eps: float
    cont_eps: tuple[float, ...] = CONTINUITY_EPS
    cont_ratio: tuple[float, ...] = ()
    winner_ratio: tuple[float, ...] = ()
    tie_t: float = -1.0  # where on the heterogeneity path the pure winner switches (−1: it never does; no scan)
    n_dir: int = 0
    monotonicity_off: float = float("nan")  # the same change, min over the models off the support (p_i = 0 there)
    support: tuple[int, ...] = ()  # the robust lottery's support on the unperturbed world


def _tie_instance(Ms: np.ndarray, w0: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """A point where the pure robust winner switches, on the heterogeneity path ``M_k(t) = (1 − t)·M̄ + t·M_k``
    (t = 0: every group votes like the pooled population; t = 1: the world): bisection to double precision between
    the last t with the winner of t = 0 and the first without it. Returns the margins there, the unit path direction
    (``M_k − M̄`` scaled to max-norm 1: ahead the winner changes) and t; ``None`` if the winner never changes."""
    bar = _pooled(Ms, w0)[None]
    D = Ms - bar

    def at(t: float) -> np.ndarray:
        return bar + t * D

    w_start = _robust_winner_raw(at(0.0), w0, r)
    grid = np.linspace(0.0, 1.0, 65)
    hits = [t for t in grid if _robust_winner_raw(at(float(t)), w0, r) != w_start]
    if not hits or np.abs(D).max() == 0.0:
        return None
    hi = float(hits[0])
    lo = float(grid[grid < hi].max())
    while np.nextafter(lo, hi) < hi:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _robust_winner_raw(at(mid), w0, r) == w_start:
            lo = mid
        else:
            hi = mid
    return at(lo), D / np.abs(D).max(), lo


def axiom_checks(world: PreferenceWorld, rho: float = RHO_STAR, *, n_perm: int = 6, eps: float = 0.05,
                 seed: int = CHAPTER_SEEDS[0], n_dir: int = 4, cont_eps: Any = CONTINUITY_EPS) -> Axioms:
    """Neutrality (relabel the models: the lottery relabels), monotonicity (raise one model's margins: its
    probability does not fall; the minimum is taken over the support, where p_i > 0 can fall, and reported apart for
    the models off it, which start at 0) and continuity (perturb the margins by ε: the lottery moves by O(ε)) of the
    robust LP at radius ρ, on ``world``. Continuity is measured where a pure winner must jump: at the point of the
    heterogeneity path ``(1 − t)·M̄ + t·M_k`` where the pure robust winner (:func:`robust_winner`) switches,
    perturbed along the path and along ``n_dir`` random skew-symmetric directions (both signs; seeded). If the winner
    never switches on the path, the continuity fields are empty."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    r = number("rho", rho, 0.0, 1.0)
    npm = integer("n_perm", n_perm, 1, 1000)
    e = number("eps", eps, 1e-6, 0.5)
    s = integer("seed", seed, 0)
    nd = integer("n_dir", n_dir, 0, 100)
    ce = tuple(number("cont_eps", x, 1e-9, 0.1) for x in np.atleast_1d(np.asarray(cont_eps, dtype=object)))
    if not 1 <= len(ce) <= 20:
        raise ValueError(f"Invalid cont_eps: {len(ce)} sizes (must list 1 to 20 perturbation sizes)")
    Ms = 2.0 * np.asarray(to_numpy(world.P), dtype=np.float64) - 1.0
    w0 = np.asarray(to_numpy(world.shares), dtype=np.float64)
    m = Ms.shape[-1]
    p = _robust_raw(Ms, w0, r).p
    rng = np.random.default_rng(s)
    gap = 0.0
    for pi in itertools.islice((rng.permutation(m) for _ in itertools.count()), npm):
        q = _robust_raw(Ms[:, pi][:, :, pi], w0, r).p  # model a of the new labels is model pi[a]
        gap = max(gap, float(np.abs(q - p[pi]).max()))
    change = np.empty(m)
    for i in range(m):
        M2 = Ms.copy()
        up = np.minimum(M2[:, i, :] + e, 1.0)
        up[:, i] = 0.0
        M2[:, i, :] = up
        M2[:, :, i] = -up
        change[i] = float(_robust_raw(M2, w0, r).p[i] - p[i])
    sup = tuple(int(i) for i in np.flatnonzero(p > 1e-7))
    on = np.isin(np.arange(m), sup)
    worst = float(change[on].min())
    off = float(change[~on].min()) if (~on).any() else float("nan")
    tie = _tie_instance(Ms, w0, r)
    if tie is None:
        return Axioms(gap, npm, worst, e, ce, (), (), -1.0, nd, off, sup)
    T, d, t_star = tie
    iu, ju = np.triu_indices(m, 1)
    dirs = [d]
    for _ in range(nd):
        R = np.zeros_like(Ms)
        R[:, iu, ju] = rng.uniform(-1.0, 1.0, size=(Ms.shape[0], iu.size))
        R[:, ju, iu] = -R[:, iu, ju]
        dirs.append(R / np.abs(R).max())
    p0, top0 = _robust_raw(T, w0, r).p, _robust_winner_raw(T, w0, r)
    cont, jump = [], []
    for eps_k in ce:
        c_max = j_max = 0.0
        for D in dirs:
            for sign in (1.0, -1.0):
                M2 = np.clip(T + sign * eps_k * D, -1.0, 1.0)
                dm = float(np.abs(M2 - T).max())
                c_max = max(c_max, float(np.abs(_robust_raw(M2, w0, r).p - p0).sum()) / dm)
                j_max = max(j_max, 2.0 * float(_robust_winner_raw(M2, w0, r) != top0) / dm)
        cont.append(c_max)
        jump.append(j_max)
    return Axioms(gap, npm, worst, e, ce, tuple(cont), tuple(jump), t_star, nd, off, sup)


# -- unexploitability in worlds with a top cycle (the ml-guarantee row) ---------------------------------------------
#: The generator of the cycling worlds and the study's scan, fixed before any run on the chapter's seed (pilot seeds
#: 9101–9105 chose σ_u and κ — the heterogeneity at which top cycles are frequent and not mere near-ties — and nothing
#: else; the tolerance is :func:`guarantee_tolerance`, an error model).
CYCLE_SIGMA = 5.0
CYCLE_KAPPA = 5.0
CYCLE_WORLDS = 100
#: Votes per pair and group on average (the chapter's allocation ``n_k = max(1, round(K·n·w₀_k))``): the scan, with
#: the chapter's :data:`~theorybook.robust_lotteries.experiment.PER_PAIR` in the middle.
GUARANTEE_PER_PAIR = (100, PER_PAIR, 2500)
#: False-alarm probability of the ml-guarantee row (union bound over every world and pair).
GUARANTEE_ALPHA = 1e-3
#: Ridge of the Bradley–Terry control (a unit Gaussian prior on the scores: negligible against hundreds of votes per
#: pair, it keeps the fit finite when a model never beats some other, as near-rankings make common).
BT_RIDGE = 1.0


def condorcet_winner(M: Any) -> np.ndarray:
    """Per margin matrix ``M[..., i, j]`` (skew-symmetric), the model i with ``M_ij > 0`` for every ``j ≠ i``, or −1
    where there is none (a top cycle)."""
    A = np.asarray(to_numpy(finite_tensor("M", M)), dtype=np.float64)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-1] < 2:
        raise ValueError(f"Invalid M: shape {A.shape} (must be (..., m, m) with m ≥ 2)")
    m = A.shape[-1]
    beats = (A > 0) | np.eye(m, dtype=bool)
    win = beats.all(-1)
    return np.where(win.any(-1), np.argmax(win, axis=-1), -1)


class CyclingWorlds(NamedTuple):
    """``n`` worlds with a top cycle: shares ``w₀`` (n, K), within-group win probabilities ``P`` (n, K, m, m), and
    how many worlds were drawn to find them (the acceptance rate is ``n/drawn``)."""

    shares: np.ndarray
    P: np.ndarray
    drawn: int


def cycling_worlds(n: int = CYCLE_WORLDS, seed: int = CHAPTER_SEEDS[0], *, sigma: float = CYCLE_SIGMA,
                   kappa: float = CYCLE_KAPPA, m: int = 8, K: int = 3) -> CyclingWorlds:
    """``n`` random worlds whose true pooled margin has no Condorcet winner (module docstring): worlds are drawn in
    batches from one seeded generator — shares ``Dirichlet(κ·1)`` sorted largest first, ``u_k = q + σ_u ξ_k``,
    ``P_k[i, j] = σ(u_ki − u_kj)`` — and kept in order of drawing when ``M̄ = Σ_k w₀_k (2P_k − 1)`` has a top cycle.
    Raises ``ValueError`` if fewer than ``n`` are found in ``1000·n`` draws."""
    n = integer("n", n, 1, 10_000)
    s = integer("seed", seed, 0)
    sd = number("sigma", sigma, 0.0, 100.0)
    kap = number("kappa", kappa, 1e-2, 1e4)
    m = integer("m", m, 3, 64)
    K = integer("K", K, 2, 16)
    memory_guard(8.0 * 2 * n * K * m * m, lower="n, K or m")
    rng = np.random.default_rng(s)
    q = np.linspace(1.0, -1.0, m)
    keep_w, keep_P, drawn, found = [], [], 0, 0
    batch = max(64, 4 * n)
    while found < n:
        if drawn >= 1000 * n:
            raise ValueError(f"Invalid sigma/kappa: {found} worlds with a top cycle in {drawn} draws (fewer than "
                             f"n = {n}; raise sigma)")
        w = -np.sort(-rng.dirichlet(np.full(K, kap), size=batch), axis=1)
        u = q + sd * rng.standard_normal((batch, K, m))
        P = 1.0 / (1.0 + np.exp(-(u[..., :, None] - u[..., None, :])))
        idx = np.flatnonzero(condorcet_winner(np.einsum("nk,nkij->nij", w, 2.0 * P - 1.0)) < 0)[: n - found]
        keep_w.append(w[idx])
        keep_P.append(P[idx])
        # draws after the n-th kept world are not part of the study
        drawn += batch if found + idx.size < n else int(idx[-1]) + 1
        found += idx.size
    return CyclingWorlds(np.concatenate(keep_w), np.concatenate(keep_P), drawn)


def guarantee_tolerance(shares: Any, per_pair: int, alpha: float = GUARANTEE_ALPHA, m: int = 8) -> float:
    """The ml-guarantee row's tolerance (win-rate units), an error model fixed before any run.

    The maximal lottery ``p̂`` of the sampled pooled margin ``M̂ = Σ_k w₀_k M̂_k`` has ``min_j (M̂ᵀp̂)_j ≥ −ε``
    (LP tolerance ε ≤ 1e-9), so on the true ``M̄`` its worst-case margin is ``≥ −ε − max_ij |M̂_ij − M̄_ij|``.
    ``M̂_ij − M̄_ij = Σ_k (2w₀_k/n_k) Σ_votes (X − P_k,ij)`` is a sum of independent terms of range ``2w₀_k/n_k``, so
    Hoeffding gives ``Pr(|·| ≥ t) ≤ 2 exp(−t²/(2 Σ_k w₀_k²/n_k))``; a union over the ``m(m−1)/2`` pairs of every
    world (one row of ``shares`` per world) sets ``t_w = √(2 S_w ln(2·n_worlds·pairs/α))``, and the worst-case win
    rate is ``≥ ½ − (max_w t_w + ε)/2`` in every world with probability ≥ 1 − α. Returns ``(max_w t_w + 1e-9)/2``.
    """
    w = np.atleast_2d(np.asarray(to_numpy(finite_tensor("shares", shares)), dtype=np.float64))
    if w.ndim != 2 or (w < 0).any() or np.abs(w.sum(-1) - 1.0).max() > 1e-9:
        raise ValueError("Invalid shares: must be one population (K,) or one per world (n, K) on the simplex")
    n = integer("per_pair", per_pair, 1, 10**7)
    a = number("alpha", alpha, 1e-12, 1.0, high_open=True)
    m = integer("m", m, 2, 10_000)
    S = (w**2 / _votes_per_group(w, n)).sum(-1)
    pairs = m * (m - 1) // 2
    t = np.sqrt(2.0 * S * math.log(2.0 * w.shape[0] * pairs / a))
    return float((t.max() + 1e-9) / 2.0)


def _pure_worst(M: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Worst-case win rate ``(1 + min_j M_ij)/2`` of the pure strategy ``i = top`` in each world (diagonal included:
    a pure strategy never guarantees more than ½)."""
    return (1.0 + M[np.arange(M.shape[0]), top].min(-1)) / 2.0


class GuaranteeStudy(NamedTuple):
    """The ml-guarantee study on ``n_worlds`` worlds with a top cycle, at each votes-per-pair of ``per_pairs``: the
    worst-case win rate on the *true* pooled preferences, ``(1 + min_j (M̄ᵀp)_j)/2``, of each method fitted on that
    world's sampled votes (arrays (n_per_pair, n_worlds)), and the row's tolerance at each votes-per-pair."""

    per_pairs: tuple[int, ...]
    n_worlds: int
    drawn: int  # worlds drawn to find the n_worlds with a top cycle
    alpha: float
    tol: np.ndarray  # (n_pp,) win-rate tolerance (guarantee_tolerance)
    ml: np.ndarray  # the maximal lottery of the sampled pooled margin M̂
    ml_certified: np.ndarray  # min_j (M̂ᵀp̂)_j: the LP's own guarantee on the votes (0 up to LP tolerance)
    bt: np.ndarray  # the Bradley–Terry winner of the pooled votes (ridge BT_RIDGE)
    copeland: np.ndarray  # the empirical Copeland winner (most pairwise wins on M̂; ties to the best Borda score)
    borda: np.ndarray  # the best average win rate, argmax_i Σ_j M̂_ij (Borda)
    bt_softmax: np.ndarray  # the Bradley–Terry lottery p_i ∝ exp(s_i) of the same fit (a lottery from the leaderboard)
    uniform: np.ndarray  # (n_worlds,) the uniform lottery (no votes needed)
    best_pure: np.ndarray  # (n_worlds,) the best pure strategy on the true M̄ (an oracle: < ½ in a top cycle)
    ml_support: np.ndarray  # (n_pp, n_worlds) support size of the fitted maximal lottery
    smith: np.ndarray  # the uniform lottery over the Smith set of M̂ (the top cycle, without the lottery's weights)
    m: int = 8  # models per world


def smith_set(M: Any) -> np.ndarray:
    """The Smith set of a margin matrix ``M`` (m, m) as a boolean mask: the models that reach every model through
    weak pairwise majorities (``M_ij ≥ 0``) — the smallest set each of whose members beats every model outside it."""
    A = np.asarray(to_numpy(finite_tensor("M", M)), dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
        raise ValueError(f"Invalid M: shape {A.shape} (must be (m, m) with m ≥ 2)")
    m = A.shape[0]
    R = (A >= 0) | np.eye(m, dtype=bool)
    for _ in range(max(1, math.ceil(math.log2(m)) + 1)):
        R = R | ((R.astype(np.int64) @ R.astype(np.int64)) > 0)
    return R.all(1)


def guarantee_study(per_pairs: Any = GUARANTEE_PER_PAIR, n: int = CYCLE_WORLDS, seed: int = CHAPTER_SEEDS[0], *,
                    sigma: float = CYCLE_SIGMA, kappa: float = CYCLE_KAPPA, alpha: float = GUARANTEE_ALPHA,
                    m: int = 8) -> GuaranteeStudy:
    """Is a maximal lottery fitted on sampled votes unexploitable on the true preferences of a world with a top cycle?

    ``n`` worlds of :func:`cycling_worlds` (seed ``seed``); for each votes-per-pair ``c`` of ``per_pairs``, every
    world gets ``W_k[i, j] ~ Binomial(n_k, P_k[i, j])`` (``n_k`` the chapter's allocation; generator seeded by
    ``(seed, index of c)``); the maximal lottery of ``M̂ = Σ_k w₀_k M̂_k``, the Bradley–Terry winner of the pooled
    votes and its lottery ``p ∝ exp(s)``, the Copeland and Borda winners of ``M̂`` and the uniform lottery are scored on
    the true ``M̄``."""
    pp = tuple(integer("per_pairs", x, 1, 10**6) for x in np.atleast_1d(np.asarray(per_pairs, dtype=object)))
    if not pp:
        raise ValueError("Invalid per_pairs: empty (must list at least one number of votes per pair)")
    n = integer("n", n, 1, 2000)
    s = integer("seed", seed, 0)
    a = number("alpha", alpha, 1e-12, 1.0, high_open=True)
    memory_guard(8.0 * 4 * n * 3 * m * m * len(pp), lower="n, m or the number of per_pairs")
    cw = cycling_worlds(n, s, sigma=sigma, kappa=kappa, m=m)
    w, P = cw.shares, cw.P
    K = w.shape[1]
    Mbar = np.einsum("nk,nkij->nij", w, 2.0 * P - 1.0)
    iu, ju = np.triu_indices(m, 1)
    out = np.empty((7, len(pp), n))
    smith = np.empty((len(pp), n))
    for a_i, c in enumerate(pp):
        nk = _votes_per_group(w, c)  # (n, K)
        rng = np.random.default_rng([s, 1 + a_i])
        wins = rng.binomial(np.broadcast_to(nk[:, :, None], (n, K, iu.size)), P[:, :, iu, ju])
        Mk = np.zeros((n, K, m, m))
        Mk[:, :, iu, ju] = (2.0 * wins - nk[:, :, None]) / nk[:, :, None]
        Mk[:, :, ju, iu] = -Mk[:, :, iu, ju]
        Mhat = np.einsum("nk,nkij->nij", w, Mk)
        W = np.zeros((n, m, m))
        W[:, iu, ju] = wins.sum(1)
        W[:, ju, iu] = (nk.sum(1)[:, None] - wins.sum(1))
        sc = np.asarray(to_numpy(_bt_fit(torch.as_tensor(W), BT_RIDGE)))
        bt = np.argmax(sc, axis=1)
        soft = np.exp(sc - sc.max(1, keepdims=True))
        soft /= soft.sum(1, keepdims=True)
        out[6, a_i] = (1.0 + np.einsum("nij,ni->nj", Mbar, soft).min(-1)) / 2.0
        borda_score = Mhat.sum(-1)
        borda = np.argmax(borda_score, axis=1)
        copeland = np.array([np.lexsort((-borda_score[i], -(Mhat[i] > 0).sum(-1)))[0] for i in range(n)])
        for i in range(n):
            lot = _maximal_raw(Mhat[i])
            out[0, a_i, i] = (1.0 + (Mbar[i].T @ lot.p).min()) / 2.0
            out[1, a_i, i] = float((Mhat[i].T @ lot.p).min())
            out[5, a_i, i] = len(lot.support)
            sm = smith_set(Mhat[i]).astype(np.float64)
            smith[a_i, i] = (1.0 + (Mbar[i].T @ (sm / sm.sum())).min()) / 2.0
        out[2, a_i] = _pure_worst(Mbar, bt)
        out[3, a_i] = _pure_worst(Mbar, copeland)
        out[4, a_i] = _pure_worst(Mbar, borda)
    uniform = (1.0 + Mbar.mean(1).min(-1)) / 2.0  # (M̄ᵀu)_j = mean_i M̄_ij
    best_pure = (1.0 + Mbar.min(-1).max(-1)) / 2.0
    tol = np.array([guarantee_tolerance(w, c, a, m) for c in pp])
    return GuaranteeStudy(pp, n, cw.drawn, a, tol, out[0], out[1], out[2], out[3], out[4], out[6], uniform,
                          best_pure, out[5].astype(int), smith, m)
