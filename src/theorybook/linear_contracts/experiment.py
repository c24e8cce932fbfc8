"""The chapter-scale runs: the fixed populations, the seeded sample-complexity sweep, and the headline experiment —
the sample size needed at fixed (ε, δ) as the number of actions n spans three decades.

Headline design [reconstruction]. For each n in :data:`ACTIONS` (2 … 2,000) a fixed population of
:data:`N_TYPES` types (:func:`~.engine.random_types`, seed :data:`POP_SEED`); :data:`REPS` independent streams of
i.i.d. types shared by every population (common random numbers); nested samples on the grid :data:`S_VALUES`
(ratio √2). For each n, ``s*(n)`` is the least s at which the (1 − δ)-quantile of ``sup_α |Û_s − U|`` falls to ε
(:func:`required_samples`: first crossing on the grid, log–log interpolation between the bracketing sizes). The
statistic is the least-squares slope ``b`` of ``ln s*(n)`` on ``ln ln n``: Theorem 1.1 (no n in the bound) predicts
no growth; a bound with a union over actions, ε ∝ √(ln n / s), predicts ``s* ∝ ln n`` (b = 1), and ε ∝ ln n/√s
predicts ``s* ∝ ln² n`` (b = 2).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from ..device import one_thread
from ..validate import integer, number
from .engine import ContractTypes, SweepResult, kinks, quantile_band, random_types, sample_complexity_sweep

__all__ = [
    "N_TYPES", "N_OUTCOMES", "ACTIONS", "MONO_ACTIONS", "S_VALUES", "REPS", "DELTA", "EPS", "POP_SEED",
    "NIndepStudy", "chapter_population", "chapter_sweeps", "required_samples", "nindep_study", "growth_slope",
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


class NIndepStudy(NamedTuple):
    """The headline: ``s*(n)`` per n and its growth slope, and the measured alternative on the same draws: the
    sample size at which the n per-action mean rewards converge uniformly (max_i |R̂_i − R̄_i| ≤ ε with
    probability 1 − δ), ``mean_s_star``, with its slope."""

    n: np.ndarray
    s_star: np.ndarray
    slope: float
    mean_s_star: np.ndarray
    mean_slope: float
    eps: float
    delta: float


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
    return NIndepStudy(n, s_star, growth_slope(n, s_star), alt, growth_slope(n, alt), float(eps), float(delta))
