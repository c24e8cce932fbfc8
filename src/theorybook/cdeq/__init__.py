"""Consistency Deep Equilibrium Models (C-DEQ; Lin, Ling, Xu & Qiu, ICML 2026, arXiv 2602.03024) at CPU scale.

A linear-recurrence DEQ on ``load_digits`` (our toy) is solved by truncated Picard, Anderson and Broyden iterations
(torchdeq) and by a consistency-distilled student that jumps from any state of the Picard trajectory to the fixed
point. Only the abstract and the authors' code could be read: the student's form follows the code [paper], its time
convention (identity at the equilibrium end) and the task loss are our reconstruction.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):
``digits_split``, ``LinearDEQ`` (``.layer``, ``.fixed_point``, ``.picard``, ``.picard_states``, ``.from_weights``),
``train_teacher``, ``anderson2``, ``karras_times``, ``trajectory_times``, ``skip_out``, ``ConsistencyStudent``,
``train_student``, ``explicit_distillation``, ``solve``, ``cdeq_infer``, ``picard_nfe_to``; the chapter's study
``run_experiment`` → ``Run`` (curves per method), ``evaluate``, ``nfe_to_match``; verdict rows
``deterministic_verdicts()``, ``seeded_verdicts(seed)``, ``experiment_verdicts(run)``; ``CHAPTER_SEEDS``.
Sympy derivations: :mod:`theorybook.cdeq.theory`. Widget: :func:`theorybook.cdeq.widgets.explorer`.
"""

from __future__ import annotations

import functools as _functools

from .experiment import (
    CHAPTER_SEEDS,
    KS,
    ConsistencyStudent,
    Curve,
    ExplicitStudent,
    LinearDEQ,
    Run,
    Solved,
    Split,
    anderson2,
    cdeq_infer,
    deterministic_verdicts,
    digits_split,
    evaluate,
    experiment_verdicts,
    explicit_distillation,
    karras_times,
    nfe_to_match,
    picard_nfe_to,
    run_experiment,
    seeded_verdicts,
    skip_out,
    solve,
    train_student,
    train_teacher,
    trajectory_times,
)

__all__ = [
    "CHAPTER_SEEDS", "KS", "ConsistencyStudent", "Curve", "ExplicitStudent", "LinearDEQ", "Run", "Solved", "Split",
    "anderson2", "cdeq_infer", "deterministic_verdicts", "digits_split", "evaluate", "experiment_verdicts",
    "explicit_distillation", "karras_times", "nfe_to_match", "picard_nfe_to", "run_experiment", "seeded_verdicts",
    "skip_out", "solve", "train_student", "train_teacher", "trajectory_times",
]

_TINY = {"steps": 2, "width": 8, "batch": 8}


@_functools.lru_cache(maxsize=1)
def _fuzz_base() -> dict:
    """Cheap valid arguments for tests/test_api_fuzz.py, built on first use (a tiny run: 2 training steps)."""
    import torch

    split = digits_split(0)
    teacher = LinearDEQ(seed=0).requires_grad_(False)
    student = ConsistencyStudent(teacher, width=8)
    run = run_experiment(0, teacher_steps=2, nfes=(1, 2, 4), **_TINY)
    x = split.x_test[:5]
    return {
        "ConsistencyStudent": {"teacher": teacher, "width": 8},
        "train_teacher": {"split": split, "steps": 2},
        "train_student": {"teacher": teacher, "split": split, **_TINY},
        "explicit_distillation": {"teacher": teacher, "split": split, **_TINY},
        "anderson2": {"f": lambda z: 0.5 * z + 1.0, "z_prev": torch.zeros(2, 3, dtype=torch.float64),
                      "z_curr": torch.ones(2, 3, dtype=torch.float64)},
        "skip_out": {"t": 0.5},
        "solve": {"teacher": teacher, "x": x, "nfe": 3},
        "cdeq_infer": {"student": student, "x": x, "nfe": 2},
        "evaluate": {"teacher": teacher, "student": student, "x": x, "y": split.y_test[:5], "nfes": (1, 2, 4)},
        "run_experiment": {"teacher_steps": 2, "nfes": (1, 2, 4), **_TINY},
        "nfe_to_match": {"curve": run.curves["picard"], "target": 0.5},
        "experiment_verdicts": {"run": run},
        "summarize": {"run": run},
        "render": {"run": run},
        "explorer": {"run": run},
    }


def __getattr__(name: str):
    if name == "FUZZ_BASE":
        return _fuzz_base()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
