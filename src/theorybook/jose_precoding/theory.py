"""Sympy derivations behind JoSE's closed form (Theorem C.1 and Corollaries C.2–C.3 [secondary]; Telatar 1999).

* :func:`scalar_gaussian_mi` — ``I = h(y) − h(y | x) = ½ log(1 + g p)`` for ``y = √g x + n``, from the Gaussian
  differential entropy integral.
* :func:`water_filling_kkt` — stationarity of ``½ Σ log(1 + g_i p_i) − λ(Σ p_i − P)`` gives ``p_i = ν − 1/g_i`` on
  the active set; for three modes it solves ``ν`` and the power at which the weakest mode switches on.
* :func:`change_of_basis` — ``Θ → ΘA``, ``Σ → A⁻¹ΣA⁻ᵀ`` leaves ``ΘΣΘᵀ`` (hence the MI and the power) unchanged (C.2).
* :func:`capacity_monotone` — ``∂/∂σ ½ log(1 + σ² p) = σp/(1 + σ²p) ≥ 0``: capacity rises in every singular value.
* :func:`euler_affinity` — one semi-implicit Euler step with implicit damping is affine in the activations:
  ``∂y′/∂a = h(M + hD)⁻¹Jᵀdiag(−F)`` and ``∂²y′/∂a² = 0`` (symbolic 2-joint, 3-tendon case).
"""

from __future__ import annotations

from typing import NamedTuple

import sympy as sp

__all__ = ["scalar_gaussian_mi", "water_filling_kkt", "change_of_basis", "capacity_monotone", "euler_affinity"]


def scalar_gaussian_mi() -> sp.Expr:
    """``h(y) − h(n)`` with ``y ~ N(0, g p + s²)``, ``n ~ N(0, s²)``, minus ``½ log(1 + g p/s²)``: simplifies to 0.

    ``h = E[−log φ_v(x)]`` with ``−log φ_v(x) = ½ log(2πv) + x²/(2v)`` expanded by sympy, then ``E[x²] = v``."""
    x = sp.symbols("x", real=True)
    g, p, s = sp.symbols("g p s", positive=True)

    def entropy(var):
        neg_log = sp.expand(sp.expand_log(-sp.log(sp.exp(-x**2 / (2 * var)) / sp.sqrt(2 * sp.pi * var)), force=True))
        return neg_log.subs(x**2, var)  # the expectation is linear and E[x²] = var

    mi = entropy(g * p + s**2) - entropy(s**2)
    return sp.simplify(sp.expand_log(mi - sp.log(1 + g * p / s**2) / 2, force=True))


class KKT(NamedTuple):
    """Three-mode water-filling: the stationary powers, the level ``ν``, the KKT residual (0), and the power
    ``P₃`` above which the weakest mode is active."""

    powers: tuple
    level: sp.Expr
    residual: sp.Expr
    switch_on: sp.Expr
    symbols: tuple


def water_filling_kkt() -> KKT:
    """Solve ``∂/∂p_i [½ Σ log(1 + g_i p_i) − λ(Σ p_i − P)] = 0`` and ``Σ p_i = P`` for three active modes."""
    g = sp.symbols("g1:4", positive=True)
    p = sp.symbols("p1:4", real=True)
    lam, P = sp.symbols("lambda P", positive=True)
    L = sum(sp.log(1 + gi * pi) for gi, pi in zip(g, p, strict=True)) / 2 - lam * (sum(p) - P)
    sol = sp.solve([sp.diff(L, pi) for pi in p] + [sum(p) - P], [*p, lam], dict=True)[0]
    nu = sp.simplify(1 / (2 * sol[lam]))
    powers = tuple(sp.simplify(sol[pi]) for pi in p)
    residual = sp.simplify(sum(sp.simplify(powers[i] - (nu - 1 / g[i])) ** 2 for i in range(3)))
    # the weakest mode (g3 smallest) switches on when the two-mode level reaches 1/g3
    nu2 = (P + 1 / g[0] + 1 / g[1]) / 2
    switch_on = sp.solve(sp.Eq(nu2, 1 / g[2]), P)[0]
    return KKT(powers, nu, residual, sp.simplify(switch_on), (g, P))


def change_of_basis() -> sp.Matrix:
    """``ΘAΣ'(ΘA)ᵀ − ΘΣΘᵀ`` with ``Σ' = A⁻¹ΣA⁻ᵀ`` for symbolic 3 × 2 ``Θ``, 2 × 2 ``A`` and symmetric ``Σ``, times
    ``det(A)²`` (``A⁻¹ = adj(A)/det A``) and expanded: the zero matrix."""
    T = sp.Matrix(3, 2, sp.symbols("t0:6"))
    A = sp.Matrix(2, 2, sp.symbols("a0:4"))
    s1, s2, s3 = sp.symbols("s1:4")
    S = sp.Matrix([[s1, s2], [s2, s3]])
    adj, det = A.adjugate(), A.det()
    return ((T * A) * adj * S * adj.T * (T * A).T - det**2 * T * S * T.T).expand()


def capacity_monotone() -> sp.Expr:
    """``∂/∂σ ½ log(1 + σ² p)`` for σ, p > 0 (positive)."""
    s, p = sp.symbols("sigma p", positive=True)
    return sp.simplify(sp.diff(sp.log(1 + s**2 * p) / 2, s))


class Affinity(NamedTuple):
    """``∂y′/∂a`` minus ``h(M + hD)⁻¹Jᵀdiag(−F)`` (zero) and ``∂²y′/∂a²`` (zero)."""

    gap: sp.Matrix
    hessian_zero: bool


def euler_affinity() -> Affinity:
    """Semi-implicit Euler with implicit damping: ``(M + hD)(v′ − v)/h = c(q, v) − Dv + Jᵀ(−F a)``."""
    h = sp.symbols("h", positive=True)
    M = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"m{min(i, j)}{max(i, j)}"))
    D = sp.diag(*sp.symbols("d1:3", positive=True))
    J = sp.Matrix(3, 2, sp.symbols("j0:6"))
    F = sp.diag(*sp.symbols("F1:4", positive=True))
    a = sp.Matrix(sp.symbols("a1:4"))
    v = sp.Matrix(sp.symbols("v1:3"))
    c = sp.Matrix(sp.symbols("c1:3"))
    vnext = v + h * (M + h * D).inv() * (c - D * v + J.T * (-F * a))
    jac = vnext.jacobian(a)
    gap = sp.simplify(jac - h * (M + h * D).inv() * J.T * (-F))
    hess_zero = all(sp.simplify(sp.diff(jac, ai)) == sp.zeros(2, 3) for ai in a)
    return Affinity(gap, hess_zero)
