"""The algebra behind D-RUT, executed in sympy with non-commuting ``a``, ``a†`` [derived].

* :func:`displaced_annihilator` — ``D†(β) a D(β) = a + β`` from the Hadamard series
  ``e^{−X} a e^{X} = a + [a, X] + ½[[a, X], X] + …``, ``X = β a† − β̄ a`` (it stops after one commutator).
* :func:`normal_form` — ``Σ g_pq (a† + β̄)^p (a + β)^q`` expanded into normal-ordered monomials
  ``c_rs (a†)^r a^s``: the number-conserving part is ``Σ_r c_rr (a†)^r a^r``, its vacuum value is
  ``c_00 = C(β) = Σ g_pq β̄^p β^q`` and ``E₁ − E₀ = c_11 = ∂_β ∂_β̄ C`` (β, β̄ independent); in general
  ``c_rs = ∂_β̄^r ∂_β^s C / (r! s!)``.
* :func:`kerr_normal_order` — ``(K/2) n̂(n̂ − 1)`` normal-orders to ``(K/2) a†²a²``.
* :func:`twirl_average` — ``(1/M) Σ_k e^{2πik(n−m)/M} = [n ≡ m (mod M)]``.
* :func:`fisher` — one X shot and one Y shot at time ``t`` carry Fisher information ``t²`` each about ``C``
  (any ``C``), so a pair carries ``2t²``; Ramsey's ``T/(2t)`` pairs give ``CRB = 1/√(Tt)``; a schedule
  ``S_j`` at ``t_j = 2^j t₀`` gives ``(Σ 2 S_j t_j²)^{−1/2}``.
* :func:`spam_algebra` — a symmetric flip shrinks ``⟨X⟩``, ``⟨Y⟩`` by the same ``1 − 2δ`` (so ``atan2`` is
  unbiased, ``arccos`` is not: first-order bias ``2δ cot φ``); a phase offset ε biases level ``j`` by
  ``ε/(2^j t₀)``.
* :func:`error_propagation` — ``E‖K⁺e‖² = σ² tr(KᵀK)⁻¹`` for iid errors: ``RMSE_g = RMSE_C·√(tr(KᵀK)⁻¹/p)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import sympy as sp
from sympy.physics.quantum import Commutator, Dagger
from sympy.physics.quantum.boson import BosonOp
from sympy.physics.quantum.operatorordering import normal_ordered_form

from ..validate import integer

__all__ = [
    "NormalForm", "displaced_annihilator", "error_propagation", "fisher", "kerr_normal_order", "normal_form",
    "spam_algebra", "twirl_average",
]

a = BosonOp("a")
ad = Dagger(a)
beta, betabar = sp.symbols("beta betabar")  # independent (Wirtinger) variables


def displaced_annihilator(max_order: int = 4) -> sp.Expr:
    """``e^{−X} a e^{X} − (a + β)`` summed to ``max_order`` nested commutators (0 when exact)."""
    max_order = integer("max_order", max_order, 1, 10)
    X = beta * ad - betabar * a
    term, total = a, a
    for k in range(1, max_order + 1):
        term = normal_ordered_form(sp.expand(Commutator(term, X).doit()))
        total = total + term / math.factorial(k)
    return sp.simplify(normal_ordered_form(sp.expand(total)) - (a + beta))


def _split(term: sp.Expr) -> tuple[sp.Expr, int, int]:
    """``coeff·(a†)^r a^s`` → ``(coeff, r, s)``."""
    c, nc = term.args_cnc()
    r = s = 0
    for f in nc:
        base, exp = (f.base, int(f.exp)) if isinstance(f, sp.Pow) else (f, 1)
        if base == ad:
            r += exp
        elif base == a:
            s += exp
        else:  # pragma: no cover - only a, a† occur
            raise ValueError(f"unexpected factor {f}")
    return sp.Mul(*c), r, s


class NormalForm(NamedTuple):
    """``coeffs[(r, s)] = c_rs``; ``C`` the vacuum constant; the three checks (0 when they hold)."""

    coeffs: dict
    C: sp.Expr
    g: dict
    gap_vacuum: sp.Expr
    gap_one_quantum: sp.Expr
    gap_taylor: sp.Expr


def normal_form(degree: int = 4) -> NormalForm:
    """Expand ``Σ_{p+q≤degree} g_pq (a† + β̄)^p (a + β)^q`` (symbolic ``g_pq``) into ``Σ c_rs (a†)^r a^s`` and check
    ``c_00 = Σ g β̄^p β^q``, ``c_11 = ∂_β∂_β̄ c_00`` and every ``c_rs = ∂_β̄^r ∂_β^s c_00/(r! s!)``."""
    degree = integer("degree", degree, 1, 6)
    g = {(p, q): sp.Symbol(f"g_{p}{q}") for p in range(degree + 1) for q in range(degree + 1 - p)}
    expr = sp.expand(sum(gpq * (ad + betabar) ** p * (a + beta) ** q for (p, q), gpq in g.items()))
    expr = normal_ordered_form(expr)
    coeffs: dict = {}
    for term in sp.Add.make_args(sp.expand(expr)):
        c, r, s = _split(term)
        coeffs[(r, s)] = coeffs.get((r, s), 0) + c
    C = sum(gpq * betabar**p * beta**q for (p, q), gpq in g.items())
    c00 = coeffs.get((0, 0), 0)
    gap_v = sp.expand(c00 - C)
    gap_1 = sp.expand(coeffs.get((1, 1), 0) - sp.diff(C, beta, betabar))
    gap_t = sum(sp.Abs(sp.expand(coeffs.get((r, s), 0) - sp.diff(C, betabar, r, beta, s)
                                 / (sp.factorial(r) * sp.factorial(s))))
                for r in range(degree + 1) for s in range(degree + 1 - r))
    return NormalForm(coeffs, C, g, gap_v, gap_1, sp.simplify(gap_t))


def kerr_normal_order() -> sp.Expr:
    """``(K/2) n̂(n̂ − 1) − (K/2) a†² a²`` after normal ordering (0)."""
    K = sp.Symbol("K", positive=True)
    n = ad * a
    return sp.expand(normal_ordered_form(sp.expand(K / 2 * (n * n - n))) - K / 2 * ad**2 * a**2)


def twirl_average(M: int = 5, span: int = 12) -> tuple[sp.Expr, list[tuple[int, sp.Expr]]]:
    """The symbolic ``(1/M) Σ_{k<M} e^{2πik d/M}`` for integer ``d`` (a Piecewise) and its values at
    ``d = −span..span`` for the given ``M``."""
    M = integer("M", M, 1, 64)
    span = integer("span", span, 0, 64)
    k, d = sp.symbols("k d", integer=True)
    Ms = sp.Symbol("M", integer=True, positive=True)
    S = sp.summation(sp.exp(2 * sp.pi * sp.I * k * d / Ms), (k, 0, Ms - 1)) / Ms
    return S, [(dd, sp.simplify(S.subs({Ms: M, d: dd}))) for dd in range(-span, span + 1)]


class Fisher(NamedTuple):
    """``I_X``, ``I_Y`` (per shot, δ = 0), their sum, the flip-δ versions and the two CRBs."""

    I_X: sp.Expr
    I_Y: sp.Expr
    I_pair: sp.Expr
    I_pair_flip: sp.Expr
    crb_ramsey: sp.Expr
    crb_schedule: sp.Expr


def fisher() -> Fisher:
    """Fisher information of the ancilla shots about ``C``: ``P(±) = (1 ± (1 − 2δ)cos(Ct))/2`` (X) and
    ``(1 ± (1 − 2δ) sin(Ct))/2`` (Y); per pair ``2t²`` at ``δ = 0``."""
    C, t, T, t0 = sp.symbols("C t T t_0", positive=True)
    dl = sp.Symbol("delta", nonnegative=True)

    def info(p):
        return sp.trigsimp(sp.factor(sp.diff(p, C) ** 2 / (p * (1 - p))))

    px = (1 + sp.cos(C * t)) / 2
    py = (1 + sp.sin(C * t)) / 2
    vis = 1 - 2 * dl
    pair_flip = (sp.diff(vis * sp.cos(C * t) / 2, C) ** 2 / ((1 - (vis * sp.cos(C * t)) ** 2) / 4)
                 + sp.diff(vis * sp.sin(C * t) / 2, C) ** 2 / ((1 - (vis * sp.sin(C * t)) ** 2) / 4))
    IX, IY = info(px), info(py)
    pair = sp.simplify(IX + IY)
    crb_r = sp.simplify(1 / sp.sqrt(T / (2 * t) * pair))
    j, J, S = sp.symbols("j J S", integer=True, nonnegative=True)
    crb_s = 1 / sp.sqrt(sp.summation(2 * S * (2**j * t0) ** 2, (j, 0, J)))
    return Fisher(IX, IY, pair, pair_flip, crb_r, sp.simplify(crb_s))


class Spam(NamedTuple):
    """``Y/X − tan φ`` under a flip (0), the first-order arccos bias, the level-``j`` offset bias."""

    ratio_gap: sp.Expr
    arccos_slope: sp.Expr
    offset_bias: sp.Expr


def spam_algebra() -> Spam:
    """Symmetric flip δ: ``⟨X⟩ = (1 − 2δ)cos φ``, ``⟨Y⟩ = (1 − 2δ) sin φ`` (same signs as cos, sin for δ < ½,
    ratio unchanged ⇒ ``atan2`` unchanged); ``d/dδ arccos((1 − 2δ)cos φ)`` at 0 is ``2 cot φ`` (≠ 0); offset:
    ``(2^j t₀ C + ε)/(2^j t₀) − C = ε/(2^j t₀)``."""
    phi, dl, C, eps, t0 = sp.symbols("phi delta C epsilon t_0", positive=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    X, Y = (1 - 2 * dl) * sp.cos(phi), (1 - 2 * dl) * sp.sin(phi)
    ratio_gap = sp.simplify(Y / X - sp.tan(phi))
    slope = sp.simplify(sp.diff(sp.acos((1 - 2 * dl) * sp.cos(phi)), dl).subs(dl, 0))
    tj = 2**j * t0
    return Spam(ratio_gap, slope, sp.simplify((tj * C + eps) / tj - C))


def error_propagation(rows: int = 3, cols: int = 2) -> sp.Expr:
    """``tr(K⁺ K⁺ᵀ) − tr((KᵀK)⁻¹)`` for a symbolic real ``rows × cols`` K (0): with ``E[eeᵀ] = σ²I``,
    ``E‖K⁺e‖² = σ² tr(K⁺K⁺ᵀ) = σ² tr(KᵀK)⁻¹``."""
    rows = integer("rows", rows, 2, 4)
    cols = integer("cols", cols, 1, min(rows, 2))
    K = sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"k_{i}{j}", real=True))
    G = (K.T * K)
    Kp = G.inv() * K.T
    return sp.cancel(sp.together((Kp * Kp.T).trace() - G.inv().trace()))
