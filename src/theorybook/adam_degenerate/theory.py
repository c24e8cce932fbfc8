"""Closed forms and executed derivations for Adam on L(x) = x^k/k (Bai et al., arXiv 2603.09581).

Numeric closed forms (floats/tensors) come first; the sympy derivations the chapter executes follow.
Statements are [secondary] (third-party notes of the paper); the Jacobian algebra is [derived] here.

Symbols: r* = β₂^{1/(2(k−2))} (per-step contraction), ω = m/x^{k−1} (normalised first moment),
λ = x^{k−2}/√v (effective curvature).
"""

from __future__ import annotations

import cmath
import math
from typing import Any, NamedTuple

import numpy as np
import sympy as sp
import torch

from .. import validate

__all__ = [
    "K_MAX",
    "linear_rate",
    "log_loss_slope",
    "stability_boundary",
    "existence_boundary",
    "flip_boundary",
    "rmsprop_threshold",
    "rmsprop_two_cycle",
    "regime",
    "FixedPoint",
    "fixed_point",
    "signgd_loss_level",
    "gradient_flow_x",
    "gradient_flow_hitting_time",
    "adam_steps_per_efold",
    "ReducedMapDerivation",
    "derive_reduced_map",
    "derive_rmsprop_threshold",
    "derive_gradient_flow",
    "derive_exponential_schedule",
]

K_MAX = 100  # largest degree the numeric functions accept (x^k/k with k > 100 is beyond any float64 use)
K_MAX_SYMBOLIC = 12  # the sympy derivations expand (1 − ηωλ)^{k−1}; beyond this they only get slow


def _k(k: Any, minimum: int = 4, maximum: int = K_MAX) -> int:
    """A scalar even degree ``minimum ≤ k ≤ maximum`` as a Python int (numpy / 0-d tensor ints accepted)."""
    n = validate.integer("k", k, minimum, maximum)
    if n % 2:
        raise ValueError(f"Invalid k: {k!r} (must be an even integer in [{minimum}, {maximum}])")
    return n


def _beta(name: str, beta: Any, *, low_open: bool = False) -> float:
    return validate.number(name, beta, 0.0, 1.0, low_open=low_open, high_open=True)


def _pow(base, exponent):
    """``base**exponent`` for floats, numpy arrays and tensors alike (broadcasting boundaries)."""
    if isinstance(base, torch.Tensor):
        return torch.pow(base if base.is_floating_point() else base.to(torch.float64), exponent)
    if isinstance(base, np.ndarray):
        return np.power(base.astype(np.float64), exponent)
    return float(base) ** exponent


def _array_beta2(beta2: Any):
    """β₂ as given (tensor/array, elementwise in [0, 1)) or a float for scalars."""
    validate.in_range("beta2", beta2, 0.0, 1.0)
    if isinstance(beta2, (torch.Tensor, np.ndarray)) and getattr(beta2, "ndim", 0) > 0:
        return beta2
    return _beta("beta2", beta2)


# --------------------------------------------------------------------------- closed forms (Theorem 4.1, 5.7, 6.1)
def linear_rate(k: int, beta2):
    r"""Eq. (10): :math:`x_{t+1}/x_t \to r^\star = \beta_2^{1/(2(k-2))}` in the stable regime.

    ``beta2`` may be a number or an array/tensor of values in [0, 1) (elementwise)."""
    k = _k(k)
    return _pow(_array_beta2(beta2), 1.0 / (2 * (k - 2)))


def log_loss_slope(k: int, beta2: float) -> float:
    r"""Slope of :math:`\ln L` per step, :math:`k\ln\beta_2/(2(k-2))` (natural log)."""
    k = _k(k)
    b2 = _beta("beta2", beta2, low_open=True)
    return k * math.log(b2) / (2 * (k - 2))


def stability_boundary(k: int, beta2):
    r"""Eq. (8): the fixed point is stable for :math:`\beta_1 < \beta_2^{k/(2(k-2))}`; returns that β₁.

    Necessary, not sufficient: below the :func:`flip_boundary` (tiny β₂) the fixed point is unstable too."""
    k = _k(k)
    return _pow(_array_beta2(beta2), k / (2 * (k - 2)))


def existence_boundary(k: int, beta2):
    r"""Eq. (9): the fixed point exists for :math:`\beta_1 < \beta_2^{(k-1)/(2(k-2))}`; returns that β₁."""
    k = _k(k)
    return _pow(_array_beta2(beta2), (k - 1) / (2 * (k - 2)))


def flip_boundary(k: int, beta2):
    r"""[derived] Period-doubling boundary :math:`1+\operatorname{tr}J+\det J=0`:
    :math:`\beta_1 = r^{k-1}\frac{k-2-kr}{k-(k-2)r}` (clipped at 0). The fixed point also needs β₁ above it;
    it is positive only for β₂ < ((k−2)/k)^{2(k−2)}."""
    k = _k(k)
    r = _pow(_array_beta2(beta2), 1.0 / (2 * (k - 2)))
    val = _pow(r, k - 1) * (k - 2 - k * r) / (k - (k - 2) * r)
    if isinstance(val, torch.Tensor):
        return torch.clamp(val, min=0.0)
    if isinstance(val, np.ndarray):
        return np.maximum(val, 0.0)
    return max(0.0, val)


def rmsprop_threshold(k: int) -> float:
    r"""Theorem 5.7: the RMSProp (β₁ = 0) fixed point of :math:`u' = \gamma u(1-u)^{k-2}` is stable iff
    :math:`\beta_2 > ((k-2)/k)^{2(k-2)}`."""
    k = _k(k)
    return ((k - 2) / k) ** (2 * (k - 2))


def rmsprop_two_cycle(k: int, beta2: float) -> tuple[float, float]:
    r"""[derived] Below Theorem 5.7's threshold: the period-2 orbit of :math:`u' = \gamma u(1-u)^{k-2}`,
    γ = β₂^{-1/2}, returned as the two per-step ratios :math:`a = 1-u_a < b = 1-u_b` of :math:`x_{t+1}/x_t`.

    On a 2-cycle :math:`ab = \beta_2^{1/(k-2)}` (multiply the two steps of the map), so a solves
    :math:`a - c = \gamma(1-a)a^{k-1}` with c = β₂^{1/(k−2)}; its roots other than r* = √c are the cycle.
    Raises ``ValueError`` for β₂ at or above the threshold (no 2-cycle born yet) or when none exists.
    """
    k = _k(k)
    b2 = _beta("beta2", beta2, low_open=True)
    thr = rmsprop_threshold(k)
    if not b2 < thr:
        raise ValueError(f"Invalid beta2: {beta2!r} (must be in (0, {thr:.6g}), below Theorem 5.7's threshold)")
    gamma, c = b2**-0.5, b2 ** (1.0 / (k - 2))
    r_star = math.sqrt(c)
    coeffs = np.zeros(k + 1)  # γ a^k − γ a^{k−1} + a − c, highest power first
    coeffs[0], coeffs[1], coeffs[k - 1], coeffs[k] = gamma, -gamma, 1.0, -c
    roots = np.roots(coeffs)
    cand = sorted(float(z.real) for z in roots
                  if abs(z.imag) < 1e-9 and c < z.real < 1 and abs(z.real - r_star) > 1e-7)

    def h(a: float) -> float:
        return gamma * a**k - gamma * a ** (k - 1) + a - c

    def dh(a: float) -> float:
        return k * gamma * a ** (k - 1) - (k - 1) * gamma * a ** (k - 2) + 1

    polished = []
    for a in cand:
        for _ in range(50):  # Newton polish of numpy's companion-matrix roots
            step = h(a) / dh(a)
            a -= step
            if abs(step) < 1e-16:
                break
        polished.append(a)
    pairs = [(a, c / a) for a in polished if a < r_star and any(abs(c / a - b) < 1e-8 for b in polished)]
    if not pairs:
        raise ValueError(f"Invalid beta2: {beta2!r} (no period-2 orbit of the RMSProp map found for k={k})")
    return pairs[-1]  # the pair nearest r*: the orbit born at the threshold


def regime(k: int, beta1: float, beta2: float) -> str:
    """Theorem 6.1's three regimes — ``"stable"`` (I), ``"spike"`` (II), ``"oscillation"`` (III) — plus the
    [derived] ``"period-2"`` sliver: β₁ below Eq. (8) but at or below the flip boundary (:func:`flip_boundary`,
    active only for β₂ < ((k−2)/k)^{2(k−2)}), where the fixed point has lost stability through −1 and the per-step
    ratio settles on a period-2 orbit while x_t still falls geometrically.

    Scalars only (a batched tensor raises ``TypeError``). Eq. (8) and Eq. (9) as the secondary notes state them.
    """
    k = _k(k)
    b1, b2 = _beta("beta1", beta1), _beta("beta2", beta2)
    if b1 < stability_boundary(k, b2):
        flip = flip_boundary(k, b2)
        return "period-2" if flip > 0 and b1 <= flip else "stable"
    if b1 < existence_boundary(k, b2):
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
    angle: float  # |arg eig| ∈ [0, π] in radians per step; the spiral's period is 2π/angle (complex pair only)

    @property
    def period(self) -> float:
        """Steps per turn of the spiral, 2π/|arg eig| (``inf`` when the eigenvalues are real and positive)."""
        return 2 * math.pi / self.angle if self.angle > 0 else math.inf


def fixed_point(k: int, beta1: float, beta2: float, lr: float) -> FixedPoint:
    r"""[derived] Fixed point (r*, ω*, λ*) of the reduced map and its 2×2 Jacobian (scalars only).

    :math:`r^\star=\beta_2^{1/(2(k-2))}`, :math:`\omega^\star=\frac{1-\beta_1}{1-\beta_1 (r^\star)^{-(k-1)}}`,
    :math:`\lambda^\star = (1-r^\star)/(\eta\,\omega^\star)`; trace and determinant are η-free,
    :math:`\det J = \beta_1 (r^\star)^{-k}`. ``stable`` is |eig| < 1 (Eq. 8 *and* the flip condition).
    Raises ``ValueError`` when the fixed point does not exist (β₁ ≥ existence boundary) or is not representable
    in float64.
    """
    k = _k(k)
    b1 = _beta("beta1", beta1)
    b2 = _beta("beta2", beta2, low_open=True)
    eta = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    exist = existence_boundary(k, b2)
    if b1 >= exist:
        raise ValueError(f"Invalid beta1: {beta1!r} (no fixed point: must be < beta2^((k-1)/(2(k-2))) = {exist:.6g})")
    with np.errstate(all="ignore"):
        r64 = np.float64(b2) ** (1.0 / (2 * (k - 2)))
        r = float(r64)
        inv_rk1 = float(np.exp(-(k - 1) * np.log(r64)))  # r^{-(k-1)} in log space
        inv_rk = float(np.exp(-k * np.log(r64)))
        omega = (1 - b1) / (1 - b1 * inv_rk1)
        lam = float(np.float64(1 - r) / (np.float64(eta) * omega))
        a11 = b1 * (k * (1 - r) + 2 * r - 1) * inv_rk
        a22 = (k - 1) - (k - 2) / r
    tr, det = a11 + a22, b1 * inv_rk
    if not all(math.isfinite(v) for v in (r, omega, lam, tr, det)) or omega <= 0:
        raise ValueError(f"Invalid lr/beta2: lr={lr!r}, beta2={beta2!r} (the fixed point is not representable in "
                         "float64; move beta2 away from 0 or lr towards 1)")
    disc = cmath.sqrt(tr * tr - 4 * det)
    e1, e2 = (tr + disc) / 2, (tr - disc) / 2
    rho = max(abs(e1), abs(e2))
    angle = abs(cmath.phase(e1 if abs(e1) >= abs(e2) else e2))
    return FixedPoint(r, omega, lam, tr, det, rho, rho < 1, angle)


def signgd_loss_level(k: int, lr: float) -> float:
    r"""Regime III's oscillation level :math:`L(\eta/2) = (\eta/2)^k/k` (computed in log space)."""
    k = _k(k, 2)
    eta = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    log_level = k * math.log(eta / 2) - math.log(k)
    if log_level > math.log(np.finfo(np.float64).max):
        raise ValueError(f"Invalid lr: {lr!r} ((lr/2)^k/k overflows float64 for k={k})")
    return math.exp(log_level)


def gradient_flow_x(k: int, t, x0: float = 1.0):
    r"""Theorem 5.1: gradient flow :math:`x(t) = (x_0^{-(k-2)} + (k-2)t)^{-1/(k-2)}`, t ≥ 0.

    ``t`` may be a number, array or tensor (the result has its type); evaluated in log space,
    :math:`\ln x = -\tfrac{1}{k-2}\,\mathrm{logaddexp}(-(k-2)\ln x_0,\ \ln((k-2)t))`, so no power overflows.
    """
    k = _k(k)
    validate.in_range("t", t, 0.0, math.inf)
    a, lx0 = k - 2, math.log(validate.number("x0", x0, 0.0, math.inf, low_open=True))
    if isinstance(t, torch.Tensor):
        tt = t if t.is_floating_point() else t.to(torch.float64)
        return torch.exp(-torch.logaddexp(torch.full_like(tt, -a * lx0), math.log(a) + torch.log(tt)) / a)
    with np.errstate(divide="ignore"):
        out = np.exp(-np.logaddexp(-a * lx0, math.log(a) + np.log(np.asarray(t, dtype=np.float64))) / a)
    return float(out) if np.ndim(out) == 0 else out


def gradient_flow_hitting_time(k: int, eps: float, x0: float = 1.0) -> float:
    r"""Time for gradient flow to reach |x| = ε: :math:`(\varepsilon^{-(k-2)}-x_0^{-(k-2)})/(k-2)` (0 if ε ≥ x₀)."""
    k = _k(k)
    e = validate.number("eps", eps, 0.0, math.inf, low_open=True)
    x = validate.number("x0", x0, 0.0, math.inf, low_open=True)
    if e >= x:
        return 0.0
    a = k - 2
    # ε^{-a}(1 − (ε/x₀)^a)/a, in log space: ln T = −a ln ε + log1p(−(ε/x₀)^a) − ln a
    log_t = -a * math.log(e) + math.log1p(-math.exp(a * (math.log(e) - math.log(x)))) - math.log(a)
    if log_t > math.log(np.finfo(np.float64).max):
        raise ValueError(f"Invalid eps: {eps!r} (the hitting time overflows float64 for k={k}; raise eps)")
    return math.exp(log_t)


def adam_steps_per_efold(k: int, beta2: float) -> float:
    r"""Remark 5.8 [derived]: Adam's steps per e-fold of ε in the stable regime — per unit of
    :math:`\ln(1/\varepsilon)` — :math:`2(k-2)/(-\ln\beta_2)`. Multiply by ln 10 for steps per decade."""
    k = _k(k)
    b2 = _beta("beta2", beta2, low_open=True)
    return 2 * (k - 2) / (-math.log(b2))


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
    r"""[derived] The reduced map's fixed point and Jacobian, executed for a given even 4 ≤ k ≤ 12.

    Writing β₂ = r^{2(k−2)} (so √β₂ = r^{k−2}) and R = 1 − ηωλ, the x → 0 reduced map is

    .. math:: \omega' = \beta_1\omega/R^{k-1} + 1-\beta_1,\qquad \lambda' = \lambda R^{k-2}/r^{k-2}.
    """
    k = _k(k, maximum=K_MAX_SYMBOLIC)
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
    k = _k(k, maximum=K_MAX_SYMBOLIC)
    u, g, b2 = sp.symbols("u gamma beta_2", positive=True)
    f = g * u * (1 - u) ** (k - 2)
    u_star = 1 - g ** sp.Rational(-1, k - 2)
    assert sp.simplify(f.subs(u, u_star) - u_star) == 0
    mult = sp.simplify(sp.diff(f, u).subs(u, u_star))
    g_crit = sp.solve(sp.Eq(mult, -1), g)
    threshold = sp.nsimplify(sp.simplify((1 / g_crit[0]) ** 2))  # β₂ = γ^{-2}
    return u_star, mult, threshold


def derive_gradient_flow(k: int) -> tuple[sp.Expr, sp.Expr]:
    r"""[derived] Solve :math:`\dot x = -x^{k-1}`, x(0) = x₀ > 0, by separation of variables
    (:math:`\int_{x_0}^{x} s^{-(k-1)}\,ds = -t`); return (x(t), time to reach ε). 4 ≤ k ≤ 12."""
    k = _k(k, maximum=K_MAX_SYMBOLIC)
    t, x0, eps, s, X = sp.symbols("t x_0 varepsilon s X", positive=True)
    sols = sp.solve(sp.Eq(sp.integrate(s ** (-(k - 1)), (s, x0, X)), -t), X)
    xt = sp.simplify(sols[0])
    assert sp.simplify(sp.diff(xt, t) + xt ** (k - 1)) == 0 and sp.simplify(xt.subs(t, 0) - x0) == 0
    hit = sp.solve(sp.Eq(xt ** (-(k - 2)), eps ** (-(k - 2))), t)[0]
    return xt, sp.simplify(hit)


def derive_exponential_schedule(k: int) -> sp.Expr:
    r"""[derived] Lemma 5.5: :math:`\dot x = -c e^{\alpha t} x^{k-1}` ⇒ :math:`\lim \ln x / t = -\alpha/(k-2)`."""
    k = _k(k, maximum=K_MAX_SYMBOLIC)
    t, c, a, x0 = sp.symbols("t c alpha x_0", positive=True)
    s = sp.Symbol("s", positive=True)
    # separable: x^{-(k-2)} = x0^{-(k-2)} + (k-2) ∫ c e^{α s} ds
    inv = x0 ** (-(k - 2)) + (k - 2) * sp.integrate(c * sp.exp(a * s), (s, 0, t))
    log_x = -sp.log(inv) / (k - 2)
    return sp.limit(log_x / t, t, sp.oo)
