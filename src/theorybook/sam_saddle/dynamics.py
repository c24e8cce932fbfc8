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

Long deterministic runs on Beale's function use :func:`beale_sam`, a plain-float loop per cell with the same
update (10⁵ steps of four cells in about a second, where the batched torch step costs ~0.25 ms).
"""

from __future__ import annotations

import functools
import math
from array import array
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import resolve_device, resolve_dtype
from ..sweep import run_sweep

__all__ = [
    "BEALE_MINIMUM",
    "BEALE_SADDLE",
    "NORM_EPS",
    "SAMState",
    "SAMTrajectory",
    "beale",
    "beale_grad",
    "saddle_quadratic",
    "saddle_quadratic_grad",
    "sam_update",
    "simulate_sam",
    "beale_sam",
    "ascent_flip_share",
    "escape_steps",
    "SAMSweep",
    "sam_sweep",
    "MSDResult",
    "monte_carlo_msd",
]

#: Added to ‖g‖ in the normalised ascent, as in the authors' code: the step is defined at the saddle itself.
NORM_EPS = 1e-16
#: Beale's global minimum and the index-1 saddle the paper studies.
BEALE_MINIMUM = (3.0, 0.5)
BEALE_SADDLE = (0.0, 1.0)
_BEALE_C = (1.5, 2.25, 2.625)

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


# --------------------------------------------------------------------------------------------- test functions
def beale(w: torch.Tensor) -> torch.Tensor:
    r"""Beale function :math:`f(x,y)=\sum_{i=1}^3 (c_i - x + x y^i)^2`, c = (1.5, 2.25, 2.625).

    ``w`` has shape ``(..., 2)``; returns shape ``(...)``. Minimum f(3, 0.5) = 0; index-1 saddle (0, 1) with
    f = 909/64 and Hessian eigenvalues ±111/4.
    """
    w = _pair(w)
    x, y = w[..., 0:1], w[..., 1:2]
    p = y ** torch.arange(1, 4, device=w.device, dtype=w.dtype)
    r = torch.tensor(_BEALE_C, device=w.device, dtype=w.dtype) - x * (1 - p)
    return (r * r).sum(-1)


@functools.cache
def _beale_grad_coefficients() -> torch.Tensor:
    """M (7, 6): ∇f = Q₀ + x(Q₁ + x Q₂) with [Q₀ Q₁ Q₂] = (1, y, …, y⁶) @ M; expanded exactly by sympy."""
    import sympy as sp

    x, y = sp.symbols("x y")
    f = sum((sp.nsimplify(c) - x + x * y**i) ** 2 for i, c in enumerate(_BEALE_C, start=1))
    m = torch.zeros(7, 3, 2, dtype=torch.float64)
    for k, v in enumerate((x, y)):
        for (a, b), coef in sp.Poly(sp.expand(sp.diff(f, v)), x, y).terms():
            m[b, a, k] = float(coef)
    return m.reshape(7, 6)


@functools.cache
def _beale_grad_constants(device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """The coefficient matrix and the exponents 0..6 on ``device``: built once, not copied every step."""
    return _beale_grad_coefficients().to(device, dtype), torch.arange(7, device=device, dtype=dtype)


def _beale_grad_raw(w: torch.Tensor) -> torch.Tensor:
    """:func:`beale_grad` without argument checks (the inner loop of :func:`simulate_sam`)."""
    m, powers = _beale_grad_constants(w.device, w.dtype)
    x = w[..., 0:1]
    q = (w[..., 1:2] ** powers) @ m
    return torch.addcmul(q[..., 0:2], x, torch.addcmul(q[..., 2:4], x, q[..., 4:6]))


def beale_grad(w: torch.Tensor) -> torch.Tensor:
    r"""Gradient of :func:`beale`, shape ``(..., 2)``.

    With :math:`r_i = c_i - x(1-y^i)`: :math:`\partial_x f = -2\sum_i r_i(1-y^i)`,
    :math:`\partial_y f = 2x\sum_i r_i\, i\,y^{i-1}`. Both are polynomials of degree ≤ 2 in x and ≤ 6 in y,
    so the gradient is evaluated as :math:`Q_0(y) + x\,(Q_1(y) + x\,Q_2(y))` where the :math:`Q_a` are the
    powers :math:`(1, y, \dots, y^6)` times a coefficient matrix sympy expands once: ~7 tensor ops per call
    whatever the number of cells. Integer input is promoted to float64; NaN/inf is rejected.
    """
    return _beale_grad_raw(_pair(w))


beale_grad._raw = _beale_grad_raw  # type: ignore[attr-defined]  # simulate_sam validates once, not per step


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


# ------------------------------------------------------------------------------------ Beale: a scalar fast path
def _beale_xy_grad(x: float, y: float) -> tuple[float, float]:
    y2 = y * y
    y3 = y2 * y
    r1, r2, r3 = 1.5 - x + x * y, 2.25 - x + x * y2, 2.625 - x + x * y3
    return 2.0 * (r1 * (y - 1.0) + r2 * (y2 - 1.0) + r3 * (y3 - 1.0)), 2.0 * x * (r1 + 2.0 * r2 * y + 3.0 * r3 * y2)


def _beale_cell(x: float, y: float, lr: float, rho: float, gamma: float, steps: int, every: int,
                normalized: bool, w_out, wp_out, cos_out) -> None:
    """One cell of :func:`beale_sam`: plain Python floats (≈ 2 µs a step), appending to the three arrays."""
    bx = by = 0.0
    grad, hypot, eps = _beale_xy_grad, math.hypot, NORM_EPS
    w_out.extend((x, y))
    for t in range(steps):
        gx, gy = grad(x, y)
        gn = hypot(gx, gy)
        s = rho / (gn + eps) if normalized else rho
        xp, yp = x + s * gx, y + s * gy
        hx, hy = grad(xp, yp)
        if t % every == 0:
            wp_out.extend((xp, yp))
            cos_out.append((gx * hx + gy * hy) / (gn * hypot(hx, hy) + 1e-300))
        bx, by = gamma * bx + hx, gamma * by + hy
        x, y = x - lr * bx, y - lr * by
        if (t + 1) % every == 0:
            w_out.extend((x, y))


def beale_sam(
    w0,
    lr,
    rho,
    steps: int,
    *,
    normalized: bool = True,
    momentum=0.0,
    every: int = 1,
    device: str | torch.device | None = None,
) -> SAMTrajectory:
    r"""Deterministic SAM on :func:`beale`, the fast path for long runs: one plain-float loop per cell.

    The same update as ``simulate_sam(beale_grad, w0, lr, rho, steps, normalized=..., momentum=...)`` (its
    heavy-ball convention, the 10⁻¹⁶ in the normalisation, the cosine), with the gradient written out by hand
    (:math:`\partial_x f=2\sum_i r_i(y^i-1)`, :math:`\partial_y f=2x\sum_i i\,r_i y^{i-1}`, r_i = c_i − x + x y^i).
    Per-op dispatch makes a batched torch step cost ~0.25 ms whatever the batch; a Python-float step costs
    ~2 µs, so 10⁵ steps of four cells take about a second. Rounding differs from the torch path in the last
    bit (the polynomial is evaluated in another order), which matters only where the dynamics are chaotic.

    w0: (2,) or (n, 2); rho: a number or a 1-D sequence (n,); they broadcast to the cells. lr > 0, momentum in
    [0, 1) are numbers. Returns a :class:`SAMTrajectory` (float64 on ``device``) with ``every`` as in
    :func:`simulate_sam`.
    """
    lr_f = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    gamma = validate.number("momentum", momentum, 0.0, 1.0, high_open=True)
    steps = _steps(steps)
    every = validate.integer("every", every, 1)
    if steps % every:
        raise ValueError(f"Invalid every: {every} (must divide steps = {steps})")
    if not isinstance(normalized, bool):
        raise TypeError(f"Invalid normalized: {normalized!r} (must be True or False)")
    w0_t = _pair(w0, "w0").to("cpu", torch.float64)
    rho_t = validate.finite_tensor("rho", rho).to("cpu", torch.float64)
    validate.in_range("rho", rho_t, 0.0, math.inf)
    if w0_t.ndim > 2 or rho_t.ndim > 1:
        raise ValueError(f"Invalid w0/rho: shapes {tuple(w0_t.shape)}, {tuple(rho_t.shape)} (w0 must be (2,) or "
                         "(n, 2) and rho a number or (n,))")
    try:
        (cells,) = torch.broadcast_shapes(w0_t.shape[:-1] or (1,), rho_t.shape or (1,))
    except RuntimeError as err:
        raise ValueError(f"Invalid shapes: w0 {tuple(w0_t.shape)} and rho {tuple(rho_t.shape)} do not broadcast"
                         ) from err
    dev = device_arg(device)
    n = steps // every
    validate.memory_guard(8.0 * cells * (5 * n + 2) * 3, lower="steps (or raise every) or the number of cells")
    w0s = w0_t.reshape(-1, 2).expand(cells, 2).tolist()
    rhos = rho_t.reshape(-1).expand(cells).tolist()
    ws, wps, coss = [], [], []
    for (x, y), r in zip(w0s, rhos, strict=True):
        w_out, wp_out, cos_out = array("d"), array("d"), array("d")
        _beale_cell(x, y, lr_f, r, gamma, steps, every, normalized, w_out, wp_out, cos_out)
        ws.append(torch.frombuffer(w_out, dtype=torch.float64).reshape(n + 1, 2) if len(w_out) else
                  torch.empty(n + 1, 2, dtype=torch.float64))
        wps.append(torch.frombuffer(wp_out, dtype=torch.float64).reshape(n, 2) if len(wp_out) else
                   torch.empty(n, 2, dtype=torch.float64))
        coss.append(torch.frombuffer(cos_out, dtype=torch.float64) if len(cos_out) else
                    torch.empty(n, dtype=torch.float64))
    squeeze = w0_t.ndim == 1 and rho_t.ndim == 0
    w, wp, cos = torch.stack(ws, 1), torch.stack(wps, 1), torch.stack(coss, 1)
    if squeeze:
        w, wp, cos = w[:, 0], wp[:, 0], cos[:, 0]
    return SAMTrajectory(w.to(dev), wp.to(dev), cos.to(dev), torch.arange(0, steps + 1, every, device=dev))


def ascent_flip_share(traj: SAMTrajectory, start: int = 0) -> torch.Tensor:
    r"""Share of recorded steps, from row ``start`` on, on which the ascent's x-component
    :math:`\operatorname{sign}(x^p_t - x_t)` changes sign from one recorded step to the next: the perturbed point
    jumps across the saddle (the paper's Case III). Shape (*cells); meaningful for ``every = 1``."""
    if not isinstance(traj, SAMTrajectory):
        raise TypeError(f"Invalid traj: {type(traj).__name__} (must be a SAMTrajectory)")
    n = traj.wp.shape[0]
    start = validate.integer("start", start, 0, max(n - 2, 0))
    side = torch.sign(traj.wp[start:, ..., 0] - traj.w[start:n, ..., 0])
    if side.shape[0] < 2:
        raise ValueError(f"Invalid start: {start} (leaves fewer than 2 recorded steps)")
    return (side[1:] * side[:-1] < 0).to(traj.w.dtype).mean(0)


# --------------------------------------------------------------------------- noisy quadratic saddle: escape
def escape_steps(
    grad_fn: GradFn,
    w0,
    lr,
    rho,
    steps: int,
    radius: float,
    *,
    center=None,
    normalized: bool = False,
    momentum=0.0,
    noise=None,
    seed: int | None = None,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """First step t ≥ 1 with ‖w_t − center‖ ≥ ``radius`` for every cell (−1: not within ``steps``).

    Same dynamics and broadcasting as :func:`simulate_sam` (default unnormalised, the theory's SAM); only the
    state and the first-passage step are kept, and the ascent/descent cosine is not computed. To give
    independent noise to cells (e.g. batch sizes), give ``w0`` an axis for them: the draws ξ_t have ``w0``'s
    shape.
    """
    if not callable(grad_fn):
        raise TypeError(f"Invalid grad_fn: {grad_fn!r} (must be callable)")
    steps = _steps(steps)
    r = validate.number("radius", radius, 0.0, math.inf, low_open=True)
    r2 = r * r  # inf for a huge radius: then nothing escapes (−1), no OverflowError
    s = _setup(w0, lr, rho, momentum, noise, seed, dtype, device, normalized)
    _probe(grad_fn, s)
    validate.memory_guard(8 * _cell_bytes(s), lower="the number of cells")
    c = torch.zeros(s.w0.shape[-1], dtype=s.w0.dtype, device=s.w0.device) if center is None else \
        validate.finite_tensor("center", center).to(s.w0.device, s.w0.dtype)
    update = _stepper(s, grad_fn, normalized, track_cos=False, steps=steps)
    state = _init(s)
    hit = torch.full(s.cells, -1, dtype=torch.int64, device=s.w0.device)
    with torch.no_grad():
        for t in range(1, steps + 1):
            state = update(state, t - 1)
            out = (state.w - c).square().sum(-1) >= r2
            hit = torch.where((hit < 0) & out, t, hit)
    return hit


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


class MSDResult(NamedTuple):
    """Monte-Carlo second moments of noisy unnormalised SAM started at the saddle of a quadratic.

    ``t``: continuous times k·η at the recorded steps k = 0, every, … (n,); ``msd``, ``se``: mean of w_j² over
    paths and its standard error, shape (n, R, nB, d) for R radii ρ, nB batch sizes, d directions; ``gap``,
    ``gap_se``: the paired (common-random-number) difference msd[ρ = rho[0]] − msd[ρ] and its standard error,
    same shape; ``w``: every path at the recorded steps, (n, n_paths, R, nB, d).
    """

    t: torch.Tensor
    msd: torch.Tensor
    se: torch.Tensor
    gap: torch.Tensor
    gap_se: torch.Tensor
    w: torch.Tensor


def monte_carlo_msd(lam, rho, lr, batch, steps: int, n_paths: int, *, seed: int = 0, every: int = 1,
                    device: str | torch.device | None = None) -> MSDResult:
    r"""Theorem 2's experiment: ``n_paths`` SGD/SAM paths from the saddle of ℓ = ½Σλ_j w_j² with gradient noise
    N(0, diag|λ|/B) on the descent gradient, every (path, ρ, B) cell in one program.

    The step is the SAM algorithm, unnormalised: :math:`g=\Lambda w`, :math:`w^p=w+\rho g`,
    :math:`w\leftarrow w-\eta(\Lambda w^p+\sigma\xi)` with σ = sqrt(|λ|/B) — :func:`simulate_sam`'s update with
    ``w0`` of shape (n_paths, 1, nB, d), without the cosine. The draws ξ are independent across paths and batch
    sizes and shared across ρ (common random numbers, so the gap between ρ's is paired).
    """
    lam_t = _lam_vector(lam)
    rho_t = validate.finite_tensor("rho", rho).reshape(-1).to("cpu", torch.float64)
    validate.in_range("rho", rho_t, 0.0, math.inf)
    b_t = validate.finite_tensor("batch", batch).reshape(-1).to("cpu", torch.float64)
    validate.positive("batch", b_t)
    lr_f = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    steps = _steps(steps)
    n_paths = validate.integer("n_paths", n_paths, 2)
    seed = validate.integer("seed", seed, 0, 2**62)
    every = validate.integer("every", every, 1)
    if steps % every:
        raise ValueError(f"Invalid every: {every} (must divide steps = {steps})")
    d, n = lam_t.shape[0], steps // every + 1
    cell = n_paths * rho_t.numel() * b_t.numel() * d * 8
    validate.memory_guard(cell * (n + 8), lower="steps (or raise every), n_paths or the number of ρ, B")
    dev = device_arg(device)
    lam_d = lam_t.to(dev)
    rho_d = rho_t.reshape(-1, 1, 1).to(dev)
    noise = torch.sqrt(lam_t.abs() / b_t.reshape(-1, 1)).to(dev)  # (nB, d)
    shape = (n_paths, 1, b_t.numel(), d)
    stream = _NoiseStream(shape, steps, torch.Generator().manual_seed(seed), torch.float64, dev)
    w = torch.zeros(n_paths, rho_t.numel(), b_t.numel(), d, dtype=torch.float64, device=dev)
    hist = torch.empty((n, *w.shape), dtype=torch.float64, device=dev)
    hist[0] = w
    with torch.no_grad():
        for k in range(1, steps + 1):
            xi = stream.next()
            wp = w + rho_d * (lam_d * w)
            w = w - lr_f * (lam_d * wp + noise * xi)
            if k % every == 0:
                hist[k // every] = w
    if not bool(torch.isfinite(hist[-1]).all()):
        raise ValueError(f"Invalid arguments: the Monte-Carlo paths diverged (lr = {lr_f:g}, max ρ = "
                         f"{float(rho_t.max()):g}); lower lr or rho")
    w2 = hist.square()
    dgap = w2[:, :, :1] - w2
    root_n = math.sqrt(n_paths)
    t = torch.arange(0, steps + 1, every, dtype=torch.float64, device=dev) * lr_f
    return MSDResult(t, w2.mean(1), w2.std(1) / root_n, dgap.mean(1), dgap.std(1) / root_n, hist)
