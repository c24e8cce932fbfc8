"""The system: robust regression, batched SGD, the Grasp-style grid (our reconstruction), the oracle and the peers
DoG and AdaGrad-norm.

The problem [reconstruction of the digest's plan]: a pool of N pairs (a_i, y_i), a_i ~ N(0, I_d),
x_true ~ N(0, 9I/d), y_i = a_iᵀx_true + σξ_i with ξ_i ~ N(0, 1) and 10 % of the ξ_i scaled ×10, and

    f_i(x) = c·[ln(1 + r_i²/2) + λ‖x‖²/2],  r_i = a_iᵀx − y_i,   F = (1/N)Σ f_i ≥ 0,
    ∇f_i(x) = c·[ψ(r_i)a_i + λx],  ψ(r) = r/(1 + r²/2)  (|ψ| ≤ 1/√2, so per-sample gradients stay bounded).

F is non-convex (ψ' < 0 for |r| > √2) and L-smooth with L ≤ c·(λ_max(AᵀA/N) + λ). The scale c plays the
unknown smoothness: SGD with step η on cF is SGD with step cη on F.

Every stochastic run draws its pool indices from a CPU ``torch.Generator`` seeded with ``seed`` and moves them to
the problem's device, so a run is reproducible on any device, and runs with different c (same σ, same seed) see
the same samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch

from ..device import resolve_device
from ..validate import finite_tensor, integer, memory_guard, number, one_of, positive
from .theory import grid_size

__all__ = [
    "GraspResult", "OracleResult", "RobustRegression", "SGDRun", "adagrad_norm", "anchored_sgd", "dog",
    "exact_anchor", "grasp",
    "grad_norm", "oracle", "problem_grid", "robust_regression", "run_sgd", "unbiased_sq_norm",
]

_DT = torch.float64
_SCORES = ("ustat", "naive")


@dataclass(frozen=True)
class RobustRegression:
    """P stacked robust-regression problems sharing n, d and λ: pools ``A`` (P, N, d), ``y`` (P, N), scales ``c``
    (P,). ``sigmas``/``cs``/``xscales`` give each problem's (σ, c, s). ``x0`` = 0.

    The x-scale s reparametrises the problem, f_s(x) = f(x/s): the pool is stored as A/s and the ridge as
    ``ridge`` = λ/s² per problem, so ∇f_s = ∇f/s, L_s = L/s², and the tuned step moves by s² while every
    normalised gradient norm is unchanged."""

    A: torch.Tensor
    y: torch.Tensor
    c: torch.Tensor
    lam: float
    sigmas: tuple[float, ...]
    cs: tuple[float, ...]
    xscales: tuple[float, ...] = ()
    ridge: torch.Tensor | None = None

    def __post_init__(self) -> None:
        if not self.xscales:
            object.__setattr__(self, "xscales", tuple(1.0 for _ in self.cs))
        if self.ridge is None:
            object.__setattr__(self, "ridge", torch.full((int(self.A.shape[0]),), float(self.lam), dtype=_DT,
                                                         device=self.A.device))

    @property
    def P(self) -> int:
        return int(self.A.shape[0])

    @property
    def d(self) -> int:
        return int(self.A.shape[2])

    @property
    def device(self) -> torch.device:
        return self.A.device

    def x0(self, *batch: int) -> torch.Tensor:
        """x₀ = 0 with shape (P, *batch, d)."""
        return torch.zeros(self.P, *batch, self.d, dtype=_DT, device=self.device)

    def _chunks(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        x = finite_tensor("x", x)
        if x.ndim < 2 or x.shape[0] != self.P or x.shape[-1] != self.d:
            raise ValueError(f"Invalid x: shape {tuple(x.shape)} (must be (P={self.P}, ..., d={self.d}))")
        xb = x.to(self.device, _DT).reshape(self.P, -1, self.d)
        return xb, max(1, 2**22 // (self.P * self.A.shape[1]))

    def loss(self, x: torch.Tensor) -> torch.Tensor:
        """Exact F(x) over the pool; x (P, ..., d) → (P, ...)."""
        xb, step = self._chunks(x)
        out = []
        for i in range(0, xb.shape[1], step):
            xc = xb[:, i:i + step]
            r = torch.einsum("pbd,pnd->pbn", xc, self.A) - self.y[:, None, :]
            f = torch.log1p(0.5 * r * r).mean(-1) + 0.5 * self.ridge[:, None] * (xc * xc).sum(-1)
            out.append(f)
        return (self.c[:, None] * torch.cat(out, 1)).reshape(x.shape[:-1])

    def gradient(self, x: torch.Tensor) -> torch.Tensor:
        """Exact ∇F(x) over the pool; x (P, ..., d) → (P, ..., d)."""
        xb, step = self._chunks(x)
        out = []
        for i in range(0, xb.shape[1], step):
            xc = xb[:, i:i + step]
            r = torch.einsum("pbd,pnd->pbn", xc, self.A) - self.y[:, None, :]
            g = (torch.einsum("pbn,pnd->pbd", r / (1.0 + 0.5 * r * r), self.A) / self.A.shape[1]
                 + self.ridge[:, None, None] * xc)
            out.append(g)
        return (self.c[:, None, None] * torch.cat(out, 1)).reshape(x.shape)

    def sample_grads(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-sample (f_i, ∇f_i) at x (P, *B, d) for indices idx (*B, m) → (P, *B, m), (P, *B, m, d)."""
        a = self.A[:, idx]  # (P, *B, m, d)
        r = (a * x[..., None, :]).sum(-1) - self.y[:, idx]
        cc = self.c.reshape(-1, *([1] * (r.ndim - 1)))
        lam = self.ridge.reshape(cc.shape)
        f = cc * (torch.log1p(0.5 * r * r) + 0.5 * lam * (x * x).sum(-1)[..., None])
        g = cc[..., None] * ((r / (1.0 + 0.5 * r * r))[..., None] * a + lam[..., None] * x[..., None, :])
        return f, g

    def sampler(self, seeds: int = 8, seed: int = 0) -> Callable[[torch.Tensor], torch.Tensor]:
        """A stochastic-gradient oracle x (P, seeds, d) → ∇f_{i_t}(x), one fresh pool index per seed per call."""
        S = integer("seeds", seeds, 1, 10_000)
        gen = torch.Generator().manual_seed(integer("seed", seed, 0, 2**63 - 1))
        N = self.A.shape[1]

        def grad_fn(x: torch.Tensor) -> torch.Tensor:
            idx = torch.randint(N, (S, 1), generator=gen).to(self.device)
            return self.sample_grads(x, idx)[1][..., 0, :]

        return grad_fn


def _pool(n: int, d: int, sigmas: Sequence[float], outliers: float, seed: int, device: torch.device):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(n, d, generator=gen, dtype=_DT)
    x_true = torch.randn(d, generator=gen, dtype=_DT) * (3.0 / math.sqrt(d))
    xi = torch.randn(n, generator=gen, dtype=_DT)
    xi = torch.where(torch.rand(n, generator=gen, dtype=_DT) < outliers, 10.0 * xi, xi)
    ys = [a @ x_true + s * xi for s in sigmas]
    return a.to(device), [y.to(device) for y in ys]


def problem_grid(sigmas: Sequence[float], cs: Sequence[float], *, n: int = 20000, d: int = 20, lam: float = 0.01,
                 outliers: float = 0.1, seed: int = 0, device: str | torch.device | None = None,
                 xscales: Sequence[float] | None = None) -> RobustRegression:
    """All (σ, c) combinations stacked as P = len(σ)·len(c) problems (σ-major); one pool per σ (same a, x_true, ξ).
    ``xscales`` (as long as ``cs``, paired with it) gives the j-th member the x-scale s_j as well: f(x/s_j)."""
    if isinstance(sigmas, (str, bytes)) or isinstance(cs, (str, bytes)):
        raise TypeError("Invalid sigmas/cs: must be sequences of numbers")
    try:
        sl = [number("sigma", s, 0.0, 1e6) for s in sigmas]
        cl = [number("c", c, 1e-12, 1e12, low_open=True) for c in cs]
    except TypeError as err:
        raise TypeError(f"Invalid sigmas/cs: {err}") from err
    if not sl or not cl or len(sl) * len(cl) > 64:
        raise ValueError(f"Invalid sigmas/cs: {len(sl)}×{len(cl)} problems (must be 1 … 64)")
    if xscales is None:
        xl = [1.0] * len(cl)
    else:
        if isinstance(xscales, (str, bytes)) or not hasattr(xscales, "__len__") or len(xscales) != len(cl):
            raise ValueError(f"Invalid xscales: {xscales!r} (must be a sequence as long as cs, {len(cl)})")
        xl = [number("xscales", v, 1e-6, 1e6) for v in xscales]
    N = integer("n", n, 2, 10**8)
    D = integer("d", d, 1, 10**5)
    lv = number("lam", lam, 0.0, 1e6)
    o = number("outliers", outliers, 0.0, 1.0)
    sd = integer("seed", seed, 0, 2**63 - 1)
    memory_guard(8.0 * N * (D + 2) * (len(sl) + 1), lower="n or d")
    dev = resolve_device(device)
    a, ys = _pool(N, D, sl, o, sd, dev)
    P = len(sl) * len(cl)
    sv = torch.tensor([xv for _ in sl for xv in xl], dtype=_DT, device=dev)
    A = a[None].expand(P, N, D) if all(xv == 1.0 for xv in xl) else a[None] / sv[:, None, None]
    y = torch.stack([ys[i] for i in range(len(sl)) for _ in cl])
    c = torch.tensor([cv for _ in sl for cv in cl], dtype=_DT, device=dev)
    return RobustRegression(A, y, c, lv, tuple(s for s in sl for _ in cl), tuple(cv for _ in sl for cv in cl),
                            tuple(xv for _ in sl for xv in xl), lv / sv**2)


def robust_regression(sigma: float, c: float = 1.0, *, n: int = 20000, d: int = 20, lam: float = 0.01,
                      outliers: float = 0.1, seed: int = 0,
                      device: str | torch.device | None = None) -> RobustRegression:
    """One robust-regression problem (P = 1): exact F and ∇F over the pool (``.loss``, ``.gradient``) and a
    stochastic-gradient sampler (``.sampler``)."""
    return problem_grid([sigma], [c], n=n, d=d, lam=lam, outliers=outliers, seed=seed, device=device)


def unbiased_sq_norm(per_sample_grads: torch.Tensor) -> torch.Tensor:
    """U-statistic of ‖E g‖²: (‖Σ_i g_i‖² − Σ_i ‖g_i‖²)/(m(m − 1)) = mean_{i≠j}⟨g_i, g_j⟩ (rows = samples, m ≥ 2).

    Accepts (..., m, d); unbiased for ‖μ‖², whereas ‖ĝ‖² is biased upward by tr Σ/m [derived].
    """
    g = finite_tensor("per_sample_grads", per_sample_grads)
    if g.ndim < 2 or g.shape[-2] < 2 or g.shape[-1] < 1:
        raise ValueError(f"Invalid per_sample_grads: shape {tuple(g.shape)} (need (..., m ≥ 2, d ≥ 1))")
    m = g.shape[-2]
    s = g.sum(-2)
    return ((s * s).sum(-1) - (g * g).sum((-1, -2))) / (m * (m - 1))


def _problem(problem) -> RobustRegression:
    if not isinstance(problem, RobustRegression):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a RobustRegression)")
    return problem


def _sgd(prob: RobustRegression, x: torch.Tensor, etas: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Batch-1 SGD from x (P, E, S, d) with steps etas (P, E, S); idx (n, E or 1, S): the sample of each step."""
    ec = (etas * prob.c[:, None, None])[..., None]  # η·c
    decay = 1.0 - ec * prob.ridge[:, None, None, None]
    a_all = prob.A[:, idx]  # (P, n, E|1, S, d): one gather for the whole run
    y_all = prob.y[:, idx][..., None]
    for t in range(idx.shape[0]):
        a = a_all[:, t]
        r = (x * a).sum(-1, keepdim=True) - y_all[:, t]
        x = x * decay - (ec * r / (1.0 + 0.5 * r * r)) * a
    # A step above 2/(cλ) makes the ridge term diverge geometrically: such a run ends at ±inf/NaN; report it as inf
    # (an infinitely bad candidate), never as NaN.
    return torch.where(torch.isfinite(x).all(-1, keepdim=True), x, torch.full_like(x, math.inf))


class SGDRun(NamedTuple):
    """Final iterates (P, E, S, d) of SGD at steps ``etas`` (P, E) and their exact ‖∇F‖ (P, E, S)."""

    etas: torch.Tensor
    x: torch.Tensor
    grad_norm: torch.Tensor


def _etas(prob: RobustRegression, etas) -> torch.Tensor:
    e = finite_tensor("etas", etas)
    positive("etas", e)
    if e.ndim == 0:
        e = e[None]
    if e.ndim == 1:
        e = e[None].expand(prob.P, -1)
    if e.ndim != 2 or e.shape[0] != prob.P or e.shape[1] > 4096:
        raise ValueError(f"Invalid etas: shape {tuple(e.shape)} (must be (E,) or (P={prob.P}, E), E ≤ 4096)")
    return e.to(prob.device, _DT)


def run_sgd(problem: RobustRegression, etas, T: int, *, seeds: int = 8, seed: int = 0) -> SGDRun:
    """T steps of batch-1 SGD x_{t+1} = x_t − η∇f_{i_t}(x_t) from x₀ = 0 for every η in ``etas`` and every seed,
    batched; the steps of all η share one sample path per seed (common random numbers)."""
    if not isinstance(problem, RobustRegression):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a RobustRegression)")
    e = _etas(problem, etas)
    t = integer("T", T, 1, 10**7)
    S = integer("seeds", seeds, 1, 10_000)
    sd = integer("seed", seed, 0, 2**63 - 1)
    P, E = e.shape
    memory_guard(8.0 * P * max(E * S * problem.d * 8, t * S * (problem.d + 1)), lower="T, seeds or len(etas)")
    idx = torch.randint(problem.A.shape[1], (t, 1, S), generator=torch.Generator().manual_seed(sd))
    x = _sgd(problem, problem.x0(E, S), e[..., None].expand(P, E, S), idx.to(problem.device))
    return SGDRun(e, x, grad_norm(problem, x))


def grad_norm(problem: RobustRegression, x: torch.Tensor) -> torch.Tensor:
    """Exact ‖∇F(x)‖ (P, ...) for x (P, ..., d); inf where the run diverged."""
    _problem(problem)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"Invalid x: {type(x).__name__} (must be a tensor of shape (P, ..., d))")
    if x.ndim < 2 or x.shape[0] != problem.P or x.shape[-1] != problem.d:
        raise ValueError(f"Invalid x: shape {tuple(x.shape)} (must be (P={problem.P}, ..., d={problem.d}))")
    ok = torch.isfinite(x).all(-1)
    gn = torch.linalg.vector_norm(problem.gradient(torch.where(ok[..., None], x, torch.zeros_like(x))), dim=-1)
    return torch.where(ok, gn, torch.full_like(gn, math.inf))


class GraspResult(NamedTuple):
    """Output of the Grasp-style grid (our reconstruction) per problem p and seed s.

    ``x_hat`` (P, S, d), ``chosen`` (P, S) the argmin of ``scores`` (P, K, S), ``candidates`` (P, K, S, d),
    ``etas`` (P, K, S) = η̄·2^{−k}, ``eta_bar`` (P, S), ``steps`` per candidate (= scoring samples)."""

    x_hat: torch.Tensor
    chosen: torch.Tensor
    candidates: torch.Tensor
    scores: torch.Tensor
    etas: torch.Tensor
    eta_bar: torch.Tensor
    steps: int


def grasp(problem: RobustRegression, T: int, *, probe: int = 16, score: str = "ustat", seeds: int = 8,
          seed: int = 0, top: float | None = None, points: int | None = None, spacing: float = 1.0) -> GraspResult:
    """Grasp-style grid search (our reconstruction) with budget T samples.

    1. probe m₀ samples at x₀: η̄ = 2F̂(x₀)/‖ĝ(x₀)‖² (F̂, ĝ the probe means);
    2. K = ⌈log₂T⌉ + 1 candidates η_k = η̄·2^{−k}; each runs n = ⌊(T − m₀)/(2K)⌋ SGD steps on fresh samples;
    3. each final iterate is scored on n fresh samples by ``score``: "ustat" = mean_{i≠j}⟨g_i, g_j⟩ (unbiased for
       ‖∇F‖²) or "naive" = ‖ĝ‖²; output the argmin. Total samples m₀ + 2Kn ≤ T.

    ``top`` replaces step 1 by a fixed grid top (no probe: m₀ = 0) and ``points``/``spacing`` give K and the grid's
    ratio 2^{−spacing}: a practitioner's log grid η_k = top·2^{−spacing·k}, k < K, with the same budget split and
    score — the anchor ablated.
    """
    if not isinstance(problem, RobustRegression):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a RobustRegression)")
    t = integer("T", T, 2, 10**7)
    m0 = integer("probe", probe, 2, 10**6)
    one_of("score", score, _SCORES)
    S = integer("seeds", seeds, 1, 10_000)
    sd = integer("seed", seed, 0, 2**63 - 1)
    K = grid_size(t) if points is None else integer("points", points, 1, 4096)
    sp = number("spacing", spacing, 1e-3, 64.0, low_open=True)
    if top is not None:
        top = number("top", top, 0.0, 1e12, low_open=True)
        m0 = 0
    n = (t - m0) // (2 * K)
    if n < 2:
        raise ValueError(f"Invalid T: {t} (too small for probe = {m0} and K = {K} candidates with ≥ 2 steps each: "
                         f"need T ≥ {m0 + 4 * K})")
    P, d, dev = problem.P, problem.d, problem.device
    memory_guard(8.0 * P * K * S * n * (d + 2) * 3, lower="T or seeds")
    gen = torch.Generator().manual_seed(sd)
    N = problem.A.shape[1]
    probe_idx = torch.randint(N, (S, max(m0, 1)), generator=gen).to(dev)
    run_idx = torch.randint(N, (n, K, S), generator=gen).to(dev)
    score_idx = torch.randint(N, (K, S, n), generator=gen).to(dev)
    if top is None:
        f0, g0 = problem.sample_grads(problem.x0(S), probe_idx)  # (P, S, m0), (P, S, m0, d)
        ghat = g0.mean(-2)
        eta_bar = 2.0 * f0.mean(-1) / (ghat * ghat).sum(-1).clamp_min(torch.finfo(_DT).tiny)
    else:
        eta_bar = torch.full((P, S), top, dtype=_DT, device=dev)
    etas = eta_bar[:, None, :] * (2.0 ** -(sp * torch.arange(K, dtype=_DT, device=dev)))[None, :, None]
    x = _sgd(problem, problem.x0(K, S), etas, run_idx)
    ok = torch.isfinite(x).all(-1)  # (P, K, S)
    _, g = problem.sample_grads(torch.where(ok[..., None], x, torch.zeros_like(x)), score_idx)  # (P,K,S,n,d)
    g = torch.where(torch.isfinite(g), g, torch.zeros_like(g))  # overflowed scores are masked out below
    if score == "ustat":
        sc = unbiased_sq_norm(g)
    else:
        gm = g.mean(-2)
        sc = (gm * gm).sum(-1)
    # a diverged candidate (or one whose gradients overflow) is never chosen
    sc = torch.where(ok & torch.isfinite(sc), sc, torch.full_like(sc, math.inf))
    chosen = sc.argmin(1)  # (P, S)
    x_hat = torch.gather(x, 1, chosen[:, None, :, None].expand(P, 1, S, d))[:, 0]
    return GraspResult(x_hat, chosen, x, sc, etas, eta_bar, n)


def anchored_sgd(problem: RobustRegression, T: int, *, probe: int = 16, offset: float | None = None,
                 seeds: int = 8, seed: int = 0) -> torch.Tensor:
    """One SGD run at the anchored step η̄·2^{−offset}, no grid and no scoring (the rival a sceptic names).

    The probe is Grasp-style's own (the same m₀ samples from the same generator: ``grasp(..., seed=seed)`` draws
    them first), η̄ = 2F̂(x₀)/‖ĝ(x₀)‖²; the run takes the remaining T − m₀ samples. ``offset`` defaults to
    ½log₂T, the geometric middle of Grasp-style's grid: the step η̄/√T. Returns the final iterates (P, S, d)
    (``inf`` where the run diverged)."""
    if not isinstance(problem, RobustRegression):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a RobustRegression)")
    t = integer("T", T, 2, 10**7)
    m0 = integer("probe", probe, 2, 10**6)
    if t - m0 < 1:
        raise ValueError(f"Invalid T: {t} (must exceed probe = {m0})")
    off = 0.5 * math.log2(t) if offset is None else number("offset", offset, -64.0, 64.0)
    S = integer("seeds", seeds, 1, 10_000)
    sd = integer("seed", seed, 0, 2**63 - 1)
    P, dev = problem.P, problem.device
    memory_guard(8.0 * P * S * (t - m0) * (problem.d + 2) * 3, lower="T or seeds")
    gen = torch.Generator().manual_seed(sd)
    N = problem.A.shape[1]
    probe_idx = torch.randint(N, (S, m0), generator=gen).to(dev)  # = grasp()'s probe at the same seed
    run_idx = torch.randint(N, (t - m0, 1, S), generator=gen).to(dev)
    f0, g0 = problem.sample_grads(problem.x0(S), probe_idx)
    ghat = g0.mean(-2)
    eta_bar = 2.0 * f0.mean(-1) / (ghat * ghat).sum(-1).clamp_min(torch.finfo(_DT).tiny)  # (P, S)
    x = _sgd(problem, problem.x0(1, S), (eta_bar * 2.0 ** -off)[:, None, :], run_idx)
    return x[:, 0]


class OracleResult(NamedTuple):
    """Oracle SGD: constant steps η̄*·2^{−j/4} (P, E), exact ‖∇F‖ (P, E, S) of each, and the best in hindsight."""

    etas: torch.Tensor
    grad_norm: torch.Tensor
    best_index: torch.Tensor
    best_eta: torch.Tensor
    best_grad_norm: torch.Tensor
    eta_bar: torch.Tensor


def exact_anchor(problem: RobustRegression) -> torch.Tensor:
    """η̄* = 2F(x₀)/‖∇F(x₀)‖² with exact F and ∇F over the pool, per problem (P,)."""
    _problem(problem)
    x0 = problem.x0(1)
    g = problem.gradient(x0)[:, 0]
    return 2.0 * problem.loss(x0)[:, 0] / (g * g).sum(-1)


def oracle(problem: RobustRegression, T: int, *, seeds: int = 8, seed: int = 0) -> OracleResult:
    """Oracle-tuned SGD at budget T: every constant step η̄*·2^{−j/4}, j = −8 … 4⌈log₂T⌉ + 4 (η̄* the exact
    anchor), T steps each on the same sample path; the best final ‖∇F‖ in hindsight per problem and seed."""
    if not isinstance(problem, RobustRegression):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a RobustRegression)")
    t = integer("T", T, 2, 10**7)
    eb = exact_anchor(problem)
    j = torch.arange(-8, 4 * (grid_size(t) - 1) + 5, dtype=_DT, device=problem.device)
    etas = eb[:, None] * 2.0 ** (-j / 4)[None]
    run = run_sgd(problem, etas, t, seeds=seeds, seed=seed)
    best = run.grad_norm.argmin(1)  # (P, S)
    return OracleResult(etas, run.grad_norm, best, torch.gather(etas, 1, best), run.grad_norm.min(1).values, eb)


def _peer_args(x0, T: int) -> tuple[torch.Tensor, int]:
    x = finite_tensor("x0", x0)
    if x.ndim < 1 or x.shape[-1] < 1:
        raise ValueError(f"Invalid x0: shape {tuple(x.shape)} (must be (..., d ≥ 1))")
    return x.clone(), integer("T", T, 1, 10**7)


def _check_grad(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    if not isinstance(g, torch.Tensor) or g.shape != x.shape or not bool(torch.isfinite(g).all()):
        raise ValueError(f"Invalid grad_fn: must return a finite tensor of shape {tuple(x.shape)}")
    return g.to(x.dtype)


def dog(grad_fn: Callable[[torch.Tensor], torch.Tensor], x0, T: int, *, r_eps: float | None = None) -> torch.Tensor:
    """DoG (Ivgi, Hinder & Carmon 2023), batched over leading dims of x0 (..., d), T steps, last iterate:

        η_t = r̄_t/√(Σ_{i≤t}‖g_i‖²),  r̄_t = max(r_ε, max_{i≤t}‖x_i − x₀‖),  x_{t+1} = x_t − η_t g_t,

    with r_ε = 10⁻⁶(1 + ‖x₀‖) by default (the ``dog-optimizer`` package's ``reps_rel``)."""
    x, t = _peer_args(x0, T)
    start = x.clone()
    r = 1e-6 * (1.0 + torch.linalg.vector_norm(x, dim=-1, keepdim=True)) if r_eps is None else \
        torch.full_like(x[..., :1], number("r_eps", r_eps, 0.0, 1e12, low_open=True))
    G = torch.zeros_like(x[..., :1])
    for _ in range(t):
        g = _check_grad(grad_fn(x), x)
        r = torch.maximum(r, torch.linalg.vector_norm(x - start, dim=-1, keepdim=True))
        G = G + (g * g).sum(-1, keepdim=True)
        x = x - torch.where(G > 0, r / G.sqrt(), torch.zeros_like(G)) * g
    return x


def adagrad_norm(grad_fn: Callable[[torch.Tensor], torch.Tensor], x0, T: int, *, eta: float = 1.0) -> torch.Tensor:
    """AdaGrad-norm, batched over leading dims of x0 (..., d), T steps, last iterate:
    x_{t+1} = x_t − η g_t/√(Σ_{i≤t}‖g_i‖²) (a zero accumulated norm means no step)."""
    x, t = _peer_args(x0, T)
    e = number("eta", eta, 0.0, 1e12, low_open=True)
    G = torch.zeros_like(x[..., :1])
    for _ in range(t):
        g = _check_grad(grad_fn(x), x)
        G = G + (g * g).sum(-1, keepdim=True)
        x = x - torch.where(G > 0, e / G.sqrt(), torch.zeros_like(G)) * g
    return x


def _fuzz_problem() -> RobustRegression:
    return robust_regression(0.3, n=50, d=3, device="cpu")


# Cheap arguments for tests/test_api_fuzz.py (every public callable is fuzzed with bad values).
FUZZ_BASE = {
    "robust_regression": {"sigma": 0.3, "n": 50, "d": 3},
    "problem_grid": {"sigmas": [0.3], "cs": [1.0], "n": 50, "d": 3},
    "run_sgd": {"problem": _fuzz_problem(), "etas": [0.01], "T": 8, "seeds": 2},
    "grasp": {"problem": _fuzz_problem(), "T": 64, "seeds": 2},
    "anchored_sgd": {"problem": _fuzz_problem(), "T": 64, "seeds": 2},
    "oracle": {"problem": _fuzz_problem(), "T": 4, "seeds": 2},
    "exact_anchor": {"problem": _fuzz_problem()},
    "grad_norm": {"problem": _fuzz_problem(), "x": torch.zeros(1, 2, 3, dtype=_DT)},
    "dog": {"grad_fn": lambda x: x - 0.5, "x0": torch.ones(3, dtype=_DT), "T": 5},
    "adagrad_norm": {"grad_fn": lambda x: x - 0.5, "x0": torch.ones(3, dtype=_DT), "T": 5},
    "unbiased_sq_norm": {"per_sample_grads": torch.ones(4, 3, dtype=_DT)},
}
