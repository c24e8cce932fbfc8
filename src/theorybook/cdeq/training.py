"""Training: the teacher (exact implicit differentiation), the consistency student, and the controls — explicit
distillation (an MLP regressing ``z*`` on ``x``, 0 NFE), the student-as-regressor (the student's network trained only
at the trajectory's start, ``z₀ → z*``, no consistency term), a logistic regression on the pixels, and two
training-free 1-call maps: the least-squares linear readout of ``[f(0, x), x, 1]`` and the quasi-Newton step with the
layer's Jacobian at the mean training gate."""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
from torch import nn

from ..device import one_thread
from ..validate import finite_tensor, integer, memory_guard, number
from .model import (
    _MAX_STEPS,
    KS,
    ConsistencyStudent,
    ExplicitStudent,
    LinearDEQ,
    Split,
    _check_split,
    _teacher,
    trajectory_times,
)

__all__ = ["explicit_distillation", "linear_readout", "logistic_regression", "qn_step", "quasi_newton",
           "regressor_student", "train_student", "train_teacher"]


def train_teacher(split: Split, *, steps: int = 200, lr: float = 3e-3, seed: int = 0, hidden: int = 64,
                  gamma: float = 0.99) -> LinearDEQ:
    """Full-batch Adam on the cross-entropy of ``head(z*)``, with ``z*`` from ``torch.linalg.solve`` (exact implicit
    differentiation: no solver, no truncation)."""
    split = _check_split(split)
    steps = integer("steps", steps, 0, _MAX_STEPS)
    lr = number("lr", lr, 0.0, 1.0, low_open=True)
    seed = integer("seed", seed, 0)
    x, y = split.x_train, split.y_train
    model = LinearDEQ(x.shape[1], hidden, 10, gamma, seed=seed, device=x.device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    with one_thread(x.device):
        for _ in range(steps):
            loss = nn.functional.cross_entropy(model.logits(model.fixed_point(x)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.requires_grad_(False)


def _batches(n: int, batch: int, steps: int, seed: int) -> torch.Tensor:
    """Indices of ``steps`` minibatches of size ``batch`` (sampled with replacement), seeded, on the CPU."""
    return torch.randint(0, n, (steps, batch), generator=torch.Generator().manual_seed(seed))


def train_student(teacher: LinearDEQ, split: Split, *, steps: int = 2000, lr: float = 1e-3, batch: int = 256,
                  ema: float = 0.995, weights: tuple[float, float, float] = (1.0, 0.5, 0.05), seed: int = 0,
                  width: int = 256, start_share: float = 0.0, augment: float = 0.0
                  ) -> tuple[ConsistencyStudent, ConsistencyStudent]:
    """Consistency distillation on the teacher's Picard trajectories of the training inputs. Each step draws
    ``batch`` pairs (input i, trajectory position j < last) and minimises
    ``w₀ MSE(F(z_{k_j}), z*) + w₁ MSE(F(z_{k_j}), F_EMA(z_{k_{j+1}})) + w₂ CE(head(F(z_{k_j})), y)`` with AdamW;
    the EMA copy follows ``φ⁻ ← ema·φ⁻ + (1 − ema)·φ``. ``augment`` is the paper code's augmentation [paper, code]:
    each coordinate of a drawn trajectory state (and of the next state) is replaced by ``z*``'s with probability
    ``augment``, so the student also sees states between the trajectory and the equilibrium. Returns
    ``(student, ema_student)``."""
    teacher = _teacher(teacher)
    split = _check_split(split)
    steps = integer("steps", steps, 0, _MAX_STEPS)
    lr = number("lr", lr, 0.0, 1.0, low_open=True)
    batch = integer("batch", batch, 1, 8192)
    ema = number("ema", ema, 0.0, 1.0, high_open=True)
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") or len(weights) != 3:
        raise TypeError(f"Invalid weights: {weights!r} (must be three numbers (global, local, task))")
    w0, w1, w2 = (number("weights", w, 0.0, 1e3) for w in weights)
    seed = integer("seed", seed, 0)
    start_share = number("start_share", start_share, 0.0, 1.0)
    augment = number("augment", augment, 0.0, 1.0)
    memory_guard(4.0 * batch * (2 * teacher.hidden + 1 + teacher.n_in + 4 * width) * 8, lower="batch or width")
    x = split.x_train.to(teacher.W.device)
    y = split.y_train.to(teacher.W.device)
    with torch.no_grad():
        states = teacher.picard_states(x, KS).float()  # (P, n, H)
        zstar = teacher.fixed_point(x).float()
    times = trajectory_times(KS).float().to(x.device)
    torch.manual_seed(seed)
    student = ConsistencyStudent(teacher, width=width)
    target = copy.deepcopy(student).requires_grad_(False)
    params = [p for p in student.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, foreach=True)  # one kernel per step for all tensors (CPU default is a loop)
    g = torch.Generator().manual_seed(seed + 1)
    idx = torch.randint(0, x.shape[0], (steps, batch), generator=g).to(x.device)
    pos = torch.randint(0, len(KS) - 1, (steps, batch), generator=g)
    pos[:, : round(start_share * batch)] = 0  # the 1-NFE start state (z₀ = 0, t = T) gets a fixed share of each batch
    pos = pos.to(x.device)
    xf = x.float()
    head = copy.deepcopy(teacher.head).float().requires_grad_(False)
    tparams, sparams = list(target.parameters()), [p for p in student.parameters()]
    with one_thread(x.device):
        for s in range(steps):
            i, j = idx[s], pos[s]
            xb, zt = xf[i], zstar[i]
            zj, zn = states[j, i], states[j + 1, i]
            if augment > 0:  # the paper code's per-coordinate replacement by z*
                zj = torch.where(torch.rand(zj.shape, generator=g).to(zj.device) < augment, zt, zj)
                zn = torch.where(torch.rand(zn.shape, generator=g).to(zn.device) < augment, zt, zn)
            out = student(zj, times[j], xb)
            loss = w0 * (out - zt).pow(2).mean()
            if w1 > 0:
                with torch.no_grad():
                    nxt = target(zn, times[j + 1], xb)
                loss = loss + w1 * (out - nxt).pow(2).mean()
            if w2 > 0:
                loss = loss + w2 * nn.functional.cross_entropy(head(out), y[i])
            for group in opt.param_groups:  # cosine decay of the step size to 0 over the run
                group["lr"] = 0.5 * lr * (1.0 + math.cos(math.pi * s / steps))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if w1 > 0:  # the EMA copy is only read by the local-consistency term
                with torch.no_grad():
                    torch._foreach_lerp_(tparams, sparams, 1.0 - ema)
    return student.requires_grad_(False), target


def explicit_distillation(teacher: LinearDEQ, split: Split, *, steps: int = 2000, lr: float = 1e-3,
                          batch: int = 256, width: int = 256, seed: int = 0, act: str = "silu") -> ExplicitStudent:
    """The honesty baseline: regress ``z*`` on ``x`` with an MLP of the student's size (AdamW, MSE, same budget;
    ``act`` as in :class:`~theorybook.cdeq.model.ExplicitStudent`)."""
    teacher = _teacher(teacher)
    split = _check_split(split)
    steps = integer("steps", steps, 0, _MAX_STEPS)
    lr = number("lr", lr, 0.0, 1.0, low_open=True)
    batch = integer("batch", batch, 1, 8192)
    width = integer("width", width, 1, 4096)
    seed = integer("seed", seed, 0)
    x = split.x_train.to(teacher.W.device)
    with torch.no_grad():
        zstar = teacher.fixed_point(x).float()
    model = ExplicitStudent(teacher.n_in, teacher.hidden, width, seed=seed, act=act, device=x.device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, foreach=True)
    idx = _batches(x.shape[0], batch, steps, seed + 2).to(x.device)
    xf = x.float()
    with one_thread(x.device):
        for s in range(steps):
            loss = (model(xf[idx[s]]) - zstar[idx[s]]).pow(2).mean()
            for group in opt.param_groups:  # the student's schedule
                group["lr"] = 0.5 * lr * (1.0 + math.cos(math.pi * s / steps))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return model.requires_grad_(False)


def regressor_student(teacher: LinearDEQ, split: Split, *, steps: int = 2000, lr: float = 1e-3, batch: int = 256,
                      seed: int = 0, width: int = 256, task_weight: float = 0.05) -> ConsistencyStudent:
    """The student-as-regressor control: the same network, budget and schedule as :func:`train_student`, trained
    only at the trajectory's start (every pair at ``z₀ = 0``, ``t = T``) on ``MSE(F(z₀), z*) + w CE`` — no local
    consistency term, never an intermediate state."""
    task_weight = number("task_weight", task_weight, 0.0, 1e3)
    student, _ = train_student(teacher, split, steps=steps, lr=lr, batch=batch, seed=seed, width=width,
                               weights=(1.0, 0.0, task_weight), start_share=1.0)
    return student


def logistic_regression(split: Split, *, steps: int = 300, lr: float = 0.05) -> nn.Linear:
    """Multinomial logistic regression on the raw pixels (float64, full-batch Adam on the cross-entropy of the
    split's own labels, zero-initialised: deterministic)."""
    split = _check_split(split)
    steps = integer("steps", steps, 0, _MAX_STEPS)
    lr = number("lr", lr, 0.0, 1.0, low_open=True)
    x, y = split.x_train, split.y_train
    C = max(int(y.max()) + 1, 2)
    model = nn.Linear(x.shape[1], C, dtype=torch.float64).to(x.device)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    with one_thread(x.device):
        for _ in range(steps):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.requires_grad_(False)


def readout_features(teacher: LinearDEQ, x: torch.Tensor) -> torch.Tensor:
    """The student's 1-NFE input read linearly: ``[f(0, x), x, 1]`` (float64; ``f(0, x) = u(x)``, one layer call)."""
    x = teacher._x(x)
    return torch.cat([teacher.layer(torch.zeros(x.shape[0], teacher.hidden, dtype=x.dtype, device=x.device), x), x,
                      torch.ones(x.shape[0], 1, dtype=x.dtype, device=x.device)], 1)


def linear_readout(teacher: LinearDEQ, split: Split, *, ridge: float = 1e-8) -> torch.Tensor:
    """The sceptic's 1-NFE control: the fixed linear map ``L`` minimising ``Σ ‖L [f(0, x), x, 1] − z*‖²`` over the
    training inputs (ridge ``ridge·mean diag`` > 0 for the always-zero pixels), so ``ẑ = L [f(0, x), x, 1]``. For an
    ungated teacher ``z* = (I − W̄)⁻¹ f(0, x)`` and this map is exact; the gate of :func:`hard_teacher` is what makes
    it miss. Returns ``L`` ((n_in + H + 1) × H, float64)."""
    teacher = _teacher(teacher)
    split = _check_split(split)
    ridge = number("ridge", ridge, 0.0, 1.0, low_open=True)
    with torch.no_grad():
        F = readout_features(teacher, split.x_train)
        Z = teacher.fixed_point(split.x_train)
        H = F.T @ F
        H = H + ridge * H.diagonal().mean() * torch.eye(H.shape[0], dtype=H.dtype, device=H.device)
        return torch.linalg.solve(H, F.T @ Z)


def quasi_newton(teacher: LinearDEQ, split: Split) -> torch.Tensor:
    """The sceptic's training-free 1-call control: the inverse ``M = (I − diag(s̄)W̄)⁻¹`` of ``I − J`` for the layer's
    Jacobian ``J = ∂f/∂z = diag(s(x))W̄`` taken at the mean gate ``s̄`` over the training inputs (``s̄ = 1``, so
    ``J = W̄`` exactly, for an ungated teacher). One fixed matrix for every input, computed once from the layer's
    weights, no training loop; :func:`qn_step` applies it. Returns ``M`` (H × H, float64)."""
    teacher = _teacher(teacher)
    split = _check_split(split)
    with torch.no_grad():
        H = teacher.hidden
        s = teacher.gate(teacher._x(split.x_train))
        s_bar = torch.ones(H, dtype=teacher.W.dtype, device=teacher.W.device) if s is None else s.mean(0)
        eye = torch.eye(H, dtype=teacher.W.dtype, device=teacher.W.device)
        return torch.linalg.inv(eye - s_bar[:, None] * teacher.W_bar())


def qn_step(teacher: LinearDEQ, M: torch.Tensor, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """One quasi-Newton (chord) step from the state ``z`` with one call of the layer (1 NFE):
    ``ẑ = z + M (f(z, x) − z)``, ``M`` from :func:`quasi_newton`. Exact for an ungated teacher (``f`` is affine
    with Jacobian ``W̄``); for the gated teacher it misses by the gate's spread around ``s̄``."""
    teacher = _teacher(teacher)
    x = teacher._x(x)
    z = teacher._z(z, x)
    M = finite_tensor("M", M, ndim=2)
    if M.shape != (teacher.hidden, teacher.hidden):
        raise ValueError(f"Invalid M: shape {tuple(M.shape)} (must be ({teacher.hidden}, {teacher.hidden}))")
    with torch.no_grad():
        return _qn(teacher.step_fn(x), M.to(z.device, z.dtype), z)


def _qn(f: Any, M: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """The quasi-Newton step ``z + M (f(z) − z)`` for a layer ``f`` already fixed at its inputs (rows are samples)."""
    return z + (f(z) - z) @ M.T
