"""The chapter-scale runs, seeded: one teacher (the digits teacher or the hard teacher), its consistency student, the
controls (explicit distillation, a logistic regression on the pixels and, optionally, the student-as-regressor), and
every method's test accuracy and distance to ``z*`` at every NFE from 1."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch import nn

from ..device import one_thread, resolve_device
from ..validate import integer, number, one_of
from .evaluation import Curve, _budgets, evaluate, from_states, score
from .model import (
    ConsistencyStudent,
    ExplicitStudent,
    LinearDEQ,
    Split,
    digits_split,
    hard_teacher,
    teacher_labels,
)
from .training import explicit_distillation, logistic_regression, regressor_student, train_student, train_teacher

__all__ = ["BATCH", "CHAPTER_SEEDS", "GAIN", "LR", "START_SHARE", "STEPS", "TEACHERS", "WIDTH", "Run",
           "run_experiment"]

#: The seed of the chapter's experiment (split, teachers, students and controls all derive from it).
CHAPTER_SEEDS = (0,)
#: The chapter's scale (a parameter; the issue's is steps 2000, width 256, batch 256, lr 1e-3, uniform positions).
STEPS, WIDTH, BATCH, LR, START_SHARE = 1000, 128, 128, 3e-3, 0.25
#: The hard teacher's gain on ``U`` and ``b`` (chosen in development so that a shallow regressor misses ``z*``).
GAIN = 8.0
TEACHERS = ("digits", "hard")
CURVES = ("picard", "anderson", "broyden", "cdeq-refine", "cdeq-rejump")


class Run(NamedTuple):
    """Everything one run measures: the data (labels: the true digits, or the hard teacher's own predictions), the
    models, the curves per method (every NFE from 1), the student from intermediate states (``states``; and the
    student-as-regressor's, ``regressor_states``, when it was trained), and the 0-NFE controls' scores."""

    split: Split
    teacher: LinearDEQ
    student: ConsistencyStudent
    ema: ConsistencyStudent
    explicit: ExplicitStudent
    logistic: nn.Linear
    regressor: ConsistencyStudent | None
    curves: dict[str, Curve]
    states: Curve
    regressor_states: Curve | None
    exact_accuracy: float
    explicit_accuracy: float
    explicit_rel_error: float
    logistic_accuracy: float
    config: dict[str, Any]


def run_experiment(seed: int = 0, *, teacher: str = "digits", steps: int = STEPS, width: int = WIDTH,
                   batch: int = BATCH, lr: float = LR, start_share: float = START_SHARE, teacher_steps: int = 200,
                   gain: float = GAIN, regressor: bool = False, nfe_max: int = 512, solver_max: int = 48,
                   base: LinearDEQ | None = None, device: str | torch.device | None = None) -> Run:
    """The chapter's experiment at seed ``seed`` on the ``"digits"`` teacher (trained on the true labels) or the
    ``"hard"`` teacher (:func:`~theorybook.cdeq.model.hard_teacher` of the digits teacher, scored on its own
    predictions). ``base`` reuses an already trained digits teacher of the same seed; ``regressor=True`` also trains
    the student-as-regressor. All students and controls share the steps, width, batch and schedule."""
    seed = integer("seed", seed, 0)
    one_of("teacher", teacher, TEACHERS)
    gain = number("gain", gain, 0.0, 1e4, low_open=True)
    nfe_max, solver_max = _budgets(nfe_max, solver_max)  # before any training
    if base is not None and not isinstance(base, LinearDEQ):
        raise TypeError(f"Invalid base: {type(base).__name__} (must be a LinearDEQ or None)")
    if not isinstance(regressor, bool):
        raise TypeError(f"Invalid regressor: {regressor!r} (must be a bool)")
    with one_thread(resolve_device(device)):
        split = digits_split(seed, device=device)
        t = base if base is not None else train_teacher(split, steps=teacher_steps, seed=seed)
        if teacher == "hard":
            t = hard_teacher(t, gain, seed=seed + 1)
            split = teacher_labels(t, split)
        kw = {"steps": steps, "lr": lr, "batch": batch, "seed": seed, "width": width}
        student, ema = train_student(t, split, start_share=start_share, **kw)
        explicit = explicit_distillation(t, split, **kw)
        logistic = logistic_regression(split)
        reg = regressor_student(t, split, **kw) if regressor else None
        x, y = split.x_test, split.y_test
        curves = evaluate(t, student, x, y, nfe_max=nfe_max, solver_max=solver_max)
        states = from_states(student, x, y)
        reg_states = from_states(reg, x, y) if reg is not None else None
        with torch.no_grad():
            exact_acc = float((t.logits(t.fixed_point(x)).argmax(-1) == y).double().mean())
        ex_acc, ex_err = score(t, explicit, x, y)
        lg_acc, _ = score(t, logistic, x, y)
    config = {"seed": seed, "teacher": teacher, "steps": steps, "width": width, "batch": batch, "lr": lr,
              "start_share": start_share, "teacher_steps": teacher_steps, "gain": gain if teacher == "hard" else 1.0,
              "gamma": t.gamma, "hidden": t.hidden, "n_train": int(split.x_train.shape[0]),
              "n_test": int(x.shape[0]), "nfe_max": nfe_max, "solver_max": solver_max}
    return Run(split, t, student, ema, explicit, logistic, reg, curves, states, reg_states, exact_acc, ex_acc,
               ex_err, lg_acc, config)

