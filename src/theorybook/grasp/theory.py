"""Closed forms and sympy derivations behind the Grasp-style grid (our reconstruction of Zhao et al., ICML 2026).

Symbols: F ≥ 0 the objective, L its smoothness, Δ = F(x₀) − inf F, σ² the gradient-noise variance, T the sample
budget, η a step size, ĝ a mini-batch gradient of m samples, Σ its per-sample covariance.

* Self-bounding anchor [derived]: for an L-smooth F ≥ 0 the descent lemma gives
  0 ≤ F(x − ∇F/L) ≤ F(x) − ‖∇F(x)‖²/(2L), hence ‖∇F(x)‖² ≤ 2L·F(x) and 1/L ≤ η̄ := 2F(x₀)/‖∇F(x₀)‖².
  If even 1/L < η̄/T then ‖∇F(x₀)‖ < √(2L·F(x₀)/T): x₀ already meets the target rate, so the grid
  η̄·2^{−k}, k = 0…⌈log₂T⌉, needs no lower end below η̄/T.
* Tuned SGD [standard]: min over η ≤ 1/L of 2Δ/(ηT) + Lησ² is attained at η* = min(1/L, √(2Δ/(LTσ²))), giving
  the target rate √(LΔ/T) + (LΔσ²/T)^{1/4} up to constants.
* Scoring [derived]: for i.i.d. g_i with mean μ and covariance Σ, the U-statistic (1/(m(m−1)))Σ_{i≠j}⟨g_i, g_j⟩
  is unbiased for ‖μ‖², while the naive ‖ĝ‖² has mean ‖μ‖² + tr Σ/m.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import sympy as sp

from ..validate import integer, number

__all__ = [
    "SelfBounding", "SGDTuning", "UStatBias", "anchor_step", "derive_self_bounding", "derive_sgd_tuning",
    "derive_ustat_bias", "grasp_grid", "grid_size", "sgd_step", "target_rate",
]


def anchor_step(loss0: float, grad0: float) -> float:
    """The grid's top η̄ = 2F(x₀)/‖∇F(x₀)‖² (``grad0`` is the norm ‖∇F(x₀)‖; needs F ≥ 0, so ``loss0`` ≥ 0).

    For an L-smooth non-negative F, 1/L ≤ η̄ [derived]. Computed in log space so that tiny/huge inputs do not
    overflow; ``ValueError`` for ``loss0 < 0`` or ``grad0 ≤ 0``.
    """
    f0 = number("loss0", loss0, 0.0)
    g0 = number("grad0", grad0, 0.0, low_open=True)
    if f0 == 0.0:
        raise ValueError("Invalid loss0: 0 (the anchor 2F/‖∇F‖² needs F(x₀) > 0; F = 0 with ∇F ≠ 0 contradicts F ≥ 0)")
    log_eta = math.log(2.0) + math.log(f0) - 2.0 * math.log(g0)
    if log_eta > 700 or log_eta < -700:
        raise ValueError(f"Invalid loss0/grad0: {f0:g}/{g0:g} (anchor 2F/‖∇F‖² = e^{log_eta:.0f} is outside the "
                         "float range)")
    return math.exp(log_eta)


def grid_size(T: int) -> int:
    """K = ⌈log₂T⌉ + 1 grid points for a budget of T samples (T ≥ 2)."""
    t = integer("T", T, 2, 2**40)
    return (t - 1).bit_length() + 1


def grasp_grid(T: int, eta_bar: float) -> list[float]:
    """The Grasp-style grid η_k = η̄·2^{−k}, k = 0 … ⌈log₂T⌉ [reconstruction]; the bottom is ≤ η̄/T."""
    K = grid_size(T)
    eb = number("eta_bar", eta_bar, 0.0, low_open=True)
    return [eb * 2.0 ** (-k) for k in range(K)]


def sgd_step(L: float, delta: float, sigma: float, T: int) -> float:
    """Tuned SGD step η* = min(1/L, √(2Δ/(LTσ²))) [standard]; σ = 0 gives 1/L."""
    Lv = number("L", L, 0.0, low_open=True)
    d = number("delta", delta, 0.0, low_open=True)
    s = number("sigma", sigma, 0.0)
    t = integer("T", T, 1, 2**60)
    if s == 0.0:
        return 1.0 / Lv
    log_noise = 0.5 * (math.log(2.0 * d) - math.log(Lv) - math.log(t) - 2.0 * math.log(s))
    return math.exp(min(-math.log(Lv), log_noise))


def target_rate(L: float, delta: float, sigma: float, T: int) -> float:
    """The non-convex target √(LΔ/T) + (LΔσ²/T)^{1/4} for E‖∇F(x̂)‖ (constants and logs dropped) [standard]."""
    Lv = number("L", L, 0.0, low_open=True)
    d = number("delta", delta, 0.0)
    s = number("sigma", sigma, 0.0)
    t = integer("T", T, 1, 2**60)
    if d == 0.0:
        return 0.0
    base = math.log(Lv) + math.log(d) - math.log(t)
    noise = 0.0 if s == 0.0 else math.exp(0.25 * (base + 2.0 * math.log(s)))
    return math.exp(0.5 * base) + noise


class SelfBounding(NamedTuple):
    """Sympy results of the self-bounding argument."""

    grad_sq_bound: sp.Expr  # the largest ‖∇F‖² allowed by the descent lemma: 2LF
    anchor_gap: sp.Expr  # η̄ − 1/L written as (2LF − ‖∇F‖²)/(L‖∇F‖²)
    anchor_gap_residual: sp.Expr  # (2F/g² − 1/L) − anchor_gap, simplified (0)
    small_end: sp.Expr  # the ‖∇F‖² bound when 1/L < η̄/T: 2LF/T


def derive_self_bounding() -> SelfBounding:
    """Descent lemma ⇒ ‖∇F‖² ≤ 2LF ⇒ 1/L ≤ η̄; and 1/L < η̄/T ⇒ ‖∇F(x₀)‖² < 2LF(x₀)/T (sympy)."""
    F, L, g, T = sp.symbols("F L g T", positive=True)
    after_step = F - g**2 / (2 * L)  # upper bound on F(x − ∇F/L) ≥ 0
    g2max = sp.solve(sp.Eq(after_step, 0), g**2)
    g_root = sp.solve(sp.Eq(after_step, 0), g)[0]
    bound = sp.simplify(g_root**2) if not g2max else sp.simplify(g2max[0])
    gap = (2 * L * F - g**2) / (L * g**2)
    residual = sp.simplify(2 * F / g**2 - 1 / L - gap)
    # 1/L < η̄/T  ⇔  T/L < 2F/g²  ⇔  g² < 2LF/T
    small = sp.solve(sp.Eq(1 / L, (2 * F / g**2) / T), g)[0] ** 2
    return SelfBounding(bound, gap, residual, sp.simplify(small))


class SGDTuning(NamedTuple):
    """Sympy results for the SGD bound B(η) = 2Δ/(ηT) + Lησ²."""

    eta_star: sp.Expr  # stationary point √(2Δ/(LTσ²))
    second_derivative: sp.Expr  # B''(η*) > 0
    value_at_star: sp.Expr  # 2√(2LΔσ²/T)
    value_at_inv_L: sp.Expr  # 2LΔ/T + σ²


def derive_sgd_tuning() -> SGDTuning:
    """Minimise the SGD bound 2Δ/(ηT) + Lησ² over η (sympy); the constraint η ≤ 1/L gives η* = min(1/L, ·)."""
    eta, D, L, s, T = sp.symbols("eta Delta L sigma T", positive=True)
    B = 2 * D / (eta * T) + L * eta * s**2
    roots = [r for r in sp.solve(sp.diff(B, eta), eta) if r.is_positive]
    star = sp.simplify(roots[0])
    return SGDTuning(star, sp.simplify(sp.diff(B, eta, 2).subs(eta, star)), sp.simplify(B.subs(eta, star)),
                     sp.simplify(B.subs(eta, 1 / L)))


class UStatBias(NamedTuple):
    """Expectations of the two scoring rules for m i.i.d. samples with mean μ (per coordinate) and variance s²."""

    ustat_mean: sp.Expr  # μ²
    naive_mean: sp.Expr  # μ² + s²/m


def derive_ustat_bias() -> UStatBias:
    """E of (1/(m(m−1)))Σ_{i≠j} g_i g_j and of ĝ² = ((1/m)Σ g_i)², per coordinate (sympy, by counting pairs).

    E[g_i g_j] = μ² for i ≠ j (independence) and E[g_i²] = μ² + s²; ĝ² has m diagonal and m(m−1) off-diagonal
    terms over m², the U-statistic only the m(m−1) off-diagonal ones. Summing over coordinates gives tr Σ/m.
    """
    m, mu, s = sp.symbols("m mu s", positive=True)
    off, diag = mu**2, mu**2 + s**2
    ustat = sp.simplify(m * (m - 1) * off / (m * (m - 1)))
    naive = sp.simplify((m * diag + m * (m - 1) * off) / m**2)
    return UStatBias(ustat, sp.expand(naive))
