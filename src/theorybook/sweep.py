"""Batched simulation: many hyper-parameter settings advanced in one tensor program.

The engine behind every phase diagram in the book. A *cell* is one hyper-parameter setting; all cells live in
one tensor (any shape), every step updates all of them at once, and only per-cell reductions are kept:

* ``final_loss``  — L(x_T);
* ``min_loss``    — min_t L(x_t) over t = 0..T (non-finite values ignored);
* ``first_below`` — first t ≥ 1 with L(x_t) ≤ threshold, −1 if never;
* ``tail_max``    — max L(x_t) over the last ``tail`` steps (the spike signature of regime II);
* ``diverged``    — the final loss is not finite (inf or NaN).

Non-finite values are canonicalised once at the end: a diverged cell reports ``final_loss = inf``. The fused
kernels in :mod:`theorybook.kernels` follow the same semantics (they are tested against this reference).

Two layers:

1. :func:`run_sweep` — generic: ``state = update(state, t)``; ``loss(state)``; pure functions on tensors
   (optax/jax ``example_libraries.optimizers`` style).
2. :func:`poly_sweep` — the optimizers the book sweeps on L(x) = x^k/k (GD, heavy ball, RMSProp, Adam), each
   an ``init``/``update`` pair written next to its equation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import torch

from . import validate
from .device import resolve_device, resolve_dtype

__all__ = [
    "SweepStats",
    "run_sweep",
    "poly_sweep",
    "poly_loss",
    "POLY_METHODS",
    "PolyState",
    "floor_cut",
    "grid",
    "canonicalise",
]


#: Longest trajectory any sweep accepts (a Python loop of 10⁹ steps is already hours on a CPU).
MAX_STEPS = 10**9

#: Cheap arguments for tests/test_api_fuzz.py (the defaults of the other parameters stay).
FUZZ_BASE = {
    "poly_sweep": {"method": "adam", "k": 4, "steps": 10, "lr": 0.1, "beta1": 0.9, "beta2": 0.999},
    "poly_loss": {"x": 0.5, "k": 4},
    "grid": {},
}


class SweepStats(NamedTuple):
    """Per-cell reductions of a sweep (all tensors of the broadcast cell shape)."""

    final_loss: torch.Tensor
    min_loss: torch.Tensor
    first_below: torch.Tensor
    tail_max: torch.Tensor
    diverged: torch.Tensor
    trajectory: torch.Tensor | None = None


def run_sweep(
    init: Any,
    update: Callable[[Any, int], Any],
    loss: Callable[[Any], torch.Tensor],
    steps: int,
    *,
    threshold: float | None = None,
    tail: int = 0,
    record: Callable[[Any], torch.Tensor] | None = None,
) -> SweepStats:
    """Advance ``state = update(state, t)`` for t = 0..steps−1 on all cells at once; keep reductions.

    Parameters
    ----------
    init: initial state (a tuple/NamedTuple of tensors with a common broadcast shape).
    update: pure step function ``(state, t) -> state``.
    loss: ``state -> L`` (tensor of the cell shape).
    steps: number of updates T ≥ 0.
    threshold: ``first_below`` reports the first t ≥ 1 with L ≤ threshold (``None``: not tracked, all −1).
    tail: ``tail_max`` is the max loss over the last ``tail`` steps (0 → the final loss).
    record: optional ``state -> tensor``; when given, the stacked values for t = 0..T are returned as
        ``trajectory`` (shape ``(T+1, *cells)``). Leave ``None`` for big grids: nothing of size cells × steps
        is then materialised.
    """
    steps = validate.integer("steps", steps, 0, MAX_STEPS)
    tail = validate.integer("tail", tail, 0)
    if threshold is not None:
        threshold = validate.number("threshold", threshold)
    for name, fn in (("update", update), ("loss", loss)):
        if not callable(fn):
            raise TypeError(f"Invalid {name}: {fn!r} (must be callable)")
    if record is not None and not callable(record):
        raise TypeError(f"Invalid record: {record!r} (must be callable or None)")
    state = init
    cur = loss(state)
    if not isinstance(cur, torch.Tensor):
        raise TypeError(f"Invalid loss: returned {type(cur).__name__} (must return a tensor)")
    min_loss = cur.clone()
    first = torch.full_like(cur, -1, dtype=torch.int64)
    tail_from = steps - tail + 1 if tail else steps
    tail_max = torch.full_like(cur, -float("inf"))
    traj = None
    if record is not None:
        r0 = record(state)
        validate.memory_guard((steps + 1) * r0.numel() * r0.element_size(), lower="steps, or record=None")
        traj = torch.empty((steps + 1, *r0.shape), dtype=r0.dtype, device=r0.device)
        traj[0] = r0
    if steps == 0:
        tail_max = cur.clone()
    for t in range(steps):
        state = update(state, t)
        cur = loss(state)
        step = t + 1
        torch.fmin(min_loss, cur, out=min_loss)
        if threshold is not None:
            first = torch.where((cur <= threshold) & (first < 0), step, first)
        if step >= tail_from:
            tail_max = torch.fmax(tail_max, cur)
        if traj is not None:
            traj[step] = record(state)
    final, tail_max, diverged = canonicalise(cur, tail_max)
    return SweepStats(final, min_loss, first, tail_max, diverged, traj)


def canonicalise(last: torch.Tensor, tail_max: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The sweep's one rule for non-finite results, shared by the fused kernels: a cell whose last loss is not
    finite has *diverged*; it reports ``final_loss = inf`` and ``tail_max = inf`` (as does a NaN tail max).
    Returns ``(final_loss, tail_max, diverged)``."""
    for name, t in (("last", last), ("tail_max", tail_max)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"Invalid {name}: {type(t).__name__} (must be a floating-point tensor)")
    if last.shape != tail_max.shape:
        raise ValueError(f"Invalid tail_max: shape {tuple(tail_max.shape)} (must equal last's {tuple(last.shape)})")
    diverged = ~torch.isfinite(last)
    inf = torch.full_like(last, float("inf"))
    return torch.where(diverged, inf, last), torch.where(torch.isnan(tail_max) | diverged, inf, tail_max), diverged


# ------------------------------------------------------------------------------------------------------------
# Optimizers on L(x) = x^k / k, gradient g = x^{k-1}.
# ------------------------------------------------------------------------------------------------------------


class PolyState(NamedTuple):
    """State of a scalar optimizer on x^k/k: iterate ``x``, first moment ``m``, second moment ``v`` and the
    current gradient ``g = x^{k-1}`` (carried so that each step evaluates the power once)."""

    x: torch.Tensor
    m: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor


def floor_cut(dtype: torch.dtype) -> float:
    """Where the float floor starts: a cell whose g² falls below ``tiny·1e6`` is *at the floor*.

    Past it g² underflows, v decays to 0 and m/√v becomes 0/0. Such a cell is frozen (its iterate no longer
    moves), which is how the phase diagram's "final loss ≈ float64 floor" arises.
    """
    return torch.finfo(dtype).tiny * 1e6


def poly_loss(x: torch.Tensor, k: torch.Tensor | float) -> torch.Tensor:
    """L(x) = x^k / k for an even degree k ≥ 2 (elementwise; ``x`` a finite tensor or number)."""
    validate.even_integer("k", k, 2)
    xt = validate.finite_tensor("x", x)
    kt = k if not isinstance(k, torch.Tensor) else k.to(xt.device, xt.dtype)
    try:
        torch.broadcast_shapes(xt.shape, torch.as_tensor(k).shape)
    except RuntimeError as err:
        raise ValueError(f"Invalid k: shape {tuple(torch.as_tensor(k).shape)} does not broadcast with x's "
                         f"{tuple(xt.shape)}") from err
    return _poly_loss(xt, kt)


def _poly_loss(x: torch.Tensor, k: torch.Tensor | float) -> torch.Tensor:
    return x.pow(k) / k


def _grad(x: torch.Tensor, k: torch.Tensor | float) -> torch.Tensor:
    return x.pow(k - 1)


@dataclass(frozen=True)
class PolyMethod:
    """An optimizer on x^k/k as a pure (init, update) pair plus its hyper-parameter names and ranges."""

    name: str
    hparams: tuple[str, ...]
    init: Callable[..., PolyState]
    update: Callable[..., PolyState]


def _moments_init(x0: torch.Tensor, k) -> PolyState:
    """m₀ = g₀, v₀ = g₀² — an EMA started at g₀ carries no zero-initialisation bias."""
    g = _grad(x0, k)
    return PolyState(x0, g, g * g, g)


def _gd_update(s: PolyState, k, cut: float, lr) -> PolyState:
    r"""Gradient descent: :math:`x_{t+1} = x_t - \eta\, x_t^{k-1}`."""
    x = s.x - lr * s.g
    return PolyState(x, s.m, s.v, _grad(x, k))


def _heavy_ball_update(s: PolyState, k, cut: float, lr, beta) -> PolyState:
    r"""EMA heavy ball: :math:`x_{t+1} = x_t - \eta m_t`, :math:`m_{t+1} = \beta m_t + (1-\beta) g_{t+1}`."""
    x = s.x - lr * s.m
    g = _grad(x, k)
    m = torch.lerp(s.m, g, 1 - beta)
    return PolyState(x, m, s.v, g)


def _adam_update(s: PolyState, k, cut: float, lr, beta1, beta2) -> PolyState:
    r"""Adam as analysed by Bai et al.: ε = 0, no bias correction.

    .. math:: x_{t+1} = x_t - \eta\,\frac{m_t}{\sqrt{v_t}},\quad
              m_{t+1} = \beta_1 m_t + (1-\beta_1) g_{t+1},\quad
              v_{t+1} = \beta_2 v_t + (1-\beta_2) g_{t+1}^2,\quad g = x^{k-1}.

    A cell at the float floor (g_t² < ``cut``) keeps its iterate (see :func:`floor_cut`).
    """
    at_floor = s.g * s.g < cut
    x = torch.where(at_floor, s.x, s.x - lr * s.m * s.v.rsqrt())
    g = _grad(x, k)
    m = torch.lerp(s.m, g, 1 - beta1)
    v = torch.lerp(s.v, g * g, 1 - beta2)
    return PolyState(x, m, v, g)


def _rmsprop_update(s: PolyState, k, cut: float, lr, beta2) -> PolyState:
    r"""RMSProp (Adam with β₁ = 0): :math:`x_{t+1} = x_t - \eta g_t/\sqrt{v_t}`, same v and floor rule."""
    return _adam_update(s, k, cut, lr, 0.0, beta2)


def _plain_init(x0: torch.Tensor, k) -> PolyState:
    z = torch.zeros_like(x0)
    return PolyState(x0, z, z, _grad(x0, k))


POLY_METHODS: dict[str, PolyMethod] = {
    "gd": PolyMethod("gd", ("lr",), _plain_init, _gd_update),
    "heavy_ball": PolyMethod("heavy_ball", ("lr", "beta"), _moments_init, _heavy_ball_update),
    "rmsprop": PolyMethod("rmsprop", ("lr", "beta2"), _moments_init, _rmsprop_update),
    "adam": PolyMethod("adam", ("lr", "beta1", "beta2"), _moments_init, _adam_update),
}

_RANGES = {"beta": (0.0, 1.0), "beta1": (0.0, 1.0), "beta2": (0.0, 1.0)}


def grid(*axes: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``torch.meshgrid(..., indexing="ij")`` — cells of a phase diagram, axis i along dimension i."""
    if not axes:
        raise ValueError("Invalid axes: none given (grid needs at least one 1-D tensor)")
    for i, a in enumerate(axes):
        if not isinstance(a, torch.Tensor) or a.ndim != 1:
            raise TypeError(f"Invalid axes[{i}]: {type(a).__name__} (must be a 1-D tensor)")
    validate.memory_guard(math.prod(a.numel() for a in axes) * len(axes) * 8, lower="the axes' lengths")
    return torch.meshgrid(*axes, indexing="ij")


def poly_sweep(
    method: str,
    k: float | torch.Tensor,
    steps: int,
    *,
    x0: float | torch.Tensor = 1.0,
    threshold: float | None = None,
    tail: int = 0,
    record: str | None = None,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
    distributed: bool = False,
    **hparams: float | torch.Tensor,
) -> SweepStats:
    """Run ``method`` on L(x) = x^k/k for every broadcast cell of (k, x0, *hparams*) at once.

    ``record`` is ``None`` (reductions only), ``"x"`` or ``"loss"`` (then ``trajectory`` has shape
    ``(steps+1, *cells)``) or ``"state"`` (shape ``(steps+1, 4, *cells)``: x, m, v, g). Dispatches to a fused
    kernel on CUDA when :mod:`theorybook.kernels` provides one; the result is the same either way.

    ``distributed=True`` with ``torch.distributed`` initialised (e.g. under ``torchrun``): the flattened cells
    are split into ``world_size`` equal contiguous shares, each rank sweeps its share, and ``all_gather``
    assembles the reductions on every rank — the same result as one process (cells are independent). Every rank
    must call with the same arguments (collective). Not with ``record`` (the trajectory would be gathered
    whole); without an initialised process group it runs on one process.
    """
    validate.one_of("method", method, tuple(POLY_METHODS))
    spec = POLY_METHODS[method]
    missing = set(spec.hparams) - set(hparams)
    extra = set(hparams) - set(spec.hparams)
    if missing or extra:
        raise ValueError(f"Invalid hyper-parameters for {method}: expected {spec.hparams}, got "
                         f"{tuple(sorted(hparams))}")
    validate.even_integer("k", k, 2)
    validate.positive("lr", hparams["lr"])
    for name in spec.hparams:
        if name in _RANGES:
            validate.in_range(name, hparams[name], *_RANGES[name])
    validate.one_of("record", record, (None, "x", "loss", "state"))
    steps = validate.integer("steps", steps, 0, MAX_STEPS)
    tail = validate.integer("tail", tail, 0)
    if threshold is not None:
        threshold = validate.number("threshold", threshold)
    validate.finite_tensor("x0", x0)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    if not isinstance(distributed, bool):
        raise TypeError(f"Invalid distributed: {distributed!r} (must be True or False)")
    if distributed and record is not None:
        raise ValueError(f"Invalid record: {record!r} with distributed=True (must be None: only the reductions are "
                         "gathered)")

    def as_t(v):
        return torch.as_tensor(v, dtype=dt, device=dev)

    shapes = [torch.as_tensor(v).shape for v in (k, x0, *(hparams[n] for n in spec.hparams))]
    try:
        cells = math.prod(torch.broadcast_shapes(*shapes))
    except RuntimeError as err:
        raise ValueError(f"Invalid shapes: k, x0 and the hyper-parameters do not broadcast ({shapes})") from err
    per_cell = {None: 12, "x": 1, "loss": 1, "state": 4}[record] * (steps + 1 if record else 1) + 12
    validate.memory_guard(cells * per_cell * torch.finfo(dt).bits // 8, lower="steps or the number of cells")
    tensors = torch.broadcast_tensors(as_t(k), as_t(x0), *(as_t(hparams[n]) for n in spec.hparams))
    kt, x0t, hp = tensors[0], tensors[1].clone(), tensors[2:]
    if kt.numel() and bool((kt == kt.reshape(-1)[0]).all()):
        kt = int(kt.reshape(-1)[0])  # one degree for all cells: an int exponent is ~7x faster than a tensor one
    world = _world(distributed)
    if world > 1:
        return _sharded(method, kt, x0t, hp, spec.hparams, steps, world, threshold=threshold, tail=tail, dtype=dt,
                        device=dev)
    fused = _fused(method, dev, record, cells * steps)
    if fused is not None:
        out = fused(kt, x0t, hp, steps, threshold=threshold, tail=tail, dtype=dt)
        if out is not None:  # None: the CPU compiler failed and said so; the torch reference runs instead
            return out
    cut = floor_cut(dt)
    state = spec.init(x0t, kt)

    def update(s, _t):
        return spec.update(s, kt, cut, *hp)

    def loss(s):
        return _poly_loss(s.x, kt)

    recorders = {None: None, "x": lambda s: s.x, "loss": loss, "state": lambda s: torch.stack(tuple(s))}
    rec = recorders[record]
    return run_sweep(state, update, loss, steps, threshold=threshold, tail=tail, record=rec)


def _world(distributed: bool) -> int:
    """The process group's size when ``distributed`` and one is initialised, else 1."""
    if not distributed:
        return 1
    import torch.distributed as dist

    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _sharded(method, kt, x0t, hp, names, steps, world, *, threshold, tail, dtype, device) -> SweepStats:
    """This rank's contiguous share of the flattened cells (padded to equal shares by repeating the last cell),
    swept on one process, then ``all_gather`` of the reductions and the original cell shape restored."""
    import torch.distributed as dist

    shape = x0t.shape
    n = x0t.numel()
    per = -(-n // world)
    rank = dist.get_rank()
    idx = torch.arange(rank * per, (rank + 1) * per, device=x0t.device).clamp_max(max(n - 1, 0))

    def share(t):
        return t.reshape(-1)[idx]

    k_share = kt if isinstance(kt, int) else share(kt)
    part = poly_sweep(method, k_share, steps, x0=share(x0t), threshold=threshold, tail=tail, dtype=dtype,
                      device=device, **{name: share(h) for name, h in zip(names, hp, strict=True)})
    fields = []
    for field in part[:5]:
        mine = field.to(torch.int64) if field.dtype == torch.bool else field.contiguous()
        parts = [torch.empty_like(mine) for _ in range(world)]
        dist.all_gather(parts, mine)
        full = torch.cat(parts)[:n].reshape(shape)
        fields.append(full.to(torch.bool) if field.dtype == torch.bool else full)
    return SweepStats(*fields, None)


def _fused(method: str, device: torch.device, record: str | None, cell_steps: float = 0.0):
    """The fused kernel for ``method`` when one applies, else ``None``: Triton on CUDA; on CPU the compiled
    per-cell loop (numba) for sweeps big enough to repay its compilation. Never when a trajectory is recorded."""
    if record is not None or device.type not in ("cuda", "cpu"):
        return None
    try:
        from theorybook import kernels
    except ImportError:  # pragma: no cover
        return None
    if device.type == "cpu":
        return kernels.cpu_poly_sweep(method, cell_steps)
    return kernels.poly_sweep_kernel(method)
