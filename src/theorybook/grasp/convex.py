"""The convex half: Nesterov's chain quadratic, gradient descent, AC-SA, and the Grasp-style grid over them.

Nesterov's worst-case quadratic for first-order methods (Nesterov 2004, §2.1.2), with exact gradients:

    F(x) = (L/8)‖Dx − e₁‖²,  D ∈ ℝ^{(d+1)×d} with rows e₁ᵀ, e_{i+1}ᵀ − e_iᵀ (i = 1…d−1), −e_dᵀ,

so DᵀD = A = tridiag(−1, 2, −1), ∇F(x) = (L/4)(Ax − e₁), ∇²F = (L/4)A ⪯ L·I, the minimiser x*_i = 1 − i/(d+1) and
F* = L/(8(d+1)). From x₀ = 0 every method whose iterates stay in the Krylov span of past gradients has touched only
the first t coordinates after t gradients, so F(x_t) − F* ≥ (L/8)(1/(t+1) − 1/(d+1)).

Methods (batched over step sizes η, exact gradients, T gradient calls each):

* GD: x_{t+1} = x_t − η∇F(x_t);
* AC-SA (Lan 2012) with α_t = 2/(t+1), γ_t = (t+1)η/2:
  x^md_t = (1 − α_t)x^ag_t + α_t x_t,  x_{t+1} = x_t − γ_t∇F(x^md_t),  x^ag_{t+1} = (1 − α_t)x^ag_t + α_t x_{t+1};
  output x^ag (its guarantee: F − F* ≤ 4‖x₀ − x*‖²/(ηT(T+1)) for η ≤ 1/L).

The Grasp-style grid (our reconstruction) on this problem: η̄ = 2F(x₀)/‖∇F(x₀)‖² (= 4/L here), candidates
η̄·2^{−k}, k = 0…⌈log₂T⌉, each run for ⌊T/K⌋ exact-gradient steps (the budget T split over the K runs) and scored by
exact F; the oracle runs all T steps at the best constant η on the fine grid η̄·2^{−j/4} in hindsight. The
sceptic's control (as in the headline): one run of all T steps at the anchor's η̄/√T = η̄·2^{−½log₂T}, no grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch

from .. import fit
from ..device import resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number, one_of, positive
from .theory import grid_size

__all__ = ["ChainQuadratic", "ConvexRun", "chain_quadratic", "run_convex", "grasp_convex", "oracle_convex"]

_DT = torch.float64
BASES = ("sgd", "acsa")


@dataclass(frozen=True)
class ChainQuadratic:
    """F(x) = (L/8)‖Dx − e₁‖² on ℝ^d (Nesterov's chain); ``x0`` = 0. Exact F, ∇F for batches x (..., d)."""

    d: int
    L: float
    device: torch.device

    def x0(self, *batch: int) -> torch.Tensor:
        return torch.zeros(*batch, self.d, dtype=_DT, device=self.device)

    def _Ax(self, x: torch.Tensor) -> torch.Tensor:
        """A x with A = tridiag(−1, 2, −1), without forming A."""
        Ax = 2.0 * x
        Ax[..., 1:] -= x[..., :-1]
        Ax[..., :-1] -= x[..., 1:]
        return Ax

    def loss(self, x: torch.Tensor) -> torch.Tensor:
        """F(x) = (L/8)(xᵀAx − 2x₁ + 1), summed as ‖Dx − e₁‖² (no cancellation near the optimum)."""
        r0 = x[..., 0] - 1.0
        diffs = x[..., 1:] - x[..., :-1]
        return (self.L / 8.0) * (r0 * r0 + (diffs * diffs).sum(-1) + x[..., -1] ** 2)

    def gradient(self, x: torch.Tensor) -> torch.Tensor:
        """∇F(x) = (L/4)(Ax − e₁)."""
        g = self._Ax(x)
        g[..., 0] -= 1.0
        return (self.L / 4.0) * g

    @property
    def f_star(self) -> float:
        """F* = L/(8(d+1))."""
        return self.L / (8.0 * (self.d + 1))

    def x_star(self) -> torch.Tensor:
        """x*_i = 1 − i/(d+1), i = 1…d."""
        i = torch.arange(1, self.d + 1, dtype=_DT, device=self.device)
        return 1.0 - i / (self.d + 1)

    def krylov_floor(self, t: int) -> float:
        """(L/8)(1/(t+1) − 1/(d+1)): no Krylov-span method from x₀ = 0 gets F(x_t) − F* below this."""
        return max(0.0, self.L / 8.0 * (1.0 / (t + 1) - 1.0 / (self.d + 1)))


def chain_quadratic(d: int = 2000, L: float = 1.0, *, device=None) -> ChainQuadratic:
    """Nesterov's chain quadratic F(x) = (L/8)‖Dx − e₁‖² in dimension d with smoothness L."""
    dd = integer("d", d, 2, 10**7)
    LL = number("L", L, 0.0, 1e12, low_open=True)
    return ChainQuadratic(dd, LL, resolve_device(device))


def _chain(problem) -> ChainQuadratic:
    if not isinstance(problem, ChainQuadratic):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a ChainQuadratic)")
    return problem


class ConvexRun(NamedTuple):
    """Final points x (E, d) of each step η in ``etas`` (E,) and their optimality gaps F(x) − F* (E,) (inf if the
    run diverged)."""

    etas: torch.Tensor
    x: torch.Tensor
    gap: torch.Tensor


def _gap(problem: ChainQuadratic, x: torch.Tensor) -> torch.Tensor:
    ok = torch.isfinite(x).all(-1)
    f = problem.loss(torch.where(ok[..., None], x, torch.zeros_like(x))) - problem.f_star
    f = torch.where(ok & torch.isfinite(f), f, torch.full_like(f, math.inf))
    return f.clamp_min(0.0)


def _anchor(prob: ChainQuadratic) -> float:
    """η̄ = 2F(x₀)/‖∇F(x₀)‖² with exact F and ∇F (= 4/L on the chain)."""
    x0 = prob.x0(1)
    g0 = prob.gradient(x0)
    return float(2.0 * prob.loss(x0)[0] / (g0 * g0).sum())


def run_convex(problem: ChainQuadratic, etas, T: int, *, base: str = "sgd") -> ConvexRun:
    """T exact-gradient steps of GD (``base="sgd"``: with exact gradients SGD is GD) or AC-SA (``"acsa"``) from
    x₀ = 0 at every step η in ``etas``, batched."""
    prob = _chain(problem)
    e = finite_tensor("etas", etas)
    positive("etas", e)
    if e.ndim == 0:
        e = e[None]
    if e.ndim != 1 or e.shape[0] > 4096:
        raise ValueError(f"Invalid etas: shape {tuple(e.shape)} (must be (E,), E ≤ 4096)")
    t = integer("T", T, 1, 10**6)
    one_of("base", base, BASES)
    E = e.shape[0]
    memory_guard(8.0 * E * prob.d * 4, lower="len(etas) or d")
    eta = e.to(prob.device, _DT)[:, None]
    x = prob.x0(E)
    with torch.no_grad():
        if base == "sgd":
            for _ in range(t):
                x = x - eta * prob.gradient(x)
        else:
            ag = x.clone()
            for s in range(1, t + 1):
                a = 2.0 / (s + 1)
                md = (1.0 - a) * ag + a * x
                x = x - ((s + 1) * 0.5) * eta * prob.gradient(md)
                ag = (1.0 - a) * ag + a * x
            x = ag
    return ConvexRun(e.to(prob.device, _DT), x, _gap(prob, x))


class ConvexGrasp(NamedTuple):
    """Grasp-style grid on a convex problem: candidates' steps ``etas`` (K,), their gaps (K,), the chosen index (the
    argmin of exact F), its gap, the anchor η̄ and the steps per candidate ⌊T/K⌋."""

    etas: torch.Tensor
    gaps: torch.Tensor
    chosen: int
    gap: float
    eta_bar: float
    steps: int


def grasp_convex(problem: ChainQuadratic, T: int, *, base: str = "sgd") -> ConvexGrasp:
    """The Grasp-style grid (our reconstruction) with exact oracles: η̄ = 2F(x₀)/‖∇F(x₀)‖², K = ⌈log₂T⌉ + 1
    candidates η̄·2^{−k}, each run ⌊T/K⌋ steps of ``base``, the one with least exact F returned."""
    prob = _chain(problem)
    t = integer("T", T, 2, 10**6)
    one_of("base", base, BASES)
    K = grid_size(t)
    n = t // K
    if n < 1:
        raise ValueError(f"Invalid T: {t} (must give each of the K = {K} candidates ≥ 1 step)")
    eta_bar = _anchor(prob)
    etas = eta_bar * 2.0 ** -torch.arange(K, dtype=_DT, device=prob.device)
    run = run_convex(prob, etas, n, base=base)
    k = int(run.gap.argmin())
    return ConvexGrasp(etas, run.gap, k, float(run.gap[k]), eta_bar, n)


class ConvexOracle(NamedTuple):
    """Oracle: every constant step η̄·2^{−j/4}, j = −8…4⌈log₂T⌉ + 4, run T steps; the best gap in hindsight."""

    etas: torch.Tensor
    gaps: torch.Tensor
    best_eta: float
    gap: float


def oracle_convex(problem: ChainQuadratic, T: int, *, base: str = "sgd") -> ConvexOracle:
    """The best constant step in hindsight for ``base`` at budget T (all T gradient calls in one run)."""
    prob = _chain(problem)
    t = integer("T", T, 2, 10**6)
    one_of("base", base, BASES)
    eta_bar = _anchor(prob)
    j = torch.arange(-8, 4 * (grid_size(t) - 1) + 5, dtype=_DT, device=prob.device)
    etas = eta_bar * 2.0 ** (-j / 4)
    run = run_convex(prob, etas, t, base=base)
    k = int(run.gap.argmin())
    return ConvexOracle(etas, run.gap, float(etas[k]), float(run.gap[k]))


def anchored_convex(problem: ChainQuadratic, T: int, *, base: str = "sgd") -> float:
    """The control without the search: one run of ``base`` for all T gradient calls at the anchor's η̄/√T =
    η̄·2^{−½log₂T} (the geometric middle of the Grasp-style grid), with the same exact anchor; its gap F − F*."""
    prob = _chain(problem)
    t = integer("T", T, 2, 10**6)
    one_of("base", base, BASES)
    eta = _anchor(prob) * 2.0 ** (-0.5 * math.log2(t))
    return float(run_convex(prob, [eta], t, base=base).gap[0])


class ConvexStudy(NamedTuple):
    """The chapter's convex experiment: budgets ``Ts``; per base ("sgd" = GD, "acsa") the Grasp-style and oracle
    gaps F − F* at each T (lists), the oracle's best steps, the anchor η̄, and fitted log–log slopes; ``anchored``
    the gaps of one run at η̄/√T per base and T (the control without the search), ``anchored_slopes`` their
    slopes."""

    problem: ChainQuadratic
    Ts: tuple[int, ...]
    grasp: dict[str, list[ConvexGrasp]]
    oracle: dict[str, list[ConvexOracle]]
    slopes: dict[str, float]
    oracle_slopes: dict[str, float]
    anchored: dict[str, list[float]]
    anchored_slopes: dict[str, float]


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (x, y positive, ≥ 2 points)."""
    xs = finite_tensor("x", x).to(_DT).flatten()
    ys = finite_tensor("y", y).to(_DT).flatten()
    if xs.shape != ys.shape or xs.numel() < 2:
        raise ValueError(f"Invalid x, y: shapes {tuple(xs.shape)}, {tuple(ys.shape)} (must match, ≥ 2 points)")
    positive("x", xs)
    positive("y", ys)
    return float(fit.loglog_slope(to_numpy(xs), to_numpy(ys)).slope)


def convex_study(d: int = 2000, Ts=(64, 128, 256, 512, 1024), *, L: float = 1.0, device=None) -> ConvexStudy:
    """Grasp-style GD and AC-SA against their oracles on the chain quadratic at each budget T."""
    prob = chain_quadratic(d, L, device=device)
    ts = tuple(integer("Ts", t, 2, 10**5) for t in Ts)
    if len(ts) < 2 or len(ts) > 32:
        raise ValueError(f"Invalid Ts: {len(ts)} budgets (must be 2 to 32)")
    memory_guard(8.0 * sum(ts) * 64 * prob.d / max(ts), lower="d or Ts")
    gr = {b: [grasp_convex(prob, t, base=b) for t in ts] for b in BASES}
    orc = {b: [oracle_convex(prob, t, base=b) for t in ts] for b in BASES}
    tt = torch.tensor(ts, dtype=_DT)
    slopes = {b: loglog_slope(tt, torch.tensor([r.gap for r in gr[b]], dtype=_DT)) for b in BASES}
    oslopes = {b: loglog_slope(tt, torch.tensor([r.gap for r in orc[b]], dtype=_DT)) for b in BASES}
    one = {b: [anchored_convex(prob, t, base=b) for t in ts] for b in BASES}
    oneslopes = {b: loglog_slope(tt, torch.tensor(one[b], dtype=_DT)) for b in BASES}
    return ConvexStudy(prob, ts, gr, orc, slopes, oslopes, one, oneslopes)


__all__ += ["ConvexGrasp", "ConvexOracle", "ConvexStudy", "anchored_convex", "convex_study", "loglog_slope"]

# Cheap arguments for tests/test_api_fuzz.py.
FUZZ_BASE = {
    "chain_quadratic": {"d": 8},
    "run_convex": {"problem": chain_quadratic(8, device="cpu"), "etas": [0.5], "T": 4},
    "grasp_convex": {"problem": chain_quadratic(8, device="cpu"), "T": 8},
    "oracle_convex": {"problem": chain_quadratic(8, device="cpu"), "T": 4},
    "anchored_convex": {"problem": chain_quadratic(8, device="cpu"), "T": 4},
    "convex_study": {"d": 8, "Ts": (4, 8)},
    "loglog_slope": {"x": [1.0, 2.0], "y": [1.0, 0.5]},
}
