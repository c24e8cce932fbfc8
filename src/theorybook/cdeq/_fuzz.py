"""Cheap valid arguments for ``tests/test_api_fuzz.py`` (the package's ``FUZZ_BASE``), built on first use."""

from __future__ import annotations

import functools

_TINY = {"steps": 2, "width": 8, "batch": 8}
_CHEAP = {"teacher_steps": 2, "nfe_max": 9, "solver_max": 9, **_TINY}


@functools.lru_cache(maxsize=1)
def fuzz_base() -> dict:
    """A tiny run of each kind (2 training steps) and the arguments every public function needs."""
    import torch

    from .experiment import run_experiment
    from .model import ConsistencyStudent, LinearDEQ, Split, digits_split

    split = digits_split(0)
    teacher = LinearDEQ(seed=0).requires_grad_(False)
    student = ConsistencyStudent(teacher, width=8)
    digits = run_experiment(0, **_CHEAP)
    hard = run_experiment(0, teacher="hard", regressor=True, augment=True, base=digits.teacher, **_CHEAP)
    x = split.x_test[:5]
    # the table builders re-solve the teacher on the runs' splits: a few images keep a call to seconds (the fuzz calls
    # chapter_table once per bad seed)
    small = {k: r._replace(split=Split(r.split.x_train[:40], r.split.y_train[:40], r.split.x_test[:20],
                                       r.split.y_test[:20])) for k, r in (("digits", digits), ("hard", hard))}
    return {
        "ConsistencyStudent": {"teacher": teacher, "width": 8},
        "train_teacher": {"split": split, "steps": 2},
        "train_student": {"teacher": teacher, "split": split, **_TINY},
        "regressor_student": {"teacher": teacher, "split": split, **_TINY},
        "explicit_distillation": {"teacher": teacher, "split": split, **_TINY},
        "logistic_regression": {"split": split, "steps": 2},
        "hard_teacher": {"teacher": teacher},
        "teacher_labels": {"teacher": teacher, "split": split},
        "anderson2": {"f": lambda z: 0.5 * z + 1.0, "z_prev": torch.zeros(2, 3, dtype=torch.float64),
                      "z_curr": torch.ones(2, 3, dtype=torch.float64)},
        "skip_out": {"t": 0.5},
        "solve": {"teacher": teacher, "x": x, "nfe": 3},
        "solver_trajectory": {"teacher": teacher, "x": x, "nfe_max": 3},
        "torchdeq_solve": {"teacher": teacher, "x": x, "max_iter": 3},
        "cdeq_infer": {"student": student, "x": x, "nfe": 2},
        "evaluate": {"teacher": teacher, "student": student, "x": x, "y": split.y_test[:5], "nfe_max": 4,
                     "solver_max": 4, "rejump_max": 2},
        "from_states": {"student": student, "x": x, "y": split.y_test[:5]},
        "refine_curve": {"teacher": teacher, "z1": torch.zeros(5, 64, dtype=torch.float64), "x": x,
                         "y": split.y_test[:5], "nfe_max": 3},
        "rejump_curve": {"student": student, "x": x, "y": split.y_test[:5], "rejump_max": 2},
        "linear_readout": {"teacher": teacher, "split": split},
        "quasi_newton": {"teacher": teacher, "split": split},
        "qn_step": {"teacher": teacher, "M": torch.eye(64, dtype=torch.float64),
                    "z": torch.zeros(5, 64, dtype=torch.float64), "x": x},
        "statistics": small,
        "score": {"teacher": teacher, "model": digits.explicit, "x": x, "y": split.y_test[:5]},
        "accuracy": {"logits": torch.zeros(3, 2, dtype=torch.float64), "y": torch.zeros(3, dtype=torch.long)},
        "rel_error": {"z": torch.ones(3, 4, dtype=torch.float64), "zstar": torch.ones(3, 4, dtype=torch.float64)},
        "run_experiment": _CHEAP,
        "nfe_to_match": {"curve": digits.curves["picard"], "target": 0.5},
        "few_step_ratio": {"run": hard},
        "headline": small,
        "chapter_table": {**small, "seed": 0},
        "summarize": {"run": digits},
        "render": {"run": digits},
        "explorer": {"run": digits},
    }
