"""The chapter-scale runs, seeded: one teacher (the digits teacher or the hard teacher), its consistency student, the
controls (explicit distillation, a logistic regression on the pixels, the linear readout and the quasi-Newton step of
one layer call and, optionally, the student-as-regressor), and every method's test accuracy and distance to ``z*`` at
every NFE from 1."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch import nn

from ..device import one_thread, resolve_device
from ..validate import integer, number, one_of
from .evaluation import Curve, _budgets, cdeq_infer, evaluate, from_states, refine_curve, rejump_curve, score
from .model import (
    ConsistencyStudent,
    ExplicitStudent,
    LinearDEQ,
    Split,
    digits_split,
    hard_teacher,
    teacher_labels,
)
from .training import (
    explicit_distillation,
    linear_readout,
    logistic_regression,
    qn_step,
    quasi_newton,
    readout_features,
    regressor_student,
    train_student,
    train_teacher,
)

__all__ = ["AUGMENT", "BATCH", "CHAPTER_SEEDS", "EXPLICIT_ACT", "EXPLICIT_LR", "GAIN", "GATE_SCALE", "LR", "LR_GRID",
           "START_SHARE", "STEPS", "S_MIN", "TEACHERS", "WIDTH", "Run", "run_experiment"]

#: The seed of the chapter's experiment (split, teachers, students and controls all derive from it).
CHAPTER_SEEDS = (0,)
#: The chapter's scale (a parameter; the issue's is steps 2000, width 256, batch 256, lr 1e-3, uniform positions).
STEPS, WIDTH, BATCH, START_SHARE = 1000, 128, 128, 0.25
#: The step-size grid every trained model is tuned over (pilot seeds 9001–9003, a 1100/300 validation split of the
#: training images, the student's budget: ``bench/cdeq_pilot.py``, ``bench/results/cdeq_pilot.json``).
LR_GRID = (1e-3, 3e-3, 1e-2)
#: The tuned choices: the student's step size, and the explicit regressor's step size and nonlinearity (grid
#: ``LR_GRID`` × {SiLU, tanh}; tanh is the teacher's own nonlinearity).
LR, EXPLICIT_LR, EXPLICIT_ACT = 1e-2, 1e-2, "tanh"
#: The paper code's augmentation probability (each coordinate of a training state replaced by z*'s), for A4.
AUGMENT = 0.1
#: The hard teacher's gain on ``U`` and ``b`` (steep features a regressor from ``x`` must learn).
GAIN = 8.0
#: The hard teacher's input gate (:meth:`~theorybook.cdeq.model.LinearDEQ.gate`): scale of ``G`` and the floor s_min.
GATE_SCALE, S_MIN = 64.0, 0.9
TEACHERS = ("digits", "hard")
CURVES = ("picard", "anderson", "broyden", "cdeq-refine", "cdeq-rejump")


class Run(NamedTuple):
    """Everything one run measures: the data (labels: the true digits, or the hard teacher's own predictions), the
    models, the curves per method (every NFE from 1; ``curves["readout"]``: the linear readout of the first layer
    call, ``curves["quasi-newton"]``: the quasi-Newton step from ``z₀``, both refined by Picard steps), the student
    from intermediate states (``states``; and the student-as-regressor's, ``regressor_states``, when it was trained),
    the 0-NFE controls' scores and, when trained, the student with the paper's augmentation (``augmented``) and its
    re-jump curve (``augmented_rejump``)."""

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
    augmented: ConsistencyStudent | None = None
    augmented_rejump: Curve | None = None


def run_experiment(seed: int = 0, *, teacher: str = "digits", steps: int = STEPS, width: int = WIDTH,
                   batch: int = BATCH, lr: float = LR, start_share: float = START_SHARE, teacher_steps: int = 200,
                   gain: float = GAIN, gate_scale: float = GATE_SCALE, s_min: float = S_MIN,
                   regressor: bool = False, augment: bool = False, explicit_lr: float = EXPLICIT_LR,
                   explicit_act: str = EXPLICIT_ACT, nfe_max: int = 512, solver_max: int = 48,
                   base: LinearDEQ | None = None, device: str | torch.device | None = None) -> Run:
    """The chapter's experiment at seed ``seed`` on the ``"digits"`` teacher (trained on the true labels) or the
    ``"hard"`` teacher (:func:`~theorybook.cdeq.model.hard_teacher` of the digits teacher, scored on its own
    predictions). ``base`` reuses an already trained digits teacher of the same seed; ``regressor=True`` also trains
    the student-as-regressor. All students and controls share the steps, width, batch and schedule."""
    seed = integer("seed", seed, 0)
    one_of("teacher", teacher, TEACHERS)
    gain = number("gain", gain, 0.0, 1e4, low_open=True)
    gate_scale = number("gate_scale", gate_scale, 0.0, 1e4)
    s_min = number("s_min", s_min, 0.0, 1.0, high_open=True)
    number("explicit_lr", explicit_lr, 0.0, 1.0, low_open=True)
    one_of("explicit_act", explicit_act, ("silu", "tanh"))
    nfe_max, solver_max = _budgets(nfe_max, solver_max)  # before any training
    if base is not None and not isinstance(base, LinearDEQ):
        raise TypeError(f"Invalid base: {type(base).__name__} (must be a LinearDEQ or None)")
    for name, flag in (("regressor", regressor), ("augment", augment)):
        if not isinstance(flag, bool):
            raise TypeError(f"Invalid {name}: {flag!r} (must be a bool)")
    with one_thread(resolve_device(device)):
        split = digits_split(seed, device=device)
        t = base if base is not None else train_teacher(split, steps=teacher_steps, seed=seed)
        if teacher == "hard":
            t = hard_teacher(t, gain, gate_scale=gate_scale, s_min=s_min, seed=seed + 1)
            split = teacher_labels(t, split)
        kw = {"steps": steps, "lr": lr, "batch": batch, "seed": seed, "width": width}
        student, ema = train_student(t, split, start_share=start_share, **kw)
        explicit = explicit_distillation(t, split, **{**kw, "lr": explicit_lr}, act=explicit_act)
        logistic = logistic_regression(split)
        reg = regressor_student(t, split, **kw) if regressor else None
        aug = train_student(t, split, start_share=start_share, augment=AUGMENT, **kw)[0] if augment else None
        x, y = split.x_test, split.y_test
        curves = evaluate(t, student, x, y, nfe_max=nfe_max, solver_max=solver_max)
        L, M = linear_readout(t, split), quasi_newton(t, split)
        with torch.no_grad():
            curves["readout"] = refine_curve(t, readout_features(t, x) @ L, x, y, nfe_max)
            curves["quasi-newton"] = refine_curve(t, qn_step(t, M, torch.zeros_like(t.injection(x)), x), x, y,
                                                  nfe_max)
            if reg is not None:
                curves["regressor-refine"] = refine_curve(t, cdeq_infer(reg, x, 1), x, y, nfe_max)
        aug_rejump = rejump_curve(aug, x, y) if aug is not None else None
        states = from_states(student, x, y)
        reg_states = from_states(reg, x, y) if reg is not None else None
        with torch.no_grad():
            exact_acc = float((t.logits(t.fixed_point(x)).argmax(-1) == y).double().mean())
        ex_acc, ex_err = score(t, explicit, x, y)
        lg_acc, _ = score(t, logistic, x, y)
    config = {"seed": seed, "teacher": teacher, "steps": steps, "width": width, "batch": batch, "lr": lr,
              "start_share": start_share, "teacher_steps": teacher_steps, "gain": gain if teacher == "hard" else 1.0,
              "gate_scale": gate_scale if teacher == "hard" else 0.0, "s_min": s_min if teacher == "hard" else 0.0,
              "gamma": t.gamma, "hidden": t.hidden, "n_train": int(split.x_train.shape[0]),
              "n_test": int(x.shape[0]), "nfe_max": nfe_max, "solver_max": solver_max,
              "explicit_lr": explicit_lr, "explicit_act": explicit_act, "augment": AUGMENT if augment else 0.0}
    return Run(split, t, student, ema, explicit, logistic, reg, curves, states, reg_states, exact_acc, ex_acc,
               ex_err, lg_acc, config, aug, aug_rejump)

