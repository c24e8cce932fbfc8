"""Bound formulas of *Performative Learning Theory* (Rodemann et al., ICML 2026) and their sympy derivations.

The full text of the theorems was not available; the formulas are those the authors' notebooks implement
(repository ``rodemann/plt-jobseekers``), read from the project's paper digest [paper, notebook]. Functions
return plain floats; ``derive_*`` return sympy objects the chapter checks.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import sympy as sp

from ..validate import in_range, integer, positive

__all__ = [
    "BoundTerms",
    "NOTEBOOK_313",
    "NOTEBOOK_38",
    "flip_distance",
    "drift_bound",
    "cor38_bound",
    "thm313_radius",
    "thm313_bound",
    "thm315_bound",
    "derive_kantorovich_rubinstein",
    "derive_flip_wasserstein",
    "derive_drift_sum",
    "derive_logistic_constants",
]

#: Constants of the authors' trade-off notebook (Thm 3.13 / 3.15), SIAB, δ = 0.05 [paper, notebook].
NOTEBOOK_313 = {"p": 2.0, "delta": 0.05, "diam": 5.29, "L_loss": math.sqrt(28.0), "L_f": 0.25, "F": 1.0,
                "C_inf": 7.3855, "B": 0.001}
#: Constants of the authors' Cor 3.8-style notebook [paper, notebook].
NOTEBOOK_38 = {"p": 2.0, "nu": 4.0, "delta": 0.1, "diam": 1.0, "L_loss": 2.0 / (1.0 + math.exp(-24.0)),
               "L_a": 2.0, "C_a": 1.0, "C_b": 1.0}


class BoundTerms(NamedTuple):
    """A generalisation bound split into the paper's three components (nats)."""

    complexity: float
    performative: float
    sampling: float
    total: float
    R: float  # the drift radius R used by the bound


def _common(n, r, p, delta, diam) -> None:
    integer("n", n, 1)
    in_range("r", r, 0.0, 1.0, low_open=True, high_open=False)
    in_range("p", p, 1.0, float("inf"))
    in_range("delta", delta, 0.0, 1.0, low_open=True)
    positive("diam", diam)


def flip_distance(m: int, n: int, p: float = 2.0, diam: float = 1.0) -> float:
    """Lemma 3.5 per round [reconstruction, exact form]: moving m of n atoms by ≤ 𝒟 gives
    W_p ≤ (m/n)^{1/p} 𝒟."""
    integer("n", n, 1)
    integer("m", m, 0)
    if m > n:
        raise ValueError(f"Invalid m: {m} (must be ≤ n = {n})")
    in_range("p", p, 1.0, float("inf"))
    positive("diam", diam)
    return (m / n) ** (1.0 / p) * diam


def drift_bound(rounds: int, rho: float, step: float) -> float:
    """Σ_{s=0}^{T−1} ρ^s · step: the drift accumulated over T retrainings when each round's drift is at most
    ρ = ε(1 + L_a) times the previous one (Theorem 3.10's mechanism): (ρ^T − 1)/(ρ − 1)·step; T·step at
    ρ = 1."""
    integer("rounds", rounds, 0)
    in_range("rho", rho, 0.0, float("inf"))
    in_range("step", step, 0.0, float("inf"))
    if abs(rho - 1.0) < 1e-12:
        return rounds * step
    return (rho**rounds - 1.0) / (rho - 1.0) * step


def cor38_bound(emp_risk: float, n: int, r: float, T: int = 2, *, p: float = 2.0, nu: float = 4.0,
                delta: float = 0.1, diam: float = 1.0, L_loss: float = 2.0, L_a: float = 2.0,
                eps: float | None = None, C_a: float = 1.0, C_b: float = 1.0) -> BoundTerms:
    """The authors' "Cor. 3.8-style" bound (sample performativity) [paper, notebook]:

        𝓡(d₀, θ̂_T) ≤ 𝓡(d̂_{T−1}, θ̂_T) + L_ℓ (log(C_a/δ)/(C_b n))^{p/ν}
                     + (ε^{T−1} − 1)/(L_ℓ^{−1}(ε − 1)) · (m/n)^{1/p} 𝒟_𝒵 · L̃_a,     L̃_a = 1/(1 + L_a).

    ``eps`` defaults to the notebook's choice ε = 1 + L_a; at ε = 1 the ratio is its limit T − 1. The
    ``complexity`` field holds the empirical risk 𝓡(d̂_{T−1}, θ̂_T) here.
    """
    _common(n, r, p, delta, diam)
    integer("T", T, 1)
    positive("nu", nu)
    positive("L_loss", L_loss)
    in_range("L_a", L_a, 0.0, float("inf"))
    positive("C_a", C_a)
    positive("C_b", C_b)
    eps = 1.0 + L_a if eps is None else eps
    positive("eps", eps)
    sampling = L_loss * max(math.log(C_a / delta), 0.0) ** (p / nu) / (C_b * n) ** (p / nu)
    geo = (T - 1.0) if abs(eps - 1.0) < 1e-12 else (eps ** (T - 1) - 1.0) / (eps - 1.0)
    perf = L_loss * geo * r ** (1.0 / p) * diam / (1.0 + L_a)
    total = float(emp_risk) + sampling + perf
    return BoundTerms(float(emp_risk), perf, sampling, total, r ** (1.0 / p) * diam)


def thm313_radius(n: int, r: float, *, p: float = 2.0, delta: float = 0.05, diam: float = 5.29) -> float:
    """R = max((q √(r(1−r)/n))^{1/p} 𝒟, r^{1/p} 𝒟), q = Φ⁻¹(1 − δ/2) [paper, notebook]."""
    _common(n, r, p, delta, diam)
    q = NormalDist().inv_cdf(1.0 - delta / 2.0)
    return max((q * math.sqrt(r * (1.0 - r) / n)) ** (1.0 / p) * diam, r ** (1.0 / p) * diam)


def thm313_bound(n: int, r: float, *, p: float = 2.0, delta: float = 0.05, diam: float = 5.29,
                 L_loss: float = math.sqrt(28.0), L_f: float = 0.25, F: float = 1.0,
                 C_inf: float = 7.3855) -> BoundTerms:
    """Theorem 3.13 as the authors' notebook evaluates it [paper, notebook]:

        gap ≤ (48/√n)(C_∞ + L_ℓ L_f R^{1−p} 𝒟^p) + F √(2 log(2/δ)/n) + 2 L_ℓ R
              (complexity)                        (sampling)           (performative)

    Defaults are the notebook constants (SIAB, n = 41,585 gives 23.82 at r = 0.01 and 43.67 at r = 0.5).
    """
    R = thm313_radius(n, r, p=p, delta=delta, diam=diam)
    for name, val in (("L_loss", L_loss), ("L_f", L_f), ("F", F), ("C_inf", C_inf)):
        in_range(name, val, 0.0, float("inf"))
    comp = 48.0 / math.sqrt(n) * (C_inf + L_loss * L_f * R ** (1.0 - p) * diam**p)
    samp = F * math.sqrt(2.0 * math.log(2.0 / delta) / n)
    perf = 2.0 * L_loss * R
    return BoundTerms(comp, perf, samp, comp + perf + samp, R)


def thm315_bound(n: int, r: float, *, p: float = 2.0, delta: float = 0.05, diam: float = 5.29,
                 L_loss: float = math.sqrt(28.0), B: float = 0.001, F: float = 1.0,
                 C_inf: float = 7.3855) -> BoundTerms:
    """Theorem 3.15: Theorem 3.13 with the complexity add-on replaced by 𝓑 2^{p−1}(1 + 𝒟/R)^p
    [paper, notebook; this reading reproduces the reference 7.41 / 41.34]."""
    R = thm313_radius(n, r, p=p, delta=delta, diam=diam)
    for name, val in (("L_loss", L_loss), ("B", B), ("F", F), ("C_inf", C_inf)):
        in_range(name, val, 0.0, float("inf"))
    comp = 48.0 / math.sqrt(n) * (C_inf + B * 2.0 ** (p - 1.0) * (1.0 + diam / R) ** p)
    samp = F * math.sqrt(2.0 * math.log(2.0 / delta) / n)
    perf = 2.0 * L_loss * R
    return BoundTerms(comp, perf, samp, comp + perf + samp, R)


# --- sympy derivations -------------------------------------------------------------------------------------
def derive_kantorovich_rubinstein():
    """For the cross-entropy ℓ(s, y) = y log(1+e^{−s}) + (1−y) log(1+e^{s}), s = wᵀx + b (one feature shown):
    returns (∂ℓ/∂x, ∂ℓ/∂y, flip gain ℓ(s,0) − ℓ(s,1)) simplified. ∂ℓ/∂y = −s and |∂ℓ/∂x| ≤ |w| give
    L_ℓ = √(‖w‖² + s_max²), and Kantorovich–Rubinstein: |E_d ℓ − E_d' ℓ| ≤ L_ℓ W_1(d, d') ≤ L_ℓ W_p(d, d')."""
    x, y, w, b = sp.symbols("x y w b", real=True)
    s = w * x + b
    loss = y * sp.log(1 + sp.exp(-s)) + (1 - y) * sp.log(1 + sp.exp(s))
    dx = sp.simplify(sp.diff(loss, x))
    dy = sp.simplify(sp.diff(loss, y))
    gain = sp.simplify(loss.subs(y, 0) - loss.subs(y, 1))
    return dx, dy, gain, s


def derive_flip_wasserstein():
    """W_p^p when m of n equal atoms move by distance D (one direction): (m/n)·D^p; returns (W_p, W_p^p)."""
    m, n, D, p = sp.symbols("m n D p", positive=True)
    wpp = sp.Sum(D**p / n, (sp.Symbol("i", integer=True), 1, m)).doit()
    return sp.simplify(wpp ** (1 / p)), sp.simplify(wpp)


def derive_drift_sum():
    """Σ_{s=0}^{T−1} ρ^s in closed form, its ρ → 1 limit, and the growth ratio of successive increments."""
    rho, s = sp.symbols("rho s", positive=True)
    T = sp.Symbol("T", integer=True, positive=True)
    total = sp.summation(rho**s, (s, 0, T - 1))
    total = sp.simplify(sp.piecewise_fold(total).args[-1][0]) if isinstance(total, sp.Piecewise) else total
    at_one = sp.limit((rho**T - 1) / (rho - 1), rho, 1)
    ratio = sp.simplify((total.subs(T, T + 2) - total.subs(T, T + 1)) / (total.subs(T, T + 1) - total))
    return total, at_one, ratio


def derive_logistic_constants():
    """(max σ', Hessian of (λ/2)θ²): σ'(s) = σ(1−σ) ≤ 1/4 gives L_f = 1/4·‖w‖; the L2 term gives γ = λ."""
    s, lam, th = sp.symbols("s lambda theta", real=True)
    sig = 1 / (1 + sp.exp(-s))
    dsig = sp.diff(sig, s)
    crit = sp.solve(sp.diff(dsig, s), s)
    max_dsig = sp.simplify(dsig.subs(s, crit[0]))
    gamma = sp.diff(lam / 2 * th**2, th, 2)
    return max_dsig, gamma
