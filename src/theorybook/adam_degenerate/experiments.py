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
from ..fit import line_fit
from .analysis import casoratian_det, fixed_point_start, linear_window, oscillation_period
from .dynamics import adam_path, gd_steps_to_reach, steps_to_reach
from .theory import FixedPoint, fixed_point

__all__ = ["BAND", "FORCING_CUT", "SPIRAL_SETTINGS", "Spiral", "spiral_experiment", "SEPARATION_EPS_GD",
           "SEPARATION_EPS_ADAM", "Separation", "complexity_separation"]

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


#: Remark 5.8's ε grids, fixed before measuring. GD: two decades of |x| (four of steps: 10⁶ GD steps at the
#: deepest; a third decade would cost 10⁸). Adam: twenty decades, from its linear regime to the float64 floor.
SEPARATION_EPS_GD = tuple(10.0 ** (-1 - i / 4) for i in range(9))
SEPARATION_EPS_ADAM = (1e-8, 1e-18, 1e-28)


class Separation(NamedTuple):
    """Remark 5.8 measured on x^k/k: hitting steps of GD (``gd``) and Adam (``adam``) on the GD grid, the fitted
    power-law exponent b of t ∝ ε^{−b} for each (``gd_exponent``, ``adam_exponent``), and the log-law test: steps
    per e-fold of ε in the first half of a grid over the second half (``adam_efold_ratio`` on
    :data:`SEPARATION_EPS_ADAM`, ``gd_efold_ratio`` on the GD grid's ends and middle; 1 for a log law,
    e^{−(k−2)Δ} for the power law)."""

    k: int
    gd_lr: float
    eps_gd: tuple[float, ...]
    gd: list[int]
    adam: list[int]
    gd_exponent: float
    adam_exponent: float
    eps_adam: tuple[float, ...]
    adam_deep: list[int]
    adam_efold_ratio: float
    gd_efold_ratio: float


def _efold_ratio(eps: tuple[float, float, float], hits: list[int]) -> float:
    a, m, b = (np.log(1 / e) for e in eps)
    return float(((hits[1] - hits[0]) / (m - a)) / ((hits[2] - hits[1]) / (b - m)))


def complexity_separation(k: int = 4, beta1: float = 0.9, beta2: float = 0.93, lr: float = 1e-3, *,
                          gd_lr: float = 0.6, x0: float = 1.0) -> Separation:
    """Remark 5.8's two counts from x₀: GD (lr ``gd_lr``, the largest step stable from x₀ = 1 is 2/3 for k = 4)
    and Adam (β₁, β₂, lr) — steps to |x| ≤ ε on the fixed grids above (≈ 0.6 s of one core, the GD loop)."""
    kk = validate.integer("k", k, 4, 8)
    gd = gd_steps_to_reach(kk, gd_lr, SEPARATION_EPS_GD, x0=x0)
    adam = [steps_to_reach(kk, beta1, beta2, lr, e, x0=x0) for e in SEPARATION_EPS_GD]
    deep = [steps_to_reach(kk, beta1, beta2, lr, e, x0=x0) for e in SEPARATION_EPS_ADAM]
    if min(adam + deep) < 1:
        raise ValueError("Invalid beta1/beta2/lr: Adam does not reach the ε grid within its step limit")
    le = np.log(1 / np.asarray(SEPARATION_EPS_GD))
    b_gd = line_fit(le, np.log(gd))[0]
    b_adam = line_fit(le, np.log(adam))[0]
    ends = (SEPARATION_EPS_GD[0], SEPARATION_EPS_GD[len(gd) // 2], SEPARATION_EPS_GD[-1])
    gd_ends = [gd[0], gd[len(gd) // 2], gd[-1]]
    return Separation(kk, float(gd_lr), SEPARATION_EPS_GD, gd, adam, float(b_gd), float(b_adam), SEPARATION_EPS_ADAM,
                      deep, _efold_ratio(SEPARATION_EPS_ADAM, deep), _efold_ratio(ends, gd_ends))
