r"""Momentum LMO optimizers under τ-nice sampling, and the (τ, α, γ) sample-complexity map.

Everything here is **our reconstruction** from the abstract of Shulgin, Awad, Richtárik & Gorbunov (ICML 2026):
the update convention, the problems and the metric are ours.

The method (fresh-gradient weight α; the classical EMA coefficient is β = 1 − α):

.. math:: m_t = (1-\alpha)\,m_{t-1} + \alpha\, g_t \quad (m_{-1} = 0), \qquad
          x_{t+1} = x_t + \gamma\,\mathrm{LMO}(m_t), \qquad
          \mathrm{LMO}(m) = \arg\min_{\lVert d\rVert \le 1}\langle m, d\rangle,

with :math:`g_t = \frac1\tau\sum_{i\in S_t}\nabla f_i(x_t)` over a τ-nice sample :math:`S_t` (a uniform random
subset of size τ, drawn independently at every step). Three norms:

=========== ======================== ============================== =================
norm        LMO(m)                   dual norm ‖·‖_*                method
=========== ======================== ============================== =================
``l2``      −m/‖m‖₂                  ‖·‖₂                           normalised SGD-M
``linf``    −sign(m)                 ‖·‖₁                           sign-SGD-M
``spectral`` −UVᵀ (m = UΣVᵀ)         nuclear norm Σσᵢ               Muon
=========== ======================== ============================== =================

Problems are quadratic finite sums :math:`f(X) = \frac1{2n}\sum_i\lVert X a_i - b_i\rVert^2` with X of shape
(p, q) (p = 1: least squares ‖Ax − b‖²/(2n)), so a minibatch gradient is :math:`X H_S - C_S` with
:math:`H_S = \frac1\tau\sum_{S} a_i a_i^\top` and :math:`C_S = \frac1\tau\sum_S b_i a_i^\top`; the sweep draws
:math:`(H_S, C_S)` once per (step, seed) and shares them across every (α, γ) cell (common random numbers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import resolve_device, to_numpy

__all__ = [
    "NORMS", "Problem", "HeatmapResult", "CellRun", "lmo", "dual_norm", "newton_schulz", "tau_nice_indices",
    "tau_nice_variance", "least_squares", "matrix_regression", "heatmap", "run_cell",
]

NORMS = ("l2", "linf", "spectral")
NS_COEFFS = (3.4445, -4.7750, 2.0315)  # the quintic Newton–Schulz coefficients published with Muon
_TINY = 1e-30
MAX_N = 1 << 20
MAX_DIM = 4096


def _norm_name(norm: str) -> str:
    return validate.one_of("norm", norm, NORMS)


def _matrix_check(name: str, t: torch.Tensor) -> None:
    if t.ndim < 2:
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (the spectral norm needs a matrix, ndim ≥ 2)")


def lmo(m, norm: str = "l2") -> torch.Tensor:
    r"""Linear minimisation oracle :math:`\mathrm{LMO}(m) = \arg\min_{\lVert d\rVert\le 1}\langle m, d\rangle`.

    Batched: ``l2``/``linf`` act on the last dimension, ``spectral`` on the last two (a matrix per batch entry,
    exact polar factor by SVD). ``m = 0`` gives ``0`` (any unit-ball point is a minimiser; 0 keeps the iterate).
    ``linf`` returns −sign(m), which is 0 on zero coordinates (also a minimiser).
    """
    norm = _norm_name(norm)
    t = validate.finite_tensor("m", m)
    if t.ndim == 0:
        raise ValueError("Invalid m: a 0-d tensor (must have at least one dimension)")
    if norm == "l2":
        nrm = torch.linalg.vector_norm(t, dim=-1, keepdim=True)
        return -t / nrm.clamp_min(_TINY) * (nrm > 0)
    if norm == "linf":
        return -torch.sign(t)
    _matrix_check("m", t)
    if t.numel() == 0:
        return t.clone()
    u, s, vh = torch.linalg.svd(t, full_matrices=False)
    keep = (s > s.amax(dim=-1, keepdim=True) * (max(t.shape[-2:]) * torch.finfo(t.dtype).eps)).to(t.dtype)
    return -(u * keep.unsqueeze(-2)) @ vh


def dual_norm(g, norm: str = "l2") -> torch.Tensor:
    r"""Dual norm :math:`\lVert g\rVert_* = \max_{\lVert d\rVert\le1}\langle g, d\rangle = -\langle g,
    \mathrm{LMO}(g)\rangle`: ℓ2 → ℓ2, ℓ∞ → ℓ1 (last dimension), spectral → nuclear (last two, by SVD)."""
    norm = _norm_name(norm)
    t = validate.finite_tensor("g", g)
    if t.ndim == 0:
        raise ValueError("Invalid g: a 0-d tensor (must have at least one dimension)")
    return _dual(t, norm)


def _dual(t: torch.Tensor, norm: str) -> torch.Tensor:
    if norm == "l2":
        return torch.linalg.vector_norm(t, dim=-1)
    if norm == "linf":
        return t.abs().sum(-1)
    _matrix_check("g", t)
    return torch.linalg.svdvals(t).sum(-1)


def newton_schulz(m, steps: int = 5) -> torch.Tensor:
    r"""Approximate polar factor :math:`UV^\top` of m (last two dims) by the quintic Newton–Schulz iteration
    :math:`X \leftarrow aX + (bA + cA^2)X`, :math:`A = XX^\top`, (a, b, c) = (3.4445, −4.7750, 2.0315), from
    :math:`X_0 = m/\lVert m\rVert_F`. Its singular values land in roughly [0.7, 1.2] rather than exactly 1: Muon's
    practical LMO is :math:`-\mathrm{NS}(m)`. Runs in m's dtype (float64 here; Muon itself uses bfloat16)."""
    t = validate.finite_tensor("m", m)
    _matrix_check("m", t)
    k = validate.integer("steps", steps, 0, 100)
    return _ns(t, k)


def _ns(t: torch.Tensor, k: int = 5) -> torch.Tensor:
    a, b, c = NS_COEFFS
    tall = t.shape[-2] > t.shape[-1]
    x = t.mT if tall else t
    x = x / torch.linalg.matrix_norm(x, keepdim=True).clamp_min(_TINY)
    for _ in range(k):
        A = x @ x.mT
        x = a * x + (b * A + c * A @ A) @ x
    return x.mT if tall else x


def tau_nice_indices(n: int, tau: int, rows: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``rows`` independent τ-nice samples (uniform τ-subsets of {0, …, n−1}) as an int64 tensor (rows, τ), on CPU.

    Floyd's algorithm, vectorised over rows: for j = n−τ, …, n−1 draw t ~ U{0..j}; keep t unless already taken,
    else keep j. Every τ-subset has probability 1/C(n, τ); cost O(rows·τ²)."""
    n = validate.integer("n", n, 2, MAX_N)
    tau = validate.integer("tau", tau, 1, n)
    rows = validate.integer("rows", rows, 1)
    validate.memory_guard(rows * tau * 8 * 3, lower="rows or tau")
    out = torch.empty(rows, tau, dtype=torch.int64)
    for k, j in enumerate(range(n - tau, n)):
        t = torch.randint(0, j + 1, (rows,), generator=generator)
        if k:
            taken = (out[:, :k] == t[:, None]).any(1)
            t = torch.where(taken, torch.full_like(t, j), t)
        out[:, k] = t
    return out


def tau_nice_variance(per_sample_grads, tau: int) -> float:
    r"""Closed form of the τ-nice minibatch variance :math:`\mathbb E\lVert g_S - \bar g\rVert_2^2 =
    \frac{n-\tau}{\tau(n-1)}\,\frac1n\sum_i\lVert g_i - \bar g\rVert_2^2` (sampling without replacement) for
    per-sample gradients of shape (n, …)."""
    G = validate.finite_tensor("per_sample_grads", per_sample_grads)
    if G.ndim < 1 or G.shape[0] < 2:
        raise ValueError(f"Invalid per_sample_grads: shape {tuple(G.shape)} (need n ≥ 2 rows)")
    n = G.shape[0]
    tau = validate.integer("tau", tau, 1, n)
    G = G.reshape(n, -1)
    s1 = float(((G - G.mean(0)) ** 2).sum(1).mean())
    return (n - tau) / (tau * (n - 1)) * s1


@dataclass(frozen=True)
class Problem:
    r"""A quadratic finite sum :math:`f(X) = \frac1{2n}\sum_i\lVert X a_i - b_i\rVert^2`, X ∈ ℝ^{p×q}.

    ``a`` (n, q) features, ``b`` (n, p) targets; ``H = AᵀA/n`` (q, q), ``C = BᵀA/n`` (p, q), so ∇f(X) = XH − C;
    ``x_star`` the minimiser, ``f_star`` = f(x_star), ``L`` = λ_max(H) (smoothness in the Frobenius norm)."""

    name: str
    a: torch.Tensor
    b: torch.Tensor
    H: torch.Tensor
    C: torch.Tensor
    x_star: torch.Tensor
    f_star: float
    L: float

    @property
    def n(self) -> int:
        return int(self.a.shape[0])

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.b.shape[1]), int(self.a.shape[1])

    def grad(self, x: torch.Tensor) -> torch.Tensor:
        """Full gradient ∇f(X) = XH − C (batched over leading dimensions)."""
        q = self.H.shape[0]
        return (x.reshape(-1, q) @ self.H).reshape(x.shape) - self.C

    def loss(self, x: torch.Tensor) -> torch.Tensor:
        """f(X), batched over leading dimensions."""
        r = x @ self.a.T - self.b.T  # (..., p, n)
        return 0.5 * (r * r).sum((-1, -2)) / self.n

    def per_sample_grads(self, x: torch.Tensor | None = None) -> torch.Tensor:
        """∇f_i(X) = (X a_i − b_i) a_iᵀ for all i at X (default x_star): shape (n, p, q)."""
        x = self.x_star if x is None else x
        r = self.a @ x.T - self.b  # (n, p)
        return r[:, :, None] * self.a[:, None, :]

    def sigma1(self, norm: str = "l2") -> float:
        r""":math:`\sigma_1 = (\frac1n\sum_i\lVert\nabla f_i(x^*)\rVert_*^2)^{1/2}` — the single-sample noise at x*
        in the dual norm (ℓ2 → Frobenius for matrices)."""
        norm = _norm_name(norm)
        d = _dual_param(self.per_sample_grads(), norm)
        return float((d * d).mean().sqrt())


def _make_problem(name: str, a: torch.Tensor, b: torch.Tensor) -> Problem:
    n = a.shape[0]
    H = a.T @ a / n
    C = b.T @ a / n
    x_star = torch.linalg.solve(H, C.T).T
    r = a @ x_star.T - b
    f_star = float(0.5 * (r * r).sum() / n)
    L = float(torch.linalg.eigvalsh(H)[-1])
    return Problem(name, a, b, H, C, x_star, f_star, L)


def _data(n, q, p, noise, seed, device):
    n = validate.integer("n", n, 2, MAX_N)
    q = validate.integer("q", q, 1, MAX_DIM)
    p = validate.integer("p", p, 1, MAX_DIM)
    noise = validate.number("noise", noise, 0.0, 1e6)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    if n < q:
        raise ValueError(f"Invalid n: {n} (must be ≥ the feature dimension {q}, so that H is invertible)")
    validate.memory_guard(n * (p + q) * 8 * 4 + p * q * 8, lower="n or the dimensions")
    gen = torch.Generator().manual_seed(seed)
    x_true = torch.randn(p, q, generator=gen, dtype=torch.float64)
    a = torch.randn(n, q, generator=gen, dtype=torch.float64)
    b = a @ x_true.T + noise * torch.randn(n, p, generator=gen, dtype=torch.float64)
    dev = resolve_device(device)
    return a.to(dev), b.to(dev)


def least_squares(n: int = 1024, d: int = 16, noise: float = 1.0, seed: int = 0,
                  device: str | torch.device | None = None) -> Problem:
    r"""Least squares :math:`f(x) = \lVert Ax - b\rVert^2/(2n)`, A and x_true ~ N(0, I), b = A x_true + σξ
    (label noise σ = ``noise``), x as a 1 × d row. Seeded (data drawn on the CPU, then moved to the device)."""
    a, b = _data(n, d, 1, noise, seed, device)
    return _make_problem("least squares", a, b)


def matrix_regression(n: int = 1024, p: int = 8, q: int = 8, noise: float = 1.0, seed: int = 0,
                      device: str | torch.device | None = None) -> Problem:
    r"""Matrix regression :math:`f(X) = \frac1{2n}\sum_i\lVert Xa_i - b_i\rVert^2`, X ∈ ℝ^{p×q}, a_i ~ N(0, I_q),
    X_true ~ N(0, I), b_i = X_true a_i + σξ_i."""
    a, b = _data(n, q, p, noise, seed, device)
    return _make_problem("matrix regression", a, b)


class HeatmapResult(NamedTuple):
    """Samples-to-ε over the (τ, α, γ) grid (``inf``: censored, i.e. not reached by min(budget, 2·best)).

    ``samples`` (τ, α, γ); ``best`` = min over γ (τ, α); ``n_star`` = min over (α, γ) per τ; ``alpha_star`` the
    α attaining it (per τ; ``inf`` if every cell of that τ is censored — never NaN); ``eps`` the threshold ε in
    the dual norm; ``grad0`` = ‖∇f(x₀)‖_*; ``cap`` the final censoring level in samples."""

    norm: str
    taus: np.ndarray
    alphas: np.ndarray
    gammas: np.ndarray
    samples: np.ndarray
    best: np.ndarray
    n_star: np.ndarray
    alpha_star: np.ndarray
    eps: float
    grad0: float
    cap: float
    seeds: int


def _batch_stats(prob: Problem, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(H_S, C_S) for index sets idx (..., τ)."""
    a = prob.a[idx]  # (..., τ, q)
    b = prob.b[idx]  # (..., τ, p)
    tau = idx.shape[-1]
    return a.mT @ a / tau, b.mT @ a / tau


def _direction(m: torch.Tensor, norm: str, orth: str) -> torch.Tensor:
    if norm == "l2":  # ℓ2 of each parameter (a 1×d row, or Frobenius for matrices)
        return m / torch.linalg.vector_norm(m, dim=(-2, -1), keepdim=True).clamp_min(_TINY)
    if norm == "linf":
        return torch.sign(m)
    if orth == "ns":
        return newton_schulz(m)
    u, _, vh = torch.linalg.svd(m, full_matrices=False)
    return u @ vh


def _dual_param(g: torch.Tensor, norm: str) -> torch.Tensor:
    if norm == "l2":
        return torch.linalg.vector_norm(g, dim=(-2, -1))
    if norm == "linf":
        return torch.linalg.vector_norm(g, ord=1, dim=(-2, -1))
    # nuclear norm as Σ√λ(GᵀG): a batched 8×8 eigvalsh is ~1.6× faster than svdvals on the CPU
    small = g if g.shape[-1] <= g.shape[-2] else g.mT
    return torch.linalg.eigvalsh(small.mT @ small).clamp_min(0).sqrt().sum(-1)


def heatmap(problem: Problem, norm: str, taus=(1, 2, 4, 8, 16, 32, 64, 128), alphas=tuple(2.0**-k for k in range(8)),
            gammas=None, *, budget: int = 2**15, eps_rel: float = 0.1, seeds: int = 8, seed: int = 0,
            orth: str = "svd", chunk: int = 128, oracle: str = "tau-nice", censor: float | None = 2.0,
            per_tau: bool = False, device: str | torch.device | None = None) -> HeatmapResult:
    r"""Samples until :math:`\frac1T\sum_{t<T}\overline{\lVert\nabla f(x_t)\rVert_*} \le \varepsilon` (bar: mean
    over ``seeds`` runs; ε = ``eps_rel``·‖∇f(x₀)‖_*, x₀ = 0) for every (τ, α, γ) cell; N = τ·T.

    One tensor program: every (τ, seed, α, γ) cell advances in lockstep on the step clock (a τ-group leaves once
    τ·t passes the current cap); each (τ, seed) draws one τ-nice batch per step, shared by all (α, γ) cells.
    Censoring: a cell not done by min(budget, 2·best) samples, best = the fastest cell of the map, is ``inf``
    (the cap only shrinks as cells finish, so the result does not depend on the order of evaluation).
    ``orth`` ("svd" | "ns") picks the exact or the Newton–Schulz polar factor for ``spectral``.
    ``oracle="full"`` replaces every τ-nice minibatch gradient by the exact gradient ∇f(x_t) while still charging
    τ samples per step — the noise-free control, in which the trajectory, and so α*, cannot depend on τ.
    ``oracle="single"`` uses a single-sample gradient (the τ = 1 noise) at every τ, still charging τ samples per
    step — the control in which only the step count per sample, not the noise, changes with τ.
    ``censor`` is the factor of the 2·best rule (``None``: censor at the budget only).
    ``per_tau=True`` applies the budget and the rule to each τ on its own, in steps: τ runs up to budget/τ₁ steps
    (the first τ's budget) and stops at ``censor`` × the steps of *its own* fastest cell. Hits are recorded in
    step order, so a τ's first hit is its fastest cell: with any ``censor`` ≥ 1 its N*(τ) and α*(τ) are exactly
    those of an uncensored run (same batches), and no τ whose best cell is reached within budget/τ₁ steps is
    censored. ``cap`` is then the largest τ's level.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a Problem from least_squares(...) or "
                        "matrix_regression(...))")
    norm = _norm_name(norm)
    validate.one_of("orth", orth, ("svd", "ns"))
    validate.one_of("oracle", oracle, ("tau-nice", "full", "single"))
    cf = math.inf if censor is None else validate.number("censor", censor, 1.0, 1e6)
    if not isinstance(per_tau, bool):
        raise TypeError(f"Invalid per_tau: {per_tau!r} (must be a bool)")
    n = problem.n
    taus_l = [validate.integer("taus", t, 1, n) for t in _as_list("taus", taus)]
    alphas_l = [validate.number("alphas", a, 0.0, 1.0, low_open=True) for a in _as_list("alphas", alphas)]
    gammas_l = ([float(g) for g in np.logspace(-3, 0, 13)] if gammas is None else
                [validate.number("gammas", g, 0.0, 1e6, low_open=True) for g in _as_list("gammas", gammas)])
    if sorted(taus_l) != taus_l or len(set(taus_l)) != len(taus_l):
        raise ValueError(f"Invalid taus: {taus_l} (must be strictly increasing)")
    budget = validate.integer("budget", budget, 1, 2**40)
    eps_rel = validate.number("eps_rel", eps_rel, 0.0, 1.0, low_open=True)
    S = validate.integer("seeds", seeds, 1, 4096)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    chunk = validate.integer("chunk", chunk, 1, 1 << 16)
    p, q = problem.shape
    G, C = len(taus_l), len(alphas_l) * len(gammas_l)
    validate.memory_guard(G * S * C * p * q * 8 * 8 + chunk * G * S * (q * q + p * q + max(taus_l) * (p + q)) * 8
                          + budget / taus_l[0] * 8, lower="seeds, the grid sizes, chunk or budget")
    dev = problem.a.device
    dt = problem.a.dtype
    al = torch.tensor(alphas_l, dtype=dt, device=dev).repeat_interleave(len(gammas_l)).reshape(C, 1, 1)
    ga = torch.tensor(gammas_l, dtype=dt, device=dev).repeat(len(alphas_l)).reshape(C, 1, 1)
    x = torch.zeros(G, S, C, p, q, dtype=dt, device=dev)
    m = torch.zeros_like(x)
    grad0 = float(_dual_param(problem.grad(x[0, 0, 0]), norm))
    eps = eps_rel * grad0
    run_sum = torch.full((G, C), grad0, dtype=dt, device=dev)  # Σ_{t' ≤ t} of the seed-averaged ‖∇f(x_t')‖_*
    hit = torch.full((G, C), -1, dtype=torch.int64, device=dev)  # first T with running mean ≤ ε
    gens = [torch.Generator().manual_seed(seed * 1_000_003 + 7919 * j + 1) for j in range(G)]
    tau_t = torch.tensor(taus_l, dtype=torch.float64)
    best = math.inf
    best_steps = np.full(G, math.inf)  # per_tau: each τ's fastest cell, in steps
    t = 0
    while True:
        if per_tau:
            steps_cap = float(np.minimum(budget / taus_l[0], cf * best_steps).max())
            active = G if t < steps_cap else 0  # every τ runs until the last one reaches its own cap
            cap = steps_cap * taus_l[0]
        else:
            cap = min(float(budget), cf * best)
            active = int((tau_t * t < cap).sum())  # taus ascending: the active groups are a prefix
        if active == 0:
            break
        K = min(chunk, max(1, math.ceil(cap / taus_l[0]) - t))
        if oracle == "full":
            Hk = problem.H.expand(K, active, S, 1, q, q)
            Ck = problem.C.expand(K, active, S, 1, p, q)
        else:
            Hs, Cs = [], []
            for j in range(active):
                tb = 1 if oracle == "single" else taus_l[j]
                idx = tau_nice_indices(n, tb, K * S, gens[j]).to(dev).reshape(K, S, tb)
                H, Cb = _batch_stats(problem, idx)
                Hs.append(H)
                Cs.append(Cb)
            Hk = torch.stack(Hs, 1).unsqueeze(3)  # (K, active, S, 1, q, q)
            Ck = torch.stack(Cs, 1).unsqueeze(3)  # (K, active, S, 1, p, q)
        xa, ma = x[:active], m[:active]
        xf = xa.view(active * S, C * p, q)  # the cells' iterates as one (C·p × q) block per (τ, seed)
        Hf = Hk.reshape(K, active * S, q, q)
        rec = torch.empty(K, active, C, dtype=dt, device=dev)
        Hfull, Cfull = problem.H, problem.C
        for k in range(K):
            g = torch.bmm(xf, Hf[k]).view(active, S, C, p, q).sub_(Ck[k])
            ma.lerp_(g, al)
            xa.addcmul_(_direction(ma, norm, orth), ga, value=-1.0)
            full = (xf.reshape(-1, q) @ Hfull).view(active, S, C, p, q).sub_(Cfull)
            torch.mean(_dual_param(full, norm), 1, out=rec[k])
        # running means after the K steps: T = t+2 … t+K+1 iterates x_0..x_{T-1}
        cums = run_sum[:active] + torch.cumsum(rec, 0)
        T_axis = torch.arange(t + 2, t + K + 2, dtype=dt, device=dev).reshape(K, 1, 1)
        ok = cums / T_axis <= eps
        first = torch.where(ok.any(0), ok.to(torch.int8).argmax(0) + t + 2, -1)
        h = hit[:active]
        h.copy_(torch.where((h < 0) & (first > 0), first, h))
        run_sum[:active] = cums[-1]
        t += K
        done = hit >= 0
        if bool(done[:active].all()):  # every cell still running has its hitting time: nothing left to learn
            break
        if bool(done.any()):
            best = min(best, float((hit.to(torch.float64) * tau_t.to(dev).reshape(G, 1))[done].min()))
            if per_tau:
                hs = to_numpy(torch.where(done, hit.to(torch.float64), math.inf))
                best_steps = np.minimum(best_steps, hs.min(1))
    N = torch.where(hit > 0, hit.to(torch.float64) * tau_t.to(dev).reshape(G, 1), torch.full_like(
        hit, 0, dtype=torch.float64) + math.inf)
    samples = to_numpy(N).reshape(G, len(alphas_l), len(gammas_l))
    if per_tau:
        caps = np.array(taus_l, float) * np.minimum(budget / taus_l[0], cf * best_steps)
        cap = float(caps.max())
        samples = np.where(samples <= caps.reshape(G, 1, 1), samples, np.inf)
    else:
        cap = min(float(budget), cf * best)
        samples = np.where(samples <= cap, samples, np.inf)
    best_g = samples.min(2)
    n_star = best_g.min(1)
    a_arr = np.array(alphas_l)
    alpha_star = np.array([a_arr[int(np.argmin(r))] if np.isfinite(r).any() else np.inf for r in best_g])
    return HeatmapResult(norm, np.array(taus_l), a_arr, np.array(gammas_l), samples, best_g, n_star, alpha_star,
                         eps, grad0, cap, S)


def _as_list(name: str, v) -> list:
    if isinstance(v, torch.Tensor):
        v = to_numpy(v)
    if isinstance(v, np.ndarray):
        v = v.reshape(-1).tolist()
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, (list, tuple)) or not v:
        raise TypeError(f"Invalid {name}: {v!r} (must be a non-empty sequence of numbers)")
    if len(v) > 4096:
        raise ValueError(f"Invalid {name}: {len(v)} values (at most 4096)")
    return list(v)


class CellRun(NamedTuple):
    """One cell's run: ‖∇f(x_t)‖_* for t = 0..T (``grad_norm``), its running mean, ε and samples-to-ε."""

    samples_axis: np.ndarray
    grad_norm: np.ndarray
    running_mean: np.ndarray
    eps: float
    hit_samples: float


def run_cell(problem: Problem, norm: str, tau: int, alpha: float, gamma: float, *, samples: int = 2**12,
             eps_rel: float = 0.1, seed: int = 0) -> CellRun:
    """One (τ, α, γ) cell, one seed, in numpy (the widget's fast path; ≤ 2¹⁶ samples)."""
    if not isinstance(problem, Problem):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a Problem)")
    norm = _norm_name(norm)
    tau = validate.integer("tau", tau, 1, problem.n)
    alpha = validate.number("alpha", alpha, 0.0, 1.0, low_open=True)
    gamma = validate.number("gamma", gamma, 0.0, 1e6, low_open=True)
    samples = validate.integer("samples", samples, 1, 2**16)
    eps_rel = validate.number("eps_rel", eps_rel, 0.0, 1.0, low_open=True)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    T = max(1, samples // tau)
    idx_all = to_numpy(tau_nice_indices(problem.n, tau, T, torch.Generator().manual_seed(seed)))
    A, B = to_numpy(problem.a), to_numpy(problem.b)
    H, Cm = to_numpy(problem.H), to_numpy(problem.C)
    p, q = problem.shape
    x = np.zeros((p, q))
    m = np.zeros((p, q))
    xs = np.empty((T + 1, p, q))
    xs[0] = x
    for t in range(T):
        a, b = A[idx_all[t]], B[idx_all[t]]
        g = ((x @ a.T - b.T) @ a) / tau
        m += alpha * (g - m)
        if norm == "l2":
            nm = float(np.sqrt((m * m).sum()))
            d = m / nm if nm > 0 else m * 0
        elif norm == "linf":
            d = np.sign(m)
        else:
            u, _, vh = np.linalg.svd(m, full_matrices=False)
            d = u @ vh
        x = x - gamma * d
        xs[t + 1] = x
    G = xs @ H - Cm  # full gradients along the path, in one batched product
    if norm == "l2":
        gn = np.sqrt((G * G).sum((1, 2)))
    elif norm == "linf":
        gn = np.abs(G).sum((1, 2))
    else:
        gn = np.linalg.svd(G, compute_uv=False).sum(-1)
    run = np.cumsum(gn) / np.arange(1, T + 2)
    eps = eps_rel * gn[0]
    ok = np.nonzero(run[1:] <= eps)[0]
    hit = float((ok[0] + 2) * tau) if ok.size else math.inf
    return CellRun(np.arange(T + 1) * tau, gn, run, float(eps), hit)
