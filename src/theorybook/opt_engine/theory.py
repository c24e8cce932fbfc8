"""Derivations, executed (sympy): why MTZ forbids subtours, why NetworkFlow's LP optimum is integral, and why the
ratio greedy is within ``v_max`` of the knapsack LP bound.

1. **MTZ.** Rows ``u_i − u_j + n x_ij ≤ n − 1`` (i, j ≥ 1). Summed around a subtour ``S`` avoiding city 0 (all
   ``x_ij = 1`` on it) the ``u`` telescope away: ``n|S| ≤ (n − 1)|S|``, impossible. With tour positions
   ``u_{c_t} = t`` every row holds: on a used arc ``u_i − u_j + n = n − 1``; on an unused one
   ``u_i − u_j ≤ n − 2``.
2. **Total unimodularity** [reconstruction of why the paper counts NetworkFlow as MIP]: every square minor of the
   transportation matrix (supply rows, demand rows) is in {−1, 0, 1}; appending the identity rows of the arc bounds
   keeps that; so every basic solution of an LP with integral right-hand sides is integral.
3. **Ratio greedy.** Sort by ``v_i/w_i``; the LP optimum (Dantzig) takes the prefix before the critical item
   ``k`` plus the fraction ``r/w_k`` of it, ``0 ≤ r < w_k``; the greedy keeps at least the prefix, so
   ``LP − greedy ≤ v_k r/w_k < v_k ≤ v_max``.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
import sympy as sp

from ..validate import integer

__all__ = ["MTZDerivation", "derive_mtz", "transport_matrix", "minors_in_unit_set", "TUDerivation", "derive_tu",
           "GreedyDerivation", "derive_greedy_bound"]


class MTZDerivation(NamedTuple):
    """Summed MTZ rows around subtours of length k (slack = RHS − LHS, must be < 0) and the tour-position check."""

    subtour_slack: dict  # k → sympy expression of (n − 1)k − (Σ LHS) after telescoping
    tours_checked: int
    max_violation: int
    used_arc_value: sp.Expr


def derive_mtz(max_subtour: int = 6, max_n: int = 6) -> MTZDerivation:
    """Symbolic telescoping for subtours of length 2..``max_subtour`` (symbolic n and u), and every tour of every
    ``n ≤ max_n`` checked row by row with positions ``u_{c_t} = t`` (exact integers)."""
    K = integer("max_subtour", max_subtour, 2, 12)
    N = integer("max_n", max_n, 3, 7)
    n = sp.Symbol("n", positive=True, integer=True)
    slack = {}
    for k in range(2, K + 1):
        u = sp.symbols(f"u1:{k + 1}")
        lhs = sum(u[i] - u[(i + 1) % k] + n for i in range(k))  # x = 1 on every arc of the subtour
        slack[k] = sp.simplify((n - 1) * k - lhs)  # = −k < 0: the summed rows are violated
    worst, count = -(10**9), 0
    for m in range(3, N + 1):
        for perm in itertools.permutations(range(1, m)):
            tour = (0, *perm)
            pos = {c: t for t, c in enumerate(tour)}
            succ = {tour[t]: tour[(t + 1) % m] for t in range(m)}
            for i in range(1, m):
                for j in range(1, m):
                    if i != j:
                        x = 1 if succ[i] == j else 0
                        worst = max(worst, pos[i] - pos[j] + m * x - (m - 1))
            count += 1
    t = sp.Symbol("t", integer=True)
    used = sp.simplify(t - (t + 1) + n)  # u_i − u_j + n on a used arc = n − 1
    return MTZDerivation(slack, count, worst, used)


def transport_matrix(n: int = 3, m: int = 3, bounds: bool = False) -> sp.Matrix:
    """Constraint matrix of the n×m transportation problem: n supply rows, m demand rows (and the identity rows of
    the arc bounds when ``bounds``)."""
    if not isinstance(bounds, (bool, np.bool_)):
        raise TypeError(f"Invalid bounds: {bounds!r} (must be a bool)")
    nn = integer("n", n, 1, 6)
    mm = integer("m", m, 1, 6)
    A = sp.zeros(nn + mm, nn * mm)
    for i in range(nn):
        for j in range(mm):
            A[i, i * mm + j] = 1
            A[nn + j, i * mm + j] = 1
    return A.col_join(sp.eye(nn * mm)) if bounds else A


def _det(M: list[list[int]]) -> int:
    """Exact integer determinant (Bareiss fraction-free elimination)."""
    a = [row[:] for row in M]
    k = len(a)
    sign, prev = 1, 1
    for c in range(k - 1):
        if a[c][c] == 0:
            swap = next((r for r in range(c + 1, k) if a[r][c] != 0), None)
            if swap is None:
                return 0
            a[c], a[swap] = a[swap], a[c]
            sign = -sign
        for r in range(c + 1, k):
            for cc in range(c + 1, k):
                a[r][cc] = (a[r][cc] * a[c][c] - a[r][c] * a[c][cc]) // prev
        prev = a[c][c]
    return sign * a[k - 1][k - 1]


def minors_in_unit_set(A: sp.Matrix) -> tuple[int, set]:
    """Every square minor of ``A`` (exact integers): how many, and the set of their values."""
    if not isinstance(A, sp.MatrixBase):
        raise TypeError(f"Invalid A: {type(A).__name__} (must be a sympy Matrix of integers)")
    rows, cols = A.shape
    if any(not (isinstance(a, sp.Integer) or a.is_integer) for a in A):
        raise ValueError("Invalid A: entries must be integers")
    if rows * cols > 200:
        raise ValueError(f"Invalid A: shape {A.shape} (too many minors; keep rows·cols ≤ 200)")
    M = [[int(A[i, j]) for j in range(cols)] for i in range(rows)]
    vals: set = set()
    count = 0
    for k in range(1, min(rows, cols) + 1):
        for R in itertools.combinations(range(rows), k):
            for C in itertools.combinations(range(cols), k):
                vals.add(_det([[M[r][c] for c in C] for r in R]))
                count += 1
    return count, vals


class TUDerivation(NamedTuple):
    """Minors of the 3×3 transportation matrix and of the 2×2 one with arc bounds."""

    n_minors: int
    values: set
    n_minors_bounded: int
    values_bounded: set


def derive_tu() -> TUDerivation:
    """Enumerate every square minor of the 3×3 transportation matrix (6 × 9) and of the 2×2 one with arc-bound rows."""
    a, va = minors_in_unit_set(transport_matrix(3, 3))
    b, vb = minors_in_unit_set(transport_matrix(2, 2, bounds=True))
    return TUDerivation(a, va, b, vb)


class GreedyDerivation(NamedTuple):
    """The symbolic gap ``v_k − v_k r/w_k`` with ``r = w_k − δ`` and, numerically, the worst ratio
    ``(LP − greedy)/v_max`` over instances."""

    gap: sp.Expr
    gap_positive: bool
    worst_ratio: float
    n_instances: int


def derive_greedy_bound(instances: int = 60, seed: int = 11) -> GreedyDerivation:
    """Symbolic: fractional part of the critical item is below its value. Numeric: (LP bound − ratio greedy)/v_max
    over seeded knapsack instances, the LP bound from HiGHS (``linprog``) — an independent solver."""
    from scipy.optimize import linprog

    from .problems import _gen, stand_in

    k = integer("instances", instances, 1, 10_000)
    s = integer("seed", seed, 0, 2**63 - 1)
    v, w, d = sp.symbols("v_k w_k delta", positive=True)
    gap = sp.simplify(v - v * (w - d) / w)  # v_k − v_k r/w_k with r = w_k − δ, δ ∈ (0, w_k]
    rng = np.random.default_rng(s)
    worst = -np.inf
    for _ in range(k):
        n = int(rng.integers(5, 31))
        q = _gen("knapsack", n, rng)
        lp = -linprog(-q["values"], A_ub=q["weights"][None], b_ub=[q["capacity"]], bounds=(0, 1),
                      method="highs").fun
        greedy = float(q["values"] @ stand_in("knapsack", q))
        worst = max(worst, (lp - greedy) / q["values"].max())
    return GreedyDerivation(gap, bool(gap.is_positive), float(worst), k)
