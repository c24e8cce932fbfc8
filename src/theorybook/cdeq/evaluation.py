"""Evaluation: few-step inference with the student, accuracy and distance to ``z*`` against NFE for every method
at every NFE from 1, the student evaluated from intermediate solver states, and the least NFE counted exactly."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from ..device import one_thread
from ..validate import finite_tensor, integer, number, one_of
from .model import _MAX_NFE, KS, ConsistencyStudent, ExplicitStudent, LinearDEQ, _student, _teacher
from .solvers import solver_trajectory

__all__ = ["MODES", "Curve", "accuracy", "cdeq_infer", "evaluate", "from_states", "nfe_to_match", "refine_curve",
           "rejump_curve", "rejump_positions", "rel_error", "score"]

MODES = ("refine", "rejump")


def rejump_positions(nfe: int, n_points: int = len(KS)) -> list[int]:
    """Trajectory positions of the ``nfe`` student calls in "re-jump" mode: 0, then evenly spaced up to the
    second-to-last position (never the identity end)."""
    nfe = integer("nfe", nfe, 1, _MAX_NFE)
    if nfe == 1:
        return [0]
    return [round(j * (n_points - 2) / (nfe - 1)) for j in range(nfe)]


def cdeq_infer(student: ConsistencyStudent, x: torch.Tensor, nfe: int, *, mode: str = "refine") -> torch.Tensor:
    """Few-step inference with ``nfe`` layer calls (float64 output, on the teacher's device).

    The first call jumps from the start: ``ẑ = F(0, t_0 = T, x)``. ``"refine"``: then ``nfe − 1`` Picard steps of the
    teacher's ``f`` from ``ẑ``. ``"rejump"``: ``ẑ ← F(ẑ, t_{k_j}, x)`` at the later positions of
    :func:`rejump_positions` (each call 1 NFE of ``f_φ``)."""
    student = _student(student)
    one_of("mode", mode, MODES)
    nfe = integer("nfe", nfe, 1, _MAX_NFE)
    teacher = student.teacher
    x = teacher._x(x)
    with torch.no_grad():
        z = torch.zeros(x.shape[0], teacher.hidden, dtype=torch.float32, device=x.device)
        z = student(z, student.times[0].item(), x).double()
        if mode == "refine":
            return teacher.picard(x, nfe - 1, z0=z)
        pos = rejump_positions(nfe, len(student.ks))
        for p in pos[1:]:
            z = student(z, student.times[p].item(), x).double()
    return z


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of correct arg-max predictions (``logits`` (batch, classes), integer labels ``y`` (batch,))."""
    logits = finite_tensor("logits", logits, ndim=2)
    if logits.shape[0] == 0:
        raise ValueError("Invalid logits: empty batch")
    y = _labels(y, logits.shape[0])
    return float((logits.argmax(-1) == y.to(logits.device)).double().mean())


def rel_error(z: torch.Tensor, zstar: torch.Tensor) -> torch.Tensor:
    """Per-sample ``‖ẑ − z*‖/‖z*‖`` (both (batch, H); a zero row of ``zstar`` is rejected)."""
    z = finite_tensor("z", z, ndim=2)
    zstar = finite_tensor("zstar", zstar, ndim=2)
    if z.shape != zstar.shape:
        raise ValueError(f"Invalid z: shape {tuple(z.shape)} (must match zstar {tuple(zstar.shape)})")
    den = zstar.double().norm(dim=-1)
    if bool((den == 0).any()):
        raise ValueError("Invalid zstar: a zero row (relative error undefined)")
    return (z.double() - zstar.double().to(z.device)).norm(dim=-1) / den.to(z.device)



class Curve(NamedTuple):
    """A method's test accuracy and mean relative error ``‖ẑ − z*‖/‖z*‖`` at the NFE values ``nfe``."""

    nfe: Any
    accuracy: Any
    rel_error: Any


def _labels(y: Any, n: int) -> torch.Tensor:
    if isinstance(y, bool) or not isinstance(y, torch.Tensor) or y.is_floating_point() or y.dtype == torch.bool:
        y = finite_tensor("y", y, ndim=1)
        if not bool((y == y.round()).all()) or bool((y < 0).any()):
            raise ValueError("Invalid y: labels must be integers ≥ 0")
        y = y.long()
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"Invalid y: shape {tuple(y.shape)} (must be ({n},))")
    return y


def _budgets(nfe_max: int, solver_max: int) -> tuple[int, int]:
    """``(nfe_max, solver_max)`` of :func:`evaluate`, validated (callers check them before training)."""
    return integer("nfe_max", nfe_max, 2, _MAX_NFE), integer("solver_max", solver_max, 2, 512)


def evaluate(teacher: LinearDEQ, student: ConsistencyStudent, x: torch.Tensor, y: torch.Tensor, *,
             nfe_max: int = 512, solver_max: int = 48, rejump_max: int = 16) -> dict[str, Curve]:
    """Accuracy and mean relative error at **every** NFE: Picard and C-DEQ "refine" for 1..``nfe_max``, our
    Anderson and Broyden for 1..``solver_max`` (they converge well before), C-DEQ "re-jump" for 1..``rejump_max``."""
    teacher, student = _teacher(teacher), _student(student)
    nfe_max, solver_max = _budgets(nfe_max, solver_max)
    rejump_max = integer("rejump_max", rejump_max, 1, 512)
    x = teacher._x(x)
    y = _labels(y, x.shape[0])
    zs = teacher.fixed_point(x).detach()
    out: dict[str, Curve] = {}

    def score_all(zz: Callable[[], Any], n: int) -> Curve:
        return _score_iterates(teacher, zs, y, zz(), n)

    with torch.no_grad(), one_thread(x.device):
        zero = torch.zeros_like(zs)
        out["picard"] = score_all(lambda: _picard_from(teacher, x, teacher.step_fn(x)(zero), nfe_max), nfe_max)
        for m in ("anderson", "broyden"):
            traj = solver_trajectory(teacher, x, solver_max, m)
            out[m] = score_all(lambda traj=traj: iter(traj), solver_max)
        jump = cdeq_infer(student, x, 1)
        out["cdeq-refine"] = score_all(lambda: _picard_from(teacher, x, jump, nfe_max), nfe_max)
        out["cdeq-rejump"] = rejump_curve(student, x, y, rejump_max)
    return out


def _picard_from(teacher: LinearDEQ, x: torch.Tensor, z1: torch.Tensor, n: int):
    """``z1``, then ``n − 1`` Picard steps of the teacher's layer from it (the iterates at NFE 1..n)."""
    step = teacher.step_fn(x)
    z = z1
    yield z
    for _ in range(n - 1):
        z = step(z)
        yield z


def _score_iterates(teacher: LinearDEQ, zs: torch.Tensor, y: torch.Tensor, iterates: Any, n: int) -> Curve:
    """Accuracy (through the teacher's head) and mean relative distance to ``zs`` of ``n`` iterates (NFE 1..n)."""
    W_head, b_head = teacher.head.weight.detach(), teacher.head.bias.detach()
    zs_norm = zs.norm(dim=-1)
    acc: list[float] = []
    err: list[float] = []
    chunk: list[torch.Tensor] = []

    def flush() -> None:
        Z = torch.stack(chunk).double()  # (c, B, H): score c iterates at once
        acc.extend(((Z @ W_head.T + b_head).argmax(-1) == y).double().mean(-1).tolist())
        err.extend(((Z - zs).norm(dim=-1) / zs_norm).mean(-1).tolist())
        chunk.clear()

    for z in iterates:
        chunk.append(z)
        if len(chunk) == 64:
            flush()
    if chunk:
        flush()
    return Curve(np.arange(1, n + 1, dtype=np.int64), np.asarray(acc), np.asarray(err))


def refine_curve(teacher: LinearDEQ, z1: torch.Tensor, x: torch.Tensor, y: torch.Tensor, nfe_max: int) -> Curve:
    """A 1-NFE start ``z1`` refined by Picard steps of the teacher's ``f``: accuracy and distance to ``z*`` at NFE
    1..``nfe_max`` (the "refine" mode of any 1-call predictor, e.g. the linear readout)."""
    teacher = _teacher(teacher)
    x = teacher._x(x)
    y = _labels(y, x.shape[0])
    nfe_max = integer("nfe_max", nfe_max, 1, _MAX_NFE)
    z1 = teacher._z(z1, x, "z1")
    with torch.no_grad(), one_thread(x.device):
        zs = teacher.fixed_point(x)
        return _score_iterates(teacher, zs, y, _picard_from(teacher, x, z1, nfe_max), nfe_max)


def rejump_curve(student: ConsistencyStudent, x: torch.Tensor, y: torch.Tensor, rejump_max: int = 16) -> Curve:
    """The student's "re-jump" mode at NFE 1..``rejump_max``: accuracy and distance to ``z*``."""
    student = _student(student)
    teacher = student.teacher
    x = teacher._x(x)
    y = _labels(y, x.shape[0])
    rejump_max = integer("rejump_max", rejump_max, 1, 512)
    with torch.no_grad(), one_thread(x.device):
        zs = teacher.fixed_point(x)
        its = (cdeq_infer(student, x, n, mode="rejump") for n in range(1, rejump_max + 1))
        return _score_iterates(teacher, zs, y, its, rejump_max)


def from_states(student: ConsistencyStudent, x: torch.Tensor, y: torch.Tensor, ks: Any = None) -> Curve:
    """The student evaluated from intermediate Picard states: ``F(z_k, t_k, x)`` for each training index ``k`` of
    the student's grid but the last (where ``F`` is the identity), scored against the teacher's ``z*``. The curve's
    ``nfe`` is ``k + 1`` (k Picard calls to reach ``z_k``, then one student call): "solve, then jump"."""
    student = _student(student)
    teacher = student.teacher
    x = teacher._x(x)
    y = _labels(y, x.shape[0])
    pos = list(range(len(student.ks) - 1)) if ks is None else [
        student.ks.index(integer("ks", k, 0)) if integer("ks", k, 0) in student.ks else -1 for k in ks]
    if any(p < 0 for p in pos) or not pos:
        raise ValueError(f"Invalid ks: {ks!r} (must be indices of the student's grid {student.ks})")
    with torch.no_grad(), one_thread(x.device):
        zs = teacher.fixed_point(x)
        states = teacher.picard_states(x, student.ks)
        acc, err = [], []
        for p in pos:
            z = student(states[p], student.times[p].item(), x).double()
            acc.append(accuracy(teacher.logits(z), y))
            err.append(float(rel_error(z, zs).mean()))
    return Curve(np.asarray([student.ks[p] + 1 for p in pos], dtype=np.int64), np.asarray(acc), np.asarray(err))


def score(teacher: LinearDEQ, model: ExplicitStudent | nn.Linear, x: torch.Tensor, y: torch.Tensor
          ) -> tuple[float, float]:
    """A 0-NFE control's test accuracy and mean relative error to ``z*``: an :class:`ExplicitStudent` predicts
    ``z*`` (accuracy through the teacher's head); a logistic regression (``nn.Linear`` on the pixels) predicts
    labels (relative error NaN: it has no state)."""
    teacher = _teacher(teacher)
    x = teacher._x(x)
    y = _labels(y, x.shape[0])
    with torch.no_grad():
        if isinstance(model, ExplicitStudent):
            z = model(x).double()
            return accuracy(teacher.logits(z), y), float(rel_error(z, teacher.fixed_point(x)).mean())
        if isinstance(model, nn.Linear):
            return accuracy(model(x.to(model.weight.dtype)), y), math.nan
    raise TypeError(f"Invalid model: {type(model).__name__} (must be an ExplicitStudent or an nn.Linear)")


def nfe_to_match(curve: Curve, target: float) -> int:
    """The least NFE on the curve whose mean relative error is ≤ ``target`` (−1 if none). On the dense curves of
    :func:`evaluate` (every NFE from 1) this is the exact least NFE up to the curve's end."""
    if not isinstance(curve, Curve):
        raise TypeError(f"Invalid curve: {type(curve).__name__} (must be a Curve)")
    target = number("target", target, 0.0, math.inf)
    for n, e in zip(curve.nfe, curve.rel_error, strict=True):
        if e <= target:
            return int(n)
    return -1

