"""Closed forms and executed derivations for SAM at saddles (Kim et al., arXiv 2301.06308).

Statements are [secondary] (third-party notes of the paper; its full text was not readable); the algebra is
[derived] here with sympy. Symbols: λ a Hessian eigenvalue at the saddle d (λ₁ < 0 the escape direction),
ρ the SAM radius, η the learning rate, B the batch size, γ the momentum.

Two drift factors appear in the paper (an internal inconsistency the chapter resolves):

* ``"linear"`` — SAM's update direction ∇ℓ(w + ρ∇ℓ(w)) linearised at d is (H + ρH²)w: eigenvalues
  λ(1 + ρλ). This is Theorem 1's factor and what the SAM *algorithm* does.
* ``"full"`` — the gradient of the SAM *objective* ℓ(w + ρ∇ℓ(w)) is (I + ρH)∇ℓ(w^p) = H(I + ρH)²w:
  eigenvalues λ(1 + ρλ)². This is the factor in Theorem 2's σ_j²(t) and gives Corollary 1's "2".
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..device import to_numpy

__all__ = [
    "DRIFTS",
    "attractor_threshold",
    "growth_factor",
    "drift_rate",
    "sam_variance",
    "discrete_variance",
    "corollary1_gap",
    "escape_step_prediction",
    "LinearisedMap",
    "derive_linearised_map",
    "BealeCriticalPoint",
    "beale_critical_points",
    "beale_symbols",
    "OUVariance",
    "derive_ou_variance",
    "Corollary1",
    "derive_corollary1",
    "derive_theorem3_reduction",
]

DRIFTS = ("linear", "full")
_POWER = {"linear": 1, "full": 2}


def _device(*vals) -> torch.device:
    """The device of the first tensor argument that is not on the CPU (else the CPU): outputs follow inputs."""
    for v in vals:
        if isinstance(v, torch.Tensor) and v.device.type != "cpu":
            return v.device
    return torch.device("cpu")


def _tensor(v, device: torch.device | None = None) -> torch.Tensor:
    t = validate.finite_tensor("value", v) if not isinstance(v, torch.Tensor) else v
    return t.to(device or t.device, torch.float64)


def _finite(name: str, out: torch.Tensor, lower: str) -> torch.Tensor:
    if not bool(torch.isfinite(out).all()):
        raise ValueError(f"Invalid arguments to {name}: the result overflows float64 (lower {lower})")
    return out


# ----------------------------------------------------------------------------------------------- closed forms
def attractor_threshold(lambda_min):
    r"""Theorem 1: an index-1 saddle with :math:`\lambda_1<0` attracts (unnormalised) SAM iff
    :math:`\rho > -1/\lambda_1`; returns :math:`-1/\lambda_1` (λ_min < 0 required; a float for a number, a
    tensor for a tensor)."""
    validate.in_range("lambda_min", lambda_min, -math.inf, 0.0)
    if isinstance(lambda_min, torch.Tensor):
        return _finite("attractor_threshold", -_tensor(lambda_min).reciprocal(), "|lambda_min|'s reciprocal")
    out = -1.0 / validate.number("lambda_min", lambda_min, -math.inf, 0.0, high_open=True)
    if not math.isfinite(out):
        raise ValueError(f"Invalid lambda_min: {lambda_min!r} (−1/λ₁ overflows float64)")
    return out


def drift_rate(lam, rho, drift: str = "linear"):
    r""":math:`a = \lambda(1+\rho\lambda)^p` with p = 1 (``"linear"``) or 2 (``"full"``); w_j' = −a w_j."""
    validate.one_of("drift", drift, DRIFTS)
    validate.in_range("lam", lam, -math.inf, math.inf)
    validate.in_range("rho", rho, 0.0, math.inf)
    dev = _device(lam, rho)
    lam_t, rho_t = _tensor(lam, dev), _tensor(rho, dev)
    return _finite("drift_rate", lam_t * (1 + rho_t * lam_t) ** _POWER[drift], "rho or lam")


def growth_factor(lam, rho, lr, drift: str = "linear"):
    r"""Per-step factor of the linearised (unnormalised) SAM map along eigen-direction λ:
    :math:`1-\eta\lambda(1+\rho\lambda)` (``"linear"``; the algorithm). |factor| > 1 escapes, < 1 is
    captured."""
    validate.positive("lr", lr)
    dev = _device(lam, rho, lr)
    a = drift_rate(lam, rho, drift).to(dev)
    return _finite("growth_factor", 1 - _tensor(lr, dev) * a, "lr")


def sam_variance(t, lam, rho, lr, batch, drift: str = "linear"):
    r"""Theorem 2: variance along eigen-direction λ of the SAM diffusion started at the saddle,

    .. math:: \sigma^2(t) = \frac{\eta\,|\lambda|}{2B\,a}\bigl(1-e^{-2at}\bigr),\quad a=\lambda(1+\rho\lambda)^p,

    with p = 2 as printed in the paper (``drift="full"``) or p = 1 (``"linear"``, what the SAM algorithm's
    linearisation gives). Continuous time t = (steps)·η. At a = 0 it is the limit η|λ|t/B. Broadcasts; the
    result is on the device of the tensor arguments.
    """
    validate.in_range("t", t, 0.0, math.inf)
    validate.positive("lr", lr)
    validate.positive("batch", batch)
    dev = _device(t, lam, rho, lr, batch)
    a = drift_rate(lam, rho, drift).to(dev)
    t_, lam_t = _tensor(t, dev), _tensor(lam, dev)
    diff = _tensor(lr, dev) * lam_t.abs() / _tensor(batch, dev)  # D = η|λ|/B (Fisher approximation C ≈ |H|/B)
    safe = torch.where(a == 0, torch.ones_like(a), a)
    out = torch.where(a == 0, diff * t_, -diff * torch.expm1(-2 * safe * t_) / (2 * safe))
    return _finite("sam_variance", out, "t (the escape direction grows like exp(2|a|t))")


def discrete_variance(k, lam, rho, lr, batch, drift: str = "linear"):
    r"""[derived] Exact variance after k steps of w ← (1 − ηa)w − η ξ, ξ ~ N(0, |λ|/B), w₀ = 0:
    :math:`\eta^2\frac{|\lambda|}{B}\sum_{i<k}(1-\eta a)^{2i}` — the discretisation the SDE approximates."""
    validate.in_range("k", k, 0.0, math.inf)
    validate.positive("lr", lr)
    validate.positive("batch", batch)
    dev = _device(k, lam, rho, lr, batch)
    a = drift_rate(lam, rho, drift).to(dev)
    lr_t, k_ = _tensor(lr, dev), _tensor(k, dev)
    q = (1 - lr_t * a) ** 2
    geo = torch.where(q == 1, k_ * torch.ones_like(q), (1 - q**k_) / torch.where(q == 1, 2.0, 1 - q))
    out = lr_t**2 * _tensor(lam, dev).abs() / _tensor(batch, dev) * geo
    return _finite("discrete_variance", out, "k")


def corollary1_gap(t, lam, rho, lr, batch, drift: str = "full"):
    r"""Corollary 1's leading term of :math:`\Delta_{SGD}-\Delta_{SAM}`: :math:`c\,\eta t^2|\lambda|^3\rho/B`
    with c = 2 for the paper's (``"full"``) drift and c = 1 for the ``"linear"`` one (see
    :func:`derive_corollary1`)."""
    validate.one_of("drift", drift, DRIFTS)
    validate.in_range("t", t, 0.0, math.inf)
    validate.in_range("lam", lam, -math.inf, math.inf)
    validate.in_range("rho", rho, 0.0, math.inf)
    validate.positive("lr", lr)
    validate.positive("batch", batch)
    dev = _device(t, lam, rho, lr, batch)
    c = 2.0 if drift == "full" else 1.0
    out = c * _tensor(lr, dev) * _tensor(t, dev) ** 2 * _tensor(lam, dev).abs() ** 3 * _tensor(rho, dev) / \
        _tensor(batch, dev)
    return _finite("corollary1_gap", out, "t, lam or rho")


def escape_step_prediction(lam, rho, lr, batch, momentum, radius, steps: int, quantile: float = 0.5):
    r"""[derived, approximation] Escape step along λ < 0 for noisy unnormalised heavy-ball SAM.

    Along the eigen-direction the algorithm is linear: :math:`b_{k+1}=\gamma b_k + a w_k + \sigma\xi_k`,
    :math:`w_{k+1}=w_k-\eta b_{k+1}` with a = λ(1+ρλ) and σ² = |λ|/B, started at w = b = 0. Its covariance
    propagates exactly (2 × 2, below). Once the unstable mode dominates, :math:`|w_k|` grows monotonically, so
    the ``quantile`` of the first-passage step to ``radius`` R is approximated by the first k with
    :math:`z\,\sqrt{\mathrm{Var}\,w_k}\ge R`, z the (1−q)-quantile of |N(0,1)|. Returns −1 where that
    does not happen within ``steps`` (e.g. ρ past the attractor threshold), as :func:`escape_steps` does.
    Broadcasts over the arguments; the recursion runs in numpy (≈ 1 µs an op) and stops once every cell has crossed.
    """
    validate.in_range("lam", lam, -math.inf, 0.0)
    validate.in_range("rho", rho, 0.0, math.inf)
    validate.positive("lr", lr)
    validate.positive("batch", batch)
    validate.in_range("momentum", momentum, 0.0, 1.0)
    validate.positive("radius", radius)
    steps = validate.integer("steps", steps, 1, 10**7)
    q = validate.number("quantile", quantile, 0.0, 1.0, low_open=True, high_open=True)
    dev = _device(lam, rho, lr, batch, momentum, radius)
    a, g, eta, s2, rad = np.broadcast_arrays(*(to_numpy(_tensor(v, torch.device("cpu"))) for v in (
        drift_rate(lam, rho, "linear"), momentum, lr, _tensor(lam).abs() / _tensor(batch), radius)))
    validate.memory_guard(8.0 * a.size * 12, lower="the number of broadcast cells")
    al, be = 1 - eta * a, -eta * g
    pww, pwb, pbb = (np.zeros(a.shape) for _ in range(3))
    zq = math.sqrt(2.0) * float(torch.erfinv(torch.tensor(1.0 - q, dtype=torch.float64)))
    target = (rad / zq) ** 2
    hit = np.full(a.shape, math.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(1, steps + 1):
            pww, pwb, pbb = (al * al * pww + 2 * al * be * pwb + be * be * pbb + eta * eta * s2,
                             al * a * pww + (al * g + be * a) * pwb + be * g * pbb - eta * s2,
                             a * a * pww + 2 * a * g * pwb + g * g * pbb + s2)
            new = np.isinf(hit) & (pww >= target)
            if new.any():
                hit[new] = k
                if not np.isinf(hit).any():
                    break
    return torch.as_tensor(np.where(np.isinf(hit), -1.0, hit), dtype=torch.float64).to(dev)


# ---------------------------------------------------------------------------------------------- derivations
class LinearisedMap(NamedTuple):
    """Sympy results for the SAM map on ℓ = λw²/2 (one eigen-direction of the saddle's Hessian)."""

    factor_linear: sp.Expr  # w_{t+1}/w_t for the SAM algorithm
    factor_full: sp.Expr  # same for descent on the SAM objective's gradient
    threshold: sp.Expr  # the ρ where the linear drift changes sign (λ < 0)
    attracts_above: bool  # for λ < 0, ρ > threshold makes the drift positive


def derive_linearised_map() -> LinearisedMap:
    """Execute Theorem 1's linearisation: perturb, take the gradient at w^p, step; solve for the threshold."""
    w, lam, rho, eta = sp.symbols("w lambda rho eta", real=True)
    grad = sp.Lambda(w, lam * w)  # ∇ℓ for ℓ = λw²/2
    wp = w + rho * grad(w)
    factor_linear = sp.factor(sp.expand((w - eta * grad(wp)) / w))
    # gradient of the SAM objective ℓ(w + ρ∇ℓ(w)) by the chain rule, computed, not assumed
    objective = lam * wp**2 / 2
    factor_full = sp.factor(sp.expand((w - eta * sp.diff(objective, w)) / w))
    drift = sp.simplify((1 - factor_linear) / eta)
    (threshold,) = sp.solve(sp.Eq(drift / lam, 0), rho)
    lam_neg = sp.Symbol("l", negative=True)
    above = drift.subs({lam: lam_neg, rho: -1 / lam_neg + 1})  # one unit past the threshold
    return LinearisedMap(factor_linear, factor_full, threshold, bool(sp.simplify(above) > 0))


class BealeCriticalPoint(NamedTuple):
    """A real critical point of Beale's function with its value and Hessian eigenvalues (float)."""

    x: float
    y: float
    f: float
    eigenvalues: tuple[float, float]
    kind: str  # "minimum", "saddle", "maximum" or "degenerate"


def beale_symbols():
    """(x, y, f) — Beale's function as a sympy expression with exact coefficients."""
    x, y = sp.symbols("x y", real=True)
    c = (sp.Rational(3, 2), sp.Rational(9, 4), sp.Rational(21, 8))
    return x, y, sum((ci - x + x * y**i) ** 2 for i, ci in enumerate(c, start=1))


def beale_critical_points() -> list[BealeCriticalPoint]:
    r"""All real critical points of Beale's function, by elimination (no numerical search).

    :math:`\partial_y f = x\,P(x,y)` with P linear in x. On x = 0, :math:`\partial_x f` is a cubic in y whose
    only real root is y = 1 (the saddle). Off x = 0, P = 0 gives x = x(y), and substituting into ∂ₓf leaves a
    univariate polynomial in y whose real roots sympy isolates exactly.
    """
    x, y, f = beale_symbols()
    fx, fy = sp.diff(f, x), sp.diff(f, y)
    hess = sp.hessian(f, (x, y))
    on_axis = sp.real_roots(sp.Poly(fx.subs(x, 0), y))
    pts: list[tuple[sp.Expr, sp.Expr]] = [(sp.Integer(0), r) for r in on_axis]
    p = sp.cancel(fy / x)
    num, den = sp.fraction(sp.together(sp.solve(p, x)[0]))
    poly = sp.Poly(sp.numer(sp.together(fx.subs(x, num / den))), y)
    for r in sp.real_roots(poly):
        rv = sp.nsimplify(r) if r.is_rational else r
        if sp.N(den.subs(y, rv)) != 0:
            xv = sp.N((num / den).subs(y, rv), 30)
            pts.append((xv, sp.N(rv, 30)))
    out, seen = [], set()
    for xv, yv in pts:
        key = (round(float(xv), 9), round(float(yv), 9))
        if key in seen or not (abs(sp.N(fx.subs({x: xv, y: yv}))) < 1e-12):
            continue
        seen.add(key)
        h = np.array(hess.subs({x: xv, y: yv}).evalf(30), dtype=np.float64)
        ev = [float(e) for e in np.linalg.eigvalsh(h)]
        kind = ("minimum" if ev[0] > 1e-12 else "maximum" if ev[1] < -1e-12
                else "saddle" if ev[0] < -1e-12 and ev[1] > 1e-12 else "degenerate")
        out.append(BealeCriticalPoint(float(xv), float(yv), float(f.subs({x: xv, y: yv})), tuple(ev), kind))
    return sorted(out, key=lambda c: (c.f, c.x))


class OUVariance(NamedTuple):
    """Solution of the moment ODE (σ²)' = −2aσ² + D, σ²(0) = 0, and the paper's formula it reproduces."""

    solution: sp.Expr
    matches_theorem2_full: bool  # with a = λ(1+ρλ)², D = η|λ|/B
    stationary: sp.Expr  # t → ∞ for a > 0


def derive_ou_variance() -> OUVariance:
    """Solve the scalar Ornstein–Uhlenbeck variance ODE of Theorem 2's SDE (dw = −a w dt + √D dW)."""
    t = sp.Symbol("t", nonnegative=True)
    a, D = sp.symbols("a D", positive=True)
    s = sp.Function("s")
    sol = sp.dsolve(sp.Eq(s(t).diff(t), -2 * a * s(t) + D), s(t), ics={s(0): 0}).rhs
    lam, rho, eta, B = sp.symbols("lambda rho eta B", real=True)
    a_full = lam * (1 + rho * lam) ** 2
    paper = eta * sp.Abs(lam) / (2 * B * a_full) * (1 - sp.exp(-2 * a_full * t))
    ours = sol.subs({a: lam * (1 + rho * lam) ** 2, D: eta * sp.Abs(lam) / B}, simultaneous=True)
    return OUVariance(sp.simplify(sol), sp.simplify(ours - paper) == 0, sp.limit(sol, t, sp.oo))


class Corollary1(NamedTuple):
    """t² coefficient of Δ_SGD − Δ_SAM, its ratio to η|λ|³ρ/B, and the symbols (λ < 0, ρ > 0) used."""

    coefficient: sp.Expr
    ratio: sp.Expr
    lam: sp.Symbol
    rho: sp.Symbol


def derive_corollary1(drift: str) -> Corollary1:
    r"""Series in t of :math:`\Delta_{SGD}-\Delta_{SAM}` (each the σ²(t) of :func:`sam_variance`) to O(t³).

    Returns the t² coefficient and coefficient / (η|λ|³ρ/B) for λ < 0 (the escape direction): the second is
    2 + ρλ for ``"full"`` (Corollary 1's 2 at leading order in ρ) and exactly 1 for ``"linear"``.
    """
    validate.one_of("drift", drift, DRIFTS)
    t, eta, B, rho = sp.symbols("t eta B rho", positive=True)
    lam = sp.Symbol("lambda", negative=True)

    def var(r):
        a = lam * (1 + r * lam) ** _POWER[drift]
        return eta * sp.Abs(lam) / (2 * B * a) * (1 - sp.exp(-2 * a * t))

    gap = sp.series(var(0) - var(rho), t, 0, 3).removeO()
    coef = sp.factor(sp.expand(gap).coeff(t, 2))
    return Corollary1(coef, sp.simplify(coef / (eta * sp.Abs(lam) ** 3 * rho / B)), lam, rho)


def derive_theorem3_reduction() -> bool:
    r"""At γ = 0, Theorem 3's second term :math:`C_3(1-e^{-C_4/(1-\gamma)})/((1-\gamma)B)` equals σ²(t) of
    Theorem 2 (full drift) — a consistency check of the [secondary] transcription."""
    lam, rho, eta, B, t, g = sp.symbols("lambda rho eta B t gamma", real=True)
    c3 = eta * sp.Abs(lam) / (2 * lam * (1 + rho * lam) ** 2)
    c4 = 2 * lam * (1 + rho * lam) ** 2 * t
    term = c3 * (1 - sp.exp(-c4 / (1 - g))) / ((1 - g) * B)
    a_full = lam * (1 + rho * lam) ** 2
    thm2 = eta * sp.Abs(lam) / (2 * B * a_full) * (1 - sp.exp(-2 * a_full * t))
    return sp.simplify(term.subs(g, 0) - thm2) == 0
