"""Learning-rate annealing makes a coarse grid search safe (Attia & Koren, arXiv 2503.09411).

Public API (every function validates its arguments; ``ValueError`` names the parameter, value and range):

``schedule(name, p=None)`` — h: [0, 1] → [0, 1] (fixed, inverse_sqrt, polynomial (1−u)^p, linear, cosine).
``stepsizes(eta, schedule, T)`` — η_t = η·h((t−1)/T), t = 1..T (batched over a tensor of η).
``run_sgd(problem, eta, schedule, T, seeds)`` — projected SGD, stepsizes × seeds in one tensor program.
``suffix_bound(rho, schedule, T)`` — [reconstruction] restarted suffix bound at η = ρ·η*, minimised over τ.
``misspecification_curve(problem, schedule, T, seeds)`` — measured excess loss vs ρ around the tuned η*.
``fit_exponent(rhos, values)`` — large-ρ log–log slope (wraps :func:`theorybook.fit.loglog_slope`).
``problem_bound(problem, eta, schedule, T)`` — the same bound in a problem's units (D = 2R, G = max‖a_i‖).
``make_problem(kind)`` — synthetic logistic / least-absolute-deviation regression with exact f*.
Sympy derivations: ``derive_balance``, ``derive_cosine_endpoint``, ``derive_fixed``, ``schedule_integrals``.
Widget: :func:`theorybook.annealing_robustness.widgets.explorer`.
"""

from .dynamics import (
    PROBLEMS,
    MisspecificationCurve,
    Problem,
    SGDRun,
    make_problem,
    misspecification_curve,
    problem_bound,
    run_sgd,
)
from .theory import (
    SCHEDULES,
    BalanceDerivation,
    Schedule,
    derive_balance,
    derive_cosine_endpoint,
    derive_fixed,
    fit_exponent,
    ideal_eta,
    predicted_exponent,
    schedule,
    schedule_integrals,
    stepsizes,
    suffix_bound,
)

__all__ = [
    "PROBLEMS",
    "SCHEDULES",
    "BalanceDerivation",
    "MisspecificationCurve",
    "Problem",
    "SGDRun",
    "Schedule",
    "derive_balance",
    "derive_cosine_endpoint",
    "derive_fixed",
    "fit_exponent",
    "ideal_eta",
    "make_problem",
    "misspecification_curve",
    "predicted_exponent",
    "problem_bound",
    "run_sgd",
    "schedule",
    "schedule_integrals",
    "stepsizes",
    "suffix_bound",
]
