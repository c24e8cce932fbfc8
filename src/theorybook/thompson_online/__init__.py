"""Thompson Sampling is regularised greed (Qu, Namkoong & Zeevi, "A Broader View of Thompson Sampling",
arXiv 2510.07208, ICML 2026), in the one-armed Gaussian bandit of the paper's figure.

Only the abstract, a TL;DR and one figure caption could be read: the identity "TS = argmax of greedy plus a
biserial-covariance regulariser" and the "shutdown" rule are **our reconstruction** of what they name.

Public API (arguments validated through :mod:`theorybook.validate`; bad input raises ``ValueError``/``TypeError``
naming the parameter, its value and the valid range):

``ts_probability(m, s)`` — x_TS = Φ(m/s).
``regularised_objective(x, m, s)`` — [reconstruction] x·m + s·φ(Φ⁻¹(x)), maximised at Φ(m/s).
``biserial_covariance(m, s)`` — Cov(1{D>0}, D) = s·φ(m/s), TS's instantaneous regret.
``posterior_sd(n, prior_var, noise_var)``, ``predictive_sd(...)``, ``expected_positive_part(u, sigma)``,
``numerical_argmax(m, s)``, ``two_step_ts_regret(...)``; sympy: ``theory.derive_*``.
``solve_bandit(horizon, ...)`` — exact Bayesian regret R_0…R_T of several policies by one backward induction.
``bayes_regret(policy, horizon, ...)``, ``optimal_boundary(horizon, ...)``; ``EXTRA_POLICIES`` (tempered TS, with and
without the shutdown's condition; the discounted stationary policy) for ``solve_bandit``.
``discounted_solution(gamma, ...)`` — the discounted problem solved exactly (one backward pass over n).
``simulate_regret(policy, horizon, trials, seed, ...)``, ``simulate_policies(...)`` — vectorised Monte Carlo.
``verdicts``: ``seeded_verdicts(seed)`` (stochastic rows; ``CHAPTER_SEEDS``: the chapter's seeds), ``exact_verdicts``
(deterministic rows) and ``PAPER_CLAIMS``.
Widget: :func:`theorybook.thompson_online.widgets.explorer`.
"""

from __future__ import annotations

from .dynamics import (
    EXTRA_POLICIES,
    POLICIES,
    BanditSolution,
    DiscountedSolution,
    MonteCarloRegret,
    bayes_regret,
    discounted_solution,
    optimal_boundary,
    simulate_policies,
    simulate_regret,
    solve_bandit,
)
from .theory import (
    biserial_covariance,
    expected_positive_part,
    numerical_argmax,
    posterior_sd,
    predictive_sd,
    regularised_objective,
    ts_probability,
    two_step_ts_regret,
)
from .verdicts import EXPERIMENT, PAPER_CLAIMS, experiment, seeded_verdicts

__all__ = [
    "CHAPTER_SEEDS",
    "DiscountedSolution",
    "EXPERIMENT",
    "EXTRA_POLICIES",
    "POLICIES",
    "BanditSolution",
    "MonteCarloRegret",
    "PAPER_CLAIMS",
    "bayes_regret",
    "biserial_covariance",
    "discounted_solution",
    "expected_positive_part",
    "experiment",
    "numerical_argmax",
    "optimal_boundary",
    "posterior_sd",
    "predictive_sd",
    "regularised_objective",
    "seeded_verdicts",
    "simulate_policies",
    "simulate_regret",
    "solve_bandit",
    "ts_probability",
    "two_step_ts_regret",
]

#: The seed(s) the chapter uses for its Monte Carlo.
CHAPTER_SEEDS: tuple[int, ...] = (2026,)

FUZZ_BASE = {
    "solve_bandit": {"horizon": 4, "grid": 51},
    "bayes_regret": {"policy": "ts", "horizon": 4, "grid": 51},
    "optimal_boundary": {"horizon": 4, "grid": 51},
    "simulate_policies": {"policies": ("ts", "optimal"), "horizon": 4, "trials": 10, "seed": 0, "grid": 51},
    "simulate_regret": {"policy": "ts", "horizon": 4, "trials": 10, "seed": 0, "grid": 51},
    "discounted_solution": {"gamma": 0.9, "grid": 51, "n_max": 20},
    "seeded_verdicts": {"seed": 0, "trials": 50, "horizon": 5, "grid": 51},
    "experiment": {"seed": 0, "trials": 50, "horizon": 5, "grid": 51},
}
