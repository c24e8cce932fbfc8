"""The chapter-scale runs: the fixed populations, the seeded sample-complexity sweep, and the headline experiment —
the sample size needed at fixed (ε, δ) as the number of actions n spans three decades.

Headline design [reconstruction]. For each n in :data:`ACTIONS` (2 … 2,000) a fixed population of
:data:`N_TYPES` types (:func:`~.engine.random_types`, seed :data:`POP_SEED`); :data:`REPS` independent streams of
i.i.d. types shared by every population (common random numbers); nested samples on the grid :data:`S_VALUES`
(ratio √2). For each n, ``s*(n)`` is the least s at which the (1 − δ)-quantile of ``sup_α |Û_s − U|`` falls to ε
(:func:`required_samples`: first crossing on the grid, log–log interpolation between the bracketing sizes). The
statistic is the growth ratio ``G = max_n s*(n)/s*(2)`` (:func:`growth_ratio`): Theorem 1.1 (no n in the bound)
allows no growth beyond the sampling noise of s*, measured on the *flat family* (:func:`~.engine.flat_types`: the
live part of the n = 2 law plus dominated actions, so s* cannot depend on n; :func:`flat_sweeps`); a union bound over
the actions, ε ∝ √(ln(2n/δ)/s), predicts ``G = ln(4000/δ)/ln(4/δ) ≈ 2.6``. The measured alternative is the
per-action-mean statistic on the same draws (``SweepResult.mean_dev``). The least-squares slope of ``ln s*`` on
``ln ln n`` (:func:`growth_slope`) is reported alongside.

Confidence design (Corollary 1.2's ln(1/δ)) [reconstruction]. On the n = :data:`COR_ACTIONS` population,
:data:`COR_REPS` independent streams, nested samples on :data:`COR_S_VALUES` (ratio 2^(1/3)); for each δ in
:data:`COR_DELTAS`, ``s*(δ)`` is the least s at which the (1 − δ)-quantile of EUM's suboptimality U(α*) − U(α̂_s)
falls to :data:`COR_EPS` (:func:`required_samples` with ``statistic="subopt"``). Corollary 1.2 predicts
``s*(δ) = a + b·ln(1/δ)``; the rivals with as many free parameters, ``s*(δ) = a + b/δ`` (a variance-only, Chebyshev
bound) and ``a + b·δ^(−1/2)`` (a fourth-moment bound), are scored alike by :func:`law_misfit` (√(1 − R²)), and so is
the mean of s Bernoulli(½) draws through the same pipeline (:func:`bernoulli_deviations`): ln(1/δ) is what any
bounded statistic with exponential tails shows.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..device import one_thread
from ..validate import integer, memory_guard, number
from .engine import (
    ContractTypes,
    SweepResult,
    flat_types,
    kinks,
    quantile_band,
    random_types,
    sample_complexity_sweep,
)

__all__ = [
    "N_TYPES", "N_OUTCOMES", "ACTIONS", "MONO_ACTIONS", "S_VALUES", "REPS", "DELTA", "EPS", "POP_SEED",
    "NIndepStudy", "chapter_population", "chapter_sweeps", "required_samples", "nindep_study", "growth_slope",
    "growth_ratio", "FLAT_POP_SEED", "flat_population", "flat_sweeps", "bernoulli_deviations", "BERNOULLI_P",
    "COR_BERNOULLI_EPS",
    "COR_ACTIONS", "COR_REPS", "COR_S_VALUES", "COR_DELTAS", "COR_EPS", "ConfidenceStudy", "confidence_study",
    "law_misfit", "CONFIDENCE_LAWS", "union_factor",
]

# The chapter's scale (CPU). Type count and repetitions are arguments of the functions: raise them on a GPU.
N_TYPES = 2000
N_OUTCOMES = 6
ACTIONS = (2, 20, 200, 2000)  # three decades of the number of actions
MONO_ACTIONS = (2, 10, 100)  # the brute-force monotonicity search (n(n − 1)/2 indifference points per type)
S_VALUES = tuple(int(round(50 * 2 ** (j / 2))) for j in range(21))  # 50 … 51,200, ratio √2
REPS = 200
DELTA = 0.05
EPS = 0.005  # the accuracy at which s*(n) is measured (mid-grid for every n of the family)
POP_SEED = 0  # the populations are fixed; the seed of the verdicts drives the sampling
# Corollary 1.2's confidence scan: enough repetitions for the 0.999 quantile (the 4th largest of 4,000 values)
COR_ACTIONS = 2
COR_REPS = 4000
COR_S_VALUES = tuple(int(round(24 * 2 ** (j / 3))) for j in range(20))  # 24 … 1,935, ratio 2^(1/3)
COR_DELTAS = (0.3, 0.1, 0.03, 0.01, 0.003, 0.001)  # three decades of δ, half a decade apart
COR_EPS = 0.004
#: The laws of s*(δ) compared, each a + b·x(δ) with two free parameters: the claim's and the Chebyshev rival's.
CONFIDENCE_LAWS = {"ln(1/δ)": lambda d: np.log(1.0 / d), "1/δ": lambda d: 1.0 / d, "δ^(−1/2)": lambda d: d ** -0.5}
COR_SEED_OFFSET = 1_000_003  # the confidence streams are drawn apart from the chapter sweep's (same seed)
# The flat family (the headline test's size and power where s* cannot fall): fixed populations, own streams
FLAT_POP_SEED = 11
FLAT_SEED_OFFSET = 2_000_003
# The generic alternative of the rate and Corollary 1.2 rows: the mean of s Bernoulli(p) draws, |p̂_s − p|
BERNOULLI_P = 0.5
COR_BERNOULLI_EPS = 0.05  # puts its s*(δ) ≈ (z_δ·½/ε)² ≈ 110 … 1,080 on the confidence grid (24 … 1,935)
BERNOULLI_SEED_OFFSET = 3_000_017
#: The largest seed every seeded function accepts (each adds its offset to it).
MAX_SEED = 2**63 - 1 - COR_SEED_OFFSET - FLAT_SEED_OFFSET - BERNOULLI_SEED_OFFSET


def chapter_population(n_actions: int, n_types: int = N_TYPES, n_outcomes: int = N_OUTCOMES,
                       seed: int = POP_SEED) -> ContractTypes:
    """The chapter's population for ``n_actions`` actions (cached, with its kinks computed)."""
    return _population(integer("n_actions", n_actions, 1, 5000), integer("n_types", n_types, 1),
                       integer("n_outcomes", n_outcomes, 2), integer("seed", seed, 0, 2**63 - 1))


@lru_cache(maxsize=8)
def _population(n_actions: int, n_types: int, n_outcomes: int, seed: int) -> ContractTypes:
    with one_thread():
        types = random_types(n_types, n_actions, n_outcomes, seed)
    kinks(types)
    return types


def flat_population(n_actions: int, seed: int = FLAT_POP_SEED, n_types: int = N_TYPES,
                    n_outcomes: int = N_OUTCOMES) -> ContractTypes:
    """The flat family's population for ``n_actions`` actions (:func:`~.engine.flat_types`; cached): its live part
    is drawn from ``seed + 2n``, so each n has its own live types (same law), as each n of the chapter's family has
    its own population."""
    n = integer("n_actions", n_actions, 2, 5000)
    sd = integer("seed", seed, 0, 2**62)
    return _flat(n, sd + 2 * n, integer("n_types", n_types, 1), integer("n_outcomes", n_outcomes, 2))


@lru_cache(maxsize=8)
def _flat(n_actions: int, seed: int, n_types: int, n_outcomes: int) -> ContractTypes:
    with one_thread():
        types = flat_types(n_types, n_actions, n_outcomes, seed)
    kinks(types)
    return types


def flat_sweeps(seed: int, reps: int = REPS, s_values: tuple[int, ...] = S_VALUES,
                actions: tuple[int, ...] = ACTIONS, pop_seed: int = FLAT_POP_SEED) -> dict[int, SweepResult]:
    """The chapter's sweep on the flat family (:func:`flat_population`), with its own index streams drawn from
    ``seed`` (apart from the chapter sweep's): the headline test where s* cannot depend on n."""
    sd = integer("seed", seed, 0, 2**63 - 1 - FLAT_SEED_OFFSET)
    ps = integer("pop_seed", pop_seed, 0, 2**62)
    if not isinstance(actions, (tuple, list)) or not actions:
        raise TypeError(f"Invalid actions: {actions!r} (must be a non-empty tuple of action counts)")
    pops = [flat_population(integer("n_actions", n, 2, 5000), ps) for n in actions]
    res = sample_complexity_sweep(pops, list(s_values), reps, sd + FLAT_SEED_OFFSET)
    return {n: r for n, r in zip(actions, res, strict=True)}


def bernoulli_deviations(seed: int, reps: int = REPS, s_values: tuple[int, ...] = S_VALUES,
                         p: float = BERNOULLI_P) -> np.ndarray:
    """|p̂_s − p| for ``reps`` nested streams of Bernoulli(p) draws at every s of ``s_values``, shape (reps, S):
    the plainest bounded statistic, the generic alternative of the rate and Corollary 1.2 rows (drawn with numpy
    from ``seed``; each size adds s_j − s_{j−1} fresh draws, as the sweeps do)."""
    sd = integer("seed", seed, 0, 2**63 - 1 - BERNOULLI_SEED_OFFSET)
    B = integer("reps", reps, 2)
    pp = number("p", p, 0.0, 1.0, low_open=True, high_open=True)
    if isinstance(s_values, (str, bytes)) or not hasattr(s_values, "__len__") or not len(s_values):
        raise TypeError(f"Invalid s_values: {s_values!r} (must be a non-empty sequence of sample sizes)")
    s = [integer("s_values", x, 1) for x in s_values]
    if any(b <= a for a, b in zip(s, s[1:], strict=False)):
        raise ValueError(f"Invalid s_values: {s} (must be strictly increasing)")
    memory_guard(3.0 * B * len(s) * 8, lower="reps or s_values")
    rng = np.random.default_rng(sd + BERNOULLI_SEED_OFFSET)
    inc = rng.binomial(np.diff([0, *s]), pp, size=(B, len(s)))
    return np.abs(np.cumsum(inc, axis=1) / np.asarray(s, dtype=np.float64) - pp)


def chapter_sweeps(seed: int, reps: int = REPS, s_values: tuple[int, ...] = S_VALUES,
                   actions: tuple[int, ...] = ACTIONS) -> dict[int, SweepResult]:
    """The sample-complexity sweep of the chapter: one set of index streams (from ``seed``) for every n."""
    sd = integer("seed", seed, 0, 2**63 - 1)
    if not isinstance(actions, (tuple, list)) or not actions:
        raise TypeError(f"Invalid actions: {actions!r} (must be a non-empty tuple of action counts)")
    pops = [chapter_population(integer("n_actions", n, 1, 5000)) for n in actions]
    res = sample_complexity_sweep(pops, list(s_values), reps, sd)
    return {n: r for n, r in zip(actions, res, strict=True)}


def required_samples(r: SweepResult, eps: float = EPS, delta: float = DELTA, statistic: str = "sup_dev") -> float:
    """``s*``: the least sample size at which the (1 − δ)-quantile of the sup-deviation reaches ``eps`` — the first
    crossing on the sweep's grid, interpolated linearly in (ln s, ln q) between the two bracketing sizes.
    ``inf`` when the quantile stays above ``eps`` on the whole grid; the first size when it starts below.
    ``statistic="mean_dev"`` uses the n per-action mean rewards' largest deviation instead (the union-bound
    alternative), ``"subopt"`` EUM's suboptimality U(α*) − U(α̂_s)."""
    if not isinstance(r, SweepResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a SweepResult)")
    e = number("eps", eps, 0.0, 1.0, low_open=True)
    d = number("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    return _first_crossing(r.s, r.sup_dev if statistic == "sup_dev" else _statistic(r, statistic), e, d)


def _statistic(r: SweepResult, statistic: str) -> Any:
    if statistic not in ("sup_dev", "mean_dev", "subopt"):
        raise ValueError(f"Invalid statistic: {statistic!r} (must be 'sup_dev', 'mean_dev' or 'subopt')")
    x = getattr(r, statistic)
    if x is None:
        raise ValueError(f"Invalid r: its {statistic} was not recorded (run chapter_sweeps)")
    return x


def _first_crossing(s_values: Any, x: Any, e: float, d: float) -> float:
    q, _ = quantile_band(np.maximum(np.asarray(x, dtype=np.float64), 1e-300), 1.0 - d)
    s = np.asarray(s_values, dtype=np.float64)
    below = np.nonzero(q <= e)[0]
    if below.size == 0:
        return math.inf
    j = int(below[0])
    if j == 0:
        return float(s[0])
    x0, x1, y0, y1 = math.log(s[j - 1]), math.log(s[j]), math.log(q[j - 1]), math.log(q[j])
    return float(math.exp(x0 + (math.log(e) - y0) * (x1 - x0) / (y1 - y0)))


def growth_slope(n: Any, s_star: Any) -> float:
    """Least-squares slope of ``ln s*`` on ``ln ln n``: 0 for a sample size flat in n, ``p`` for ``s* ∝ ln^p n``."""
    nn = np.asarray(n, dtype=np.float64)
    ss = np.asarray(s_star, dtype=np.float64)
    if nn.ndim != 1 or nn.shape != ss.shape or nn.size < 2 or np.any(nn < 2) or not np.all(np.isfinite(ss)) \
            or np.any(ss <= 0) or np.unique(nn).size < 2:
        raise ValueError("Invalid n/s_star: need ≥ 2 distinct n ≥ 2 and finite s* > 0 of the same length")
    x = np.log(np.log(nn))
    y = np.log(ss)
    xc = x - x.mean()
    return float(xc @ (y - y.mean()) / (xc @ xc))


def growth_ratio(n: Any, s_star: Any) -> float:
    """The headline statistic: the largest ``s*(n)/s*(n_min)`` over the other n — how much more the required
    sample size gets than at the fewest actions (≤ 1 when it never grows; ln(2n/δ)/ln(2n_min/δ) for a union
    bound over actions)."""
    nn = np.asarray(n, dtype=np.float64)
    ss = np.asarray(s_star, dtype=np.float64)
    if nn.ndim != 1 or nn.shape != ss.shape or nn.size < 2 or not np.all(np.isfinite(ss)) or np.any(ss <= 0) \
            or np.unique(nn).size != nn.size:
        raise ValueError("Invalid n/s_star: need ≥ 2 distinct n and finite s* > 0 of the same length")
    k = int(np.argmin(nn))
    return float(np.max(np.delete(ss, k)) / ss[k])


class NIndepStudy(NamedTuple):
    """The headline: ``s*(n)`` per n, its growth ratio (:func:`growth_ratio`, the test statistic) and slope, and
    the measured alternative on the same draws: the sample size at which the n per-action mean rewards converge
    uniformly (max_i |R̂_i − R̄_i| ≤ ε with probability 1 − δ), ``mean_s_star``, with its ratio and slope; and the
    rival planted in the method's own arm: ``union_s_star``, the s* of the measured sup-deviations multiplied by
    the union bound's factor :func:`union_factor` (the same pipeline, the same noise), with its ratio."""

    n: np.ndarray
    s_star: np.ndarray
    slope: float
    mean_s_star: np.ndarray
    mean_slope: float
    eps: float
    delta: float
    growth: float
    mean_growth: float
    union_s_star: np.ndarray | None = None
    union_growth: float | None = None


def union_factor(n: float, delta: float = DELTA, n_min: float = 2) -> float:
    """The union bound's accuracy factor over the actions, √(ln(2n/δ)/ln(2n_min/δ)): ε ∝ √(ln(2n/δ)/s), relative to
    the fewest actions — the rival's n-dependence, planted in the method's own sup-deviations (sceptic's review)."""
    delta = number("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    n_min = number("n_min", n_min, 1.0, math.inf)
    n = number("n", n, 1.0, math.inf)
    return math.sqrt(math.log(2 * n / delta) / math.log(2 * n_min / delta))


def nindep_study(sweeps: dict[int, SweepResult], eps: float = EPS, delta: float = DELTA) -> NIndepStudy:
    """``s*(n)`` at fixed (ε, δ) from the chapter's sweeps, and the test statistic with its controls."""
    if not isinstance(sweeps, dict) or len(sweeps) < 2 or not all(isinstance(r, SweepResult)
                                                                  for r in sweeps.values()):
        raise TypeError("Invalid sweeps: must be chapter_sweeps(...)'s dict with ≥ 2 action counts")
    n = np.array(sorted(sweeps), dtype=np.float64)
    s_star = np.array([required_samples(sweeps[int(k)], eps, delta) for k in n])
    if not np.all(np.isfinite(s_star)):
        raise ValueError(f"Invalid eps: {eps} is not reached on the grid for every n (s* = {s_star})")
    alt = np.array([required_samples(sweeps[int(k)], eps, delta, statistic="mean_dev") for k in n])
    if not np.all(np.isfinite(alt)):
        raise ValueError(f"Invalid eps: {eps} is not reached by the per-action means for every n (s* = {alt})")
    n_min = float(n.min())
    union = np.array([required_samples(sweeps[int(k)]._replace(sup_dev=sweeps[int(k)].sup_dev
                                                                * union_factor(float(k), delta, n_min)), eps, delta)
                      for k in n])
    if not np.all(np.isfinite(union)):
        raise ValueError(f"Invalid eps: {eps} is not reached by the planted union-bound growth for every n "
                         f"(s* = {union})")
    return NIndepStudy(n, s_star, growth_slope(n, s_star), alt, growth_slope(n, alt), float(eps), float(delta),
                       growth_ratio(n, s_star), growth_ratio(n, alt), union, growth_ratio(n, union))


def law_misfit(x: Any, y: Any) -> float:
    """√(1 − R²) of the least-squares line y ≈ a + b·x: the residual RMS over the RMS spread of y (0 = exact law,
    1 = no better than a constant). Scores a law of s*(δ) with its two free parameters."""
    xx = np.asarray(x, dtype=np.float64)
    yy = np.asarray(y, dtype=np.float64)
    finite = bool(np.all(np.isfinite(xx)) and np.all(np.isfinite(yy)))
    if xx.ndim != 1 or xx.shape != yy.shape or xx.size < 3 or not finite or np.ptp(xx) == 0:
        raise ValueError("Invalid x/y: need ≥ 3 finite points of the same length with distinct x")
    yc = yy - yy.mean()
    tss = float(yc @ yc)
    if tss == 0.0:
        return 0.0
    xc = xx - xx.mean()
    b = float(xc @ yc) / float(xc @ xc)
    res = yc - b * xc
    return float(math.sqrt(max(float(res @ res), 0.0) / tss))


class ConfidenceStudy(NamedTuple):
    """Corollary 1.2's confidence scan: ``s_star[k]``, the least s with the (1 − δ_k)-quantile of U(α*) − U(α̂_s)
    ≤ ε, for each ``delta[k]``; ``misfit[law]`` the :func:`law_misfit` of each law of :data:`CONFIDENCE_LAWS`;
    ``subopt_quantiles`` (len(delta), len(s)) the measured quantile curves; ``bernoulli_s_star`` and
    ``bernoulli_misfit`` the same pipeline on the mean of s Bernoulli(½) draws (:func:`bernoulli_deviations`, same
    repetitions, grid and δ's, ε = :data:`COR_BERNOULLI_EPS`), the generic alternative."""

    delta: np.ndarray
    s_star: np.ndarray
    misfit: dict[str, float]
    s: np.ndarray
    subopt_quantiles: np.ndarray
    eps: float
    reps: int
    bernoulli_s_star: np.ndarray | None = None
    bernoulli_misfit: dict[str, float] | None = None


def confidence_study(seed: int, reps: int = COR_REPS, s_values: tuple[int, ...] = COR_S_VALUES,
                     deltas: tuple[float, ...] = COR_DELTAS, eps: float = COR_EPS,
                     n_actions: int = COR_ACTIONS) -> ConfidenceStudy:
    """s*(δ) at fixed ε for each δ (Corollary 1.2: s = O(ln(1/δ)/ε²)) from ``reps`` nested i.i.d. streams drawn
    with ``seed`` on the chapter population with ``n_actions`` actions, and each law's misfit over δ."""
    sd = integer("seed", seed, 0, 2**63 - 1 - COR_SEED_OFFSET - BERNOULLI_SEED_OFFSET)
    B = integer("reps", reps, 2)
    e = number("eps", eps, 0.0, 1.0, low_open=True)
    if not isinstance(deltas, (tuple, list)):
        raise TypeError(f"Invalid deltas: {deltas!r} (must be a tuple of ≥ 3 confidence levels)")
    if len(deltas) < 3:
        raise ValueError(f"Invalid deltas: {deltas!r} (must hold ≥ 3 confidence levels: a scan)")
    d = np.array([number("deltas", x, 0.0, 1.0, low_open=True, high_open=True) for x in deltas])
    if np.unique(d).size != d.size:
        raise ValueError(f"Invalid deltas: {deltas!r} (must be distinct)")
    r = sample_complexity_sweep(chapter_population(n_actions), s_values, B, sd + COR_SEED_OFFSET)
    s_star = np.array([_first_crossing(r.s, r.subopt, e, float(x)) for x in d])
    if not np.all(np.isfinite(s_star)):
        raise ValueError(f"Invalid eps: {eps} is not reached on the s-grid for every δ (s* = {s_star})")
    quant = np.stack([quantile_band(np.maximum(r.subopt, 1e-300), 1.0 - float(x))[0] for x in d])
    misfit = {name: law_misfit(f(d), s_star) for name, f in CONFIDENCE_LAWS.items()}
    y = bernoulli_deviations(sd + COR_SEED_OFFSET, B, s_values)
    b_star = np.array([_first_crossing(r.s, y, COR_BERNOULLI_EPS, float(x)) for x in d])
    b_mis = ({name: law_misfit(f(d), b_star) for name, f in CONFIDENCE_LAWS.items()}
             if np.all(np.isfinite(b_star)) else None)
    return ConfidenceStudy(d, s_star, misfit, np.asarray(r.s, dtype=np.float64), quant, e, B, b_star, b_mis)
