"""Consistency Deep Equilibrium Models (C-DEQ; Lin, Ling, Xu & Qiu, ICML 2026, arXiv 2602.03024) at CPU scale.

Two linear-recurrence DEQs on ``load_digits`` (our toys) — the digits teacher and the hard teacher — are solved by
Picard, Anderson and Broyden at every NFE from 1 and by a consistency-distilled student that jumps from any state of
the Picard trajectory to the fixed point; explicit distillation, a logistic regression on the pixels and the
student-as-regressor are the controls. Only the abstract and the authors' code could be read: the student's form
follows the code [paper], its time convention (identity at the equilibrium end) and the task loss are our
reconstruction.

Modules: :mod:`~theorybook.cdeq.model` (data, teachers, time grids, students), :mod:`~theorybook.cdeq.solvers`,
:mod:`~theorybook.cdeq.training`, :mod:`~theorybook.cdeq.evaluation`, :mod:`~theorybook.cdeq.experiment` (the
chapter's runs), :mod:`~theorybook.cdeq.verdicts` (every row the chapter shows), :mod:`~theorybook.cdeq.theory`
(sympy), :mod:`~theorybook.cdeq.widgets` (the panel). Public functions validate their arguments (bad input raises
``ValueError``/``TypeError`` naming parameter, value and range).
"""

from __future__ import annotations

from ._fuzz import fuzz_base as _fuzz_base
from .evaluation import Curve, accuracy, cdeq_infer, evaluate, from_states, nfe_to_match, rel_error, score
from .experiment import BATCH, CHAPTER_SEEDS, GAIN, LR, START_SHARE, STEPS, WIDTH, Run, run_experiment
from .model import (
    KS,
    ConsistencyStudent,
    ExplicitStudent,
    LinearDEQ,
    Split,
    digits_split,
    hard_teacher,
    karras_times,
    skip_out,
    teacher_labels,
    trajectory_times,
)
from .solvers import Solved, anderson2, picard_nfe_to, solve, solver_trajectory, torchdeq_solve
from .training import explicit_distillation, logistic_regression, regressor_student, train_student, train_teacher
from .verdicts import (
    PAPER_CLAIMS,
    chapter_table,
    deterministic_verdicts,
    few_step_ratio,
    headline,
    seeded_verdicts,
)

__all__ = [
    "BATCH", "CHAPTER_SEEDS", "GAIN", "KS", "LR", "PAPER_CLAIMS", "START_SHARE", "STEPS", "WIDTH",
    "ConsistencyStudent", "Curve", "ExplicitStudent", "LinearDEQ", "Run", "Solved", "Split", "accuracy", "anderson2",
    "cdeq_infer", "chapter_table", "deterministic_verdicts", "digits_split", "evaluate", "explicit_distillation",
    "few_step_ratio", "from_states", "hard_teacher", "headline", "karras_times", "logistic_regression",
    "nfe_to_match", "picard_nfe_to", "regressor_student", "rel_error", "run_experiment", "score", "seeded_verdicts",
    "skip_out", "solve", "solver_trajectory", "teacher_labels", "torchdeq_solve", "train_student", "train_teacher",
    "trajectory_times",
]


def __getattr__(name: str):
    if name == "FUZZ_BASE":
        return _fuzz_base()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
