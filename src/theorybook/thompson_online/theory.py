r"""Closed forms and executed derivations: Thompson Sampling as regularised greed (Qu, Namkoong & Zeevi,
arXiv 2510.07208).

Only the paper's abstract, a TL;DR and one figure caption could be read. The identity below is **our
reconstruction** of the mechanism the abstract names ("TS has the same online-optimisation form with a
biserial-covariance regulariser ν̃"); the paper's exact ν̃ and ℛ² may differ.

One-armed Gaussian case: the posterior gap between the unknown arm and the known arm (mean 0) is
:math:`D = \mu_1 - \mu_0 \sim \mathcal N(m, s^2)`; a policy pulls the unknown arm with probability x.

* instantaneous Bayesian regret :math:`r(x) = \mathbb E[D^+] - x\,m`, with
  :math:`\mathbb E[D^+] = m\Phi(m/s) + s\varphi(m/s)`;
* TS pulls with :math:`x_{TS} = P(D > 0) = \Phi(m/s)`;
* [reconstruction] :math:`x_{TS} = \arg\max_{x\in[0,1]} \{x\,m + s\,\varphi(\Phi^{-1}(x))\}` — greedy
  (:math:`x\,m`) plus the regulariser :math:`s\varphi(\Phi^{-1}(x))`, the largest covariance a Bernoulli(x)
  action can have with D;
* TS's instantaneous regret equals the biserial covariance :math:`\mathrm{Cov}(\mathbf 1\{D>0\}, D) = s\varphi(m/s)`.

Numeric closed forms accept Python/numpy scalars (→ ``float``) or tensors (→ tensor, broadcast); the sympy
derivations (``derive_*``) are what the chapter executes.
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np
import sympy as sp
import torch
from scipy import special

from .. import validate

__all__ = [
    "ts_probability",
    "regularised_objective",
    "biserial_covariance",
    "expected_positive_part",
    "posterior_sd",
    "predictive_sd",
    "numerical_argmax",
    "covariance_by_quadrature",
    "monte_carlo_covariance",
    "two_step_ts_regret",
    "FirstOrderDerivation",
    "derive_first_order",
    "derive_positive_part",
    "derive_covariances",
    "derive_predictive_variance",
    "derive_two_step_ts",
]

_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _tensors(**named: Any) -> tuple[list[torch.Tensor], bool]:
    """Validate finite real inputs; return float64 tensors on one device (the first tensor input's, else CPU) and
    whether the result should be returned as a Python float (no tensor/array among the inputs)."""
    as_float = not any(isinstance(v, (torch.Tensor, np.ndarray)) for v in named.values())
    dev = next((v.device for v in named.values() if isinstance(v, torch.Tensor)), torch.device("cpu"))
    ts = [validate.finite_tensor(k, v).to(dev, torch.float64) for k, v in named.items()]
    try:
        torch.broadcast_shapes(*(t.shape for t in ts))
    except RuntimeError as err:
        shapes = ", ".join(f"{k} {tuple(t.shape)}" for k, t in zip(named, ts, strict=True))
        raise ValueError(f"Invalid shapes: {shapes} (must broadcast against each other)") from err
    return ts, as_float


def _finish(t: torch.Tensor, as_float: bool):
    return float(t) if as_float and t.numel() == 1 else t


def _Phi(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * torch.erfc(-z / _SQRT2)


def _phi(z: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * z * z) * _INV_SQRT_2PI


# --------------------------------------------------------------------------------------------- closed forms
def ts_probability(m, s):
    r"""TS's pull probability :math:`x_{TS} = P(D > 0) = \Phi(m/s)` for a posterior gap :math:`D\sim\mathcal N(m, s^2)`.

    ``s`` must be > 0 (elementwise); broadcasts over tensors.
    """
    (mt, st), f = _tensors(m=m, s=s)
    validate.positive("s", st)
    return _finish(_Phi(mt / st), f)


def regularised_objective(x, m, s):
    r"""[reconstruction] The regularised greedy objective :math:`J(x) = x\,m + s\,\varphi(\Phi^{-1}(x))`, x ∈ [0, 1].

    Its maximiser is :math:`\Phi(m/s)` (first-order condition :math:`m = s\,\Phi^{-1}(x)`); at the ends
    :math:`\varphi(\Phi^{-1}(0)) = \varphi(\Phi^{-1}(1)) = 0`.
    """
    (xt, mt, st), f = _tensors(x=x, m=m, s=s)
    validate.in_range("x", xt, 0.0, 1.0, high_open=False)
    validate.positive("s", st)
    q = torch.special.ndtri(xt)
    reg = torch.where(torch.isfinite(q), _phi(torch.where(torch.isfinite(q), q, torch.zeros_like(q))),
                      torch.zeros_like(q))
    return _finish(xt * mt + st * reg, f)


def biserial_covariance(m, s):
    r"""[reconstruction] TS's regulariser at its own choice, :math:`\tilde\nu = \mathrm{Cov}(\mathbf 1\{D>0\}, D)
    = s\,\varphi(m/s)` — also TS's instantaneous Bayesian regret :math:`\mathbb E[D^+] - \Phi(m/s)\,m`."""
    (mt, st), f = _tensors(m=m, s=s)
    validate.positive("s", st)
    return _finish(st * _phi(mt / st), f)


def expected_positive_part(u, sigma):
    r""":math:`\mathbb E[(u + \sigma Z)^+] = u\,\Phi(u/\sigma) + \sigma\,\varphi(u/\sigma)`, Z ~ N(0, 1), σ > 0."""
    (ut, st), f = _tensors(u=u, sigma=sigma)
    validate.positive("sigma", st)
    return _finish(ut * _Phi(ut / st) + st * _phi(ut / st), f)


def posterior_sd(n: int, prior_var: float = 1.0, noise_var: float = 1.0) -> float:
    r"""Posterior s.d. of the unknown arm's mean after n pulls: :math:`s_n = (1/\sigma_0^2 + n/\sigma^2)^{-1/2}`."""
    n = validate.integer("n", n, 0)
    v0 = validate.number("prior_var", prior_var, 0.0, math.inf, low_open=True)
    v = validate.number("noise_var", noise_var, 0.0, math.inf, low_open=True)
    return (1.0 / v0 + n / v) ** -0.5


def predictive_sd(n: int, prior_var: float = 1.0, noise_var: float = 1.0) -> float:
    r"""S.d. of the posterior-mean step on the (n+1)-th pull, :math:`\delta_n = \sqrt{s_n^2 - s_{n+1}^2}`:
    before the reward is seen, :math:`m_{n+1} - m_n \sim \mathcal N(0, \delta_n^2)`."""
    a = posterior_sd(n, prior_var, noise_var)
    b = posterior_sd(n + 1, prior_var, noise_var)
    return math.sqrt(max(a * a - b * b, 0.0))


def numerical_argmax(m, s, iters: int = 90) -> np.ndarray:
    r"""Maximise :math:`x\,m + s\,\varphi(\Phi^{-1}(x))` over [0, 1] by golden-section search (vectorised numpy,
    scipy's ``ndtri``) — a numerical method independent of the closed form :math:`\Phi(m/s)`.

    ``m`` and ``s`` broadcast (s > 0); returns a numpy array of maximisers. The objective is strictly concave
    (second derivative :math:`-s/\varphi(\Phi^{-1}(x))`), so the search brackets the unique maximiser; after
    ``iters`` steps the bracket is :math:`0.618^{\,iters}` wide.
    """
    mt = validate.finite_tensor("m", m)
    st = validate.finite_tensor("s", s)
    validate.positive("s", st)
    iters = validate.integer("iters", iters, 1, 200)
    mm, ss = np.broadcast_arrays(np.asarray(mt.detach().cpu().tolist(), dtype=float),
                                 np.asarray(st.detach().cpu().tolist(), dtype=float))
    validate.memory_guard(mm.size * 8 * 8, lower="the size of m and s")

    def f(x):
        q = special.ndtri(x)
        with np.errstate(invalid="ignore", over="ignore"):
            reg = np.where(np.isfinite(q), np.exp(-0.5 * np.where(np.isfinite(q), q, 0.0) ** 2) * _INV_SQRT_2PI, 0.0)
        return x * mm + ss * reg

    g = (math.sqrt(5.0) - 1.0) / 2.0
    lo, hi = np.zeros(mm.shape), np.ones(mm.shape)
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(iters):
        left = fa > fb  # the maximiser lies in [lo, b], else in [a, hi]
        hi = np.where(left, b, hi)
        lo = np.where(left, lo, a)
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        fa, fb = f(a), f(b)
    return 0.5 * (lo + hi)


def covariance_by_quadrature(m: float, s: float) -> float:
    r""":math:`\mathrm{Cov}(\mathbf 1\{D>0\}, D) = \int_0^\infty (d - m)\,p_{\mathcal N(m, s^2)}(d)\,dd` by adaptive
    quadrature (``scipy.integrate.quad`` with scipy's normal density) — independent of the closed form
    :math:`s\varphi(m/s)`."""
    from scipy import integrate, stats

    m = validate.number("m", m)
    s = validate.number("s", s, 0.0, math.inf, low_open=True)
    val, _ = integrate.quad(lambda d: (d - m) * stats.norm.pdf(d, loc=m, scale=s), 0.0, math.inf,
                            epsabs=1e-13, epsrel=1e-12, limit=200)
    return float(val)


def monte_carlo_covariance(m: float, s: float, draws: int = 1_000_000, seed: int = 0) -> tuple[float, float]:
    r"""Monte Carlo estimate of :math:`\mathrm{Cov}(\mathbf 1\{D>0\}, D)` from ``draws`` samples of
    :math:`D \sim \mathcal N(m, s^2)`; returns (estimate, standard error). Shown in the chapter, not asserted."""
    m = validate.number("m", m)
    s = validate.number("s", s, 0.0, math.inf, low_open=True)
    draws = validate.integer("draws", draws, 2)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    validate.memory_guard(4.0 * 8 * draws, lower="draws")
    gen = torch.Generator().manual_seed(seed)
    d = m + s * torch.randn(draws, generator=gen, dtype=torch.float64)
    prod = (d > 0).to(torch.float64) * (d - d.mean())
    return float(prod.mean()) * draws / (draws - 1), float(prod.std() / math.sqrt(draws))


def two_step_ts_regret(prior_var: float = 1.0, noise_var: float = 1.0) -> float:
    r"""[derived] TS's exact two-step Bayesian regret from the prior :math:`\mathcal N(0, \sigma_0^2)`:
    :math:`R_2 = \tfrac{3}{2}\,\sigma_0\varphi(0) + s_1^2\varphi(0)/(2\sigma_0)` with
    :math:`s_1^2 = (1/\sigma_0^2 + 1/\sigma^2)^{-1}`; :math:`7/(4\sqrt{2\pi})` at :math:`\sigma_0^2 = \sigma^2 = 1`."""
    v0 = validate.number("prior_var", prior_var, 0.0, math.inf, low_open=True)
    s1 = posterior_sd(1, prior_var, noise_var)
    s0 = math.sqrt(v0)
    return 1.5 * s0 * _INV_SQRT_2PI + s1 * s1 * _INV_SQRT_2PI / (2.0 * s0)


# --------------------------------------------------------------------------------------------- sympy derivations
_q, _z = sp.symbols("q z", real=True)
_m, _u = sp.symbols("m u", real=True)
_s, _sig = sp.symbols("s sigma", positive=True)


def _sym_Phi(x):
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


def _sym_phi(x):
    return sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)


class FirstOrderDerivation(NamedTuple):
    """The regularised objective in the coordinate q = Φ⁻¹(x), and what sympy finds."""

    objective: sp.Expr  # J as a function of q: m Φ(q) + s φ(q)
    dJ_dx: sp.Expr  # first derivative in x (chain rule through x = Φ(q)): m − s q
    d2J_dx2: sp.Expr  # second derivative in x: −s/φ(q)
    critical_q: list  # solutions of dJ/dx = 0: [m/s]
    second_derivative_residual: sp.Expr  # d2J/dx2 + s/φ(q), simplified (0)
    value_minus_expected_positive_part: sp.Expr  # J(q*) − E[D⁺], simplified (0)


def derive_first_order() -> FirstOrderDerivation:
    r"""[reconstruction] Differentiate :math:`J(x) = x\,m + s\varphi(\Phi^{-1}(x))` through :math:`x = \Phi(q)`:
    :math:`J'(x) = m - s\,q`, :math:`J''(x) = -s/\varphi(q) < 0`, unique critical point :math:`q = m/s`
    (:math:`x = \Phi(m/s)`), and :math:`J(\Phi(m/s)) = \mathbb E[D^+]` computed by integration."""
    J = _m * _sym_Phi(_q) + _s * _sym_phi(_q)
    dxdq = sp.diff(_sym_Phi(_q), _q)
    dJ = sp.simplify(sp.diff(J, _q) / dxdq)
    d2J = sp.simplify(sp.diff(dJ, _q) / dxdq)
    crit = sp.solve(sp.Eq(dJ, 0), _q)
    resid2 = sp.simplify(d2J + _s / _sym_phi(_q))
    e_pos = derive_positive_part()[0].subs({_u: _m, _sig: _s})
    val = sp.simplify(sp.expand(J.subs(_q, _m / _s) - e_pos).rewrite(sp.erf))
    return FirstOrderDerivation(J, dJ, d2J, crit, resid2, val)


@functools.lru_cache(maxsize=1)
def derive_positive_part() -> tuple[sp.Expr, sp.Expr]:
    r""":math:`\mathbb E[(u + \sigma Z)^+]` by integration against the normal density, and its difference from
    :math:`u\Phi(u/\sigma) + \sigma\varphi(u/\sigma)` (simplified; 0)."""
    integral = sp.integrate((_u + _sig * _z) * _sym_phi(_z), (_z, -_u / _sig, sp.oo))
    closed = _u * _sym_Phi(_u / _sig) + _sig * _sym_phi(_u / _sig)
    return integral, sp.simplify(sp.expand(integral - closed).rewrite(sp.erf))


def derive_covariances() -> tuple[sp.Expr, sp.Expr]:
    r"""Residuals (0 when the claims hold) of

    * :math:`\mathrm{Cov}(\mathbf 1\{D>0\}, D) = \mathbb E[D\,\mathbf 1\{D>0\}] - P(D>0)\,m = s\varphi(m/s)`,
      with :math:`D = m + sZ` integrated over :math:`Z > -m/s`;
    * the largest covariance of a Bernoulli(x) action with D (the action is 1 on D's top-x quantile,
      :math:`Z > \Phi^{-1}(1-x) = -q`):
      :math:`s\int_{-q}^\infty z\varphi(z)\,dz = s\varphi(q) = s\varphi(\Phi^{-1}(x))`.
    """
    e_d_pos = sp.integrate((_m + _s * _z) * _sym_phi(_z), (_z, -_m / _s, sp.oo))
    cov = e_d_pos - _sym_Phi(_m / _s) * _m
    r1 = sp.simplify(sp.expand(cov - _s * _sym_phi(_m / _s)).rewrite(sp.erf))
    best = _s * sp.integrate(_z * _sym_phi(_z), (_z, -_q, sp.oo))
    r2 = sp.simplify(best - _s * _sym_phi(_q))
    return r1, r2


def derive_predictive_variance() -> tuple[sp.Expr, sp.Expr]:
    r"""Conjugate Gaussian update: precision :math:`\tau_n = 1/\sigma_0^2 + n/\sigma^2`, :math:`s_n^2 = 1/\tau_n`,
    :math:`m_{n+1} = (\tau_n m_n + y/\sigma^2)/\tau_{n+1}` with :math:`y \mid \text{past} \sim \mathcal N(m_n, s_n^2 +
    \sigma^2)`. Returns :math:`\mathrm{Var}(m_{n+1} - m_n)` and its difference from :math:`s_n^2 - s_{n+1}^2` (0)."""
    n = sp.Symbol("n", nonnegative=True)
    v0, v = sp.symbols("sigma_0^2 sigma^2", positive=True)
    tau_n, tau_n1 = 1 / v0 + n / v, 1 / v0 + (n + 1) / v
    # m_{n+1} − m_n = (y − m_n)/(σ² τ_{n+1}); its variance is Var(y)/(σ² τ_{n+1})²
    var_step = (1 / tau_n + v) / (v * tau_n1) ** 2
    return sp.simplify(var_step), sp.simplify(var_step - (1 / tau_n - 1 / tau_n1))


def derive_two_step_ts() -> tuple[sp.Expr, sp.Expr]:
    r"""[derived] TS's two-step Bayesian regret from the prior :math:`\mathcal N(0, \sigma_0^2)`, noise σ²:
    step 1 costs :math:`\sigma_0\varphi(0)`; step 2 costs :math:`\tfrac12\sigma_0\varphi(0)` (arm not pulled, w.p. ½)
    plus :math:`\tfrac12\mathbb E[s_1\varphi(m'/s_1)]`, :math:`m' \sim \mathcal N(0, \sigma_0^2 - s_1^2)` (pulled).
    Returns the general expression and its value at :math:`\sigma_0^2 = \sigma^2 = 1` (:math:`7/(4\sqrt{2\pi})`)."""
    s0, v = sp.symbols("sigma_0 sigma^2", positive=True)
    s1 = 1 / sp.sqrt(1 / s0**2 + 1 / v)
    delta = sp.sqrt(s0**2 - s1**2)
    pulled = sp.integrate(s1 * _sym_phi(delta * _z / s1) * _sym_phi(_z), (_z, -sp.oo, sp.oo))
    r2 = sp.simplify(s0 * _sym_phi(0) + sp.Rational(1, 2) * s0 * _sym_phi(0) + sp.Rational(1, 2) * pulled)
    return r2, sp.nsimplify(sp.simplify(r2.subs({s0: 1, v: 1})))
