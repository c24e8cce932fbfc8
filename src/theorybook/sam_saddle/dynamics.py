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
their noise: common random numbers, which make differences between ρ (Corollary 1) far less noisy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

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


def _pair(w: torch.Tensor, name: str = "w") -> torch.Tensor:
    if not isinstance(w, torch.Tensor):
        w = torch.as_tensor(w, dtype=torch.float64)
    if w.ndim < 1 or w.shape[-1] != 2:
        raise ValueError(f"Invalid {name}: shape {tuple(w.shape)} (must end in a dimension of size 2)")
    return w


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


def beale_grad(w: torch.Tensor) -> torch.Tensor:
    r"""Gradient of :func:`beale`, shape ``(..., 2)``.

    With :math:`r_i = c_i - x(1-y^i)`: :math:`\partial_x f = -2\sum_i r_i(1-y^i)`,
    :math:`\partial_y f = 2x\sum_i r_i\, i\,y^{i-1}`. Both are polynomials of degree ≤ 2 in x and ≤ 6 in y,
    so the gradient is evaluated as :math:`Q_0(y) + x\,(Q_1(y) + x\,Q_2(y))` where the :math:`Q_a` are the
    powers :math:`(1, y, \dots, y^6)` times a coefficient matrix sympy expands once: ~7 tensor ops per call
    whatever the number of cells (per-op dispatch, 2–10 µs, is what a 10⁴-step run pays for).
    """
    w = _pair(w)
    m, powers = _beale_grad_constants(w.device, w.dtype)
    x = w[..., 0:1]
    q = (w[..., 1:2] ** powers) @ m
    return torch.addcmul(q[..., 0:2], x, torch.addcmul(q[..., 2:4], x, q[..., 4:6]))


def saddle_quadratic(w: torch.Tensor, lam=(2.0, -2.0)) -> torch.Tensor:
    r"""Quadratic saddle :math:`\ell(\mathbf w) = \tfrac12\sum_j\lambda_j w_j^2` (default: x² − y², λ = ±2).

    ``w`` has shape ``(..., d)`` and ``lam`` broadcasts against it (d = len(lam)). The saddle is at 0 and the
    Hessian is diag(λ); a negative λ_j is an escape direction for gradient descent.
    """
    lam_t = torch.as_tensor(lam, dtype=w.dtype, device=w.device)
    if lam_t.ndim != 1 or lam_t.shape[0] != w.shape[-1]:
        raise ValueError(f"Invalid lam: {lam!r} (must be a 1-D sequence with one entry per coordinate of w, "
                         f"d = {w.shape[-1]})")
    return 0.5 * (lam_t * w * w).sum(-1)


def saddle_quadratic_grad(lam=(2.0, -2.0)) -> GradFn:
    r"""The gradient :math:`\nabla\ell(\mathbf w) = \Lambda\mathbf w` of :func:`saddle_quadratic` (a function)."""
    lam_t = torch.as_tensor(lam, dtype=torch.float64)
    if lam_t.ndim != 1 or not bool(torch.isfinite(lam_t).all()):
        raise ValueError(f"Invalid lam: {lam!r} (must be a 1-D sequence of finite numbers)")

    cache: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}

    def grad(w: torch.Tensor) -> torch.Tensor:
        key = (w.device, w.dtype)
        if key not in cache:
            cache[key] = lam_t.to(w.device, w.dtype)
        return cache[key] * w

    return grad


# ----------------------------------------------------------------------------------------------- the SAM step
class SAMState(NamedTuple):
    """State of every cell: iterate ``w`` (*cells, d), momentum buffer ``buf``, the last perturbed point
    ``wp`` and the cosine between the ascent and descent gradients ``cos`` (*cells)."""

    w: torch.Tensor
    buf: torch.Tensor
    wp: torch.Tensor
    cos: torch.Tensor


def sam_update(state: SAMState, grad_fn: GradFn, lr, rho, momentum, *, normalized: bool,
               noise: torch.Tensor | None = None, xi: torch.Tensor | None = None) -> SAMState:
    r"""One SAM step for all cells (module docstring has the equations); pure.

    ``lr``, ``rho``, ``momentum`` are tensors of shape (*cells, 1) (or Python numbers); ``noise`` the
    per-coordinate std σ and ``xi`` the standard-normal draw (both broadcast to (*cells, d)) or ``None``.
    ``momentum = None`` skips the buffer (plain SAM, two fewer ops per step).
    """
    w = state.w
    g = grad_fn(w)
    gn = torch.linalg.vector_norm(g, dim=-1, keepdim=True)
    wp = w + rho * (g / (gn + NORM_EPS)) if normalized else w + rho * g
    gp = grad_fn(wp)
    # cos(∇ℓ(w), ∇ℓ(w^p)): ±1 oscillation is the paper's signature of a trapped iterate
    cos = (g * gp).sum(-1) / (gn[..., 0] * torch.linalg.vector_norm(gp, dim=-1) + 1e-300)
    if noise is not None:
        gp = gp + noise * xi
    if momentum is None:
        return SAMState(w - lr * gp, state.buf, wp, cos)
    buf = momentum * state.buf + gp
    return SAMState(w - lr * buf, buf, wp, cos)


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


def _setup(w0, lr, rho, momentum, noise, seed, dtype, device) -> _Setup:
    validate.positive("lr", lr)
    validate.in_range("rho", rho, 0.0, math.inf)
    validate.in_range("momentum", momentum, 0.0, 1.0)
    if noise is not None:
        validate.in_range("noise", noise, 0.0, math.inf)
    if seed is not None:
        validate.integer("seed", seed, 0)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    w0 = torch.as_tensor(w0, dtype=dt, device=dev)
    if w0.ndim < 1 or w0.shape[-1] < 1 or not bool(torch.isfinite(w0).all()):
        raise ValueError(f"Invalid w0: shape {tuple(w0.shape)} (must be finite with shape (..., d), d ≥ 1)")

    def t(v):
        return torch.as_tensor(v, dtype=dt, device=dev)

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
    gen = None
    if noise_t is not None and seed is not None:
        gen = torch.Generator(device=dev).manual_seed(seed)
    return _Setup(w0, lr_t.unsqueeze(-1), rho_t.unsqueeze(-1), mom, noise_t, cells, gen)


def _init(s: _Setup) -> SAMState:
    w = s.w0.expand(*s.cells, s.w0.shape[-1]).clone()
    return SAMState(w, torch.zeros_like(w), w.clone(), torch.ones(s.cells, dtype=w.dtype, device=w.device))


def _stepper(s: _Setup, grad_fn: GradFn, normalized: bool):
    def update(state: SAMState, _t: int) -> SAMState:
        xi = None
        if s.noise is not None:
            xi = torch.randn(s.w0.shape, generator=s.gen, dtype=s.w0.dtype, device=s.w0.device)
        return sam_update(state, grad_fn, s.lr, s.rho, s.momentum, normalized=normalized, noise=s.noise,
                          xi=xi)

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
    w0: starting point(s), shape (..., d).
    lr: η > 0. rho: ρ ≥ 0 (0 is GD). momentum: γ ∈ [0, 1). All broadcast over the cells.
    normalized: ascent ρ g/(‖g‖+1e−16) (the authors' experiments) or ρ g (the theory of Theorems 1–2).
    noise: per-coordinate std σ of Gaussian noise on the descent gradient, broadcast to (*cells, d); e.g.
        ``sqrt(|λ|/B)`` for the Fisher approximation C ≈ |H|/B. ``None``: deterministic.
    seed: seeds the noise (``None``: torch's global generator).
    every: record every ``every``-th step (``steps`` must be a multiple of it).
    """
    if not callable(grad_fn):
        raise ValueError(f"Invalid grad_fn: {grad_fn!r} (must be callable)")
    validate.integer("steps", steps, 0)
    validate.integer("every", every, 1)
    if steps % every:
        raise ValueError(f"Invalid every: {every} (must divide steps = {steps})")
    s = _setup(w0, lr, rho, momentum, noise, seed, dtype, device)
    update = _stepper(s, grad_fn, normalized)
    state = _init(s)
    n = steps // every
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

    Same dynamics and broadcasting as :func:`simulate_sam` (default unnormalised, the theory's SAM), run by
    :func:`theorybook.sweep.run_sweep` with loss −‖w − center‖² and threshold −radius², so nothing of size
    cells × steps is stored.
    """
    if not callable(grad_fn):
        raise ValueError(f"Invalid grad_fn: {grad_fn!r} (must be callable)")
    validate.integer("steps", steps, 0)
    validate.positive("radius", radius)
    s = _setup(w0, lr, rho, momentum, noise, seed, dtype, device)
    c = torch.zeros(s.w0.shape[-1], dtype=s.w0.dtype, device=s.w0.device) if center is None else \
        torch.as_tensor(center, dtype=s.w0.dtype, device=s.w0.device)

    def neg_sq_dist(state: SAMState) -> torch.Tensor:
        return -(state.w - c).square().sum(-1)

    with torch.no_grad():
        stats = run_sweep(_init(s), _stepper(s, grad_fn, normalized), neg_sq_dist, steps,
                          threshold=-float(radius) ** 2)
    return stats.first_below


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
    :func:`theorybook.sweep.run_sweep` (``threshold``, ``tail`` as there). On CUDA with Triton and d = 2 the
    fused kernel :func:`theorybook.kernels.sam.sam_quadratic_fused` runs instead (same semantics; bitwise
    equal under the Triton interpreter on CPU, see ``tests/test_kernels.py``).
    """
    validate.integer("steps", steps, 0)
    validate.integer("tail", tail, 0)
    if threshold is not None:
        validate.in_range("threshold", threshold, -math.inf, math.inf)
    s = _setup(w0, lr, rho, momentum, None, None, dtype, device)
    lam64 = torch.as_tensor(lam, dtype=torch.float64)
    d = s.w0.shape[-1]
    if lam64.ndim != 1 or lam64.shape[0] != d or not bool(torch.isfinite(lam64).all()):
        raise ValueError(f"Invalid lam: {lam!r} (must be a 1-D sequence of finite numbers, one per coordinate "
                         f"of w0, d = {d})")
    fused = _fused_sam(s.w0.device, d)
    if fused is not None:
        w = s.w0.expand(*s.cells, d)
        mom = None if s.momentum is None else s.momentum[..., 0]
        return fused(w, s.rho[..., 0], s.lr[..., 0], mom, steps, lam=tuple(lam64.tolist()),
                     normalized=normalized, threshold=threshold, tail=tail)
    lam_t = lam64.to(s.w0.device, s.w0.dtype)
    step = _stepper(s, saddle_quadratic_grad(lam64), normalized)
    last: list[SAMState] = []

    def update(state: SAMState, t: int) -> SAMState:
        new = step(state, t)
        last[:] = [new]
        return new

    def loss(state: SAMState) -> torch.Tensor:
        return saddle_quadratic(state.w, lam_t)

    init = _init(s)
    with torch.no_grad():
        stats = run_sweep(init, update, loss, steps, threshold=threshold, tail=tail)
    w = (last[0] if last else init).w
    return SAMSweep(*stats[:5], w, torch.linalg.vector_norm(w, dim=-1))


def _fused_sam(device: torch.device, d: int):
    """The fused kernel when one applies (CUDA, Triton installed, d = 2), else ``None``."""
    if device.type != "cuda" or d != 2:
        return None
    try:
        from theorybook import kernels
    except ImportError:  # pragma: no cover
        return None
    return kernels.sam_sweep_kernel()


class MSDResult(NamedTuple):
    """Monte-Carlo second moments of noisy unnormalised SAM started at the saddle of a quadratic.

    ``t``: continuous times k·η (n,); ``msd``, ``se``: mean of w_j² over paths and its standard error,
    shape (n, R, nB, d) for R radii ρ, nB batch sizes, d directions; ``gap``, ``gap_se``: the paired
    (common-random-number) difference msd[ρ = rho[0]] − msd[ρ] and its standard error, same shape.
    """

    t: torch.Tensor
    msd: torch.Tensor
    se: torch.Tensor
    gap: torch.Tensor
    gap_se: torch.Tensor


def monte_carlo_msd(lam, rho, lr: float, batch, steps: int, n_paths: int, *, seed: int = 0,
                    every: int = 1, device: str | torch.device | None = None) -> MSDResult:
    """Theorem 2's experiment: ``n_paths`` SGD/SAM paths from the saddle of ℓ = ½Σλ_j w_j² with gradient noise
    N(0, diag|λ|/B), every (path, ρ, B) cell in one :func:`simulate_sam` call; paths share noise across ρ and B.
    """
    validate.integer("n_paths", n_paths, 2)
    lam_t = torch.as_tensor(lam, dtype=torch.float64)
    rho_t = torch.as_tensor(rho, dtype=torch.float64).reshape(-1, 1)
    b_t = torch.as_tensor(batch, dtype=torch.float64).reshape(-1, 1)
    validate.positive("batch", b_t)
    noise = torch.sqrt(lam_t.abs() / b_t)  # (nB, d)
    w0 = torch.zeros(n_paths, 1, 1, lam_t.shape[0], dtype=torch.float64)
    tr = simulate_sam(saddle_quadratic_grad(lam_t), w0, lr, rho_t, steps, normalized=False, noise=noise,
                      seed=seed, every=every, device=device)
    w2 = tr.w.square()
    d = w2[:, :, :1] - w2
    root_n = math.sqrt(n_paths)
    return MSDResult(tr.t.to(torch.float64) * lr, w2.mean(1), w2.std(1) / root_n, d.mean(1), d.std(1) / root_n)
