r"""Reading the linearised dynamics off a trajectory (no closed forms used here — these are the *measurements*
the chapter compares with :func:`theorybook.adam_degenerate.fixed_point`).

Near a fixed point with a complex pair of Jacobian eigenvalues :math:`\rho e^{\pm i\theta}`, any scalar deviation
of the state, e.g. :math:`d_t = \omega_t - \omega^\star`, obeys :math:`d_{t+2} = \operatorname{tr}J\,d_{t+1} -
\det J\,d_t` (Cayley–Hamilton), so :math:`d_t = A\rho^t\cos(\theta t + \varphi)`. Two consequences are measured:

* the spacing of successive upward zero crossings of :math:`d_t` is the period :math:`2\pi/\theta`
  (:func:`oscillation_period`);
* the Casoratian :math:`Q_t = d_{t+1}^2 - d_t d_{t+2}` is multiplied by exactly :math:`\det J = \rho^2` each step
  (:func:`casoratian_det`), so the slope of :math:`\ln Q_t` measures the determinant without fitting an envelope.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import validate
from ..device import to_numpy
from ..fit import line_fit
from .theory import fixed_point

__all__ = [
    "linear_window", "upcrossings", "oscillation_period", "casoratian_det", "deviation_multiplier", "fixed_point_start",
]


def _series(name: str, d: Any, start: Any, stop: Any, minimum: int) -> tuple[np.ndarray, int, int]:
    arr = to_numpy(validate.finite_tensor(name, d if not isinstance(d, np.ndarray) else np.asarray(d), ndim=1))
    arr = np.asarray(arr, dtype=np.float64)
    a = validate.integer("start", start, 0)
    b = arr.size if stop is None else validate.integer("stop", stop, 0)
    b = min(b, arr.size)
    if b - a < minimum:
        raise ValueError(f"Invalid start/stop: [{a}, {b}) (the window needs at least {minimum} points of {name})")
    return arr, a, b


def linear_window(d, scale: float, *, band: tuple[float, float] = (1e-11, 1e-2), halfwidth: int = 200
                  ) -> tuple[int, int]:
    """The longest stretch ``[start, stop)`` where the local envelope of ``|d|/scale`` (max over ±``halfwidth``
    steps, longer than a turn of the spiral, so a zero crossing does not look small) lies inside ``band``:
    the dynamics there is linear (upper edge) and above rounding (lower edge)."""
    arr, _, _ = _series("d", d, 0, None, 3)
    s = validate.number("scale", scale, 0.0, math.inf, low_open=True)
    lo = validate.number("band[0]", band[0], 0.0, math.inf, low_open=True)
    hi = validate.number("band[1]", band[1], lo, math.inf, low_open=True)
    w = validate.integer("halfwidth", halfwidth, 0, 10**6)
    padded = np.pad(np.abs(arr) / s, w, mode="edge")
    env = np.lib.stride_tricks.sliding_window_view(padded, 2 * w + 1).max(axis=1)
    inside = np.concatenate([[False], (env >= lo) & (env <= hi), [False]])
    edges = np.flatnonzero(np.diff(inside.astype(np.int8)))
    starts, stops = edges[0::2], edges[1::2]
    if starts.size == 0:
        raise ValueError(f"Invalid band: {band} (the envelope of |d|/scale never lies inside it)")
    i = int(np.argmax(stops - starts))
    return int(starts[i]), int(stops[i])


def upcrossings(d, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Times (linearly interpolated between steps) where ``d`` crosses 0 upwards within ``[start, stop)``."""
    arr, a, b = _series("d", d, start, stop, 2)
    seg = arr[a:b]
    idx = np.nonzero((seg[:-1] < 0) & (seg[1:] >= 0))[0]
    return a + idx + (-seg[idx]) / (seg[idx + 1] - seg[idx])


def oscillation_period(d, start: int = 0, stop: int | None = None) -> tuple[float, int]:
    """Mean spacing of successive upward zero crossings of ``d`` in ``[start, stop)`` and the number of full
    periods it averages over. Raises ``ValueError`` with fewer than two crossings."""
    tc = upcrossings(d, start, stop)
    if tc.size < 2:
        raise ValueError(f"Invalid start/stop: [{start}, {stop}) (fewer than two upward zero crossings of d)")
    return float((tc[-1] - tc[0]) / (tc.size - 1)), int(tc.size - 1)


def casoratian_det(d, start: int = 0, stop: int | None = None) -> float:
    r"""exp(slope of :math:`\ln Q_t`), :math:`Q_t = d_{t+1}^2 - d_t d_{t+2}`, fitted over ``[start, stop)``:
    the determinant of the 2-D linear map that generates ``d`` (exact for a linear recurrence)."""
    arr, a, b = _series("d", d, start, stop, 12)
    q = arr[a + 1:b - 1] ** 2 - arr[a:b - 2] * arr[a + 2:b]
    t = np.arange(a, b - 2, dtype=np.float64)
    ok = q > 0
    if ok.sum() < 10:
        raise ValueError("Invalid d: the Casoratian d_{t+1}² − d_t d_{t+2} is not positive on the window "
                         "(no complex-pair oscillation there)")
    return math.exp(line_fit(t[ok], np.log(q[ok])).slope)


def deviation_multiplier(ratio, r_star: float, *, low: float = 1e-11, high: float = 1e-4) -> tuple[float, int]:
    r"""Median of :math:`\delta_{t+1}/\delta_t`, :math:`\delta_t = x_{t+1}/x_t - r^\star`, over the steps where
    ``low ≤ |δ_t| ≤ high`` (linear regime, above rounding): the multiplier of a 1-D map at its fixed point.
    Returns (multiplier, number of steps used)."""
    arr, _, _ = _series("ratio", ratio, 0, None, 3)
    rs = validate.number("r_star", r_star)
    lo = validate.number("low", low, 0.0, math.inf, low_open=True)
    hi = validate.number("high", high, lo, math.inf, low_open=True)
    dev = arr - rs
    idx = np.nonzero((np.abs(dev[:-1]) >= lo) & (np.abs(dev[:-1]) <= hi))[0]
    if idx.size < 3:
        raise ValueError(f"Invalid low/high: [{lo:g}, {hi:g}] (fewer than 3 deviations in that band)")
    return float(np.median(dev[idx + 1] / dev[idx])), int(idx.size)


def fixed_point_start(k: int, beta1: float, beta2: float, lr: float, *, x0: float = 1e-3,
                      kick: float = 1e-6) -> tuple[float, float, float]:
    r"""(x₀, m₀, v₀) that put the normalised state at the fixed point, :math:`\omega_0 = \omega^\star(1+\text{kick})`,
    :math:`\lambda_0 = \lambda^\star`, at a small x₀ — a start from which an unstable (regime-II) fixed point's
    linear oscillation can be watched growing."""
    fp = fixed_point(k, beta1, beta2, lr)
    x = validate.number("x0", x0, 0.0, 1.0, low_open=True)
    eps = validate.number("kick", kick, -0.5, 0.5)
    kk = int(k)
    with np.errstate(all="ignore"):
        m0 = float(np.float64(fp.omega) * np.float64(x) ** (kk - 1) * (1 + eps))
        v0 = float((np.float64(x) ** (kk - 2) / np.float64(fp.lam)) ** 2)
    if not (math.isfinite(m0) and math.isfinite(v0) and v0 > 0):
        raise ValueError(f"Invalid x0/lr: x0={x0!r}, lr={lr!r} (the fixed-point start (m0, v0) is not "
                         "representable in float64)")
    return x, m0, v0
