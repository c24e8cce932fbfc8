r"""Our derivation of batch-size laws for momentum LMO methods under τ-nice sampling (sympy + closed forms).

Only the abstract of Shulgin, Awad, Richtárik & Gorbunov (ICML 2026) could be read, so **every formula here is
our reconstruction** of the *shape* such a theory takes, not the paper's theorem:

* τ-nice ABC constants [secondary: Khaled & Richtárik 2020]:
  :math:`A = \frac{(n-\tau)L_{\max}}{\tau(n-1)}`, :math:`B = \frac{n(\tau-1)}{\tau(n-1)}`, :math:`C = 2A\Delta_{\inf}`;
* minibatch noise :math:`\sigma_\tau^2 = \sigma_1^2\frac{n-\tau}{\tau(n-1)}`;
* bound shape
  :math:`\Phi(\gamma, \alpha) = \frac{\Delta_0}{\gamma T} + \frac{\gamma L}{\alpha} + \rho\sigma_\tau\sqrt\alpha`
  (cf. Cutkosky & Mehta 2020), minimised over γ then α:
  :math:`\alpha^* = 2\sqrt{\Delta_0L/T}/(\rho\sigma_\tau)`,
  :math:`\min\Phi = 2\sqrt2(\rho\sigma_\tau)^{1/2}(\Delta_0L/T)^{1/4}`;
* steps to ε: :math:`T_\varepsilon = 64\rho^2\sigma_\tau^2\Delta_0L/\varepsilon^4` with
  :math:`\alpha^*(T_\varepsilon) = \varepsilon^2/(4\rho^2\sigma_\tau^2)` while that is ≤ 1, else (α = 1)
  :math:`T = 4\Delta_0L/(\varepsilon-\rho\sigma_\tau)^2`;
* samples :math:`N(\tau) = \tau T`, critical batch :math:`\tau_c = n/(1 + (n-1)\varepsilon^2/(4\rho^2\sigma_1^2))`.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
import sympy as sp

from .. import validate

__all__ = [
    "abc_constants", "optimal_alpha", "critical_batch", "sample_complexity", "optimal_batch",
    "derive_variance_factor", "derive_abc_limits", "derive_bound", "derive_batch_law", "BoundDerivation",
    "BatchLaw",
]

MAX_N = 10**7

#: Cheap arguments for tests/test_api_fuzz.py.
FUZZ_BASE = {
    "abc_constants": {"n": 16, "tau": 4, "L_max": 1.0, "delta_inf": 0.5},
    "optimal_alpha": {"tau": 4, "n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0},
    "critical_batch": {"n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0},
    "sample_complexity": {"tau": 4, "n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0, "delta0": 1.0, "L": 1.0},
    "optimal_batch": {"n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0},
}


def _common(n, eps, rho, sigma1) -> tuple[int, float, float, float]:
    n = validate.integer("n", n, 2, MAX_N)
    eps = validate.number("eps", eps, 0.0, 1e150, low_open=True)
    rho = validate.number("rho", rho, 0.0, 1e150, low_open=True)
    sigma1 = validate.number("sigma1", sigma1, 0.0, 1e150)
    return n, eps, rho, sigma1


def abc_constants(n: int, tau: int, L_max: float, delta_inf: float) -> tuple[float, float, float]:
    r"""τ-nice ABC constants (A, B, C) of
    :math:`\mathbb E\lVert g\rVert^2 \le 2A(f - f_{\inf}) + B\lVert\nabla f\rVert^2 + C`
    [secondary: Khaled & Richtárik 2020]; ``L_max`` = max_i L_i, ``delta_inf`` = f_inf − mean_i f_i^inf ≥ 0."""
    n = validate.integer("n", n, 2, MAX_N)
    tau = validate.integer("tau", tau, 1, n)
    L_max = validate.number("L_max", L_max, 0.0, 1e150)
    delta_inf = validate.number("delta_inf", delta_inf, 0.0, 1e150)
    A = (n - tau) * L_max / (tau * (n - 1))
    B = n * (tau - 1) / (tau * (n - 1))
    return A, B, 2.0 * A * delta_inf


def _sigma_tau(n: int, tau: float, sigma1: float) -> float:
    return sigma1 * math.sqrt((n - tau) / (tau * (n - 1)))


def optimal_alpha(tau: int, *, n: int, eps: float, rho: float, sigma1: float) -> float:
    r"""Our derivation's α* at the ε-accuracy horizon: :math:`\min(1, \varepsilon^2/(4\rho^2\sigma_\tau^2))`
    (fresh-gradient weight; classical β* = 1 − α*). It grows like τ(n−1)/(n−τ): **less averaging with bigger
    batches**."""
    n, eps, rho, sigma1 = _common(n, eps, rho, sigma1)
    tau = validate.integer("tau", tau, 1, n)
    s = _sigma_tau(n, tau, sigma1)
    if s == 0.0:
        return 1.0
    return float(min(1.0, math.exp(2 * math.log(eps) - math.log(4.0) - 2 * math.log(rho) - 2 * math.log(s))))


def critical_batch(n: int, eps: float, rho: float, sigma1: float) -> float:
    r"""τ_c = n/(1 + (n−1)ε²/(4ρ²σ₁²)): the batch at which α* reaches 1 (no momentum) in our derivation."""
    n, eps, rho, sigma1 = _common(n, eps, rho, sigma1)
    if sigma1 == 0.0:
        return 1.0
    r = math.exp(math.log(n - 1) + 2 * math.log(eps) - math.log(4.0) - 2 * math.log(rho) - 2 * math.log(sigma1))
    return n / (1.0 + r)


def sample_complexity(tau: int, *, n: int, eps: float, rho: float, sigma1: float, delta0: float, L: float) -> float:
    r"""Our derivation's samples to ε: N(τ) = τ·T_ε(τ), with
    :math:`T_\varepsilon = 64\rho^2\sigma_\tau^2\Delta_0L/\varepsilon^4` when ε ≤ 2ρσ_τ (momentum branch) and
    :math:`T = 4\Delta_0L/(\varepsilon-\rho\sigma_\tau)^2` otherwise (α = 1). Continuous at τ_c; may be ``inf``
    only through float overflow of huge inputs (then it is ``inf``, never NaN)."""
    n, eps, rho, sigma1 = _common(n, eps, rho, sigma1)
    tau = validate.integer("tau", tau, 1, n)
    delta0 = validate.number("delta0", delta0, 0.0, 1e150, low_open=True)
    L = validate.number("L", L, 0.0, 1e150, low_open=True)
    return float(_n_of_tau(np.array([tau], dtype=float), n, eps, rho, sigma1, delta0, L)[0])


def _n_of_tau(tau: np.ndarray, n: int, eps: float, rho: float, sigma1: float, delta0: float, L: float) -> np.ndarray:
    rs = rho * sigma1 * np.sqrt((n - tau) / (tau * (n - 1)))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_mom = (math.log(64.0) + 2 * np.log(np.maximum(rs, 1e-300)) + math.log(delta0) + math.log(L)
                   - 4 * math.log(eps) + np.log(tau))
        log_one = (math.log(4.0) + math.log(delta0) + math.log(L) - 2 * np.log(np.maximum(eps - rs, 1e-300))
                   + np.log(tau))
        out = np.exp(np.where(eps <= 2 * rs, log_mom, log_one))
    return np.where(np.isnan(out), np.inf, out)


def optimal_batch(n: int, eps: float, rho: float, sigma1: float) -> int:
    """Integer argmin over τ ∈ {1, …, n} of N(τ) (Δ₀ and L only scale N, so they do not move the argmin)."""
    n, eps, rho, sigma1 = _common(n, eps, rho, sigma1)
    validate.memory_guard(n * 8 * 8, lower="n")
    tau = np.arange(1, n + 1, dtype=float)
    return int(tau[int(np.argmin(_n_of_tau(tau, n, eps, rho, sigma1, 1.0, 1.0)))])


# ------------------------------------------------------------------------------------------------------------
# sympy derivations (each returns residuals that must be exactly 0)
# ------------------------------------------------------------------------------------------------------------
def derive_variance_factor(n: int = 6, dim: int = 2, seed: int = 0) -> dict[int, sp.Expr]:
    r"""Exact enumeration over all C(n, τ) subsets with rational per-sample vectors: for each τ the residual
    :math:`\mathbb E\lVert g_S - \bar g\rVert^2 - \frac{n-\tau}{\tau(n-1)}\frac1n\sum_i\lVert g_i-\bar g\rVert^2`
    (0 means the closed form holds exactly)."""
    n = validate.integer("n", n, 2, 10)
    dim = validate.integer("dim", dim, 1, 4)
    rng = np.random.default_rng(validate.integer("seed", seed, 0, 2**32 - 1))
    g = [sp.Matrix([sp.Rational(int(v), int(w)) for v, w in zip(rng.integers(-9, 10, dim), rng.integers(1, 7, dim),
                                                                 strict=True)]) for _ in range(n)]
    gbar = sum(g, sp.zeros(dim, 1)) / n
    s1 = sum(((gi - gbar).T * (gi - gbar))[0] for gi in g) / n
    out = {}
    for tau in range(1, n + 1):
        subsets = list(itertools.combinations(range(n), tau))
        ev = sum(((sum((g[i] for i in S), sp.zeros(dim, 1)) / tau - gbar).T
                   * (sum((g[i] for i in S), sp.zeros(dim, 1)) / tau - gbar))[0] for S in subsets) / len(subsets)
        out[tau] = sp.simplify(ev - sp.Rational(n - tau, tau * (n - 1)) * s1)
    return out


def derive_abc_limits() -> dict[str, sp.Expr]:
    """The τ-nice ABC constants at τ = 1 (B = 0, A = L_max) and τ = n (A = C = 0, B = 1), symbolically in n."""
    n, tau, Lm, D = sp.symbols("n tau L_max Delta_inf", positive=True)
    A = (n - tau) * Lm / (tau * (n - 1))
    B = n * (tau - 1) / (tau * (n - 1))
    C = 2 * A * D
    return {"A(1) - L_max": sp.simplify(A.subs(tau, 1) - Lm), "B(1)": sp.simplify(B.subs(tau, 1)),
            "A(n)": sp.simplify(A.subs(tau, n)), "B(n) - 1": sp.simplify(B.subs(tau, n) - 1),
            "C(n)": sp.simplify(C.subs(tau, n))}


class BoundDerivation(NamedTuple):
    gamma_star: sp.Expr
    alpha_star: sp.Expr
    min_phi: sp.Expr
    T_eps: sp.Expr
    alpha_at_T_eps: sp.Expr
    residuals: dict


def derive_bound() -> BoundDerivation:
    r"""Minimise :math:`\Phi = \Delta_0/(\gamma T) + \gamma L/\alpha + \rho\sigma\sqrt\alpha` over γ, then α; solve
    min Φ = ε for T; residuals against the closed forms quoted in the chapter (all must be 0)."""
    g, a, T, D, L, r, s, e = sp.symbols("gamma alpha T Delta_0 L rho sigma epsilon", positive=True)
    phi = D / (g * T) + g * L / a + r * s * sp.sqrt(a)
    gs = [x for x in sp.solve(sp.diff(phi, g), g) if x.is_positive][0]
    phi_a = sp.simplify(phi.subs(g, gs))
    a_s = [x for x in sp.solve(sp.diff(phi_a, a), a) if x.is_positive][0]
    mphi = sp.simplify(phi_a.subs(a, a_s))
    Te = [x for x in sp.solve(sp.Eq(mphi, e), T) if x.is_positive][0]
    a_T = sp.simplify(a_s.subs(T, Te))
    res = {
        "gamma* - sqrt(alpha Δ0/(L T))": sp.simplify(gs - sp.sqrt(a * D / (L * T))),
        "alpha* - 2 sqrt(Δ0 L/T)/(ρσ)": sp.simplify(a_s - 2 * sp.sqrt(D * L / T) / (r * s)),
        "min Φ - 2√2 (ρσ)^(1/2) (Δ0 L/T)^(1/4)": sp.simplify(mphi - 2 * sp.sqrt(2) * sp.sqrt(r * s)
                                                             * (D * L / T) ** sp.Rational(1, 4)),
        "T_ε - 64ρ²σ²Δ0L/ε⁴": sp.simplify(Te - 64 * r**2 * s**2 * D * L / e**4),
        "α*(T_ε) - ε²/(4ρ²σ²)": sp.simplify(a_T - e**2 / (4 * r**2 * s**2)),
        "second derivative in α > 0 (sign check)": sp.simplify(
            sp.sign(sp.diff(phi_a, a, 2).subs(a, a_s)) - 1),
    }
    return BoundDerivation(gs, a_s, mphi, Te, a_T, res)


class BatchLaw(NamedTuple):
    tau_c: sp.Expr
    residuals: dict
    argmin_limit: sp.Expr


def derive_batch_law() -> BatchLaw:
    r"""The α = 1 branch, continuity of N(τ) = τT at τ_c, τ_c itself, and the large-n limit of argmin N.

    With σ_τ² = σ₁²(n−τ)/(τ(n−1)): α* = ε²/(4ρ²σ_τ²) = 1 at τ_c = n/(1 + (n−1)ε²/(4ρ²σ₁²)); for τ > τ_c,
    α = 1 and 2√(Δ₀L/T) + ρσ_τ = ε gives T = 4Δ₀L/(ε − ρσ_τ)². As n → ∞ (σ_τ → σ₁/√τ) the stationary point of
    τ/(ε − ρσ₁/√τ)² is τ = 4ρ²σ₁²/ε² = lim τ_c."""
    n, tau, T, D, L, r, s1, e = sp.symbols("n tau T Delta_0 L rho sigma_1 epsilon", positive=True)
    s, w = sp.symbols("sigma_tau w", positive=True)  # σ_τ, and w = ε − ρσ_τ > 0 on the α = 1 branch
    s_tau_sq = s1**2 * (n - tau) / (tau * (n - 1))
    tau_c = n / (1 + (n - 1) * e**2 / (4 * r**2 * s1**2))
    T1 = 4 * D * L / w**2
    T_mom = 64 * r**2 * s**2 * D * L / e**4
    u = sp.symbols("u", positive=True)  # u = √τ in the n → ∞ form
    n_inf = u**2 / (e - r * s1 / u) ** 2
    stat = 2 * r * s1 / e
    res = {
        "α*(τ_c) - 1, i.e. 4ρ²σ_τ(τ_c)² - ε²": sp.simplify(4 * r**2 * s_tau_sq.subs(tau, tau_c) - e**2),
        "α = 1 branch: 2√(Δ0L/T) + ρσ_τ - ε at T = 4Δ0L/(ε-ρσ_τ)²": sp.simplify(
            2 * sp.sqrt(D * L / T1) + (e - w) - e),
        "N continuous at τ_c: T_momentum - T_(α=1) where ρσ_τ = ε/2": sp.simplify(
            (T_mom - T1).subs(w, e / 2).subs(s, e / (2 * r))),
        "lim_n τ_c - 4ρ²σ₁²/ε²": sp.simplify(sp.limit(tau_c, n, sp.oo) - 4 * r**2 * s1**2 / e**2),
        "d/du log N_∞ at u = 2ρσ₁/ε (argmin → lim τ_c)": sp.simplify(sp.diff(sp.log(n_inf), u).subs(u, stat)),
    }
    return BatchLaw(sp.simplify(tau_c), res, stat**2)
