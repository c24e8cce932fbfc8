"""The chapter's fixed-point experiments as functions (their verdict rows: :mod:`.verdicts`).

:func:`spiral_experiment` runs one trajectory (scalar reference, float64) and *measures* the linearised dynamics
around the fixed point (ω*, λ*) — the spiral's period from zero crossings and det J from the Casoratian — inside a
window fixed before measuring (envelope of |ω_t − ω*|/ω* in [1e-11, 1e-2], and the term the reduced map neglects,
(1−β₂)x_t²λ_t², below 1e-10). :func:`theorybook.adam_degenerate.verdicts.spiral_rows` turns experiments into
verdict rows against the closed-form Jacobian.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch

from .. import validate
from ..fit import line_fit, loglog_slope
from .analysis import casoratian_det, fixed_point_start, linear_window, oscillation_period
from .dynamics import adam_path, gd_steps_to_reach, steps_to_reach
from .theory import FixedPoint, fixed_point

__all__ = ["BAND", "FORCING_CUT", "SPIRAL_SETTINGS", "Spiral", "spiral_experiment", "SEPARATION_EPS_GD",
           "SEPARATION_EPS_ADAM", "Separation", "complexity_separation", "MOMENTUM_WINDOW", "MOMENTUM_STARTS",
           "MomentumTail", "momentum_tail", "MIXED_START", "MIXED_ETAS", "MIXED_BUDGETS", "MIXED_METHODS",
           "MixedRace", "mixed_loss", "mixed_race"]

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


# ---------------------------------------------------------------------------------------------------------------
# Theorems 5.1/5.3 for heavy-ball momentum: the late tail, from both starts of its buffer (issue 57)
# ---------------------------------------------------------------------------------------------------------------
#: The window of the momentum exponent rows, fixed before measuring: on steps 2000–20000 the exponent still
#: depends on the buffer's start (m₀ = g₀ or 0) and on k (momentum overshoots through 0 within the first ~25 steps
#: and the tail restarts from the overshoot); steps 1e5–1e6 are past that transient for k = 4 and 6.
MOMENTUM_WINDOW = (100_000, 1_000_000)
MOMENTUM_STARTS = ("g0", "zero")
_RESTART = 1000  # the error model's gradient flow restarts from the run's own x here (buffer long equilibrated)


def _heavy_ball_loop(k: int, lr: float, beta: float, steps: int, m0: float) -> np.ndarray:
    """EMA heavy ball on x^k/k from x₀ = 1: x ← x − η m, m ← β m + (1 − β) x^{k−1}; returns x_0 … x_steps."""
    out = np.empty(steps + 1)
    x, m = 1.0, m0
    out[0] = x
    for t in range(1, steps + 1):
        x -= lr * m
        m = beta * m + (1.0 - beta) * x ** (k - 1)
        out[t] = x
    return out


_HB_COMPILED = None


def _heavy_ball_fast():
    """The loop above compiled with numba (a project dependency; ~1 s to compile, 10⁶ steps in ~30 ms), or the
    plain Python loop (~0.7 s per 10⁶ steps) when numba is unavailable."""
    global _HB_COMPILED
    if _HB_COMPILED is None:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - numba is a dependency
            _HB_COMPILED = _heavy_ball_loop
        else:
            _HB_COMPILED = njit(cache=False)(_heavy_ball_loop)
    return _HB_COMPILED


class MomentumTail(NamedTuple):
    """Heavy ball's tail on x^k/k: the fitted exponent b of |x_t| ∝ t^b over ``window``, the error model's
    gradient flow restarted at step 1000 from the run's own x (its exponent on the same window, ``flow_exponent``),
    and the run's x at a few steps for display."""

    k: int
    start: str
    window: tuple[int, int]
    exponent: float
    flow_exponent: float
    x_at: dict[int, float]


def momentum_tail(k: int, start: str = "g0", *, lr: float = 0.1, beta: float = 0.9,
                  window: tuple[int, int] = MOMENTUM_WINDOW) -> MomentumTail:
    """EMA heavy ball (the third-party reproduction's lr 0.1, β = 0.9) on x^k/k from x₀ = 1 with the buffer
    started at ``start`` — ``"g0"`` (m₀ = g₀, the project's sweep) or ``"zero"`` (m₀ = 0, the usual start) — run to
    the window's end; the log–log slope of |x_t| over the window (Theorems 5.1/5.3 predict −1/(k−2)).

    Error model (``flow_exponent``): gradient flow at rate ``lr`` restarted at step 1000 from the run's own x,
    x(t) = (|x₁₀₀₀|^{−(k−2)} + (k−2)·lr·(t − 1000))^{−1/(k−2)}, fitted on the same window — the finite-window bias
    that the offset left by the early overshoot causes.
    """
    kk = validate.integer("k", k, 4, 16)
    if kk % 2:
        raise ValueError(f"Invalid k: {k!r} (must be an even integer in [4, 16])")
    validate.one_of("start", start, MOMENTUM_STARTS)
    eta = validate.number("lr", lr, 0.0, 1.0, low_open=True)
    b = validate.number("beta", beta, 0.0, 1.0, high_open=True)
    if not isinstance(window, tuple) or len(window) != 2:
        raise TypeError(f"Invalid window: {window!r} (must be a tuple (first, last) of steps)")
    lo = validate.integer("window[0]", window[0], 2 * _RESTART, 10**7)
    hi = validate.integer("window[1]", window[1], lo + 10, 10**7)
    x = _heavy_ball_fast()(kk, float(eta), float(b), hi, 1.0 if start == "g0" else 0.0)
    if not np.isfinite(x).all() or abs(x[-1]) >= 1.0:
        raise ValueError(f"Invalid lr/beta: heavy ball (lr {eta:g}, β {b:g}) does not converge on x^{kk}/{kk}")
    t = np.arange(lo, hi + 1, dtype=np.float64)
    exponent = loglog_slope(t, np.abs(x[lo:])).slope
    x_r = abs(float(x[_RESTART]))
    flow = (x_r ** -(kk - 2) + (kk - 2) * eta * (t - _RESTART)) ** (-1.0 / (kk - 2))
    flow_exponent = loglog_slope(t, flow).slope
    return MomentumTail(kk, start, (lo, hi), float(exponent), float(flow_exponent),
                        {s: float(x[s]) for s in (20, _RESTART, lo, hi)})


# ---------------------------------------------------------------------------------------------------------------
# Sec. 7: the recovered 2-D mixed-degeneracy loss ¼(x−y)² + (x+y)⁴/16 (issue 57)
# ---------------------------------------------------------------------------------------------------------------
#: Fixed before measuring (issue 57's protocol): start (1, 0.3); each method's η on one half-decade grid
#: 10^−4 … 10^2 (it contains every method's edge of stability: GD's 2 on the quadratic direction, EMA heavy ball's
#: 2(1+β)/(1−β) = 38); the distance along the degenerate direction |x_T + y_T| read at three budgets T, each
#: method at its best η for that budget.
MIXED_START = (1.0, 0.3)
MIXED_ETAS = tuple(10.0 ** (e / 2) for e in range(-8, 5))
MIXED_BUDGETS = (2000, 5000, 10_000)
#: The race's methods: (name, β₁ of the first-moment EMA (0: the raw gradient), β₂ of the second moment, or
#: ``None`` for no per-coordinate scaling, or ``"norm"`` for the global gradient norm). Adam is the chapter's
#: (ε = 0, no bias correction, m₀ = g₀, v₀ = g₀²) at its (β₁, β₂); heavy ball the chapter's EMA form (m₀ = g₀).
MIXED_METHODS = {
    "gd": (0.0, None),
    "heavy_ball": (0.9, None),
    "adam": (0.9, 0.93),
    "sign_momentum": (0.9, 0.0),  # Adam with β₂ = 0: v_t = g_t², the paper's coupled ablation
    "normalized_gd": (0.0, "norm"),  # η g/‖g‖: a scale-free step without moments
}


def mixed_loss(x: Any, y: Any) -> Any:
    """The recovered Sec. 7 loss ¼(x−y)² + (x+y)⁴/16: quadratic across the valley x = y, quartic along it.

    ``x`` and ``y`` are finite numbers, arrays or tensors of broadcastable shapes; returns a float for scalars, else
    a tensor on ``x``'s device."""
    xt, yt = validate.finite_tensor("x", x), validate.finite_tensor("y", y)
    try:
        torch.broadcast_shapes(xt.shape, yt.shape)
    except RuntimeError as err:
        raise ValueError(f"Invalid y: shape {tuple(yt.shape)} does not broadcast with x's {tuple(xt.shape)}") from err
    yt = yt.to(xt.device, torch.promote_types(xt.dtype, yt.dtype))
    out = 0.25 * (xt - yt) ** 2 + (xt + yt) ** 4 / 16
    return float(out) if out.ndim == 0 else out


def _mixed_grad(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = 0.5 * (x - y), 0.25 * (x + y) ** 3
    return a + b, b - a


class MixedRace(NamedTuple):
    """The race on the mixed loss: per method, |x_T + y_T| at each budget for every η of the grid (``table``,
    shape (budgets, etas); ``inf`` where the run diverged), the best over the grid (``best``), its η (``best_eta``)
    and whether that η lies inside the grid, not at an edge (``interior``)."""

    budgets: tuple[int, ...]
    etas: tuple[float, ...]
    table: dict[str, np.ndarray]
    best: dict[str, np.ndarray]
    best_eta: dict[str, np.ndarray]
    interior: dict[str, np.ndarray]

    def lead(self, method: str, over: tuple[str, ...] = ("gd", "heavy_ball")) -> np.ndarray:
        """Per budget, the best of ``over`` divided by ``method``'s best: how many times nearer the minimum along
        the degenerate direction ``method`` ends (> 1: it leads)."""
        ref = np.min([self.best[m] for m in over], axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return ref / self.best[method]


def mixed_race(methods: dict[str, tuple[float, Any]] | None = None, *, etas: tuple[float, ...] = MIXED_ETAS,
               budgets: tuple[int, ...] = MIXED_BUDGETS, start: tuple[float, float] = MIXED_START) -> MixedRace:
    """Run every (method, η) cell on the mixed loss in one numpy program (float64) and read |x_T + y_T| at each
    budget. ``methods`` maps a name to (β₁, β₂) as in :data:`MIXED_METHODS` (the default)."""
    ms = dict(MIXED_METHODS if methods is None else methods)
    if not ms or not all(isinstance(k, str) for k in ms):
        raise TypeError(f"Invalid methods: {methods!r} (must be a non-empty dict name → (beta1, beta2))")
    for name, spec in ms.items():
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise TypeError(f"Invalid methods[{name!r}]: {spec!r} (must be a tuple (beta1, beta2))")
        validate.number(f"methods[{name!r}] beta1", spec[0], 0.0, 1.0, high_open=True)
        if spec[1] is not None and spec[1] != "norm":
            validate.number(f"methods[{name!r}] beta2", spec[1], 0.0, 1.0, high_open=True)
    if not isinstance(etas, (tuple, list)) or not 3 <= len(etas) <= 64:
        raise TypeError(f"Invalid etas: {etas!r} (must be a tuple or list of 3 to 64 step sizes)")
    eg = tuple(validate.number(f"etas[{i}]", e, 0.0, 1e6, low_open=True) for i, e in enumerate(etas))
    if list(eg) != sorted(set(eg)):
        raise ValueError(f"Invalid etas: {etas!r} (must be strictly increasing)")
    if not isinstance(budgets, (tuple, list)) or not budgets:
        raise TypeError(f"Invalid budgets: {budgets!r} (must be a non-empty tuple or list of step counts)")
    bs = tuple(validate.integer(f"budgets[{i}]", b, 1, 200_000) for i, b in enumerate(budgets))
    if list(bs) != sorted(set(bs)):
        raise ValueError(f"Invalid budgets: {budgets!r} (must be strictly increasing)")
    if not isinstance(start, tuple) or len(start) != 2:
        raise TypeError(f"Invalid start: {start!r} (must be a tuple (x0, y0))")
    x0, y0 = (validate.number(f"start[{i}]", s, -10.0, 10.0) for i, s in enumerate(start))
    names = list(ms)
    n_e = len(eg)
    eta = np.tile(np.asarray(eg), len(names))
    b1 = np.repeat([float(ms[n][0]) for n in names], n_e)
    scaled = np.repeat([ms[n][1] is not None and ms[n][1] != "norm" for n in names], n_e)
    normed = np.repeat([ms[n][1] == "norm" for n in names], n_e)
    b2 = np.repeat([float(ms[n][1]) if ms[n][1] not in (None, "norm") else 0.0 for n in names], n_e)
    x, y = np.full(eta.size, x0), np.full(eta.size, y0)
    gx, gy = _mixed_grad(x, y)
    mx, my, vx, vy = gx.copy(), gy.copy(), gx * gx, gy * gy  # m₀ = g₀, v₀ = g₀² (unused where unscaled)
    out = np.empty((len(bs), eta.size))
    j = 0
    with np.errstate(all="ignore"):
        for t in range(1, bs[-1] + 1):
            norm = np.sqrt(gx * gx + gy * gy)
            sx = np.where(scaled, np.sqrt(vx), np.where(normed, norm, 1.0))
            sy = np.where(scaled, np.sqrt(vy), np.where(normed, norm, 1.0))
            x = x - eta * mx / sx
            y = y - eta * my / sy
            gx, gy = _mixed_grad(x, y)
            mx = b1 * mx + (1.0 - b1) * gx
            my = b1 * my + (1.0 - b1) * gy
            vx = b2 * vx + (1.0 - b2) * gx * gx
            vy = b2 * vy + (1.0 - b2) * gy * gy
            if t == bs[j]:
                s = np.abs(x + y)
                out[j] = np.where(np.isfinite(s) & np.isfinite(x - y), s, np.inf)
                j += 1
    table = {n: out[:, i * n_e:(i + 1) * n_e] for i, n in enumerate(names)}
    arg = {n: np.argmin(table[n], axis=1) for n in names}
    best = {n: table[n][np.arange(len(bs)), arg[n]] for n in names}
    best_eta = {n: np.asarray(eg)[arg[n]] for n in names}
    interior = {n: (arg[n] > 0) & (arg[n] < n_e - 1) for n in names}
    return MixedRace(bs, eg, table, best, best_eta, interior)
