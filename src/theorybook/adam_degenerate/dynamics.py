"""Simulating Adam (and its relatives) on L(x) = x^k/k — batched torch, plus a scalar reference.

Adam exactly as analysed by Bai et al.: ε = 0, no bias correction, m₀ = g₀, v₀ = g₀², x₀ = 1,
:math:`x_{t+1} = x_t - \\eta\\, m_t/\\sqrt{v_t}` in float64. The batched path is :func:`theorybook.sweep.poly_sweep`
(one tensor program for every cell); :func:`adam_reference` is the readable one-cell loop in plain Python floats,
which the tests hold the batched path to, and which drives single trajectories where torch's per-op dispatch
(~5 µs × 12 ops per step) would dominate.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import islice
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import resolve_dtype
from ..fit import line_fit
from ..sweep import floor_cut, poly_sweep
from .theory import stability_boundary

__all__ = [
    "AdamTrajectory",
    "simulate_adam",
    "adam_reference",
    "steps_to_reach",
    "measured_rate",
    "PhaseDiagram",
    "phase_diagram",
]


class AdamTrajectory(NamedTuple):
    """Trajectories, each of shape ``(steps+1, *cells)``: iterate x, moments m and v; and the degree k."""

    x: torch.Tensor
    m: torch.Tensor
    v: torch.Tensor
    k: torch.Tensor

    @property
    def loss(self) -> torch.Tensor:
        """L(x_t) = x_t^k / k."""
        return self.x.pow(self.k) / self.k

    @property
    def grad(self) -> torch.Tensor:
        """g_t = x_t^{k−1}."""
        return self.x.pow(self.k - 1)

    @property
    def effective_curvature(self) -> torch.Tensor:
        r""":math:`\lambda_t = x_t^{k-2}/\sqrt{v_t}`."""
        return self.x.pow(self.k - 2) * self.v.rsqrt()

    @property
    def coupling_ratio(self) -> torch.Tensor:
        r""":math:`R^{(v)}_t = v_t/g_t^2` (≈ 1 when v tracks g², i.e. SignGD-like)."""
        g = self.grad
        return self.v / (g * g)


def _check_common(k, beta1, beta2, lr, steps) -> None:
    validate.even_integer("k", k, 2)
    validate.in_range("beta1", beta1, 0.0, 1.0)
    validate.in_range("beta2", beta2, 0.0, 1.0)
    validate.positive("lr", lr)
    validate.integer("steps", steps, 0)


def simulate_adam(
    k,
    beta1,
    beta2,
    lr,
    steps: int,
    x0=1.0,
    *,
    dtype: torch.dtype = torch.float64,
    device=None,
) -> AdamTrajectory:
    """Run Adam on x^k/k for every broadcast cell of (k, beta1, beta2, lr, x0) in one tensor program.

    Each argument may be a number or a tensor; the cells are their broadcast. Returns the full
    :class:`AdamTrajectory` (memory: 3 × (steps+1) × cells values) — use :func:`phase_diagram` for big grids.
    A cell whose g² reaches the float floor is frozen there (see :func:`theorybook.sweep.floor_cut`).
    """
    _check_common(k, beta1, beta2, lr, steps)
    st = poly_sweep("adam", k, steps, x0=x0, lr=lr, beta1=beta1, beta2=beta2, record="state",
                    dtype=resolve_dtype(dtype), device=device)
    traj = st.trajectory
    kt = torch.as_tensor(k, dtype=traj.dtype, device=traj.device).expand(traj.shape[2:])
    return AdamTrajectory(traj[:, 0], traj[:, 1], traj[:, 2], kt)


def _lerp(a: float, b: float, w: float) -> float:
    """torch.lerp's formula, so the scalar reference rounds as the batched path does."""
    return a + w * (b - a) if w < 0.5 else b - (b - a) * (1 - w)


def _adam_scalar(k: int, beta1: float, beta2: float, lr: float, x0: float) -> Iterator[float]:
    """The one-cell recurrence in plain Python floats (same floor rule as the batched path): yields x_1, x_2, …"""
    cut = floor_cut(torch.float64)
    x = float(x0)
    g = x ** (k - 1)
    m, v = g, g * g
    while True:
        if not g * g < cut:
            x = x - lr * m * (1.0 / math.sqrt(v))
        yield x
        g = x ** (k - 1)
        m = _lerp(m, g, 1 - beta1)
        v = _lerp(v, g * g, 1 - beta2)


def adam_reference(k: int, beta1: float, beta2: float, lr: float, steps: int, x0: float = 1.0) -> np.ndarray:
    """The one-cell reference: the same recurrence in plain Python floats; returns x_0..x_steps."""
    _check_common(k, beta1, beta2, lr, steps)
    xs = np.empty(steps + 1)
    xs[0] = x0
    xs[1:] = list(islice(_adam_scalar(k, beta1, beta2, lr, x0), steps))
    return xs


def steps_to_reach(k: int, beta1: float, beta2: float, lr: float, eps: float, *, x0: float = 1.0,
                   max_steps: int = 1_000_000) -> int:
    """First t ≥ 1 with |x_t| ≤ eps, or −1 if not reached within ``max_steps``.

    ``eps`` must sit above the float64 floor for this k (|x|^{2k−2} ≥ tiny·1e6), else no run could reach it.
    """
    _check_common(k, beta1, beta2, lr, 0)
    validate.positive("eps", eps)
    validate.integer("max_steps", max_steps, 1)
    lowest = floor_cut(torch.float64) ** (1.0 / (2 * k - 2))
    if eps < lowest:
        raise ValueError(f"Invalid eps: {eps:g} (must be ≥ {lowest:.3g}, the float64 floor for k={k})")
    steps = islice(_adam_scalar(k, beta1, beta2, lr, x0), max_steps)
    return next((t for t, x in enumerate(steps, start=1) if abs(x) <= eps), -1)


def measured_rate(x: torch.Tensor, k: int, *, start: int = 2000) -> tuple[float, float]:
    """Measured (ratio x_{t+1}/x_t, slope of ln L per step) from ``start`` until the float floor.

    The window ends 20 decades of loss above the floor (where :func:`theorybook.sweep.floor_cut` freezes the
    cell), so frozen steps never enter the fit. The ratio is the median over the window; the slope is a
    least-squares fit of ln L on t.
    """
    validate.even_integer("k", k, 2)
    xs = x.detach().double().cpu().numpy()
    loss = np.abs(xs) ** k / k
    x_floor = floor_cut(torch.float64) ** (1.0 / (2 * k - 2))
    below = np.nonzero(loss < 1e20 * x_floor**k / k)[0]
    stop = int(below[0]) if below.size else xs.size
    if stop - start < 10:
        raise ValueError(f"Invalid start: {start} (the window [start, {stop}) has fewer than 10 points)")
    t = np.arange(start, stop)
    ratio = float(np.median(xs[start + 1:stop] / xs[start:stop - 1]))
    return ratio, line_fit(t, np.log(loss[start:stop])).slope


class PhaseDiagram(NamedTuple):
    """A (β₁, β₂) scan: grids, per-cell min/final loss, theory's stable mask and the agreement."""

    beta1: torch.Tensor
    beta2: torch.Tensor
    min_loss: torch.Tensor
    final_loss: torch.Tensor
    tail_max: torch.Tensor
    converged: torch.Tensor
    theory_stable: torch.Tensor
    marginal: torch.Tensor  # cells on the Eq. (8) curve itself (|eig| = 1): linear theory is silent there
    agreement: float  # over the cells off the boundary
    agreement_all: float  # over every cell, marginal ones counted as "unstable"


def phase_diagram(k: int = 4, n: int = 40, steps: int = 30_000, *, lr: float = 1e-3, lo: float = 0.02,
                  hi: float = 0.98, converged_below: float = 1e-100, device=None) -> PhaseDiagram:
    """Scan an n×n grid of (β₁, β₂) ∈ [lo, hi]² in one tensor program (float64).

    A cell *converged* when its final loss is ≤ ``converged_below`` — far under the SignGD oscillation level
    (η/2)^k/k — and theory calls it stable when β₁ < β₂^{k/(2(k−2))} (Eq. 8). ``agreement`` is the fraction of
    cells off the boundary where the two agree (``agreement_all`` counts every cell; a grid whose axes coincide
    puts cells exactly on β₁ = β₂ for k = 4, where |eig| = 1). ``n`` and ``steps`` are the scale knobs (a GPU
    takes n = 1024).
    """
    validate.even_integer("k", k, 4)
    validate.integer("n", n, 2)
    validate.integer("steps", steps, 1)
    validate.in_range("lo", lo, 0.0, 1.0)
    validate.in_range("hi", hi, 0.0, 1.0, low_open=True)
    if not lo < hi:
        raise ValueError(f"Invalid lo/hi: {lo}, {hi} (must satisfy lo < hi)")
    axis = torch.linspace(lo, hi, n, dtype=torch.float64)
    b1, b2 = torch.meshgrid(axis, axis, indexing="ij")
    st = poly_sweep("adam", k, steps, lr=lr, beta1=b1, beta2=b2, tail=max(1, steps // 5), device=device)
    cpu = [t.cpu() for t in (st.min_loss, st.final_loss, st.tail_max)]
    converged = cpu[1] <= converged_below
    boundary = stability_boundary(k, b2)
    stable = b1 < boundary
    marginal = (b1 - boundary).abs() <= 1e-12
    agree = converged == stable
    agreement = float(agree[~marginal].double().mean())
    agreement_all = float(agree.double().mean())
    return PhaseDiagram(b1, b2, cpu[0], cpu[1], cpu[2], converged, stable, marginal, agreement, agreement_all)

