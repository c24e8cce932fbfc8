"""Exact algebra for the chapter (sympy): the 3-cycle's maximal lottery, the TV-ball inner minimum and the robust LP
solved in exact rational arithmetic.

* :func:`derive_three_cycle` — for ``M₁₂ = a, M₂₃ = c, M₃₁ = b`` (all > 0) the maximal lottery is
  ``p ∝ (c, b, a)`` with value 0 (Fishburn; [derived]).
* :func:`derive_inner_tv_dual` — the inner minimum ``min_{w ∈ Δ, ‖w − w₀‖₁ ≤ 2ρ} cᵀw``: the closed form (greedy
  mass transfer) equals its LP dual ``max α + Σ_k w₀_k(μ_k − λ_k) − 2ρν`` s.t. ``α − λ_k + μ_k ≤ c_k``,
  ``λ_k + μ_k = ν``, ``λ, μ, ν ≥ 0`` — symbolically in the regime ρ ≤ w₀ of the best slice, and exactly (rational
  simplex, ``sympy.solvers.simplex``) on a grid of instances covering every regime. [reconstruction]
* :func:`robust_lp_exact` — the robust lottery of a small rational instance by ``lpmax``, in vertex form (one
  constraint per TV-ball vertex and opponent) and in dual form (the digest's LP). [reconstruction]
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from typing import NamedTuple

import sympy as sp
from sympy.solvers.simplex import linprog as _sympy_linprog

from ..validate import integer

__all__ = [
    "InnerTVCheck",
    "ThreeCycle",
    "ExactRobustLP",
    "derive_inner_tv_dual",
    "derive_three_cycle",
    "exact_instance",
    "robust_lp_exact",
    "tv_worst_case_exact",
]


class ThreeCycle(NamedTuple):
    """The 3-cycle game: margin matrix, its maximal lottery and the checks on it."""

    M: sp.Matrix
    p: sp.Matrix  # the solution of Mᵀp = 0, Σp = 1
    ratio_check: sp.Expr  # p − (c, b, a)/(a + b + c), simplified: zero vector if the claim holds
    value: sp.Expr  # pᵀ M q for every q — the game's value at p
    nullity: int  # dim ker Mᵀ for generic a, b, c > 0 (1 ⇒ the maximal lottery is unique)


def derive_three_cycle() -> ThreeCycle:
    """Solve the 3-cycle ``1 ≻ 2 ≻ 3 ≻ 1`` with margins ``M₁₂ = a, M₂₃ = c, M₃₁ = b``.

    A maximal lottery with full support must equalise all opponents: ``Mᵀp = 0`` (it cannot exceed 0 against all,
    since ``pᵀMp = 0``). sympy solves the linear system with Σp = 1 and compares with ``(c, b, a)/(a + b + c)``.
    """
    a, b, c = sp.symbols("a b c", positive=True)
    M = sp.Matrix([[0, a, -b], [-a, 0, c], [b, -c, 0]])
    p1, p2, p3 = sp.symbols("p1 p2 p3")
    p = sp.Matrix([p1, p2, p3])
    sol = sp.solve(list(M.T * p) + [p1 + p2 + p3 - 1], [p1, p2, p3], dict=True)
    ps = p.subs(sol[0])
    ratio = sp.simplify(ps - sp.Matrix([c, b, a]) / (a + b + c))
    q = sp.Matrix(sp.symbols("q1 q2 q3"))
    value = sp.simplify((ps.T * M * q)[0])
    nullity = len(M.T.nullspace())
    return ThreeCycle(M, ps, ratio, value, nullity)


def _rational(name: str, x) -> sp.Rational:
    if isinstance(x, bool) or isinstance(x, str):
        raise TypeError(f"Invalid {name}: {x!r} (must be a rational number)")
    try:
        q = sp.nsimplify(x, rational=True) if isinstance(x, float) else sp.Rational(x)
    except (TypeError, ValueError, AttributeError) as err:
        raise TypeError(f"Invalid {name}: {x!r} (must be a rational number)") from err
    if not q.is_Rational:
        raise ValueError(f"Invalid {name}: {x!r} (must be a finite rational number)")
    return q


def _rationals(name: str, xs, *, simplex: bool = False, size: int | None = None) -> list[sp.Rational]:
    if not isinstance(xs, (list, tuple)):
        raise TypeError(f"Invalid {name}: {xs!r} (must be a list or tuple of rational numbers)")
    out = [_rational(name, x) for x in xs]
    if not out or len(out) > 6 or (size is not None and len(out) != size):
        raise ValueError(f"Invalid {name}: {len(out)} entries (must have {size or '1 to 6'})")
    if simplex and (any(x < 0 for x in out) or sum(out) != 1):
        raise ValueError(f"Invalid {name}: {xs!r} (must lie on the simplex: ≥ 0, summing to exactly 1)")
    return out


def _radius(rho) -> sp.Rational:
    r = _rational("rho", rho)
    if not 0 <= r <= 1:
        raise ValueError(f"Invalid rho: {rho!r} (must be in [0, 1])")
    return r


def tv_worst_case_exact(c, w0, rho) -> sp.Rational:
    """The closed form of ``min_{w ∈ Δ, ½‖w − w₀‖₁ ≤ ρ} cᵀw`` in exact arithmetic: ``δ = min(ρ, 1 − w₀,k*)`` moves
    onto the cheapest slice k*, taken from the dearest slices first (at most 6 slices; floats are read as the
    rationals they print as)."""
    c = _rationals("c", c)
    w = _rationals("w0", w0, simplex=True, size=len(c))
    r = _radius(rho)
    order = sorted(range(len(c)), key=lambda k: (c[k], k))
    v = list(w)
    delta = sp.Min(r, 1 - w[order[0]])
    v[order[0]] += delta
    left = delta
    for d in reversed(order[1:]):
        take = sp.Min(left, w[d])
        v[d] -= take
        left -= take
    return sp.nsimplify(sum(ck * vk for ck, vk in zip(c, v, strict=True)))


def _inner_primal(c, w0, rho) -> sp.Rational:
    """``min cᵀw`` over ``w, d ≥ 0``: ``w_k − d_k ≤ w₀_k``, ``−w_k − d_k ≤ −w₀_k``, ``Σd ≤ 2ρ``, ``Σw = 1``."""
    K = len(c)
    R = [sp.Rational(x) for x in w0]
    A = sp.zeros(2 * K + 1, 2 * K)
    b = []
    for k in range(K):
        A[k, k], A[k, K + k] = 1, -1
        A[K + k, k], A[K + k, K + k] = -1, -1
    for k in range(K):
        A[2 * K, K + k] = 1
    b = [*R, *(-x for x in R), 2 * sp.Rational(rho)]
    A_eq = sp.Matrix([[1] * K + [0] * K])
    cost = sp.Matrix([*(sp.Rational(x) for x in c), *([0] * K)])
    val, _ = _sympy_linprog(cost, A, sp.Matrix(b), A_eq, sp.Matrix([1]))
    return val


def _inner_dual(c, w0, rho) -> sp.Rational:
    """``max α + Σ_k w₀_k(μ_k − λ_k) − 2ρν`` s.t. ``α − λ_k + μ_k ≤ c_k``, ``λ_k + μ_k = ν``; α = α⁺ − α⁻."""
    K = len(c)
    n = 2 + 2 * K + 1  # α⁺, α⁻, λ (K), μ (K), ν
    A = sp.zeros(K, n)
    A_eq = sp.zeros(K, n)
    for k in range(K):
        A[k, 0], A[k, 1], A[k, 2 + k], A[k, 2 + K + k] = 1, -1, -1, 1
        A_eq[k, 2 + k], A_eq[k, 2 + K + k], A_eq[k, n - 1] = 1, 1, -1
    w = [sp.Rational(x) for x in w0]
    obj = sp.Matrix([1, -1, *(-x for x in w), *w, -2 * sp.Rational(rho)])
    val, _ = _sympy_linprog(-obj, A, sp.Matrix([sp.Rational(x) for x in c]), A_eq, sp.zeros(K, 1))
    return -val


class InnerTVCheck(NamedTuple):
    """Closed form vs LP primal vs LP dual for the TV-ball inner minimum."""

    symbolic_gap: sp.Expr  # dual objective at the certificate − closed form (regime ρ ≤ w₀ of the best slice)
    certificate_feasible: bool
    n_instances: int
    max_primal_gap: sp.Rational  # max |closed form − primal LP| over the rational grid (exact)
    max_dual_gap: sp.Rational  # max |closed form − dual LP|


def derive_inner_tv_dual(n_random: int = 3) -> InnerTVCheck:
    """Check the closed form of the inner TV minimum against its primal and dual LPs.

    Symbolic (K = 3, costs ``c₁ ≤ c₂ ≤ c₃``, radius ``ρ ≤ w₀,₃``): the closed form is ``cᵀw₀ − ρ(c₃ − c₁)``; the
    dual point ``α = (c₁ + c₃)/2``, ``ν = (c₃ − c₁)/2``, ``μ_k − λ_k = c_k − α`` is feasible (|c_k − α| ≤ ν) and
    attains it, so by weak duality both are optimal. Exact (rational simplex): ``n_random`` random rational
    instances × ρ ∈ {0, 1/5, …, 1}, which covers the regimes where one, two or no donor empties.
    """
    n_random = integer("n_random", n_random, 1, 50)
    c1, c2, c3 = sp.symbols("c1 c2 c3", real=True)
    w1, w2, w3, r = sp.symbols("w1 w2 w3 rho", nonnegative=True)
    closed = c1 * (w1 + r) + c2 * w2 + c3 * (w3 - r)  # δ = ρ from the dearest slice (ρ ≤ w₃)
    alpha, nu = (c1 + c3) / 2, (c3 - c1) / 2
    dual_obj = alpha + sum(wk * (ck - alpha) for wk, ck in ((w1, c1), (w2, c2), (w3, c3))) - 2 * r * nu
    gap = sp.simplify((dual_obj - closed).subs(w3, 1 - w1 - w2))
    # feasibility: μ_k − λ_k = c_k − α needs |c_k − α| ≤ ν. The ends sit exactly on ∓ν, and with
    # c₂ = c₁ + s(c₃ − c₁), s ∈ [0, 1], (c₂ − α)/ν = 2s − 1 ∈ [−1, 1].
    s = sp.Symbol("s")
    feas = (sp.simplify(c1 - alpha + nu) == 0 and sp.simplify(c3 - alpha - nu) == 0
            and sp.simplify((c1 + s * (c3 - c1) - alpha) / nu - (2 * s - 1)) == 0)
    rnd = random.Random(21)
    shares = [(Fraction(3, 5), Fraction(1, 4), Fraction(3, 20)), (Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)),
              (Fraction(1, 10), Fraction(0), Fraction(9, 10))]
    costs = [(Fraction(1, 2), Fraction(1, 2), Fraction(-1, 4))]  # a tie among the dearest slices
    costs += [tuple(Fraction(rnd.randint(-8, 8), 8) for _ in range(3)) for _ in range(n_random - 1)]
    max_p, max_d, n = sp.Integer(0), sp.Integer(0), 0
    for i in range(n_random):
        c = costs[i]
        w0 = shares[i % len(shares)]
        for t in range(0, 11, 2):
            rho = Fraction(t, 10)
            exact = tv_worst_case_exact(c, w0, rho)
            max_p = max(max_p, abs(exact - _inner_primal(c, w0, rho)))
            max_d = max(max_d, abs(exact - _inner_dual(c, w0, rho)))
            n += 1
    return InnerTVCheck(gap, bool(feas), n, max_p, max_d)


def exact_instance() -> tuple[list[sp.Matrix], tuple[sp.Rational, ...], sp.Rational]:
    """A small rational instance (4 models, 3 slices, w₀ = (3/5, 1/4, 3/20), ρ = 2/5): the majority slice likes
    model 0, the minority slice dislikes it, and models 1–3 form a cycle in the middle slice."""
    R = sp.Rational
    M0 = sp.Matrix([[0, R(1, 2), R(3, 4), R(1, 2)], [-R(1, 2), 0, R(1, 4), 0],
                    [-R(3, 4), -R(1, 4), 0, R(1, 4)], [-R(1, 2), 0, -R(1, 4), 0]])
    M1 = sp.Matrix([[0, R(1, 4), 0, -R(1, 4)], [-R(1, 4), 0, R(1, 2), -R(1, 2)],
                    [0, -R(1, 2), 0, R(1, 2)], [R(1, 4), R(1, 2), -R(1, 2), 0]])
    M2 = sp.Matrix([[0, -R(3, 4), -R(1, 2), -R(3, 4)], [R(3, 4), 0, R(1, 4), 0],
                    [R(1, 2), -R(1, 4), 0, R(1, 4)], [R(3, 4), 0, -R(1, 4), 0]])
    return [M0, M1, M2], (R(3, 5), R(1, 4), R(3, 20)), R(2, 5)


class ExactRobustLP(NamedTuple):
    """The robust LP of a rational instance solved exactly."""

    value_vertex: sp.Rational
    p_vertex: tuple[sp.Rational, ...]
    value_dual: sp.Rational  # min_j of the exact inner-TV dual LP at p*
    n_vertices: int


def _exact_vertices(w0, rho) -> list[tuple[sp.Rational, ...]]:
    K = len(w0)
    out: list[tuple[sp.Rational, ...]] = []
    for order in itertools.permutations(range(K)):
        v = list(w0)
        delta = sp.Min(rho, 1 - w0[order[0]])
        v[order[0]] += delta
        left = delta
        for d in order[1:]:
            take = sp.Min(left, w0[d])
            v[d] -= take
            left -= take
        t = tuple(sp.nsimplify(x) for x in v)
        if t not in out:
            out.append(t)
    return out


def robust_lp_exact(Ms: list[sp.Matrix], w0, rho) -> ExactRobustLP:
    """``max t`` s.t. ``t ≤ Σ_k v_k (M_kᵀ p)_j`` for every TV-ball vertex v and opponent j, p ∈ Δ (vertex form),
    and the same problem in the dual form of :func:`theorybook.robust_lotteries.robust_lottery` — both by
    sympy's exact rational simplex (``sympy.solvers.simplex.linprog``; ``lpmax`` is its symbolic front end).
    All variables are made non-negative: ``s = t + 1`` and ``α_j = α⁺_j − α⁻_j``."""
    if not isinstance(Ms, (list, tuple)) or not Ms or not all(isinstance(M, sp.MatrixBase) for M in Ms):
        raise TypeError(f"Invalid Ms: {type(Ms).__name__} (must be a non-empty list of sympy matrices)")
    K, m = len(Ms), Ms[0].shape[0]
    if K > 4 or not 1 <= m <= 6 or any(M.shape != (m, m) for M in Ms):
        raise ValueError(f"Invalid Ms: {K} matrices of shapes {[M.shape for M in Ms]} (must be 1–4 square matrices "
                         "of one size m ≤ 6: the exact simplex is slow)")
    if any(not all(e.is_Rational for e in M) or M != -M.T or any(abs(e) > 1 for e in M) for M in Ms):
        raise ValueError("Invalid Ms: entries must be rationals in [-1, 1] and each M skew-symmetric")
    w0 = tuple(_rationals("w0", w0, simplex=True, size=K))
    rho = _radius(rho)
    V = _exact_vertices(w0, rho)
    # vertex form: variables (p, s); rows s − Σ_i (Σ_k v_k M_k)[i, j] p_i ≤ 1
    rows = []
    for v in V:
        Mv = sum((v[k] * Ms[k] for k in range(K)), sp.zeros(m, m))
        for j in range(m):
            rows.append([-Mv[i, j] for i in range(m)] + [1])
    A = sp.Matrix(rows)
    cost = sp.Matrix([0] * m + [-1])
    val, x = _sympy_linprog(cost, A, sp.ones(len(rows), 1), sp.Matrix([[1] * m + [0]]), sp.Matrix([1]))
    val_v = -val - 1
    p_v = tuple(sp.nsimplify(x[i]) for i in range(m))
    # the dual of the inner minimum, per opponent j, at the exact optimum p* (sympy's simplex cycles on the full
    # dual-form LP, which is degenerate, so the exact dual is taken opponent by opponent at p*)
    val_d = min(_inner_dual([sum(Ms[k][i, j] * p_v[i] for i in range(m)) for k in range(K)], w0, rho)
                for j in range(m))
    return ExactRobustLP(sp.nsimplify(val_v), p_v, sp.nsimplify(val_d), len(V))
