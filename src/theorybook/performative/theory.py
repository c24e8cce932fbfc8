"""Bound formulas of *Performative Learning Theory* (Rodemann et al., ICML 2026) and their sympy derivations.

The full text of the theorems was not available; the formulas are those the authors' notebooks implement
(repository ``rodemann/plt-jobseekers``) as a secondary account of them reports [paper, notebook]. Functions
return plain floats; ``derive_*`` return sympy objects the chapter checks.
"""

from __future__ import annotations

import math
import sys
from statistics import NormalDist
from typing import NamedTuple

import sympy as sp

from ..validate import integer, number

__all__ = [
    "BoundTerms",
    "Cor38Reading",
    "NOTEBOOK_313",
    "NOTEBOOK_38",
    "flip_distance",
    "drift_bound",
    "log_drift_bound",
    "cor38_bound",
    "cor38_reading",
    "thm313_radius",
    "thm313_bound",
    "thm315_bound",
    "derive_kantorovich_rubinstein",
    "derive_flip_wasserstein",
    "derive_drift_sum",
    "derive_logistic_constants",
    "derive_gaming_drift",
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


class Cor38Reading(NamedTuple):
    """What the Cor 3.8 case study's performative term would need (see :func:`cor38_reading`)."""

    multiplier: float  # c with c·(m/n)^{1/p}·𝒟 = target
    L_a_tilde: float  # L̃_a = c / (L_ℓ · geometric factor) under the notebook's formula
    L_a: float | None  # the L_a that the reading L̃_a = 1/(1 + L_a) would need (None when L̃_a > 1)


_MAX_LOG = math.log(sys.float_info.max)


def _exp(log_value: float, what: str, lower: str) -> float:
    """exp(log_value) as a float, or ``ValueError`` when it exceeds the float range (never inf/OverflowError)."""
    if log_value > _MAX_LOG:
        raise ValueError(f"Invalid {lower}: {what} is e^{log_value:.4g}, beyond the float range; lower {lower} "
                         "(or use the log-space value)")
    return math.exp(log_value)


def _log_geometric(rho: float, k: int) -> float:
    """log Σ_{s<k} ρ^s = log((ρ^k − 1)/(ρ − 1)) without overflow (−inf for k = 0; log k at ρ = 1)."""
    if k == 0:
        return -math.inf
    if rho == 0.0:
        return 0.0
    if rho == 1.0:
        return math.log(k)
    lr = math.log(rho)
    if rho > 1.0:
        # ρ^k − 1 = ρ^k (1 − ρ^{−k})
        return k * lr + math.log(-math.expm1(-k * lr)) - math.log(rho - 1.0)
    return math.log(-math.expm1(k * lr)) - math.log1p(-rho)


def _common(n, r, p, delta, diam) -> tuple[int, float, float, float, float]:
    return (integer("n", n, 1), number("r", r, 0.0, 1.0, low_open=True), number("p", p, 1.0, 1e6),
            number("delta", delta, 0.0, 1.0, low_open=True, high_open=True),
            number("diam", diam, 0.0, math.inf, low_open=True))


def flip_distance(m: int, n: int, p: float = 2.0, diam: float = 1.0) -> float:
    """Lemma 3.5 per round [reconstruction, exact form]: moving m of n atoms by ≤ 𝒟 gives
    W_p ≤ (m/n)^{1/p} 𝒟."""
    n = integer("n", n, 1)
    m = integer("m", m, 0, n)
    p = number("p", p, 1.0, 1e6)
    diam = number("diam", diam, 0.0, math.inf, low_open=True)
    return (m / n) ** (1.0 / p) * diam


def _drift_args(rounds, rho, step) -> tuple[int, float, float]:
    return integer("rounds", rounds, 0), number("rho", rho, 0.0, math.inf), number("step", step, 0.0, math.inf)


def log_drift_bound(rounds: int, rho: float, step: float) -> float:
    """log of :func:`drift_bound`, finite for any T ≥ 1, ρ and step > 0 (a zero sum has no finite log:
    ``ValueError``)."""
    rounds, rho, step = _drift_args(rounds, rho, step)
    if rounds == 0 or step == 0.0:
        raise ValueError(f"Invalid rounds/step: {rounds}/{step} (the drift sum is 0, whose log is −∞; need "
                         "rounds ≥ 1 and step > 0)")
    return _log_geometric(rho, rounds) + math.log(step)


def drift_bound(rounds: int, rho: float, step: float) -> float:
    """Σ_{s=0}^{T−1} ρ^s · step: the drift accumulated over T retrainings when each round's drift is at most
    ρ = ε(1 + L_a) times the previous one (Theorem 3.10's mechanism): (ρ^T − 1)/(ρ − 1)·step; T·step at
    ρ = 1. Computed in log space; a value beyond the float range raises ``ValueError`` (see
    :func:`log_drift_bound`)."""
    rounds, rho, step = _drift_args(rounds, rho, step)
    if rounds == 0 or step == 0.0:
        return 0.0
    return _exp(log_drift_bound(rounds, rho, step), "the drift sum", "rounds or rho")


def cor38_bound(emp_risk: float, n: int, r: float, T: int = 2, *, p: float = 2.0, nu: float = 4.0,
                delta: float = 0.1, diam: float = 1.0, L_loss: float = 2.0, L_a: float = 2.0,
                eps: float | None = None, C_a: float = 1.0, C_b: float = 1.0) -> BoundTerms:
    """The authors' "Cor. 3.8-style" bound (sample performativity) [paper, notebook]:

        𝓡(d₀, θ̂_T) ≤ 𝓡(d̂_{T−1}, θ̂_T) + L_ℓ (log(C_a/δ)/(C_b n))^{p/ν}
                     + (ε^{T−1} − 1)/(L_ℓ^{−1}(ε − 1)) · (m/n)^{1/p} 𝒟_𝒵 · L̃_a,     L̃_a = 1/(1 + L_a).

    ``eps`` defaults to the notebook's choice ε = 1 + L_a; at ε = 1 the ratio is its limit T − 1. The
    ``complexity`` field holds the empirical risk 𝓡(d̂_{T−1}, θ̂_T) here. The geometric factor is computed in
    log space; a bound beyond the float range raises ``ValueError``.
    """
    emp_risk = number("emp_risk", emp_risk, 0.0, math.inf)
    n, r, p, delta, diam = _common(n, r, p, delta, diam)
    T = integer("T", T, 1)
    nu = number("nu", nu, 0.0, math.inf, low_open=True)
    L_loss = number("L_loss", L_loss, 0.0, math.inf, low_open=True)
    L_a = number("L_a", L_a, 0.0, math.inf)
    C_a = number("C_a", C_a, 0.0, math.inf, low_open=True)
    C_b = number("C_b", C_b, 0.0, math.inf, low_open=True)
    eps = 1.0 + L_a if eps is None else number("eps", eps, 0.0, math.inf, low_open=True)
    log_samp = (p / nu) * (math.log(max(math.log(C_a / delta), 1e-300)) - math.log(C_b) - math.log(n))
    sampling = 0.0 if C_a <= delta else _exp(math.log(L_loss) + log_samp, "the sampling term", "n or nu")
    if T == 1:
        perf = 0.0
    else:
        log_perf = (math.log(L_loss) + _log_geometric(eps, T - 1) + math.log(r) / p + math.log(diam)
                    - math.log1p(L_a))
        perf = _exp(log_perf, "the performative term", "T or eps")
    total = emp_risk + sampling + perf
    if not math.isfinite(total):
        raise ValueError("Invalid T/eps: the Cor 3.8 bound exceeds the float range; lower T or eps")
    return BoundTerms(emp_risk, perf, sampling, total, r ** (1.0 / p) * diam)


def cor38_reading(target: float, n: int, m: int, *, p: float = 2.0, diam: float = 1.0, L_loss: float = 2.0,
                  T: int = 2, eps: float = 3.0) -> Cor38Reading:
    """Invert the Cor 3.8 performative term: the multiplier c with c·(m/n)^{1/p}𝒟 = target, the L̃_a it means
    under the notebook formula (c = L_ℓ · Σ_{s<T−1} ε^s · L̃_a), and the L_a for which the reading
    L̃_a = 1/(1 + L_a) gives it (None when L̃_a > 1, which no L_a ≥ 0 gives)."""
    target = number("target", target, 0.0, math.inf, low_open=True)
    n = integer("n", n, 1)
    m = integer("m", m, 1, n)
    p = number("p", p, 1.0, 1e6)
    diam = number("diam", diam, 0.0, math.inf, low_open=True)
    L_loss = number("L_loss", L_loss, 0.0, math.inf, low_open=True)
    T = integer("T", T, 2, 10_000)
    eps = number("eps", eps, 0.0, 1e6, low_open=True)
    c = target / ((m / n) ** (1.0 / p) * diam)
    lt = c / (L_loss * math.exp(_log_geometric(eps, T - 1)))
    return Cor38Reading(c, lt, (1.0 / lt - 1.0) if lt <= 1.0 else None)


def thm313_radius(n: int, r: float, *, p: float = 2.0, delta: float = 0.05, diam: float = 5.29) -> float:
    """R = max((q √(r(1−r)/n))^{1/p} 𝒟, r^{1/p} 𝒟), q = Φ⁻¹(1 − δ/2) [paper, notebook]."""
    n, r, p, delta, diam = _common(n, r, p, delta, diam)
    q = NormalDist().inv_cdf(1.0 - delta / 2.0)
    return max((q * math.sqrt(r * (1.0 - r) / n)) ** (1.0 / p) * diam, r ** (1.0 / p) * diam)


def _sampling_term(F: float, delta: float, n: int) -> float:
    return F * math.sqrt(2.0 * math.log(2.0 / delta) / n)


def thm313_bound(n: int, r: float, *, p: float = 2.0, delta: float = 0.05, diam: float = 5.29,
                 L_loss: float = math.sqrt(28.0), L_f: float = 0.25, F: float = 1.0,
                 C_inf: float = 7.3855) -> BoundTerms:
    """Theorem 3.13 as the authors' notebook evaluates it [paper, notebook]:

        gap ≤ (48/√n)(C_∞ + L_ℓ L_f R^{1−p} 𝒟^p) + F √(2 log(2/δ)/n) + 2 L_ℓ R
              (complexity)                        (sampling)           (performative)

    Defaults are the notebook constants (SIAB; at n = 41,585 an independent evaluation gives 23.82 at
    r = 0.01 and 43.67 at r = 0.5). R^{1−p}𝒟^p is computed in log space (finite for large p).
    """
    n, r, p, delta, diam = _common(n, r, p, delta, diam)
    R = thm313_radius(n, r, p=p, delta=delta, diam=diam)
    L_loss, L_f, F, C_inf = (number(k, v, 0.0, math.inf) for k, v in
                             (("L_loss", L_loss), ("L_f", L_f), ("F", F), ("C_inf", C_inf)))
    add = 0.0 if L_loss * L_f == 0 else _exp(math.log(L_loss * L_f) + (1.0 - p) * math.log(R) + p * math.log(diam),
                                             "the complexity term", "p")
    comp = 48.0 / math.sqrt(n) * (C_inf + add)
    samp = _sampling_term(F, delta, n)
    perf = 2.0 * L_loss * R
    return BoundTerms(comp, perf, samp, comp + perf + samp, R)


def thm315_bound(n: int, r: float, *, p: float = 2.0, delta: float = 0.05, diam: float = 5.29,
                 L_loss: float = math.sqrt(28.0), B: float = 0.001, F: float = 1.0,
                 C_inf: float = 7.3855) -> BoundTerms:
    """Theorem 3.15: Theorem 3.13 with the complexity add-on replaced by 𝓑 2^{p−1}(1 + 𝒟/R)^p
    [paper, notebook; this reading reproduces an independent evaluation's 7.41 / 41.34]. Log space."""
    n, r, p, delta, diam = _common(n, r, p, delta, diam)
    R = thm313_radius(n, r, p=p, delta=delta, diam=diam)
    L_loss, B, F, C_inf = (number(k, v, 0.0, math.inf) for k, v in
                           (("L_loss", L_loss), ("B", B), ("F", F), ("C_inf", C_inf)))
    add = 0.0 if B == 0 else _exp(math.log(B) + (p - 1.0) * math.log(2.0) + p * math.log1p(diam / R),
                                  "the complexity term", "p")
    comp = 48.0 / math.sqrt(n) * (C_inf + add)
    samp = _sampling_term(F, delta, n)
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


def derive_gaming_drift():
    """The drift recursion of :func:`~theorybook.performative.experiment.retrain` along ŵ [reconstruction]:
    with a = ŵᵀv, the transition a_t = ε a_{t−1} − ε(κ + μ(b_t − b̂_1)) and the best response's intercept
    b_t − b̂_1 = −L_a a_{t−1} (logistic RERM absorbs a translation), the increments δ_t = a_t − a_{t−1} obey
    δ_{t+1}/δ_t = ε(1 + μ L_a). Returns (that ratio simplified, δ_1)."""
    eps, kappa, mu, L = sp.symbols("epsilon kappa mu L_a", positive=True)
    a = [sp.Integer(0)]
    for _ in range(3):
        b_shift = -L * a[-1]
        a.append(sp.expand(eps * a[-1] - eps * (kappa + mu * b_shift)))
    d = [a[i + 1] - a[i] for i in range(3)]
    r1, r2 = sp.simplify(d[1] / d[0]), sp.simplify(d[2] / d[1])
    assert sp.simplify(r1 - r2) == 0
    return sp.factor(r1), d[0]
