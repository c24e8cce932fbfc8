"""A grid search whose range bounds itself: Grasp-style parameter-free SGD (our reconstruction of Zhao, Yan,
Attia, Koren, Zhang & Zhao, ICML 2026, arXiv 2604.16888). Only the paper's abstract and opening could be read: the
grid, the budget split and the scoring rule are ours [reconstruction]; the tuned-SGD rate is standard.

The package's face (re-exports and constants; no logic):

* :mod:`~theorybook.grasp.theory` — sympy derivations and closed forms (anchor, grid, tuned step, score bias);
* :mod:`~theorybook.grasp.methods` — robust regression, batched SGD, the Grasp-style grid, the oracle, DoG,
  AdaGrad-norm and one SGD run at the anchor (the rival without the search);
* :mod:`~theorybook.grasp.convex` — Nesterov's chain quadratic, GD, AC-SA and the grid over them;
* :mod:`~theorybook.grasp.experiment` — the chapter-scale runs and their scale constants;
* :mod:`~theorybook.grasp.verdicts` — every row the chapter shows (``PAPER_CLAIMS``, ``seeded_verdicts``,
  ``deterministic_verdicts``, ``chapter_verdicts``);
* :mod:`~theorybook.grasp.widgets` — the panel.
"""

from __future__ import annotations

from .convex import (
    BASES,
    ChainQuadratic,
    ConvexGrasp,
    ConvexOracle,
    ConvexRun,
    ConvexStudy,
    anchored_convex,
    chain_quadratic,
    convex_study,
    grasp_convex,
    loglog_slope,
    oracle_convex,
    run_convex,
)
from .convex import FUZZ_BASE as _FUZZ_CONVEX
from .experiment import (
    BUDGETS,
    CONVEX_D,
    CONVEX_SLOPE_GAP,
    CONVEX_TS,
    CS,
    DIM,
    LAM,
    N_POOL,
    POOL_SEED,
    SEEDS,
    SIGMAS,
    SMALL_T,
    T_VERDICT,
    TUNING_GAIN,
    WIDE_GRID,
    XSCALES,
    BudgetCurve,
    HeadlineRun,
    budget_curve,
    chapter_convex,
    chapter_problem,
    chapter_run,
    dog_parity,
    per_problem,
    smoothness_bound,
)
from .experiment import FUZZ_BASE as _FUZZ_EXPERIMENT
from .methods import FUZZ_BASE as _FUZZ_METHODS
from .methods import (
    GraspResult,
    OracleResult,
    RobustRegression,
    SGDRun,
    adagrad_norm,
    anchored_sgd,
    dog,
    exact_anchor,
    grad_norm,
    grasp,
    oracle,
    problem_grid,
    robust_regression,
    run_sgd,
    unbiased_sq_norm,
)
from .theory import (
    anchor_step,
    derive_self_bounding,
    derive_sgd_tuning,
    derive_ustat_bias,
    grasp_grid,
    grid_size,
    sgd_step,
    target_rate,
)
from .verdicts import FUZZ_BASE as _FUZZ_VERDICTS
from .verdicts import PAPER_CLAIMS, chapter_verdicts, deterministic_verdicts, headline_numbers, seeded_verdicts

__all__ = [
    "GraspResult", "OracleResult", "RobustRegression", "SGDRun", "HeadlineRun", "BudgetCurve", "budget_curve",
    "BUDGETS", "SMALL_T", "adagrad_norm", "anchor_step", "anchored_sgd",
    "chapter_problem", "chapter_run", "chapter_verdicts", "deterministic_verdicts", "derive_self_bounding",
    "derive_sgd_tuning", "derive_ustat_bias", "dog", "dog_parity", "exact_anchor", "grad_norm", "grasp",
    "grasp_grid", "grid_size", "headline_numbers", "oracle", "per_problem", "problem_grid", "robust_regression",
    "run_sgd", "seeded_verdicts", "sgd_step", "smoothness_bound", "target_rate", "unbiased_sq_norm",
    "CHAPTER_SEEDS", "CS", "XSCALES", "WIDE_GRID", "SIGMAS",
    "N_POOL", "DIM", "LAM", "SEEDS", "T_VERDICT", "POOL_SEED", "TUNING_GAIN",
    "FUZZ_BASE", "PAPER_CLAIMS", "BASES", "ChainQuadratic", "ConvexGrasp", "ConvexOracle", "ConvexRun",
    "ConvexStudy", "anchored_convex", "chain_quadratic", "convex_study", "chapter_convex", "grasp_convex",
    "loglog_slope", "oracle_convex", "run_convex", "CONVEX_D", "CONVEX_TS", "CONVEX_SLOPE_GAP",
]

CHAPTER_SEEDS = (2026,)

# Cheap arguments for tests/test_api_fuzz.py, gathered from the submodules.
FUZZ_BASE = {**_FUZZ_METHODS, **_FUZZ_CONVEX, **_FUZZ_EXPERIMENT, **_FUZZ_VERDICTS}
