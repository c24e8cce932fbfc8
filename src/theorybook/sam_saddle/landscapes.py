"""Beale's function (the paper's test function), its gradient, and a plain-float SAM fast path for long runs.

The SAM update is :mod:`.dynamics`' (same heavy-ball convention, the 10⁻¹⁶ in the normalisation, the cosine);
:func:`beale_grad` is batched for :func:`theorybook.sam_saddle.simulate_sam`, :func:`beale_sam` loops one cell in
Python floats (≈ 2 µs a step).
"""

from __future__ import annotations

import functools
import math
from array import array

import torch

from .. import validate
from .dynamics import NORM_EPS, SAMTrajectory, _pair, _steps, device_arg

__all__ = ["BEALE_MINIMUM", "BEALE_SADDLE", "beale", "beale_grad", "beale_sam", "ascent_flip_share"]

#: Beale's global minimum and the index-1 saddle the paper studies.
BEALE_MINIMUM = (3.0, 0.5)
BEALE_SADDLE = (0.0, 1.0)
_BEALE_C = (1.5, 2.25, 2.625)

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
