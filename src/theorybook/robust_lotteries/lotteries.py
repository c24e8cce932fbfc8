"""Maximal and robust lotteries as linear programs (HiGHS through ``scipy.optimize.linprog``).

Notation (the paper's, as far as the abstract and secondary accounts show it):

* ``P[i, j] = Pr(i ≻ j)`` and the **margin matrix** ``M = 2P − 1`` — skew-symmetric, entries in [−1, 1];
* a **lottery** ``p ∈ Δ_m`` is a distribution over the m models; ``pᵀ M q`` is the expected margin of a draw from
  ``p`` against a draw from ``q``, and ``(1 + pᵀ M q)/2`` its win rate;
* the **maximal lottery** (Fishburn) solves ``max_p min_q pᵀ M q``; the game is symmetric so the value is 0 and
  a draw from ``p`` wins against any opponent with probability ≥ ½;
* the **robust lottery** [secondary] solves ``max_p min_{w ∈ W} min_q pᵀ (Σ_k w_k M_k) q`` over the slices'
  margin matrices ``M_k`` with ``W = {w ∈ Δ_K : TV(w, w₀) = ½‖w − w₀‖₁ ≤ ρ}``.

The inner minimum over the TV ball is solved three ways here, which the chapter checks against each other:
a closed form (:func:`worst_case_value`: move mass ``min(ρ, 1 − w₀,k*)`` onto the worst slice k*, taken from the
best slices first), the ball's vertices (:func:`tv_ball_vertices`, one greedy point per ordering of the slices),
and LP duality (the robust LP in :func:`robust_lottery`, our reconstruction of the paper's LP).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sps
from scipy.optimize import linprog

from ..device import to_numpy
from ..validate import finite_tensor, integer, memory_guard, number, one_of

__all__ = [
    "Lottery",
    "WorstCase",
    "guaranteed_win_rate",
    "margin_matrix",
    "maximal_lottery",
    "robust_lottery",
    "tv_ball_vertices",
    "worst_case_value",
]

_SKEW_TOL = 1e-9
_SIMPLEX_TOL = 1e-9
_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
_SUPPORT_TOL = 1e-7


class Lottery(NamedTuple):
    """A lottery ``p`` over models, the value of the game it certifies and its support (models with p_i > 1e-7)."""

    p: np.ndarray
    value: float
    support: tuple[int, ...]


class WorstCase(NamedTuple):
    """The worst case of a lottery over the TV ball: the value ``min_w min_j Σ_k w_k (M_kᵀ p)_j``, the minimising
    slice weights ``w`` and the best-responding opponent ``j``."""

    value: float
    weights: np.ndarray
    opponent: int


# -- validation -----------------------------------------------------------------------------------------------
def _array(name: str, x: Any, ndim: int) -> np.ndarray:
    if isinstance(x, (list, tuple)) and ndim == 3:
        shapes = {tuple(np.shape(e)) for e in x}
        if len(shapes) > 1:
            raise ValueError(f"Invalid {name}: matrices of unequal shapes {sorted(shapes)} (must all be m×m)")
    t = finite_tensor(name, x, ndim=ndim)
    return np.asarray(to_numpy(t), dtype=np.float64)


def _check_margin(name: str, M: np.ndarray) -> None:
    m = M.shape[-1]
    if M.shape[-2] != m or m < 1:
        raise ValueError(f"Invalid {name}: shape {M.shape} (must be square, m×m with m ≥ 1)")
    if M.size and (np.abs(M) > 1 + _SKEW_TOL).any():
        raise ValueError(f"Invalid {name}: entries in [{M.min():g}, {M.max():g}] (must be in [-1, 1])")
    asym = float(np.abs(M + np.swapaxes(M, -1, -2)).max()) if M.size else 0.0
    if asym > _SKEW_TOL:
        raise ValueError(f"Invalid {name}: max |M + Mᵀ| = {asym:g} (must be skew-symmetric to 1e-9)")


def _margin(name: str, M: Any) -> np.ndarray:
    A = _array(name, M, 2)
    _check_margin(name, A)
    return A


def _margins(name: str, Ms: Any) -> np.ndarray:
    A = _array(name, Ms, 3)
    if A.shape[0] < 1:
        raise ValueError(f"Invalid {name}: no slices (must have K ≥ 1 matrices)")
    _check_margin(name, A)
    return A


def _simplex(name: str, w: Any, n: int | None = None) -> np.ndarray:
    a = _array(name, w, 1)
    if n is not None and a.shape[0] != n:
        raise ValueError(f"Invalid {name}: length {a.shape[0]} (must have {n} entries)")
    if a.size == 0 or (a < -1e-12).any() or abs(a.sum() - 1.0) > _SIMPLEX_TOL:
        raise ValueError(f"Invalid {name}: entries in [{a.min() if a.size else 0:g}, {a.max() if a.size else 0:g}] "
                         f"with sum {a.sum():.12g} (must lie on the simplex: ≥ 0 and summing to 1 within 1e-9)")
    return np.clip(a, 0.0, None)


def _rho(rho: Any) -> float:
    return number("rho", rho, 0.0, 1.0)


def _lottery(x: np.ndarray, m: int, value: float) -> Lottery:
    p = np.clip(x[:m], 0.0, None)
    p = p / p.sum()
    return Lottery(p, float(value), tuple(int(i) for i in np.flatnonzero(p > _SUPPORT_TOL)))


def _solve(c, A_ub, b_ub, A_eq, b_eq, bounds, what: str):
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs", options=_HIGHS)
    if res.status != 0:  # pragma: no cover - the LPs here are always feasible and bounded
        raise RuntimeError(f"{what}: HiGHS failed ({res.message})")
    return res


# -- public API -----------------------------------------------------------------------------------------------
def margin_matrix(wins: Any) -> np.ndarray:
    """The empirical margin matrix ``M_ij = (W_ij − W_ji)/(W_ij + W_ji)`` (0 for a pair never compared).

    ``wins[..., i, j]`` counts the comparisons in which i beat j (non-negative integers; a leading batch of
    slices/replicates is allowed). ``M = 2P̂ − 1`` with ``P̂_ij = W_ij/(W_ij + W_ji)``.
    """
    t = finite_tensor("wins", wins)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"Invalid wins: shape {tuple(t.shape)} (must be (..., m, m))")
    W = np.asarray(to_numpy(t), dtype=np.float64)
    if (W < 0).any() or (W != np.round(W)).any():
        raise ValueError("Invalid wins: entries must be non-negative integers (counts of comparisons won)")
    N = W + np.swapaxes(W, -1, -2)
    with np.errstate(invalid="ignore", divide="ignore"):
        M = np.where(N > 0, (W - np.swapaxes(W, -1, -2)) / np.where(N > 0, N, 1.0), 0.0)
    idx = np.arange(W.shape[-1])
    M[..., idx, idx] = 0.0
    return M


def guaranteed_win_rate(p: Any, M: Any) -> float:
    """``(1 + min_j (Mᵀp)_j)/2``: the win rate a draw from ``p`` is guaranteed against any opponent (a best
    response is always a pure strategy, so the minimum over q ∈ Δ is a minimum over columns)."""
    A = _margin("M", M)
    q = _simplex("p", p, A.shape[0])
    return float((1.0 + (A.T @ q).min()) / 2.0)


def maximal_lottery(M: Any) -> Lottery:
    """Fishburn's maximal lottery: ``max t s.t. Mᵀp ≥ t·1, p ∈ Δ`` (HiGHS). For a skew-symmetric M, t* = 0."""
    A = _margin("M", M)
    memory_guard(8.0 * A.shape[0] * (A.shape[0] + 1), lower="the number of models m")
    return _maximal_raw(A)


def _maximal_raw(A: np.ndarray) -> Lottery:
    m = A.shape[0]
    c = np.zeros(m + 1)
    c[m] = -1.0
    A_ub = np.hstack([-A.T, np.ones((m, 1))])
    A_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    res = _solve(c, A_ub, np.zeros(m), A_eq, [1.0], [(0, None)] * m + [(-1.0, 1.0)], "maximal_lottery")
    return _lottery(res.x, m, -res.fun)


def robust_lottery(Ms: Any, w0: Any, rho: Any, *, form: str = "dual") -> Lottery:
    """The robust lottery ``max_p min_{TV(w, w₀) ≤ ρ} min_q pᵀ(Σ_k w_k M_k)q`` [secondary objective; LP is our
    reconstruction].

    ``form="dual"`` (default): one LP in ``(p, t, α_j, λ_kj, μ_kj, ν_j)`` with ``m(2K+2) + m + 1`` variables — for
    each opponent j the inner TV minimum is replaced by its LP dual
    ``max α_j + Σ_k w₀_k(μ_kj − λ_kj) − 2ρν_j`` s.t. ``α_j − λ_kj + μ_kj ≤ (M_kᵀp)_j``, ``λ_kj + μ_kj = ν_j``,
    ``λ, μ, ν ≥ 0``; then ``t ≤`` that for every j.
    ``form="vertex"``: ``t ≤ Σ_k v_k (M_kᵀp)_j`` for every TV-ball vertex v (:func:`tv_ball_vertices`) and every
    opponent j — ``K!·m`` rows at most.
    """
    A = _margins("Ms", Ms)
    K, m, _ = A.shape
    w = _simplex("w0", w0, K)
    r = _rho(rho)
    one_of("form", form, ("dual", "vertex"))
    if form == "dual":
        memory_guard(8.0 * (K * m) * (3 * m + 4) * 2 + 8.0 * (m * (2 * K + 3) + 1),
                     lower="the number of models m or slices K")
    return _robust_raw(A, w, r, form)


def _robust_raw(A: np.ndarray, w: np.ndarray, r: float, form: str = "dual") -> Lottery:
    K, m, _ = A.shape
    if form == "vertex":
        V = tv_ball_vertices(w, r)
        memory_guard(8.0 * V.shape[0] * m * (m + 1), lower="the number of models m or slices K")
        Mv = np.einsum("vk,kij->vij", V, A)  # one margin matrix per vertex
        rows = -np.transpose(Mv, (0, 2, 1)).reshape(-1, m)  # row (v, j): −(Σ_k v_k M_k)ᵀ[j, :]
        A_ub = np.hstack([rows, np.ones((rows.shape[0], 1))])
        c = np.zeros(m + 1)
        c[m] = -1.0
        A_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
        res = _solve(c, A_ub, np.zeros(rows.shape[0]), A_eq, [1.0], [(0, None)] * m + [(-1.0, 1.0)],
                     "robust_lottery(vertex)")
        return _lottery(res.x, m, -res.fun)
    n = m + 1 + m + 2 * K * m + m
    ip, it, ia = 0, m, m + 1
    il = ia + m  # λ_kj at il + k·m + j
    iu = il + K * m  # μ_kj
    iv = iu + K * m  # ν_j
    jj = np.arange(m)
    kk, jk = np.divmod(np.arange(K * m), m)  # (k, j) for each of the K·m (k, j) pairs
    # (1) t − α_j − Σ_k w₀_k(μ_kj − λ_kj) + 2ρ ν_j ≤ 0
    r1 = np.concatenate([jj, jj, jk, jk, jj])
    c1 = np.concatenate([np.full(m, it), ia + jj, iu + kk * m + jk, il + kk * m + jk, iv + jj])
    v1 = np.concatenate([np.ones(m), -np.ones(m), -w[kk], w[kk], np.full(m, 2.0 * r)])
    # (2) α_j − λ_kj + μ_kj − Σ_i M_k[i, j] p_i ≤ 0
    rows2 = m + np.arange(K * m)
    r2 = np.concatenate([rows2, rows2, rows2, np.repeat(rows2, m)])
    c2 = np.concatenate([ia + jk, il + kk * m + jk, iu + kk * m + jk, np.tile(ip + jj, K * m)])
    v2 = np.concatenate([np.ones(K * m), -np.ones(K * m), np.ones(K * m),
                         -np.transpose(A, (0, 2, 1)).reshape(-1)])  # row (k, j), column i: −M_k[i, j]
    A_ub = sps.csr_matrix((np.concatenate([v1, v2]), (np.concatenate([r1, r2]), np.concatenate([c1, c2]))),
                          shape=(m + K * m, n))
    # (3) λ_kj + μ_kj − ν_j = 0 ; (4) Σ p = 1
    rows3 = np.arange(K * m)
    r3 = np.concatenate([rows3, rows3, rows3, np.full(m, K * m)])
    c3 = np.concatenate([il + kk * m + jk, iu + kk * m + jk, iv + jk, ip + jj])
    v3 = np.concatenate([np.ones(K * m), np.ones(K * m), -np.ones(K * m), np.ones(m)])
    A_eq = sps.csr_matrix((v3, (r3, c3)), shape=(K * m + 1, n))
    b_eq = np.zeros(K * m + 1)
    b_eq[-1] = 1.0
    bounds = [(0, None)] * m + [(-1.0, 1.0)] + [(None, None)] * m + [(0, None)] * (2 * K * m + m)
    c = np.zeros(n)
    c[it] = -1.0
    res = _solve(c, A_ub, np.zeros(m + K * m), A_eq, b_eq, bounds, "robust_lottery(dual)")
    return _lottery(res.x, m, -res.fun)


def tv_ball_vertices(w0: Any, rho: Any) -> np.ndarray:
    """The vertices of ``W = {w ∈ Δ_K : ½‖w − w₀‖₁ ≤ ρ}`` (an array of shape (n_vertices, K)).

    Every vertex is the unique minimiser of some linear function, and the greedy rule minimises any linear
    function over W; so the vertices are among the greedy points, one per ordering σ of the slices: slice σ₁
    receives ``δ = min(ρ, 1 − w₀,σ₁)`` and the mass is taken from σ₂, σ₃, … in turn, each giving at most what it
    has. Duplicates (at ρ = 0, or when a donor empties) are removed; at most K! points.
    """
    w = _simplex("w0", w0)
    r = _rho(rho)
    K = w.shape[0]
    integer("number of slices K", K, 1, 9)
    memory_guard(8.0 * math.factorial(K) * K, lower="the number of slices K")
    pts = []
    for order in itertools.permutations(range(K)):
        v = w.copy()
        delta = min(r, 1.0 - w[order[0]])
        v[order[0]] += delta
        left = delta
        for d in order[1:]:
            take = min(left, w[d])
            v[d] -= take
            left -= take
        pts.append(v)
    P = np.array(pts)
    _, idx = np.unique(np.round(P, 12), axis=0, return_index=True)
    return P[np.sort(idx)]


def worst_case_value(p: Any, Ms: Any, w0: Any, rho: Any) -> WorstCase:
    """The inner minimum ``min_{w: TV(w, w₀) ≤ ρ} min_j Σ_k w_k (M_kᵀ p)_j`` in closed form.

    For opponent j let ``c_kj = (M_kᵀp)_j`` and k* = argmin_k c_kj: the adversary moves ``δ = min(ρ, 1 − w₀,k*)``
    onto k*, taking it first from the slice with the largest ``c_kj``, then the next, each giving at most ``w₀,k``.
    """
    A = _margins("Ms", Ms)
    K, m, _ = A.shape
    w = _simplex("w0", w0, K)
    q = _simplex("p", p, m)
    r = _rho(rho)
    return _worst_raw(q, A, w, r)


def _worst_raw(q: np.ndarray, A: np.ndarray, w: np.ndarray, r: float) -> WorstCase:
    K, m, _ = A.shape
    C = np.einsum("kij,i->kj", A, q)  # c_kj
    order = np.argsort(C, axis=0, kind="stable")
    Wt = np.repeat(w[:, None], m, axis=1)
    cols = np.arange(m)
    recv = order[0]
    delta = np.minimum(r, 1.0 - w[recv])
    Wt[recv, cols] += delta
    left = delta.copy()
    for pos in range(K - 1, 0, -1):  # donors: largest c_kj first
        d = order[pos]
        take = np.minimum(left, w[d])
        Wt[d, cols] -= take
        left -= take
    vals = (Wt * C).sum(axis=0)
    j = int(np.argmin(vals))
    return WorstCase(float(vals[j]), Wt[:, j].copy(), j)

