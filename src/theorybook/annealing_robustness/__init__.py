"""Learning-rate annealing makes a coarse grid search safe (Attia & Koren, arXiv 2503.09411).

Public API (every function validates its arguments; ``ValueError``/``TypeError`` names the parameter, value and
range):

``schedule(name, p=None)`` — h: [0, 1] → [0, 1] (fixed, inverse_sqrt, polynomial (1−u)^p, linear, cosine).
``stepsizes(eta, schedule, T)`` — η_t = η·h((t−1)/T), t = 1..T (batched over a tensor of η).
``ideal_eta`` / ``classical_eta`` — the bound's own ideal base stepsize / the classical D/(G√T), units D/G.
``suffix_bound(rho, schedule, T)`` — [reconstruction] restarted suffix bound at η = ρ·η*, minimised over τ.
``family_run(schedules, rho, T)`` — projected SGD on the 1-D family f = δx²/2 (or δ|x+1|), δ ∈ [T^{−1/2}, 1].
``worst_case_experiment(seed)`` / ``worst_case_verdicts(run)`` — the chapter's seeded worst-case rows;
``abs_family_experiment(seed)`` / ``abs_verdicts(run)`` — the same on the non-smooth family δ|x+1|.
``run_sgd(problem, eta, schedule, T, seeds)`` — projected SGD, stepsizes × seeds in one tensor program.
``misspecification_curve(problem, schedule, T, seeds)`` — measured excess loss vs ρ around the tuned η*.
``fit_exponent(rhos, values)`` — log–log slope on a fit window (wraps :func:`theorybook.fit.loglog_slope`).
``problem_bound(problem, eta, schedule, T)`` — the same bound in a problem's units (D = 2R, G = max‖a_i‖).
``make_problem(kind)`` — synthetic logistic / least-absolute-deviation regression with exact f*.
Sympy derivations: ``derive_balance``, ``derive_cosine_endpoint``, ``derive_fixed``, ``schedule_integrals``.
Widget: :func:`theorybook.annealing_robustness.widgets.explorer`.

Every verdict row the chapter shows, with its control: :mod:`theorybook.annealing_robustness.verdicts`
(``headline``, ``worst_case_verdicts``, ``seeded_verdicts(seed)`` — the stochastic rows for a seed, re-run by the
seed-robustness test —, ``PAPER_CLAIMS``); the chapter uses :data:`CHAPTER_SEEDS`.
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
    classical_eta,
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
from .verdicts import PAPER_CLAIMS, abs_verdicts, headline, seeded_verdicts, worst_case_verdicts
from .worst_case import (
    FAMILIES,
    FamilyRun,
    abs_family_experiment,
    default_deltas,
    family_run,
    worst_case_experiment,
)

#: The seed(s) the chapter's worst-case experiment uses.
CHAPTER_SEEDS: tuple[int, ...] = (0,)


__all__ = [
    "CHAPTER_SEEDS",
    "FAMILIES",
    "PAPER_CLAIMS",
    "PROBLEMS",
    "SCHEDULES",
    "BalanceDerivation",
    "FamilyRun",
    "MisspecificationCurve",
    "Problem",
    "SGDRun",
    "Schedule",
    "abs_family_experiment",
    "abs_verdicts",
    "classical_eta",
    "default_deltas",
    "derive_balance",
    "derive_cosine_endpoint",
    "derive_fixed",
    "family_run",
    "fit_exponent",
    "headline",
    "ideal_eta",
    "make_problem",
    "misspecification_curve",
    "predicted_exponent",
    "problem_bound",
    "run_sgd",
    "schedule",
    "schedule_integrals",
    "seeded_verdicts",
    "stepsizes",
    "suffix_bound",
    "worst_case_experiment",
    "worst_case_verdicts",
]
