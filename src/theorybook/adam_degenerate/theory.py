"""Closed forms and executed derivations for Adam on L(x) = x^k/k (Bai et al., arXiv 2603.09581).

Numeric closed forms (floats/tensors) come first; the sympy derivations the chapter executes follow.
Statements are [secondary] (third-party notes of the paper); the Jacobian algebra is [derived] here.

Symbols: r* = β₂^{1/(2(k−2))} (per-step contraction), ω = m/x^{k−1} (normalised first moment),
λ = x^{k−2}/√v (effective curvature).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import sympy as sp
import torch

from .. import validate

__all__ = [
    "linear_rate",
    "log_loss_slope",
    "stability_boundary",
    "existence_boundary",
    "flip_boundary",
    "rmsprop_threshold",
    "regime",
    "FixedPoint",
    "fixed_point",
    "signgd_loss_level",
    "gradient_flow_x",
    "gradient_flow_hitting_time",
    "adam_steps_per_decade",
    "ReducedMapDerivation",
    "derive_reduced_map",
    "derive_rmsprop_threshold",
    "derive_gradient_flow",
    "derive_exponential_schedule",
]


def _check_k(k) -> None:
    validate.even_integer("k", k, 4)


def _check_beta(name: str, beta) -> None:
    validate.in_range(name, beta, 0.0, 1.0)


def _pow(base, exponent):
    return base**exponent if not isinstance(base, torch.Tensor) else torch.pow(base, exponent)


# --------------------------------------------------------------------------- closed forms (Theorem 4.1, 5.7, 6.1)
def linear_rate(k: int, beta2: float) -> float:
    r"""Eq. (10): :math:`x_{t+1}/x_t \to r^\star = \beta_2^{1/(2(k-2))}` in the stable regime."""
    _check_k(k)
    _check_beta("beta2", beta2)
    return _pow(beta2, 1.0 / (2 * (k - 2)))


def log_loss_slope(k: int, beta2: float) -> float:
    r"""Slope of :math:`\ln L` per step, :math:`k\ln\beta_2/(2(k-2))` (natural log)."""
    _check_k(k)
    validate.in_range("beta2", beta2, 0.0, 1.0, low_open=True)
    return k * math.log(beta2) / (2 * (k - 2))


def stability_boundary(k: int, beta2):
    r"""Eq. (8): the fixed point is stable for :math:`\beta_1 < \beta_2^{k/(2(k-2))}`; returns that β₁."""
    _check_k(k)
    _check_beta("beta2", beta2)
    return _pow(beta2, k / (2 * (k - 2)))


def existence_boundary(k: int, beta2):
    r"""Eq. (9): the fixed point exists for :math:`\beta_1 < \beta_2^{(k-1)/(2(k-2))}`; returns that β₁."""
    _check_k(k)
    _check_beta("beta2", beta2)
    return _pow(beta2, (k - 1) / (2 * (k - 2)))


def flip_boundary(k: int, beta2):
    r"""[derived] Period-doubling boundary :math:`1+\operatorname{tr}J+\det J=0`:
    :math:`\beta_1 = r^{k-1}\frac{k-2-kr}{k-(k-2)r}` (clipped at 0). The fixed point also needs β₁ above it;
    it is positive only for β₂ < ((k−2)/k)^{2(k−2)}."""
    _check_k(k)
    _check_beta("beta2", beta2)
    r = _pow(beta2, 1.0 / (2 * (k - 2)))
    val = _pow(r, k - 1) * (k - 2 - k * r) / (k - (k - 2) * r)
    return torch.clamp(val, min=0.0) if isinstance(val, torch.Tensor) else max(0.0, val)


def rmsprop_threshold(k: int) -> float:
    r"""Theorem 5.7: RMSProp (β₁ = 0) converges linearly iff :math:`\beta_2 > ((k-2)/k)^{2(k-2)}`."""
    _check_k(k)
    return ((k - 2) / k) ** (2 * (k - 2))


def regime(k: int, beta1: float, beta2: float) -> str:
    """Theorem 6.1's three regimes: ``"stable"`` (I), ``"spike"`` (II) or ``"oscillation"`` (III).

    Uses Eq. (8) and Eq. (9) as the secondary notes state them; the extra flip condition at tiny β₂ is
    reported by :func:`fixed_point` (``stable`` field), not here.
    """
    _check_k(k)
    _check_beta("beta1", beta1)
    _check_beta("beta2", beta2)
    if beta1 < stability_boundary(k, beta2):
        return "stable"
    if beta1 < existence_boundary(k, beta2):
        return "spike"
    return "oscillation"


class FixedPoint(NamedTuple):
    """The non-trivial fixed point of the reduced map and its linearisation."""

    r: float
    omega: float
    lam: float
    trace: float
    det: float
    spectral_radius: float
    stable: bool


def fixed_point(k: int, beta1: float, beta2: float, lr: float) -> FixedPoint:
    r"""[derived] Fixed point (r*, ω*, λ*) of the reduced map and its 2×2 Jacobian.

    :math:`r^\star=\beta_2^{1/(2(k-2))}`, :math:`\omega^\star=\frac{1-\beta_1}{1-\beta_1 (r^\star)^{-(k-1)}}`,
    :math:`\lambda^\star = (1-r^\star)/(\eta\,\omega^\star)`; trace and determinant are η-free.
    Raises ``ValueError`` when the fixed point does not exist (β₁ ≥ existence boundary).
    """
    _check_k(k)
    _check_beta("beta1", beta1)
    validate.in_range("beta2", beta2, 0.0, 1.0, low_open=True)
    validate.positive("lr", lr)
    if beta1 >= existence_boundary(k, beta2):
        raise ValueError(f"Invalid beta1: {beta1} (no fixed point: must be < beta2^((k-1)/(2(k-2))) = "
                         f"{existence_boundary(k, beta2):.6g})")
    r = beta2 ** (1.0 / (2 * (k - 2)))
    omega = (1 - beta1) / (1 - beta1 * r ** (-(k - 1)))
    lam = (1 - r) / (lr * omega)
    a11 = beta1 * (k * (1 - r) + 2 * r - 1) / r**k
    a22 = (k - 1) - (k - 2) / r
    tr, det = a11 + a22, beta1 / r**k
    disc = complex(tr * tr - 4 * det) ** 0.5
    rho = max(abs((tr + disc) / 2), abs((tr - disc) / 2))
    return FixedPoint(r, omega, lam, tr, det, rho, rho < 1)


def signgd_loss_level(k: int, lr: float) -> float:
    r"""Regime III's oscillation level :math:`L(\eta/2) = (\eta/2)^k/k`."""
    validate.even_integer("k", k, 2)
    validate.positive("lr", lr)
    return (lr / 2) ** k / k


def gradient_flow_x(k: int, t, x0: float = 1.0):
    r"""Theorem 5.1: gradient flow :math:`x(t) = (x_0^{-(k-2)} + (k-2)t)^{-1/(k-2)}`."""
    _check_k(k)
    validate.positive("x0", x0)
    return _pow(x0 ** (-(k - 2)) + (k - 2) * t, -1.0 / (k - 2))


def gradient_flow_hitting_time(k: int, eps: float, x0: float = 1.0) -> float:
    r"""Time for gradient flow to reach |x| = ε: :math:`(\varepsilon^{-(k-2)}-x_0^{-(k-2)})/(k-2)`."""
    _check_k(k)
    validate.positive("eps", eps)
    validate.positive("x0", x0)
    return (eps ** (-(k - 2)) - x0 ** (-(k - 2))) / (k - 2)


def adam_steps_per_decade(k: int, beta2: float) -> float:
    r"""Remark 5.8 [derived]: steps per unit of ln(1/ε) in the stable regime, :math:`2(k-2)/(-\ln\beta_2)`."""
    _check_k(k)
    validate.in_range("beta2", beta2, 0.0, 1.0, low_open=True)
    return 2 * (k - 2) / (-math.log(beta2))


# --------------------------------------------------------------------------- sympy: executed derivations
class ReducedMapDerivation(NamedTuple):
    """Results of :func:`derive_reduced_map` for one k (all sympy expressions in r, β₁, η)."""

    k: int
    fixed_point_residual: tuple[sp.Expr, sp.Expr]  # F(ω*, λ*) − (ω*, λ*), simplifies to (0, 0)
    omega_star: sp.Expr
    lam_star: sp.Expr
    trace: sp.Expr
    det: sp.Expr
    det_minus_claim: sp.Expr  # det J − β₁ r^{−k}, simplifies to 0
    eta_derivatives: tuple[sp.Expr, sp.Expr]  # ∂tr/∂η, ∂det/∂η → (0, 0)
    one_minus_tr_plus_det: sp.Expr  # factored: vanishes at r = 1 or β₁ = r^{k-1} (existence boundary)
    flip_beta1: sp.Expr  # β₁ solving 1 + tr + det = 0


_r, _b1, _eta, _om, _lam = sp.symbols("r beta_1 eta omega lambda", positive=True)


def derive_reduced_map(k: int) -> ReducedMapDerivation:
    r"""[derived] Execute §5 of the digest for a given even k ≥ 4.

    Writing β₂ = r^{2(k−2)} (so √β₂ = r^{k−2}) and R = 1 − ηωλ, the x → 0 reduced map is

    .. math:: \omega' = \beta_1\omega/R^{k-1} + 1-\beta_1,\qquad \lambda' = \lambda R^{k-2}/r^{k-2}.
    """
    _check_k(k)
    R = 1 - _eta * _om * _lam
    F = sp.Matrix([_b1 * _om / R ** (k - 1) + (1 - _b1), _lam * R ** (k - 2) / _r ** (k - 2)])
    om_s = (1 - _b1) / (1 - _b1 * _r ** (-(k - 1)))
    lam_s = (1 - _r) / (_eta * om_s)
    at = {_om: om_s, _lam: lam_s}
    residual = tuple(sp.simplify(F[i].subs(at) - (om_s, lam_s)[i]) for i in range(2))
    J = F.jacobian([_om, _lam]).subs(at)
    tr, det = sp.simplify(J.trace()), sp.simplify(J.det())
    det_claim = sp.simplify(det - _b1 / _r**k)
    d_eta = (sp.simplify(sp.diff(tr, _eta)), sp.simplify(sp.diff(det, _eta)))
    stab = sp.factor(sp.simplify(1 - tr + det))
    flip = sp.solve(sp.Eq(1 + tr + det, 0), _b1)
    return ReducedMapDerivation(k, residual, sp.simplify(om_s), sp.simplify(lam_s), tr, det, det_claim,
                                d_eta, stab, sp.simplify(flip[0]))


def derive_rmsprop_threshold(k: int) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    r"""[derived] Theorem 5.7's auxiliary map :math:`u' = \gamma u (1-u)^{k-2}` (γ = β₂^{-1/2}).

    Returns (fixed point u*, multiplier f'(u*), the β₂ threshold where f'(u*) = −1).
    """
    _check_k(k)
    u, g, b2 = sp.symbols("u gamma beta_2", positive=True)
    f = g * u * (1 - u) ** (k - 2)
    u_star = 1 - g ** sp.Rational(-1, k - 2)
    assert sp.simplify(f.subs(u, u_star) - u_star) == 0
    mult = sp.simplify(sp.diff(f, u).subs(u, u_star))
    g_crit = sp.solve(sp.Eq(mult, -1), g)
    threshold = sp.nsimplify(sp.simplify((1 / g_crit[0]) ** 2))  # β₂ = γ^{-2}
    return u_star, mult, threshold


def derive_gradient_flow(k: int) -> tuple[sp.Expr, sp.Expr]:
    r"""[derived] Solve :math:`\dot x = -x^{k-1}`, x(0) = x₀ > 0; return (x(t), time to reach ε)."""
    _check_k(k)
    t, x0, eps = sp.symbols("t x_0 varepsilon", positive=True)
    x = sp.Function("x")
    sol = sp.dsolve(sp.Eq(x(t).diff(t), -x(t) ** (k - 1)), x(t), ics={x(0): x0})
    sols = sol if isinstance(sol, list) else [sol]
    pos = [s.rhs for s in sols if sp.N(s.rhs.subs({t: 1, x0: 1})).is_positive]
    xt = sp.simplify(pos[0])
    hit = sp.solve(sp.Eq(xt ** (-(k - 2)), eps ** (-(k - 2))), t)[0]
    return xt, sp.simplify(hit)


def derive_exponential_schedule(k: int) -> sp.Expr:
    r"""[derived] Lemma 5.5: :math:`\dot x = -c e^{\alpha t} x^{k-1}` ⇒ :math:`\lim \ln x / t = -\alpha/(k-2)`."""
    _check_k(k)
    t, c, a, x0 = sp.symbols("t c alpha x_0", positive=True)
    s = sp.Symbol("s", positive=True)
    # separable: x^{-(k-2)} = x0^{-(k-2)} + (k-2) ∫ c e^{α s} ds
    inv = x0 ** (-(k - 2)) + (k - 2) * sp.integrate(c * sp.exp(a * s), (s, 0, t))
    log_x = -sp.log(inv) / (k - 2)
    return sp.limit(log_x / t, t, sp.oo)
