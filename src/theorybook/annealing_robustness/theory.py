"""Schedules, the restarted suffix bound, and the executed derivations (Attia & Koren, arXiv 2503.09411).

What the paper states [paper, abstract]: SGD whose base stepsize η is off from the ideal η* by a factor ρ
(as a geometric grid search guarantees) reaches O(ρ/√T) with a fixed or inverse-square-root schedule, but
O(ρ^{1/(2p+1)}/√T) with a schedule that decays to zero polynomially with degree p; cosine gives ρ^{1/5}
[secondary]. Schedules are η_t = η·h((t−1)/T), t = 1..T, with h non-increasing [secondary].

Everything below the schedules is our **[reconstruction]** of *why*, not the paper's theorem: the standard
suffix bound of projected SGD, restarted at step τ (the projection keeps ‖x_τ − x*‖ ≤ D),

    err ≲ min_τ (D² + G² Σ_{t≥τ} η_t²) / (2 Σ_{t≥τ} η_t).

Units: D = G = 1 (the bound scales as DG/√T once η is measured in units of D/G), and values are returned
multiplied by √T, so a perfectly tuned fixed stepsize scores exactly 1. A problem with diameter D and gradient
bound G turns a stepsize e (units D/G) into η = e·D/G — for a ball of radius R, D = 2R.

Two normalisations of the base stepsize appear in the chapter (both in units D/G):

* the **classical** one, :func:`classical_eta`: η* = D/(G√T) for the h-shaped schedules, and η_t = D/(G√t) for
  inverse-sqrt (its base η = D/G, so its last step is D/(G√T)) — the fixed η* against which our reading of the
  abstract measures ρ [reconstruction];
* the schedule's **own ideal**, :func:`ideal_eta`: the base stepsize that minimises the reconstructed bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import sympy as sp
import torch

from .. import validate
from ..device import one_thread, resolve_device, resolve_dtype, to_numpy
from ..fit import LineFit, loglog_slope

__all__ = [
    "SCHEDULES",
    "Schedule",
    "schedule",
    "stepsizes",
    "ideal_eta",
    "classical_eta",
    "suffix_bound",
    "fit_exponent",
    "predicted_exponent",
    "BalanceDerivation",
    "derive_balance",
    "derive_cosine_endpoint",
    "derive_fixed",
    "schedule_integrals",
]

#: Schedule names; ``"linear"`` is ``"polynomial"`` with p = 1.
SCHEDULES = ("fixed", "inverse_sqrt", "polynomial", "linear", "cosine")

#: Largest accepted polynomial degree p, misspecification ρ and horizon T (beyond them the bound's numbers stop
#: meaning anything in float64, or the suffix sums no longer fit the memory budget).
P_MAX, RHO_MAX, T_MAX = 100.0, 1e12, 10**9


@dataclass(frozen=True)
class Schedule:
    r"""A stepsize shape h: [0, 1] → [0, 1] with η_t = η·h((t−1)/T).

    * ``fixed``: h ≡ 1;
    * ``inverse_sqrt``: η_t = η/√t, i.e. h(u) = 1/√(1 + uT) (the only shape that needs T);
    * ``polynomial``: h(u) = (1 − u)^p, p ≥ 1 (``linear`` is p = 1);
    * ``cosine``: h(u) = ½(1 + cos πu);
    * ``floor`` (polynomial only, default 0): h(u) = floor + (1 − floor)(1 − u)^p, a decay that stops at a fraction
      ``floor`` of the peak instead of at zero (the ablation of "annealed to zero"; the paper's bounds need h(1) = 0).
    """

    name: str
    p: float | None = None
    floor: float = 0.0

    def __call__(self, u, T: int | None = None):
        """Evaluate h at ``u`` (a float or tensor in [0, 1]); ``T`` is needed for ``inverse_sqrt`` only."""
        ut = torch.as_tensor(u, dtype=torch.float64) if not isinstance(u, torch.Tensor) else u
        if self.name == "fixed":
            out = torch.ones_like(ut)
        elif self.name == "inverse_sqrt":
            if T is None:
                raise ValueError("Invalid T: None (inverse_sqrt needs T, since η_t = η/√t with t = uT + 1)")
            validate.integer("T", T, 1)
            out = torch.rsqrt(1.0 + ut * T)
        elif self.name == "polynomial":
            out = (1.0 - ut).clamp(min=0.0) ** self.p
            if self.floor:
                out = self.floor + (1.0 - self.floor) * out
        else:  # cosine
            out = 0.5 * (1.0 + torch.cos(math.pi * ut))
        return out if isinstance(u, torch.Tensor) else float(out)

    @property
    def label(self) -> str:
        if self.name == "polynomial":
            lab = {1: "linear", 2: "quadratic", 3: "cubic"}.get(self.p, f"poly p={self.p:g}")
            return f"{lab} to {self.floor:.0%}" if self.floor else lab
        return self.name.replace("_", "-")


def schedule(name: str | Schedule, p: float | None = None, floor: float = 0.0) -> Schedule:
    """The schedule h called ``name`` (one of :data:`SCHEDULES`).

    ``p`` is the degree of ``polynomial`` (a real number in [1, 100]; bools, NaN and ±inf are rejected). The
    other schedules take no degree: ``linear`` *is* ``polynomial`` with p = 1, so ``schedule("linear", 5)``
    raises ``ValueError`` rather than silently ignoring p (use ``schedule("polynomial", 5)``); p = 1 is allowed
    for ``linear``. A :class:`Schedule` passes through (a ``p`` that disagrees with its degree is an error).
    ``floor`` in [0, 1) (``polynomial``/``linear`` only): the decay ends at that fraction of the peak.
    """
    fl = validate.number("floor", floor, 0.0, 1.0, high_open=True)
    if isinstance(name, Schedule):
        if fl and fl != name.floor:
            raise ValueError(f"Invalid floor: {floor!r} (the schedule {name.label!r} already fixes its floor)")
        if p is not None and (name.name != "polynomial" or validate.number("p", p, 1.0, P_MAX) != name.p):
            raise ValueError(f"Invalid p: {p!r} (the schedule {name.label!r} already fixes its degree)")
        return name
    if not isinstance(name, str):
        raise TypeError(f"Invalid schedule: {name!r} (must be one of {', '.join(map(repr, SCHEDULES))})")
    validate.one_of("schedule", name, SCHEDULES)
    if fl and name not in ("polynomial", "linear"):
        raise ValueError(f"Invalid floor: {floor!r} (only the polynomial schedule takes a floor)")
    if name == "polynomial":
        if p is None:
            raise ValueError("Invalid p: None (polynomial schedule needs a degree p in [1, 100])")
        q = validate.number("p", p, 1.0, P_MAX)
        return Schedule("polynomial", int(q) if q.is_integer() else q, fl)
    if name == "linear":
        if p is not None and validate.number("p", p) != 1.0:
            raise ValueError(f"Invalid p: {p!r} (linear is polynomial with p = 1; for degree {p!r} use "
                             f"schedule('polynomial', {p!r}))")
        return Schedule("polynomial", 1, fl)
    if p is not None:
        raise ValueError(f"Invalid p: {p!r} (only the polynomial schedule takes a degree; {name} has none)")
    return Schedule(name)


def _check_T(T) -> int:
    return validate.integer("T", T, 1, T_MAX)


def _guard_suffix(T: int) -> None:
    # _suffix_sums keeps ~6 length-T float64 vectors; _suffix_bound adds a 16 × T chunk
    validate.memory_guard(8.0 * T * 24, lower="T")


def stepsizes(eta, sched: str | Schedule, T: int, *, p: float | None = None, dtype=None, device=None):
    r"""η_t = η·h((t−1)/T) for t = 1..T; shape ``(*eta.shape, T)`` (``eta`` a number or tensor, > 0)."""
    h = schedule(sched, p)
    _check_T(T)
    validate.in_range("eta", eta, 0.0, 1e300, low_open=True)
    validate.memory_guard(8.0 * T * (2 + torch.as_tensor(eta).numel()), lower="T or the number of stepsizes")
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    u = torch.arange(T, dtype=dt, device=dev) / T
    e = torch.as_tensor(eta, dtype=dt, device=dev)
    return e.unsqueeze(-1) * h(u, T)


def _suffix_sums(h: Schedule, T: int, dtype=torch.float64, device=None):
    """A1(τ) = Σ_{t≥τ} h_t, A2(τ) = Σ_{t≥τ} h_t² for τ = 1..T (only τ with A1 > 0 kept)."""
    hs = stepsizes(1.0, h, T, dtype=dtype, device=device)
    a1 = hs.flip(0).cumsum(0).flip(0)
    a2 = (hs * hs).flip(0).cumsum(0).flip(0)
    keep = a1 > 0
    return a1[keep], a2[keep]


def ideal_eta(sched: str | Schedule, T: int, *, p: float | None = None) -> float:
    r"""e*_h = argmin_e min_τ bound, in units of D/G (multiply by D/G — D = 2R for a ball — for a stepsize).

    For a fixed τ the optimum is e = 1/√A2(τ) with value √A2/A1 (A1 = Σ_{t≥τ}h_t, A2 = Σ_{t≥τ}h_t²), so e*_h is
    read off the τ that minimises √A2/A1. Values: fixed 1/√T (the classical D/(G√T)); linear √3/√T; cosine
    √(8/3)/√T; inverse-sqrt (η_t = e/√t) a T-independent constant ≈ 0.631 = 1/√ln(1/c*), where the restart sits
    at the fixed fraction c* ≈ 0.081 of training that minimises √ln(1/c)/(1 − √c) (A1 ≈ 2√T(1 − √c),
    A2 ≈ ln(1/c)).
    """
    h = schedule(sched, p)
    _check_T(T)
    _guard_suffix(T)
    with one_thread(torch.device("cpu")):
        a1, a2 = _suffix_sums(h, T, device="cpu")
        k = int(torch.argmin(a2.sqrt() / a1))
        return float(1.0 / a2[k].sqrt())


def classical_eta(sched: str | Schedule, T: int, *, p: float | None = None) -> float:
    r"""The classical base stepsize in units of D/G: 1/√T (η* = D/(G√T)) for the h-shaped schedules, and 1 for
    inverse-sqrt, whose steps η_t = η/√t then end at D/(G√T) — the fixed η* = D/(G√T) against which our reading of
    the abstract measures ρ [reconstruction], as opposed to each schedule's own bound-ideal :func:`ideal_eta`."""
    h = schedule(sched, p)
    T = _check_T(T)
    return 1.0 if h.name == "inverse_sqrt" else 1.0 / math.sqrt(T)


def suffix_bound(rho, sched: str | Schedule, T: int, *, p: float | None = None, eta_star: float | None = None,
                 device=None) -> torch.Tensor:
    r"""[reconstruction] √T · min_τ [1 + Σ_{t≥τ}η_t²] / (2Σ_{t≥τ}η_t) with η = ρ·e* (units D = G = 1).

    ``rho`` in [1, 10¹²] (number or tensor) is the over-estimation factor; ``eta_star`` (units D/G) defaults to
    :func:`ideal_eta`, so ρ = 1 is the schedule's best bound; pass :func:`classical_eta` for the classical
    normalisation. Evaluated in log space (no overflow at any accepted ρ), on ``device``; returns a float64
    CPU tensor shaped like ``rho`` (it is plotted and fitted, never fed back into a simulation).
    """
    h = schedule(sched, p)
    T = _check_T(T)
    validate.in_range("rho", rho, 1.0, RHO_MAX, high_open=False)
    e0 = ideal_eta(h, T) if eta_star is None else validate.number("eta_star", eta_star, 0.0, 1e12, low_open=True)
    _guard_suffix(T)
    dev = resolve_device(device)
    with one_thread(dev):
        r = rho.detach().to(torch.float64) if isinstance(rho, torch.Tensor) else torch.as_tensor(
            rho, dtype=torch.float64)
        return _suffix_bound(r, h, T, e0, dev)


def _suffix_bound(rho: torch.Tensor, h: Schedule, T: int, e0: float, dev: torch.device) -> torch.Tensor:
    a1, a2 = _suffix_sums(h, T, device=dev)
    la1, la2 = a1.log(), a2.log()
    r = rho.to(dev)
    flat = r.reshape(-1)
    out = torch.empty_like(flat)
    for i in range(0, flat.numel(), 16):  # chunks keep memory at 16·T values
        le = (flat[i:i + 16].log() + math.log(e0)).unsqueeze(-1)
        # log[(1 + e²A2)/(2eA1)] = softplus(2 ln e + ln A2) − ln 2 − ln e − ln A1
        lb = torch.nn.functional.softplus(2.0 * le + la2) - math.log(2.0) - le - la1
        out[i:i + 16] = (lb.min(dim=-1).values + 0.5 * math.log(T)).exp()
    return out.reshape(r.shape).cpu()


def fit_exponent(rhos, values, *, rho_min: float = 1.0, rho_max: float | None = None) -> LineFit:
    """Least-squares slope of ln(values) on ln(ρ) over the fit window ``rho_min ≤ ρ ≤ rho_max`` (None: no cap).

    Wraps :func:`theorybook.fit.loglog_slope`; returns its ``LineFit`` (slope, intercept, stderr). The window must
    hold ≥ 3 points with ≥ 2 distinct ρ.
    """
    r = validate.finite_tensor("rhos", rhos).detach().to("cpu", torch.float64).reshape(-1)
    v = validate.finite_tensor("values", values).detach().to("cpu", torch.float64).reshape(-1)
    validate.in_range("rhos", r, 1.0, RHO_MAX, high_open=False)
    validate.positive("values", v)
    lo = validate.number("rho_min", rho_min, 1.0, RHO_MAX)
    hi = RHO_MAX if rho_max is None else validate.number("rho_max", rho_max, lo, RHO_MAX)
    if r.shape != v.shape:
        raise ValueError(f"Invalid values: {v.numel()} values for {r.numel()} rhos (must match)")
    keep = (r >= lo) & (r <= hi)
    if int(keep.sum()) < 3:
        raise ValueError(f"Invalid rho_min: {rho_min:g} (window [{lo:g}, {hi:g}] leaves {int(keep.sum())} points; "
                         f"need ≥ 3)")
    if int(torch.unique(r[keep]).numel()) < 2:
        raise ValueError("Invalid rhos: a single distinct ρ in the fit window (a slope needs ≥ 2)")
    return loglog_slope(to_numpy(r[keep]), to_numpy(v[keep]))


def predicted_exponent(sched: str | Schedule, p: float | None = None) -> float:
    """The abstract's large-ρ exponent: 1 (fixed, inverse-sqrt), 1/(2p+1) (polynomial), 1/5 (cosine)."""
    h = schedule(sched, p)
    if h.name in ("fixed", "inverse_sqrt"):
        return 1.0
    if h.name == "cosine":
        return 0.2
    return 1.0 / (2 * h.p + 1)


# ---------------------------------------------------------------------- sympy derivations [reconstruction]
class BalanceDerivation(NamedTuple):
    """The balance for h = (1 − u)^p: bound(s) = a/(ρ s^{p+1}) + b ρ s^p in the suffix fraction s."""

    p: int
    bound: sp.Expr
    s_star: sp.Expr
    value: sp.Expr
    exponent: sp.Expr


def derive_balance(p: int) -> BalanceDerivation:
    r"""Restart at the last fraction s of training with η_t = ρη*(1 − u)^p, η* = D/(G√T), D = G = 1.

    Σ_{t≥τ}η_t ≈ ρ√T s^{p+1}/(p+1) and Σ η_t² ≈ ρ² s^{2p+1}/(2p+1), so √T·bound(s) =
    (p+1)/(2ρ s^{p+1}) + (p+1)ρ s^p/(2(2p+1)). Solving d/ds = 0 gives s*, and d ln bound(s*)/d ln ρ is the
    exponent, which sympy reduces to 1/(2p+1).
    """
    p = validate.integer("p", p, 1, 12)
    s, rho = sp.symbols("s rho", positive=True)
    a = sp.Rational(p + 1, 2)
    b = sp.Rational(p + 1, 2 * (2 * p + 1))
    bound = a / (rho * s ** (p + 1)) + b * rho * s**p
    sols = [r for r in sp.solve(sp.diff(bound, s), s) if r.is_positive]
    if len(sols) != 1:
        raise RuntimeError(f"expected one positive critical point, got {sols}")
    s_star = sp.simplify(sols[0])
    value = sp.simplify(bound.subs(s, s_star))
    exponent = sp.simplify(rho * sp.diff(value, rho) / value)
    return BalanceDerivation(p, bound, s_star, value, exponent)


def derive_cosine_endpoint() -> tuple[sp.Expr, sp.Expr]:
    r"""Cosine near the end: with v = 1 − u, h = ½(1 + cos π(1 − v)) = sin²(πv/2) = (π²/4)v² + O(v⁴).

    Returns (the series up to v⁴, the leading coefficient π²/4).
    A degree-2 end means the p = 2 balance: ρ^{1/5}.
    """
    v = sp.symbols("v", positive=True)
    h = (1 + sp.cos(sp.pi * (1 - v))) / 2
    series = sp.series(h, v, 0, 5).removeO()
    return sp.expand(series), sp.simplify(series.coeff(v, 2))


def derive_fixed() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    r"""Fixed h ≡ 1, η = ρη*: √T·bound(s) = 1/(2ρs) + ρ/2 decreases in s, so the restart is at s = 1.

    Returns (bound(s), ∂bound/∂s, the value (1/ρ + ρ)/2 at s = 1); its log-slope in ρ tends to 1.
    """
    s, rho = sp.symbols("s rho", positive=True)
    bound = 1 / (2 * rho * s) + rho / 2
    return bound, sp.diff(bound, s), sp.simplify(bound.subs(s, 1))


def schedule_integrals() -> dict[str, tuple[sp.Expr, sp.Expr]]:
    r"""Closed forms of ∫₀¹h and ∫₀¹h² per schedule (inverse-sqrt uses h = 1/√(1+uT), so they depend on T)."""
    u = sp.symbols("u", nonnegative=True)
    T, p = sp.symbols("T p", positive=True)
    shapes = {
        "fixed": sp.Integer(1),
        "inverse_sqrt": 1 / sp.sqrt(1 + u * T),
        "polynomial": (1 - u) ** p,
        "cosine": (1 + sp.cos(sp.pi * u)) / 2,
    }
    out = {}
    for name, h in shapes.items():
        i1 = sp.simplify(sp.integrate(h, (u, 0, 1), conds="none"))
        i2 = sp.simplify(sp.integrate(sp.expand(h**2) if name == "cosine" else h**2, (u, 0, 1), conds="none"))
        out[name] = (i1, i2)
    return out
