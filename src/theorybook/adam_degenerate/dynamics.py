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
from typing import Any, NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import resolve_dtype, to_numpy
from ..fit import line_fit
from ..sweep import floor_cut, poly_sweep
from .theory import K_MAX, stability_boundary

__all__ = [
    "boundary_agreement",
    "AdamTrajectory",
    "simulate_adam",
    "AdamPath",
    "adam_path",
    "adam_reference",
    "steps_to_reach",
    "gd_steps_to_reach",
    "measured_rate",
    "PhaseDiagram",
    "phase_diagram",
]

MAX_SCALAR_STEPS = 10_000_000  # the plain-Python loop runs ~1 µs·10 per step: 10⁷ steps is about a minute
MAX_SWEEP_STEPS = 10_000_000  # one torch program per step: use a GPU (fused kernel) for anything near this


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


def _max_abs(value: Any) -> float:
    if isinstance(value, torch.Tensor):
        return float(value.detach().abs().max()) if value.numel() else 0.0
    arr = np.abs(np.asarray(value, dtype=np.float64))
    return float(arr.max()) if arr.size else 0.0


def _check_x0(x0: Any, k_max: float, dtype: torch.dtype) -> None:
    """x₀ finite, and g₀² = x₀^{2k−2} representable (else the first step is inf/inf)."""
    validate.in_range("x0", x0, -math.inf, math.inf, low_open=True, high_open=True)
    big = _max_abs(x0)
    limit = math.exp(math.log(torch.finfo(dtype).max) / (2 * k_max - 2))
    if big > limit:
        raise ValueError(f"Invalid x0: {big:g} (|x0| must be ≤ {limit:.4g}: x0^(2k-2) overflows {dtype} for "
                         f"k={k_max:g})")


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(value.shape) if isinstance(value, (torch.Tensor, np.ndarray)) else ()


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
    :class:`AdamTrajectory` (memory: 4 × (steps+1) × cells values) — use :func:`phase_diagram` for big grids.
    A cell whose g² reaches the float floor is frozen there (see :func:`theorybook.sweep.floor_cut`). Tensors of
    hyper-parameters must carry at least the run's precision (a float32 β₂ = 0.07 is 0.07000000030, not 0.07).
    Raises ``ValueError`` if a cell overflows (diverges).
    """
    dt = resolve_dtype(dtype)
    validate.even_integer("k", k, 2)
    validate.in_range("k", k, 2, K_MAX, high_open=False)
    validate.in_range("beta1", beta1, 0.0, 1.0)
    validate.in_range("beta2", beta2, 0.0, 1.0)
    validate.positive("lr", lr)
    n = validate.integer("steps", steps, 0, MAX_SWEEP_STEPS)
    _check_x0(x0, _max_abs(k), dt)
    for name, value in (("beta1", beta1), ("beta2", beta2), ("lr", lr), ("x0", x0)):
        if isinstance(value, torch.Tensor) and value.is_floating_point() and torch.finfo(value.dtype).eps > \
                torch.finfo(dt).eps:
            raise TypeError(f"Invalid {name}: a {value.dtype} tensor for a {dt} run (its values are already "
                            f"rounded; pass {dt})")
    cells = math.prod(torch.broadcast_shapes(*(_shape(a) for a in (k, beta1, beta2, lr, x0))))
    validate.memory_guard(4.0 * (n + 1) * max(cells, 1) * torch.finfo(dt).bits / 8,
                          lower="steps or the number of cells")
    st = poly_sweep("adam", k, n, x0=x0, lr=lr, beta1=beta1, beta2=beta2, record="state", dtype=dt, device=device)
    traj = st.trajectory
    if not bool(torch.isfinite(traj[:, :3]).all()):
        bad = int(torch.nonzero(~torch.isfinite(traj[:, :3].reshape(n + 1, -1)).all(dim=1))[0])
        raise ValueError(f"Invalid lr/beta1: the run diverged (x overflowed {dt} at step {bad}); lower lr or beta1")
    kt = torch.as_tensor(k, dtype=traj.dtype, device=traj.device).expand(traj.shape[2:])
    return AdamTrajectory(traj[:, 0], traj[:, 1], traj[:, 2], kt)


def _lerp(a: float, b: float, w: float) -> float:
    """torch.lerp's formula, so the scalar reference rounds as the batched path does."""
    return a + w * (b - a) if w < 0.5 else b - (b - a) * (1 - w)


def _adam_scalar(k: int, beta1: float, beta2: float, lr: float, x0: float, m0: float | None = None,
                 v0: float | None = None) -> Iterator[tuple[float, float, float]]:
    """The one-cell recurrence in plain Python floats (same floor rule as the batched path): yields
    (x_t, m_t, v_t) for t = 1, 2, …; after an overflow it yields NaNs."""
    cut = floor_cut(torch.float64)
    x = float(x0)
    g = x ** (k - 1)
    m = g if m0 is None else float(m0)
    v = g * g if v0 is None else float(v0)
    w1, w2 = 1 - beta1, 1 - beta2
    nan = float("nan")
    while True:
        if not g * g < cut:
            x = x - lr * m * (1.0 / math.sqrt(v))
        try:
            g = x ** (k - 1)
            g2 = g * g
        except OverflowError:
            g2 = math.inf
        if not math.isfinite(g2):
            while True:
                yield nan, nan, nan
        m = _lerp(m, g, w1)
        v = _lerp(v, g2, w2)
        yield x, m, v


class AdamPath(NamedTuple):
    """One Adam trajectory in numpy float64 (from :func:`adam_path`): x, m, v of shape (steps+1,), and k."""

    x: np.ndarray
    m: np.ndarray
    v: np.ndarray
    k: int

    @property
    def loss(self) -> np.ndarray:
        """L(x_t) = x_t^k / k."""
        return np.abs(self.x) ** self.k / self.k

    @property
    def omega(self) -> np.ndarray:
        r""":math:`\omega_t = m_t / x_t^{k-1}` (normalised first moment)."""
        with np.errstate(all="ignore"):
            return self.m / self.x ** (self.k - 1)

    @property
    def lam(self) -> np.ndarray:
        r""":math:`\lambda_t = x_t^{k-2}/\sqrt{v_t}` (effective curvature)."""
        with np.errstate(all="ignore"):
            return self.x ** (self.k - 2) / np.sqrt(self.v)

    @property
    def ratio(self) -> np.ndarray:
        """x_{t+1}/x_t, shape (steps,)."""
        with np.errstate(all="ignore"):
            return self.x[1:] / self.x[:-1]

    @property
    def floor_step(self) -> int:
        """First t with g_t² below the float floor (the run is frozen from there), or steps+1 if never."""
        with np.errstate(all="ignore"):
            below = np.nonzero(np.abs(self.x) ** (2 * self.k - 2) < floor_cut(torch.float64))[0]
        return int(below[0]) if below.size else self.x.size


def _path(k: int, beta1: float, beta2: float, lr: float, steps: int, x0: float = 1.0, m0: float | None = None,
          v0: float | None = None) -> AdamPath:
    """Unvalidated scalar run (NaN after an overflow); the widget uses it to show divergence."""
    out = np.empty((steps + 1, 3))
    g = float(x0) ** (k - 1)
    out[0] = (x0, g if m0 is None else m0, g * g if v0 is None else v0)
    it = _adam_scalar(k, beta1, beta2, lr, x0, m0, v0)
    for t in range(1, steps + 1):
        out[t] = next(it)
    return AdamPath(out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy(), k)


def _check_scalar_run(k, beta1, beta2, lr, x0) -> tuple[int, float, float, float, float]:
    kk = validate.integer("k", k, 2, K_MAX)
    if kk % 2:
        raise ValueError(f"Invalid k: {k!r} (must be an even integer in [2, {K_MAX}])")
    b1 = validate.number("beta1", beta1, 0.0, 1.0, high_open=True)
    b2 = validate.number("beta2", beta2, 0.0, 1.0, high_open=True)
    eta = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    x = validate.number("x0", x0)
    _check_x0(x, kk, torch.float64)
    return kk, b1, b2, eta, x


def adam_path(k: int, beta1: float, beta2: float, lr: float, steps: int, x0: float = 1.0, *,
              m0: float | None = None, v0: float | None = None) -> AdamPath:
    r"""One Adam run on x^k/k in plain Python floats (the readable reference; ~1 µs per step): returns the
    :class:`AdamPath` (x, m, v for t = 0..steps; properties ω_t, λ_t, loss, ratio, floor step).

    Defaults start as the paper does (m₀ = g₀, v₀ = g₀²); pass ``m0``/``v0`` to start elsewhere, e.g. next to
    the fixed point (ω*, λ*) to watch the linearised dynamics. Raises ``ValueError`` if the run overflows.
    """
    kk, b1, b2, eta, x = _check_scalar_run(k, beta1, beta2, lr, x0)
    n = validate.integer("steps", steps, 0, MAX_SCALAR_STEPS)
    validate.memory_guard(3.0 * 8 * (n + 1), lower="steps")
    m = None if m0 is None else validate.number("m0", m0)
    v = None if v0 is None else validate.number("v0", v0, 0.0, math.inf, low_open=True)
    if (m is not None and not math.isfinite(m * 1.0)) or (v is not None and not math.isfinite(math.sqrt(v))):
        raise ValueError("Invalid m0/v0: must be finite")
    path = _path(kk, b1, b2, eta, n, x, m, v)
    state = np.stack([path.x, path.m, path.v])
    if not np.isfinite(state).all():
        bad = int(np.nonzero(~np.isfinite(state).all(axis=0))[0][0])
        raise ValueError(f"Invalid lr/beta1: the run diverged (x overflowed float64 at step {bad}); lower lr or beta1")
    return path


def adam_reference(k: int, beta1: float, beta2: float, lr: float, steps: int, x0: float = 1.0) -> np.ndarray:
    """The one-cell reference the batched path is tested against: x_0..x_steps of :func:`adam_path`."""
    return adam_path(k, beta1, beta2, lr, steps, x0).x


def steps_to_reach(k: int, beta1: float, beta2: float, lr: float, eps: float, *, x0: float = 1.0,
                   max_steps: int = 1_000_000) -> int:
    """First t ≥ 1 with |x_t| ≤ eps, or −1 if not reached within ``max_steps`` (≤ 10⁷).

    ``eps`` must sit above the float64 floor for this k (|x|^{2k−2} ≥ tiny·1e6), else no run could reach it.
    Raises ``ValueError`` if the run diverges first.
    """
    kk, b1, b2, eta, x = _check_scalar_run(k, beta1, beta2, lr, x0)
    e = validate.number("eps", eps, 0.0, math.inf, low_open=True)
    n = validate.integer("max_steps", max_steps, 1, MAX_SCALAR_STEPS)
    lowest = floor_cut(torch.float64) ** (1.0 / (2 * kk - 2))
    if e < lowest:
        raise ValueError(f"Invalid eps: {eps:g} (must be ≥ {lowest:.3g}, the float64 floor for k={kk})")
    it = _adam_scalar(kk, b1, b2, eta, x)
    for t in range(1, n + 1):
        xt = next(it)[0]
        if abs(xt) <= e:
            return t
        if xt != xt:
            raise ValueError(f"Invalid lr/beta1: the run diverged (x overflowed float64 at step {t}); lower lr")
    return -1


def gd_steps_to_reach(k: int, lr: float, eps: Any, *, x0: float = 1.0,
                      max_steps: int = MAX_SCALAR_STEPS) -> list[int]:
    """Gradient descent x ← x − η x^{k−1} on x^k/k: the first t ≥ 1 with |x_t| ≤ ε for each ε of ``eps`` (a
    sequence, any order), in plain Python floats (one run serves every ε).

    Gradient flow's count is (ε^{−(k−2)} − x₀^{−(k−2)})/(η(k−2)) (:func:`~.theory.gradient_flow_hitting_time`):
    the ε^{−(k−2)} of Remark 5.8. Raises ``ValueError`` if a threshold is not reached within ``max_steps`` (the
    loop costs ≈ 0.6 µs per step) or if the run leaves the basin (|x| grows: lr too large for x₀).
    """
    kk = validate.integer("k", k, 3, 64)
    eta = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    x = validate.number("x0", x0, 0.0, 1e6, low_open=True)
    n = validate.integer("max_steps", max_steps, 1, MAX_SCALAR_STEPS)
    if isinstance(eps, (str, bytes)) or not hasattr(eps, "__len__") or len(eps) == 0:
        raise TypeError(f"Invalid eps: {eps!r} (must be a non-empty sequence of thresholds)")
    if len(eps) > 10_000:
        raise ValueError(f"Invalid eps: {len(eps)} thresholds (must be ≤ 10000)")
    es = [validate.number(f"eps[{i}]", e, 0.0, x, low_open=True, high_open=True) for i, e in enumerate(eps)]
    if eta * (kk - 1) * x ** (kk - 2) >= 2.0:
        raise ValueError(f"Invalid lr: {lr!r} (GD from x0 = {x:g} on x^{kk}/{kk} needs lr < 2/((k−1)x0^(k−2)) = "
                         f"{2.0 / ((kk - 1) * x ** (kk - 2)):.4g})")
    order = sorted(range(len(es)), key=lambda i: -es[i])
    hits = [0] * len(es)
    j, p = 0, kk - 1
    for t in range(1, n + 1):
        x -= eta * x**p
        while j < len(order) and abs(x) <= es[order[j]]:
            hits[order[j]] = t
            j += 1
        if j == len(order):
            return hits
    raise ValueError(f"Invalid eps: {min(es):g} is not reached within max_steps = {n} GD steps (gradient flow "
                     f"needs ≈ {min(es) ** -(kk - 2) / (eta * (kk - 2)):.3g}); raise eps or max_steps")


def measured_rate(x, k: int, *, start: int = 2000) -> tuple[float, float]:
    """Measured (ratio x_{t+1}/x_t, slope of ln L per step) from ``start`` until the float floor.

    ``x`` is one trajectory (1-D tensor or array, any device). The window ends 20 decades of loss above the floor
    (where :func:`theorybook.sweep.floor_cut` freezes the cell), so frozen steps never enter the fit. The ratio
    is the median over the window; the slope is a least-squares fit of ln L on t.
    """
    kk = validate.integer("k", k, 2, K_MAX)
    if kk % 2:
        raise ValueError(f"Invalid k: {k!r} (must be an even integer in [2, {K_MAX}])")
    xs = to_numpy(validate.finite_tensor("x", x if isinstance(x, torch.Tensor) else np.asarray(x), ndim=1)).astype(
        np.float64)
    s0 = validate.integer("start", start, 0)
    with np.errstate(all="ignore"):
        loss = np.abs(xs) ** kk / kk
    x_floor = floor_cut(torch.float64) ** (1.0 / (2 * kk - 2))
    below = np.nonzero(loss < 1e20 * x_floor**kk / kk)[0]
    stop = int(below[0]) if below.size else xs.size
    if stop - s0 < 10:
        raise ValueError(f"Invalid start: {start} (the window [start, {stop}) has fewer than 10 points)")
    t = np.arange(s0, stop)
    ratio = float(np.median(xs[s0 + 1:stop] / xs[s0:stop - 1]))
    return ratio, line_fit(t, np.log(loss[s0:stop])).slope


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
    """Scan an n×n grid of (β₁, β₂) ∈ [lo, hi]² in one tensor program (float64), η ∈ (0, 1].

    A cell *converged* when its final loss is ≤ ``converged_below`` — far under the SignGD oscillation level
    (η/2)^k/k — and theory calls it stable when β₁ < β₂^{k/(2(k−2))} (Eq. 8). ``agreement`` is the fraction of
    cells off the boundary where the two agree (``agreement_all`` counts every cell; a grid whose axes coincide
    puts cells exactly on β₁ = β₂ for k = 4, where |eig| = 1). ``n`` and ``steps`` are the scale knobs (a GPU
    takes n = 1024).
    """
    kk = validate.integer("k", k, 4, K_MAX)
    if kk % 2:
        raise ValueError(f"Invalid k: {k!r} (must be an even integer in [4, {K_MAX}])")
    n = validate.integer("n", n, 2)
    steps = validate.integer("steps", steps, 1, MAX_SWEEP_STEPS)
    lr = validate.number("lr", lr, 0.0, 1.0, low_open=True)
    lo = validate.number("lo", lo, 0.0, 1.0, high_open=True)
    hi = validate.number("hi", hi, 0.0, 1.0, low_open=True, high_open=True)
    converged_below = validate.number("converged_below", converged_below, 0.0, math.inf, low_open=True)
    validate.memory_guard(24.0 * 8 * n * n, lower="n")
    if not lo < hi:
        raise ValueError(f"Invalid lo/hi: {lo}, {hi} (must satisfy lo < hi)")
    axis = torch.linspace(lo, hi, n, dtype=torch.float64)
    b1, b2 = torch.meshgrid(axis, axis, indexing="ij")
    k = kk
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


def boundary_agreement(pd: PhaseDiagram, exponent: float) -> float:
    """Fraction of ``pd``'s cells off the Eq. (8) curve where "converged" agrees with β₁ < β₂^exponent — the
    phase-diagram score of an alternative boundary (Eq. 8's own exponent k/(2(k−2)) gives ``pd.agreement``)."""
    if not isinstance(pd, PhaseDiagram):
        raise TypeError(f"Invalid pd: {type(pd).__name__} (must be a PhaseDiagram from phase_diagram)")
    e = validate.number("exponent", exponent, 0.0, 10.0, low_open=True)
    other = pd.beta1 < pd.beta2 ** e
    return float((pd.converged == other)[~pd.marginal].double().mean())

