"""SAM near saddles, simulated: test functions and one batched SAM program (torch, float64).

SAM step (Foret et al.; Kim et al. analyse the *unnormalised* ascent, the official code normalises):

.. math::
    g_t = \\nabla\\ell(\\mathbf w_t),\\qquad
    \\mathbf w^p_t = \\mathbf w_t + \\rho\\,\\frac{g_t}{\\lVert g_t\\rVert + 10^{-16}}\\ \\text{(normalised)}
    \\quad\\text{or}\\quad \\mathbf w_t + \\rho\\, g_t\\ \\text{(unnormalised)},

.. math::
    \\tilde g_t = \\nabla\\ell(\\mathbf w^p_t) + \\sigma\\odot\\xi_t,\\qquad
    \\mathbf b_{t+1} = \\gamma\\,\\mathbf b_t + \\tilde g_t,\\qquad
    \\mathbf w_{t+1} = \\mathbf w_t - \\eta\\,\\mathbf b_{t+1},

with ξ_t ~ N(0, I) (gradient noise on the descent gradient only, as in the SDE of Theorem 2) and heavy-ball
momentum in torch.optim.SGD's convention (b₀ = 0, no dampening). ρ = 0 is plain (S)GD.

Every argument broadcasts: the *cells* of a run are ``broadcast(w0.shape[:-1], rho, lr, momentum,
noise.shape[:-1])`` and all of them advance in one tensor program. The standard-normal draws ξ_t have the
shape of ``w0`` and are broadcast over the other cell axes, so cells that share a starting point share
their noise: common random numbers, which make differences between ρ (Corollary 1) far less noisy. Give
``w0`` an axis for the cells that must have *independent* noise (paths, batch sizes): with linear dynamics,
cells sharing ξ at two batch sizes would be exact rescalings of each other.

Long deterministic runs on Beale's function use :func:`.landscapes.beale_sam`, a plain-float loop per cell with the same
update (10⁵ steps of four cells in about a second, where the batched torch step costs ~0.25 ms).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import resolve_device, resolve_dtype
from ..sweep import run_sweep

__all__ = [
    "NORM_EPS",
    "SAMState",
    "SAMTrajectory",
    "saddle_quadratic",
    "saddle_quadratic_grad",
    "sam_update",
    "simulate_sam",
    "SAMSweep",
    "sam_sweep",
]

#: Added to ‖g‖ in the normalised ascent, as in the authors' code: the step is defined at the saddle itself.
NORM_EPS = 1e-16

GradFn = Callable[[torch.Tensor], torch.Tensor]


#: Longest loop a public function runs (each step is a Python iteration; lower ``steps`` above this).
MAX_STEPS = 10**7


def _finite(name: str, w) -> torch.Tensor:
    """:func:`theorybook.validate.finite_tensor`, also refusing nested lists of bools."""
    if isinstance(w, (list, tuple)):
        try:
            kind = np.asarray(w).dtype.kind
        except (TypeError, ValueError):
            kind = "O"
        if kind == "b":
            raise TypeError(f"Invalid {name}: {w!r} (booleans are not numbers)")
    return validate.finite_tensor(name, w)


def _pair(w, name: str = "w") -> torch.Tensor:
    """``w`` as a finite floating tensor of shape (..., 2) (integer input promoted to float64)."""
    t = _finite(name, w)
    if t.ndim < 1 or t.shape[-1] != 2:
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (must end in a dimension of size 2)")
    return t


def device_arg(device) -> torch.device:
    """:func:`theorybook.device.resolve_device` with the library's errors: ``ValueError``/``TypeError`` naming
    the parameter for an unknown device string or a non-device value."""
    if isinstance(device, bool) or not (device is None or isinstance(device, (str, torch.device))):
        raise TypeError(f"Invalid device: {device!r} (must be None, a string such as 'cpu', or a torch.device)")
    try:
        return resolve_device(device)
    except RuntimeError as err:
        raise ValueError(f"Invalid device: {device!r} ({err})") from err


def _steps(steps, maximum: int = MAX_STEPS) -> int:
    return validate.integer("steps", steps, 0, maximum)


def _lam_vector(lam) -> torch.Tensor:
    t = _finite("lam", lam)
    if t.ndim != 1 or t.numel() == 0:
        raise ValueError(f"Invalid lam: shape {tuple(t.shape)} (must be a 1-D sequence of finite numbers)")
    return t.to("cpu", torch.float64)


def saddle_quadratic(w, lam=(2.0, -2.0)) -> torch.Tensor:
    r"""Quadratic saddle :math:`\ell(\mathbf w) = \tfrac12\sum_j\lambda_j w_j^2` (default: x² − y², λ = ±2).

    ``w`` has shape ``(..., d)`` (a tensor, array or nested list; integers are promoted to float64) and
    ``lam`` is a 1-D sequence with d entries. The saddle is at 0 and the Hessian is diag(λ); a negative λ_j is
    an escape direction for gradient descent.
    """
    w = _finite("w", w)
    lam64 = _lam_vector(lam)
    if w.ndim < 1 or lam64.shape[0] != w.shape[-1]:
        raise ValueError(f"Invalid lam: {lam!r} (must have one entry per coordinate of w, whose shape is "
                         f"{tuple(w.shape)})")
    lam_t = lam64.to(w.device, w.dtype)
    return 0.5 * (lam_t * w * w).sum(-1)


def saddle_quadratic_grad(lam=(2.0, -2.0)) -> GradFn:
    r"""The gradient :math:`\nabla\ell(\mathbf w) = \Lambda\mathbf w` of :func:`saddle_quadratic` (a function of
    a floating tensor ``w`` of shape (..., d), d = len(lam))."""
    lam_t = _lam_vector(lam)
    cache: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}

    def grad(w: torch.Tensor) -> torch.Tensor:
        key = (w.device, w.dtype)
        if key not in cache:
            cache[key] = lam_t.to(w.device, w.dtype)
        return cache[key] * w

    grad.lam = lam_t  # type: ignore[attr-defined]
    return grad


# ----------------------------------------------------------------------------------------------- the SAM step
class SAMState(NamedTuple):
    """State of every cell: iterate ``w`` (*cells, d), momentum buffer ``buf``, the last perturbed point
    ``wp`` and the cosine between the ascent and descent gradients ``cos`` (*cells)."""

    w: torch.Tensor
    buf: torch.Tensor
    wp: torch.Tensor
    cos: torch.Tensor


def _sam_step(state: SAMState, grad_fn: GradFn, lr, rho, momentum, normalized: bool, noise, xi,
              track_cos: bool = True) -> SAMState:
    w = state.w
    g = grad_fn(w)
    if normalized or track_cos:
        gn = torch.linalg.vector_norm(g, dim=-1, keepdim=True)
    wp = w + rho * (g / (gn + NORM_EPS)) if normalized else w + rho * g
    gp = grad_fn(wp)
    cos = state.cos
    if track_cos:
        # cos(∇ℓ(w), ∇ℓ(w^p)): ±1 oscillation is the paper's signature of a trapped iterate
        cos = (g * gp).sum(-1) / (gn[..., 0] * torch.linalg.vector_norm(gp, dim=-1) + 1e-300)
    if noise is not None:
        gp = gp + noise * xi
    if momentum is None:
        return SAMState(w - lr * gp, state.buf, wp, cos)
    buf = momentum * state.buf + gp
    return SAMState(w - lr * buf, buf, wp, cos)


def sam_update(state: SAMState, grad_fn: GradFn, lr, rho, momentum, *, normalized: bool,
               noise: torch.Tensor | None = None, xi: torch.Tensor | None = None) -> SAMState:
    r"""One SAM step for all cells (module docstring has the equations); pure.

    ``lr`` (η > 0), ``rho`` (ρ ≥ 0), ``momentum`` (γ ∈ [0, 1), or ``None`` to skip the buffer) are numbers or
    tensors of shape (*cells, 1); ``noise`` the per-coordinate std σ ≥ 0 and ``xi`` the standard-normal draw
    (both broadcast to (*cells, d)), or ``None``.
    """
    if not isinstance(state, SAMState):
        raise TypeError(f"Invalid state: {type(state).__name__} (must be a SAMState)")
    if not callable(grad_fn):
        raise TypeError(f"Invalid grad_fn: {grad_fn!r} (must be callable)")
    validate.positive("lr", lr)
    validate.in_range("rho", rho, 0.0, math.inf)
    if momentum is not None:
        validate.in_range("momentum", momentum, 0.0, 1.0)
    if not isinstance(normalized, bool):
        raise TypeError(f"Invalid normalized: {normalized!r} (must be True or False)")
    if (noise is None) != (xi is None):
        raise ValueError("Invalid noise/xi: pass both or neither")
    if noise is not None:
        validate.in_range("noise", noise, 0.0, math.inf)
        validate.finite_tensor("xi", xi)
    for name, t in zip(SAMState._fields, state, strict=True):
        validate.finite_tensor(f"state.{name}", t)
    return _sam_step(state, getattr(grad_fn, "_raw", grad_fn), lr, rho, momentum, normalized, noise, xi)


class SAMTrajectory(NamedTuple):
    """Recorded run. ``w``: (n+1, *cells, d) at steps 0, every, 2·every, …, steps; ``wp`` and ``cos``:
    (n, *cells, d) and (n, *cells), the perturbed point and the ascent/descent cosine computed *from* w at
    steps 0, every, …, steps − every; ``t``: the step index of each row of ``w``."""

    w: torch.Tensor
    wp: torch.Tensor
    cos: torch.Tensor
    t: torch.Tensor

    def distance(self, point) -> torch.Tensor:
        """‖w_t − point‖ for every recorded step and cell, shape (n+1, *cells)."""
        p = torch.as_tensor(point, dtype=self.w.dtype, device=self.w.device)
        return torch.linalg.vector_norm(self.w - p, dim=-1)

    @property
    def final(self) -> torch.Tensor:
        """w at the last step, shape (*cells, d)."""
        return self.w[-1]


class _Setup(NamedTuple):
    w0: torch.Tensor
    lr: torch.Tensor
    rho: torch.Tensor
    momentum: torch.Tensor | None
    noise: torch.Tensor | None
    cells: torch.Size
    gen: torch.Generator | None


def _setup(w0, lr, rho, momentum, noise, seed, dtype, device, normalized) -> _Setup:
    validate.positive("lr", lr)
    validate.in_range("rho", rho, 0.0, math.inf)
    validate.in_range("momentum", momentum, 0.0, 1.0)
    if not isinstance(normalized, bool):
        raise TypeError(f"Invalid normalized: {normalized!r} (must be True or False)")
    if noise is not None:
        validate.in_range("noise", noise, 0.0, math.inf)
    if seed is not None:
        validate.integer("seed", seed, 0, 2**62)
    dev, dt = device_arg(device), resolve_dtype(dtype)
    w0 = validate.finite_tensor("w0", w0).to(dev, dt)
    if w0.ndim < 1 or w0.shape[-1] < 1:
        raise ValueError(f"Invalid w0: shape {tuple(w0.shape)} (must be (..., d) with d ≥ 1)")

    def t(v):
        return validate.finite_tensor("value", v).to(dev, dt)

    lr_t, rho_t, mom_t = t(lr), t(rho), t(momentum)
    noise_t = None if noise is None else t(noise)
    shapes = [w0.shape[:-1], lr_t.shape, rho_t.shape, mom_t.shape]
    if noise_t is not None:
        shapes.append(noise_t.shape[:-1] if noise_t.ndim else ())
    try:
        cells = torch.broadcast_shapes(*shapes)
        if noise_t is not None:
            torch.broadcast_shapes(noise_t.shape, (*cells, w0.shape[-1]))
    except RuntimeError as err:
        raise ValueError(f"Invalid shapes: w0 {tuple(w0.shape)}, lr {tuple(lr_t.shape)}, rho "
                         f"{tuple(rho_t.shape)}, momentum {tuple(mom_t.shape)} do not broadcast ({err})"
                         ) from err
    mom = None if not bool((mom_t != 0).any()) else mom_t.unsqueeze(-1)
    # noise is drawn on the CPU from a seeded generator, then moved: the same numbers on every device
    gen = torch.Generator().manual_seed(seed) if noise_t is not None and seed is not None else None
    return _Setup(w0, lr_t.unsqueeze(-1), rho_t.unsqueeze(-1), mom, noise_t, cells, gen)


def _cell_bytes(s: _Setup) -> int:
    return math.prod(s.cells) * s.w0.shape[-1] * s.w0.element_size()


def _probe(grad_fn: GradFn, s: _Setup) -> None:
    """Call ``grad_fn`` once on ``w0``: a shape mismatch becomes a ``ValueError`` naming the arguments."""
    raw = getattr(grad_fn, "_raw", grad_fn)
    try:
        g = raw(s.w0)
    except (RuntimeError, IndexError) as err:
        raise ValueError(f"Invalid w0/grad_fn: grad_fn fails on w0 of shape {tuple(s.w0.shape)} ({err})") from err
    if not isinstance(g, torch.Tensor) or g.shape != s.w0.shape:
        raise ValueError(f"Invalid grad_fn: must return a tensor of w0's shape {tuple(s.w0.shape)}")


def _init(s: _Setup) -> SAMState:
    w = s.w0.expand(*s.cells, s.w0.shape[-1]).clone()
    return SAMState(w, torch.zeros_like(w), w.clone(), torch.ones(s.cells, dtype=w.dtype, device=w.device))


class _NoiseStream:
    """Standard-normal draws ξ_t of a fixed shape, taken from a CPU generator in chunks of steps (one ``randn``
    call per chunk instead of one per step) and moved to the device. The chunking depends only on the shape and
    the number of steps, so every function that draws for the same (shape, steps, seed) gets the same ξ_t."""

    def __init__(self, shape, steps: int, gen: torch.Generator | None, dtype: torch.dtype, device: torch.device):
        self.shape, self.left, self.gen, self.dtype, self.device = tuple(shape), steps, gen, dtype, device
        self.per_chunk = max(1, 2**20 // max(1, math.prod(self.shape)))
        self.buf, self.i = None, 0

    def next(self) -> torch.Tensor:
        if self.buf is None or self.i == self.buf.shape[0]:
            n = max(1, min(self.per_chunk, self.left))
            self.buf = torch.randn((n, *self.shape), generator=self.gen, dtype=self.dtype).to(self.device)
            self.i = 0
        xi = self.buf[self.i]
        self.i += 1
        self.left -= 1
        return xi


def _stepper(s: _Setup, grad_fn: GradFn, normalized: bool, track_cos: bool = True, steps: int = 0):
    raw = getattr(grad_fn, "_raw", grad_fn)
    noise = _NoiseStream(s.w0.shape, steps, s.gen, s.w0.dtype, s.w0.device) if s.noise is not None else None

    def update(state: SAMState, _t: int) -> SAMState:
        xi = noise.next() if noise is not None else None
        return _sam_step(state, raw, s.lr, s.rho, s.momentum, normalized, s.noise, xi, track_cos)

    return update


def simulate_sam(
    grad_fn: GradFn,
    w0,
    lr,
    rho,
    steps: int,
    *,
    normalized: bool = True,
    momentum=0.0,
    noise=None,
    seed: int | None = None,
    every: int = 1,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> SAMTrajectory:
    r"""Run SAM (module docstring) on ``grad_fn`` for ``steps`` steps, every cell at once.

    Parameters
    ----------
    grad_fn: ``w (..., d) -> ∇ℓ(w) (..., d)``, batched (e.g. :func:`beale_grad`).
    w0: starting point(s), shape (..., d), finite.
    lr: η > 0. rho: ρ ≥ 0 (0 is GD). momentum: γ ∈ [0, 1). All broadcast over the cells.
    normalized: ascent ρ g/(‖g‖+1e−16) (the authors' experiments) or ρ g (the theory of Theorems 1–2).
    noise: per-coordinate std σ of Gaussian noise on the descent gradient, broadcast to (*cells, d); e.g.
        ``sqrt(|λ|/B)`` for the Fisher approximation C ≈ |H|/B. ``None``: deterministic. The draws ξ_t have
        the shape of ``w0`` (shared by cells that share a starting point) and come from a CPU generator.
    seed: seeds the noise (``None``: torch's global generator).
    every: record every ``every``-th step (``steps`` must be a multiple of it).

    A diverging cell is not an error: its recorded values become ±inf/NaN from the step it overflows.
    """
    if not callable(grad_fn):
        raise TypeError(f"Invalid grad_fn: {grad_fn!r} (must be callable)")
    steps = _steps(steps)
    every = validate.integer("every", every, 1)
    if steps % every:
        raise ValueError(f"Invalid every: {every} (must divide steps = {steps})")
    s = _setup(w0, lr, rho, momentum, noise, seed, dtype, device, normalized)
    _probe(grad_fn, s)
    n = steps // every
    validate.memory_guard((2 * n + 4) * _cell_bytes(s) * 1.5, lower="steps (or raise every) or the number of cells")
    update = _stepper(s, grad_fn, normalized, steps=steps)
    state = _init(s)
    w_hist = torch.empty((n + 1, *state.w.shape), dtype=state.w.dtype, device=state.w.device)
    wp_hist = torch.empty((n, *state.w.shape), dtype=state.w.dtype, device=state.w.device)
    cos_hist = torch.empty((n, *s.cells), dtype=state.w.dtype, device=state.w.device)
    w_hist[0] = state.w
    with torch.no_grad():
        for t in range(steps):
            state = update(state, t)
            if t % every == 0:
                wp_hist[t // every] = state.wp
                cos_hist[t // every] = state.cos
            if (t + 1) % every == 0:
                w_hist[(t + 1) // every] = state.w
    steps_t = torch.arange(0, steps + 1, every, device=state.w.device)
    return SAMTrajectory(w_hist, wp_hist, cos_hist, steps_t)


class SAMSweep(NamedTuple):
    """Per-cell reductions of a deterministic SAM sweep on a quadratic saddle (all of the cell shape, except
    ``final_w``: (*cells, d)). The loss reductions have :class:`theorybook.sweep.SweepStats` semantics
    (``final_loss = inf`` where diverged, ``min_loss`` ignores NaN, ``first_below`` the first t ≥ 1 with
    ℓ ≤ threshold else −1, ``tail_max`` over the last ``tail`` steps); ``final_w`` is w_T as computed (inf/NaN
    where diverged) and ``final_distance`` = ‖w_T‖, the distance to the saddle at 0."""

    final_loss: torch.Tensor
    min_loss: torch.Tensor
    first_below: torch.Tensor
    tail_max: torch.Tensor
    diverged: torch.Tensor
    final_w: torch.Tensor
    final_distance: torch.Tensor


def sam_sweep(
    w0,
    lr,
    rho,
    steps: int,
    *,
    lam=(2.0, -2.0),
    normalized: bool = True,
    momentum=0.0,
    threshold: float | None = None,
    tail: int = 0,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> SAMSweep:
    r"""Deterministic SAM (``noise=None``) on :func:`saddle_quadratic` ℓ = ½Σλ_j w_j² for every cell of
    broadcast(w0, ρ, η, γ) at once, keeping only reductions (nothing of size cells × steps is stored).

    Same update, arguments and broadcasting as :func:`simulate_sam` with
    ``grad_fn = saddle_quadratic_grad(lam)``; the loss is ℓ(w_t), reduced by
    :func:`theorybook.sweep.run_sweep` (``threshold``, ``tail`` as there). With d = 2 a fused kernel runs instead:
    on CPU the numba loop :func:`theorybook.kernels.cpu.sam_quadratic_cpu_fused` (bitwise equal, see
    ``tests/test_cpu_fused.py``) once the sweep has ≥ 2·10⁶ cell-steps; on CUDA with Triton the
    fused kernel :func:`theorybook.kernels.sam.sam_quadratic_fused` runs instead (same semantics; bitwise
    equal under the Triton interpreter on CPU, see ``tests/test_kernels.py``).
    """
    steps = _steps(steps)
    tail = validate.integer("tail", tail, 0)
    if threshold is not None:
        threshold = validate.number("threshold", threshold)
    s = _setup(w0, lr, rho, momentum, None, None, dtype, device, normalized)
    validate.memory_guard(8 * _cell_bytes(s), lower="the number of cells")
    lam64 = _lam_vector(lam)
    d = s.w0.shape[-1]
    if lam64.shape[0] != d:
        raise ValueError(f"Invalid lam: {lam!r} (must have one entry per coordinate of w0, d = {d})")
    fused = _fused_sam(s.w0.device, d, math.prod(s.cells) * steps)
    if fused is not None:
        w = s.w0.expand(*s.cells, d)
        mom = None if s.momentum is None else s.momentum[..., 0]
        out = fused(w, s.rho[..., 0], s.lr[..., 0], mom, steps, lam=tuple(lam64.tolist()),
                    normalized=normalized, threshold=threshold, tail=tail)
        if out is not None:  # None: the CPU compiler failed (a one-line notice was given); torch runs
            return out
    lam_t = lam64.to(s.w0.device, s.w0.dtype)
    step = _stepper(s, saddle_quadratic_grad(lam64), normalized)
    last: list[SAMState] = []

    def update(state: SAMState, t: int) -> SAMState:
        new = step(state, t)
        last[:] = [new]
        return new

    def loss(state: SAMState) -> torch.Tensor:
        return 0.5 * (lam_t * state.w * state.w).sum(-1)

    init = _init(s)
    with torch.no_grad():
        stats = run_sweep(init, update, loss, steps, threshold=threshold, tail=tail)
    w = (last[0] if last else init).w
    return SAMSweep(*stats[:5], w, torch.linalg.vector_norm(w, dim=-1))


def fused_sweep_args(w0: torch.Tensor, steps: int, tail: int, lam) -> tuple[torch.Size, int]:
    """Checks shared by the fused SAM kernels (Triton and CPU): ``w0`` of shape (*cells, 2) in float32/64,
    ``steps``, ``tail`` ≥ 0, two curvatures; returns (cell shape, number of cells)."""
    validate.integer("steps", steps, 0)
    validate.integer("tail", tail, 0)
    validate.one_of("dtype", w0.dtype, (torch.float32, torch.float64))
    if w0.ndim < 1 or w0.shape[-1] != 2:
        raise ValueError(f"Invalid w0: shape {tuple(w0.shape)} (must be (*cells, 2))")
    if len(lam) != 2:
        raise ValueError(f"Invalid lam: {lam!r} (must have 2 entries)")
    return w0.shape[:-1], w0[..., 0].numel()


def _fused_sam(device: torch.device, d: int, cell_steps: float = 0.0):
    """The fused kernel when one applies (d = 2; CUDA with Triton, or CPU with numba for ≥ 2·10⁶ cell-steps),
    else ``None``."""
    if d != 2 or device.type not in ("cuda", "cpu"):
        return None
    try:
        from theorybook import kernels
    except ImportError:  # pragma: no cover
        return None
    if device.type == "cpu":
        return kernels.cpu_sam_sweep(cell_steps)
    return kernels.sam_sweep_kernel()

