"""The algebra behind the sample complexity of linear contracts, executed with sympy.

Statements follow the abstract of Høgsgaard (arXiv 2601.01496) [paper] and two third-party reviews [secondary]
(constants, lemma numbering); the derivations here are ours [derived].

* :func:`derive_indifference_point` — α R_i − c_i = α R_{i'} − c_{i'} at α = (c_i − c_{i'})/(R_i − R_{i'}).
* :func:`derive_exchange_argument` — the key lemma's exchange argument: if i is optimal at α₁ and j at α₂, adding
  the two optimality inequalities leaves (α₂ − α₁)(R_j − R_i) ≥ 0, so R_θ(α) is non-decreasing for *any* tie rule.
* :func:`derive_piece_deviation` — between kinks Û_s − U = (1 − α)ΔR, so |Û_s − U| is largest at a piece's left end.
* :func:`derive_eum_decomposition` — U(α*) − U(α̂) ≤ 2 sup_α |Û_s − U| (α̂ maximises Û_s).
* :func:`derive_constants` — 4·(12√6)² = 3456 and 4·3456 = 13824 = 2·6912 [secondary constants].
* :func:`derive_chaining_integral` — ∫₀^{1/(2√12)} √ln(1/ν) dν in closed form, ≈ 0.2405 ≤ 1/4.
* :func:`uniform_convergence_samples`, :func:`deviation_bound`, :func:`eum_samples` — Theorem 1.1 / Cor. 1.2.
"""

from __future__ import annotations

import math
from functools import cache
from typing import NamedTuple

import sympy as sp

from ..validate import number

__all__ = [
    "THM11_CONSTANT",
    "COR12_STATED",
    "COR12_PROOF",
    "RADEMACHER_CONSTANT",
    "derive_indifference_point",
    "derive_exchange_argument",
    "derive_piece_deviation",
    "derive_eum_decomposition",
    "derive_constants",
    "derive_chaining_integral",
    "uniform_convergence_samples",
    "deviation_bound",
    "eum_samples",
]

THM11_CONSTANT = 3456  # Theorem 1.1: s ≥ 3456 ln(4/δ)/ε² [secondary: the abstract gives only O(·)]
COR12_STATED = 6912  # Corollary 1.2 as stated [secondary]
COR12_PROOF = 13824  # the constant its proof uses, ⌈13824 ln(4/δ)/ε²⌉ [secondary]
RADEMACHER_CONSTANT = "12*sqrt(6)"  # chaining's Rademacher constant [secondary]

alpha, a1, a2 = sp.symbols("alpha alpha_1 alpha_2", real=True)
Ri, Rj, ci, cj = sp.symbols("R_i R_j c_i c_j", real=True)


@cache
def derive_indifference_point() -> sp.Expr:
    """Solve α R_i − c_i = α R_j − c_j for α: the kink where the agent switches between actions i and j."""
    (sol,) = sp.solve(sp.Eq(alpha * Ri - ci, alpha * Rj - cj), alpha)
    return sp.simplify(sol)


class ExchangeArgument(NamedTuple):
    """i optimal at α₁ and j optimal at α₂: (α₁R_i − c_i) − (α₁R_j − c_j) ≥ 0 and (α₂R_j − c_j) − (α₂R_i − c_i) ≥ 0."""

    sum_of_inequalities: sp.Expr  # the sum of the two non-negative left-hand sides
    factored: sp.Expr  # = (α₂ − α₁)(R_j − R_i)
    residual: sp.Expr  # sum − (α₂ − α₁)(R_j − R_i), simplifies to 0


@cache
def derive_exchange_argument() -> ExchangeArgument:
    """Costs cancel when the two optimality inequalities are added: (α₂ − α₁)(R_j − R_i) ≥ 0, so α₂ > α₁ forces
    R_j ≥ R_i whichever optimal actions the tie rule picks — the monotonicity of R_θ(α), hence of R(α)."""
    s = sp.expand((a1 * Ri - ci) - (a1 * Rj - cj) + (a2 * Rj - cj) - (a2 * Ri - ci))
    return ExchangeArgument(s, sp.factor(s), sp.simplify(s - (a2 - a1) * (Rj - Ri)))


class PieceDeviation(NamedTuple):
    """On a piece [κ₀, κ₁) where R̂ and R are constant: D(α) = Û_s − U = (1 − α)(R̂ − R)."""

    deviation: sp.Expr
    derivative_of_abs: sp.Expr  # d|D|/dα = −|R̂ − R| ≤ 0
    left_minus_right: sp.Expr  # |D(κ₀)| − |D(κ₁)| = (κ₁ − κ₀)|R̂ − R| ≥ 0


@cache
def derive_piece_deviation() -> PieceDeviation:
    """|Û_s − U| is non-increasing along a piece, so its supremum over the piece is at the left end κ — a point
    the right-continuous (principal-tie) step functions attain."""
    Rh, Rt = sp.symbols("Rhat R", real=True)
    k0, k1 = sp.symbols("kappa_0 kappa_1", real=True)
    D = (1 - alpha) * (Rh - Rt)
    absD = (1 - alpha) * sp.Abs(Rh - Rt)  # valid for α ≤ 1
    return PieceDeviation(D, sp.diff(absD, alpha), sp.factor(absD.subs(alpha, k0) - absD.subs(alpha, k1)))


@cache
def derive_eum_decomposition() -> sp.Expr:
    """U(α*) − U(α̂) = [U(α*) − Û(α*)] + [Û(α*) − Û(α̂)] + [Û(α̂) − U(α̂)]; returns the residual (0).

    The middle bracket is ≤ 0 because α̂ maximises Û_s, each outer bracket is ≤ sup|Û_s − U|: so the
    suboptimality is ≤ 2 sup|Û_s − U|, and accuracy ε/2 in Theorem 1.1 gives EUM accuracy ε (4× the samples).
    """
    Us, Uh, Uhs, Uhh = sp.symbols("U_star U_hat Uhat_star Uhat_hat", real=True)
    return sp.simplify((Us - Uh) - ((Us - Uhs) + (Uhs - Uhh) + (Uhh - Uh)))


class Constants(NamedTuple):
    thm11: sp.Integer  # 4·(12√6)²
    cor12_proof: sp.Integer  # 4·3456 (accuracy ε/2 in Theorem 1.1)
    cor12_stated_times_2: sp.Integer  # 2·6912


@cache
def derive_constants() -> Constants:
    """4·(12√6)² = 3456 (Rademacher constant → Theorem 1.1) and 4·3456 = 13824 = 2·6912 [secondary inputs]."""
    c = sp.sympify(RADEMACHER_CONSTANT)
    return Constants(sp.nsimplify(4 * c**2), sp.Integer(4 * THM11_CONSTANT), sp.Integer(2 * COR12_STATED))


class ChainingIntegral(NamedTuple):
    upper: sp.Expr  # 1/(2√12)
    closed_form: sp.Expr  # a√ln(1/a) + (√π/2) erfc(√ln(1/a)) at a = upper
    derivative_residual: sp.Expr  # d/da closed_form(a) − √ln(1/a), simplifies to 0
    limit_at_zero: sp.Expr  # closed_form(a) as a → 0⁺, = 0
    value: float


@cache
def derive_chaining_integral() -> ChainingIntegral:
    """∫₀^a √ln(1/ν) dν = a√ln(1/a) + (√π/2) erfc(√ln(1/a)) for 0 < a < 1 (check: differentiate; limit at 0).

    At a = 1/(2√12) the value is ≈ 0.2405 ≤ 1/4, the bound the reviews quote for the chaining step [secondary].
    """
    a = sp.symbols("a", positive=True)
    F = a * sp.sqrt(sp.log(1 / a)) + sp.sqrt(sp.pi) / 2 * sp.erfc(sp.sqrt(sp.log(1 / a)))
    resid = sp.simplify(sp.diff(F, a) - sp.sqrt(sp.log(1 / a)))
    lim = sp.limit(F, a, 0, "+")
    up = 1 / (2 * sp.sqrt(12))
    val = F.subs(a, up)
    return ChainingIntegral(sp.nsimplify(up), val, resid, lim, float(sp.N(val, 30)))


def uniform_convergence_samples(eps: float, delta: float, constant: float = THM11_CONSTANT) -> int:
    """Theorem 1.1: s = ⌈C·ln(4/δ)/ε²⌉ samples give sup_α |Û_s − U| ≤ ε with probability ≥ 1 − δ (C = 3456
    [secondary]); independent of the numbers of actions n and outcomes m."""
    e = number("eps", eps, 0.0, 1.0, low_open=True, high_open=True)
    d = number("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    C = number("constant", constant, 0.0, math.inf, low_open=True)
    log_s = math.log(C) + math.log(math.log(4.0 / d)) - 2.0 * math.log(e)
    if log_s > 600:
        raise ValueError(f"Invalid eps: {eps!r} (the sample size would exceed e^600; must be larger)")
    return math.ceil(C * math.log(4.0 / d) / e / e)


def deviation_bound(s: float, delta: float, constant: float = THM11_CONSTANT) -> float:
    """Theorem 1.1 inverted: ε(s) = √(C·ln(4/δ)/s), the (1 − δ)-quantile bound on sup_α |Û_s − U|."""
    n = number("s", s, 0.0, math.inf, low_open=True)
    d = number("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    C = number("constant", constant, 0.0, math.inf, low_open=True)
    return math.exp(0.5 * (math.log(C) + math.log(math.log(4.0 / d)) - math.log(n)))


def eum_samples(eps: float, delta: float, constant: float = COR12_PROOF) -> int:
    """Corollary 1.2 with the proof's constant: ⌈13824·ln(4/δ)/ε²⌉ samples make EUM ε-optimal with probability
    ≥ 1 − δ (the statement says 6912 [secondary]; pass ``constant=6912`` for it)."""
    return uniform_convergence_samples(eps, delta, constant)
