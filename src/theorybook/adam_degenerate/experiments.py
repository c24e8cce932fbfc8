"""The chapter's fixed-point experiments as functions (their verdict rows: :mod:`.verdicts`).

:func:`spiral_experiment` runs one trajectory (scalar reference, float64) and *measures* the linearised dynamics
around the fixed point (ω*, λ*) — the spiral's period from zero crossings and det J from the Casoratian — inside a
window fixed before measuring (envelope of |ω_t − ω*|/ω* in [1e-11, 1e-2], and the term the reduced map neglects,
(1−β₂)x_t²λ_t², below 1e-10). :func:`theorybook.adam_degenerate.verdicts.spiral_rows` turns experiments into
verdict rows against the closed-form Jacobian.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import validate
from .analysis import casoratian_det, fixed_point_start, linear_window, oscillation_period
from .dynamics import adam_path
from .theory import FixedPoint, fixed_point

__all__ = ["BAND", "FORCING_CUT", "SPIRAL_SETTINGS", "Spiral", "spiral_experiment"]

BAND = (1e-11, 1e-2)  # linear (upper edge) and above rounding (lower edge), relative to ω*
FORCING_CUT = 1e-10  # the reduced map neglects (1 − β₂)x²λ²; measure only once it is below this
# (k, β₁, β₂, start at the fixed point?): regime I from the paper's x₀ = 1; regime II started at its fixed point
SPIRAL_SETTINGS = (((4, 0.9, 0.91), False), ((4, 0.9, 0.895), True), ((6, 0.9, 0.86), True))


class Spiral(NamedTuple):
    """One measured spiral: the setting, the closed-form fixed point, d_t = ω_t − ω*, the window and what was
    measured in it (period in steps over ``turns`` full turns; det J)."""

    setting: tuple[int, float, float]
    fp: FixedPoint
    d: np.ndarray
    window: tuple[int, int]
    period: float
    turns: int
    det: float
    floor_step: int


def spiral_experiment(k: int, beta1: float, beta2: float, lr: float = 1e-3, *, start_at_fixed_point: bool = False,
                      steps: int = 6000) -> Spiral:
    """Run one trajectory and measure period and det J of its spiral around (ω*, λ*) (see the module docstring).

    ``start_at_fixed_point``: start at x₀ = 1e-3 with ω₀ = ω*(1 + 1e-6), λ₀ = λ* (for an unstable, regime-II
    fixed point, which a run from x₀ = 1 never approaches); otherwise the paper's start x₀ = 1.
    """
    fp = fixed_point(k, beta1, beta2, lr)
    n = validate.integer("steps", steps, 100, 10**6)
    if not isinstance(start_at_fixed_point, (bool, np.bool_)):
        raise TypeError(f"Invalid start_at_fixed_point: {start_at_fixed_point!r} (must be a bool)")
    if start_at_fixed_point:
        x0, m0, v0 = fixed_point_start(k, beta1, beta2, lr, x0=1e-3, kick=1e-6)
        path = adam_path(k, beta1, beta2, lr, n, x0, m0=m0, v0=v0)
    else:
        path = adam_path(k, beta1, beta2, lr, n)
    d = path.omega - fp.omega
    if not np.isfinite(d[: path.floor_step]).all():
        raise ValueError("Invalid setting: ω_t is not finite before the float floor (x_t reached 0)")
    d = np.where(np.isfinite(d), d, 0.0)
    a, b = linear_window(d[: path.floor_step], fp.omega, band=BAND)
    with np.errstate(all="ignore"):
        forcing = (1 - float(beta2)) * path.x**2 * path.lam**2
    a = max(a, int(np.argmax(forcing < FORCING_CUT)))
    period, turns = oscillation_period(d, a, b)
    return Spiral((int(k), float(beta1), float(beta2)), fp, d, (a, b), period, turns, casoratian_det(d, a, b),
                  path.floor_step)
