"""The closed forms of the chapter and their executed derivations (sympy).

Numerics (validated public API):

* :func:`entropic_risk` — Lemma 4.1's value ``R_η = (1/η) log Σ_b e^{η L_b}`` [paper], log-space.
* :func:`entropic_weights` — its maximiser ``q_η(b) = e^{η L_b} / Σ_j e^{η L_j}`` (softmax) [paper].
* :func:`exp3p_weights` — Prompt-GDRO's ``ω = exp(η_q·clip(S, −C, C))`` and ``q = (1−γ) ω/Σω + γ/B`` [paper].
* :func:`neyman_allocation` — Theorem 4.2, ``n*_b = n̄ √v_b / Σ_j q̄_j √v_j`` [paper].
* :func:`allocate_rollouts` — the integer version: arms ``n_b`` minimising ``Σ_b c_b v_b/n_b`` subject to
  ``Σ_b c_b n_b = n̄ Σ_b c_b`` exactly (dynamic programming over bins) [reconstruction].
* :func:`best_response_arm` — ``argmin_{n ∈ arms} v/n + μ n`` (ties → fewer rollouts), the staircase [paper].
* :func:`pass_at_k` — ``1 − (1 − p)^k`` for a prompt solved with probability ``p`` per rollout.

Derivations (sympy, each returns its checks): :func:`derive_entropic_lemma`, :func:`derive_sqrt_law`,
:func:`derive_staircase`, :func:`derive_zero_sum_advantage`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
import sympy as sp
import torch

from ..validate import finite_tensor, integer, memory_guard, number

__all__ = [
    "EntropicLemma",
    "SqrtLaw",
    "Staircase",
    "ZeroSumAdvantage",
    "allocate_rollouts",
    "best_response_arm",
    "brute_force_allocation",
    "derive_entropic_lemma",
    "derive_sqrt_law",
    "derive_staircase",
    "derive_zero_sum_advantage",
    "entropic_risk",
    "entropic_weights",
    "exp3p_weights",
    "neyman_allocation",
    "numeric_allocation",
    "numeric_entropic_max",
    "pass_at_k",
]


# ----------------------------------------------------------------------------------------------- numerics
def _losses(L: Any) -> torch.Tensor:
    t = finite_tensor("L", L)
    if t.ndim == 0 or t.shape[-1] == 0:
        raise ValueError(f"Invalid L: shape {tuple(t.shape)} (must have a non-empty last dimension of bins)")
    return t


def entropic_risk(L: Any, eta: float) -> torch.Tensor:
    r"""Lemma 4.1: :math:`\mathcal R_\eta = \max_{q\in\Delta_B}\{\sum_b q_b L_b + H(q)/\eta\}
    = \frac1\eta\log\sum_b e^{\eta L_b}` over the last dimension of ``L`` (computed as a log-sum-exp)."""
    t = _losses(L)
    e = number("eta", eta, 0.0, math.inf, low_open=True, high_open=True)
    return torch.logsumexp(e * t, dim=-1) / e


def entropic_weights(L: Any, eta: float) -> torch.Tensor:
    r"""The maximiser of Lemma 4.1, :math:`q_\eta(b) = e^{\eta L_b}/\sum_j e^{\eta L_j}` (last dimension)."""
    t = _losses(L)
    e = number("eta", eta, 0.0, math.inf, low_open=True, high_open=True)
    return torch.softmax(e * t, dim=-1)


def exp3p_weights(scores: Any, *, eta_q: float = 0.1, gamma: float = 0.15,
                  clip: float = 5.0) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Prompt-GDRO's adversary: :math:`\omega_b = \exp(\eta_q\,\mathrm{clip}(S_b, -C, C))` and
    :math:`q_b = (1-\gamma)\,\omega_b/\sum_j\omega_j + \gamma/B` over the last dimension of ``scores`` ``S``."""
    s = finite_tensor("scores", scores)
    if s.ndim == 0 or s.shape[-1] == 0:
        raise ValueError(f"Invalid scores: shape {tuple(s.shape)} (must have a non-empty last dimension of bins)")
    e = number("eta_q", eta_q, 0.0, 1e3, low_open=True)
    g = number("gamma", gamma, 0.0, 1.0, high_open=True)
    c = number("clip", clip, 0.0, 1e3, low_open=True)
    z = e * s.clamp(-c, c)
    omega = torch.exp(z)
    B = s.shape[-1]
    q = (1.0 - g) * torch.softmax(z, dim=-1) + g / B
    return omega, q


def _simplex(name: str, q: Any) -> torch.Tensor:
    t = finite_tensor(name, q, ndim=1)
    if t.numel() == 0 or bool((t < 0).any()) or abs(float(t.sum()) - 1.0) > 1e-9:
        raise ValueError(f"Invalid {name}: must be a non-empty probability vector (entries ≥ 0 summing to 1)")
    return t


def _nonneg(name: str, v: Any, like: torch.Tensor | None = None) -> torch.Tensor:
    t = finite_tensor(name, v, ndim=1)
    if bool((t < 0).any()):
        raise ValueError(f"Invalid {name}: has negative entries (must be ≥ 0)")
    if like is not None and t.shape != like.shape:
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (must match shape {tuple(like.shape)})")
    return t


def neyman_allocation(q: Any, v: Any, n_bar: float) -> torch.Tensor:
    r"""Theorem 4.2: :math:`\min_n \sum_b \bar q_b v_b/n_b` s.t. :math:`\sum_b \bar q_b n_b = \bar n` is solved by
    :math:`n^*_b = \bar n\sqrt{v_b}/\sum_j \bar q_j\sqrt{v_j}` (uniform ``n̄`` when every ``v_b`` is 0)."""
    qt = _simplex("q", q)
    vt = _nonneg("v", v, qt)
    n = number("n_bar", n_bar, 0.0, 1e6, low_open=True)
    s = torch.sqrt(vt)
    den = float((qt * s).sum())
    if den <= 0.0:
        return torch.full_like(vt, n)
    return n * s / den


def _arms(arms: Any) -> list[int]:
    if isinstance(arms, (str, bytes)) or not isinstance(arms, Iterable):
        if isinstance(arms, torch.Tensor) or isinstance(arms, np.ndarray):
            pass
        else:
            raise TypeError(f"Invalid arms: {arms!r} (must be an iterable of integers ≥ 1)")
    vals = finite_tensor("arms", arms).reshape(-1)
    if vals.numel() == 0:
        raise ValueError("Invalid arms: empty (must hold at least one integer ≥ 1)")
    if vals.numel() > 1000:
        raise ValueError(f"Invalid arms: {vals.numel()} arms (must be at most 1000)")
    out = sorted({integer("arms", float(a), 1, 10_000) for a in vals.tolist()})
    return out


def dp_allocate(counts: torch.Tensor, cost: torch.Tensor, arms: list[int], n_bar: int) -> torch.Tensor:
    """Batched DP (no validation): for each row ``s`` choose one arm per bin minimising
    ``Σ_b counts[s,b]·cost[s,b,a]`` subject to ``Σ_b counts[s,b]·arm = n_bar·Σ_b counts[s,b]`` exactly.

    ``counts`` (S, B) integer-valued, ``cost`` (S, B, A); returns the arm values (S, B) (``n_bar`` where a bin is
    empty). Feasible whenever ``n_bar`` is an arm. Ties go to the lower arm index (fewer rollouts).
    """
    S, B = counts.shape
    dev = counts.device
    a = torch.tensor(arms, device=dev, dtype=torch.long)
    cnt = counts.long()
    cap = int(cnt.sum(1).max().item()) * n_bar  # arms ≥ 1 consume ≥ 0, so partial sums above the target are dead
    inf = torch.tensor(math.inf, device=dev, dtype=cost.dtype)
    best = torch.full((S, cap + 1), math.inf, device=dev, dtype=cost.dtype)
    best[:, 0] = 0.0
    cols = torch.arange(cap + 1, device=dev)
    choice = torch.zeros((S, B, cap + 1), dtype=torch.long, device=dev)
    for b in range(B):
        use = cnt[:, b:b + 1, None] * a[None, None, :]  # (S, 1, A) rollouts this bin consumes
        src = cols[None, :, None] - use  # (S, C, A)
        ok = src >= 0
        prev = torch.gather(best, 1, src.clamp(min=0).reshape(S, -1)).reshape(S, cap + 1, len(arms))
        tot = torch.where(ok, prev + (cnt[:, b, None] * cost[:, b, :]).unsqueeze(1), inf)
        best, choice[:, b] = tot.min(dim=2)
    target = n_bar * cnt.sum(1)
    out = torch.empty((S, B), dtype=torch.long, device=dev)
    c = target.clone()
    for b in range(B - 1, -1, -1):
        k = choice[torch.arange(S, device=dev), b, c]
        out[:, b] = a[k]
        c = c - cnt[:, b] * a[k]
    return torch.where(cnt > 0, out, torch.full_like(out, n_bar))


def allocate_rollouts(counts: Any, v: Any, n_bar: int, arms: Any = range(2, 13)) -> np.ndarray:
    r"""Integer Rollout-GDRO allocation [reconstruction of the paper's DP]: arms :math:`n_b \in` ``arms`` minimising
    :math:`\sum_b c_b v_b/n_b` subject to :math:`\sum_b c_b n_b = \bar n\sum_b c_b` exactly (``c_b`` = prompts in
    bin ``b``). ``n_bar`` must be an arm (so uniform ``n̄`` is feasible); empty bins get ``n̄``."""
    ct = _nonneg("counts", counts)
    if bool((ct != ct.round()).any()):
        raise ValueError("Invalid counts: must be non-negative integers")
    vt = _nonneg("v", v, ct)
    ar = _arms(arms)
    nb = integer("n_bar", n_bar, 1, 10_000)
    if nb not in ar:
        raise ValueError(f"Invalid n_bar: {n_bar!r} (must be one of the arms {ar})")
    total = float(ct.sum())
    memory_guard(8.0 * (total * max(ar) + 1) * len(ar) * (ct.numel() + 3), lower="counts or arms")
    a = torch.tensor(ar, dtype=torch.float64)
    cost = (vt[:, None] / a[None, :])[None]
    out = dp_allocate(ct[None].round().long(), cost, ar, nb)[0]
    return np.asarray(out.tolist(), dtype=np.int64)


def best_response_arm(v: Any, mu: float, arms: Any = range(2, 13)) -> np.ndarray:
    r"""The discrete best response :math:`n_b(\mu) = \arg\min_{n\in\text{arms}} v_b/n + \mu n` (ties → fewer
    rollouts): a staircase in μ that steps from ``n_k`` to ``n_{k+1}`` at :math:`\mu = v/(n_k n_{k+1})`."""
    vt = finite_tensor("v", v).reshape(-1)
    if bool((vt < 0).any()):
        raise ValueError("Invalid v: has negative entries (must be ≥ 0)")
    m = number("mu", mu, 0.0, math.inf, high_open=True)
    ar = _arms(arms)
    a = torch.tensor(ar, dtype=torch.float64)
    obj = vt[:, None] / a[None, :] + m * a[None, :]
    k = torch.argmin(obj, dim=1)  # first minimum = fewest rollouts among ties
    return np.asarray(a[k].tolist(), dtype=np.int64)


def pass_at_k(p: Any, k: int) -> torch.Tensor:
    r"""pass@k of a prompt solved with probability ``p`` per rollout: :math:`1 - (1-p)^k` (independent rollouts)."""
    t = finite_tensor("p", p)
    if bool(((t < 0) | (t > 1)).any()):
        raise ValueError("Invalid p: must lie in [0, 1]")
    kk = integer("k", k, 1, 10**6)
    return 1.0 - (1.0 - t) ** kk


# ---------------------------------------------------------------------------------------------- sympy
class EntropicLemma(NamedTuple):
    """Lemma 4.1 by Lagrange on the simplex (B = 3, symbolic losses)."""

    maximiser: list[sp.Expr]  # q_b from the stationarity conditions
    softmax_gap: sp.Expr  # q_b − softmax_b, simplified (0 if the claim holds)
    value_gap: sp.Expr  # objective at the maximiser − (1/η) log Σ e^{ηL}, simplified
    gradient_gap: sp.Expr  # ∂R/∂L_b − q_b, simplified
    concave: bool  # the Hessian of the objective in q is negative definite (so the stationary point is the max)


def derive_entropic_lemma() -> EntropicLemma:
    """Maximise ``Σ q_b L_b − (1/η) Σ q_b log q_b`` subject to ``Σ q_b = 1``: stationarity gives
    ``L_b − (log q_b + 1)/η = λ``, i.e. ``q_b ∝ e^{η L_b}``; the value is the log-sum-exp and
    ``∂R_η/∂L_b = q_b`` (Danskin / direct differentiation)."""
    eta = sp.symbols("eta", positive=True)
    L = sp.symbols("L1:4", real=True)
    q = sp.symbols("q1:4", positive=True)
    lam = sp.symbols("lambda", real=True)
    obj = sum(qi * Li for qi, Li in zip(q, L, strict=True)) - sum(qi * sp.log(qi) for qi in q) / eta
    lag = obj - lam * (sum(q) - 1)
    stat = [sp.solve(sp.diff(lag, qi), qi)[0] for qi in q]  # q_b as a function of λ
    lam_sol = sp.solve(sp.Eq(sum(stat), 1), lam)[0]
    qs = [sp.simplify(s.subs(lam, lam_sol)) for s in stat]
    Z = sum(sp.exp(eta * Li) for Li in L)
    soft = [sp.exp(eta * Li) / Z for Li in L]
    softmax_gap = sp.simplify(sum((a - b) ** 2 for a, b in zip(qs, soft, strict=True)))
    R = sp.log(Z) / eta
    value_gap = sp.simplify(sp.expand_log(obj.subs(dict(zip(q, qs, strict=True))) - R, force=True))
    gradient_gap = sp.simplify(sum((sp.diff(R, Li) - s) ** 2 for Li, s in zip(L, soft, strict=True)))
    H = sp.hessian(obj, q)
    concave = all(sp.simplify(H[i, i]) == -1 / (eta * q[i]) for i in range(3)) and all(
        H[i, j] == 0 for i in range(3) for j in range(3) if i != j)
    return EntropicLemma(qs, softmax_gap, value_gap, gradient_gap, concave)


class SqrtLaw(NamedTuple):
    """Theorem 4.2 by Lagrange with the budget (B = 3 symbolic bins) and its Cauchy–Schwarz corollary."""

    allocation_gap: sp.Expr  # n_b from the KKT system − n̄ √v_b / Σ q √v (0 if the claim holds)
    budget_gap: sp.Expr  # Σ q n* − n̄
    varproxy_gap: sp.Expr  # VarProxy(n*) − (Σ q √v)² / n̄
    uniform_minus_sqrt: sp.Expr  # Σ q v / n̄ − (Σ q √v)² / n̄ ...
    as_variance: sp.Expr  # ... minus (1/n̄) Σ q (√v − Σ q √v)² (0: the gap is a variance, ≥ 0, = 0 iff v const.)
    shadow_price: sp.Expr  # argmin_n v/n + μ n


def derive_sqrt_law() -> SqrtLaw:
    """Minimise ``Σ q_b v_b/n_b`` subject to ``Σ q_b n_b = n̄``: ``−q_b v_b/n_b² + μ q_b = 0`` gives
    ``n_b = √(v_b/μ)``; the budget fixes ``√μ = Σ q √v / n̄``. With ``s_b = √v_b`` and Σq = 1 the gain over uniform
    is ``(Σ q s² − (Σ q s)²)/n̄ = Var_q(s)/n̄ ≥ 0`` (Cauchy–Schwarz), zero iff ``v`` is constant."""
    nbar, mu, n = sp.symbols("nbar mu n", positive=True)
    s = sp.symbols("s1:4", positive=True)  # s_b = √v_b
    q = sp.symbols("q1:4", positive=True)
    v = [si**2 for si in s]
    ns = sp.symbols("n1:4", positive=True)
    lag = sum(qi * vi / ni for qi, vi, ni in zip(q, v, ns, strict=True)) + mu * (
        sum(qi * ni for qi, ni in zip(q, ns, strict=True)) - nbar)
    n_of_mu = [sp.solve(sp.diff(lag, ni), ni)[0] for ni in ns]
    mu_sol = sp.solve(sp.Eq(sum(qi * x for qi, x in zip(q, n_of_mu, strict=True)), nbar), mu)[0]
    nstar = [sp.simplify(x.subs(mu, mu_sol)) for x in n_of_mu]
    qs = sum(qi * si for qi, si in zip(q, s, strict=True))
    alloc_gap = sp.simplify(sum((a - nbar * si / qs) ** 2 for a, si in zip(nstar, s, strict=True)))
    budget_gap = sp.simplify(sum(qi * x for qi, x in zip(q, nstar, strict=True)) - nbar)
    vp = sum(qi * vi / x for qi, vi, x in zip(q, v, nstar, strict=True))
    vp_gap = sp.simplify(vp - qs**2 / nbar)
    on_simplex = {q[2]: 1 - q[0] - q[1]}  # the identity below needs Σq = 1
    gain = (sum(qi * vi for qi, vi in zip(q, v, strict=True)) / nbar - qs**2 / nbar).subs(on_simplex)
    var = (sum(qi * (si - qs) ** 2 for qi, si in zip(q, s, strict=True)) / nbar).subs(on_simplex)
    vv = sp.symbols("v", positive=True)
    shadow = sp.solve(sp.diff(vv / n + mu * n, n), n)[0]
    return SqrtLaw(alloc_gap, budget_gap, vp_gap, sp.expand(gain), sp.simplify(sp.expand(gain - var)), shadow)


class Staircase(NamedTuple):
    """The discrete best response: ``v/n + μn ≤ v/(n+1) + μ(n+1)`` iff ``μ ≥ v/(n(n+1))``."""

    threshold: sp.Expr  # the μ at which the arms n and n+1 tie
    threshold_gap: sp.Expr  # threshold − v/(n(n+1))


def derive_staircase() -> Staircase:
    """Solve ``v/n + μ n = v/(n+1) + μ(n+1)`` for μ."""
    v, mu, n = sp.symbols("v mu n", positive=True)
    thr = sp.solve(sp.Eq(v / n + mu * n, v / (n + 1) + mu * (n + 1)), mu)[0]
    return Staircase(thr, sp.simplify(thr - v / (n * (n + 1))))


class ZeroSumAdvantage(NamedTuple):
    """Group-standardised advantages sum to zero, so the on-policy surrogate (ratio 1) is 0 for every prompt."""

    sum_of_advantages: sp.Expr  # Σ_j A_ij for symbolic rewards r_1..r_n, simplified
    n: int


def derive_zero_sum_advantage(n: int = 4) -> ZeroSumAdvantage:
    """``Σ_j (r_j − μ)/(σ + ε) = (Σ_j r_j − n μ)/(σ + ε) = 0`` for symbolic rewards (``n`` rollouts)."""
    m = integer("n", n, 1, 16)
    r = sp.symbols(f"r1:{m + 1}", real=True)
    eps = sp.symbols("epsilon", positive=True)
    mean = sum(r) / m
    sd = sp.sqrt(sum((x - mean) ** 2 for x in r) / m)
    return ZeroSumAdvantage(sp.simplify(sum((x - mean) / (sd + eps) for x in r)), m)


# ------------------------------------------------------------------------------- independent numerical checks
def numeric_entropic_max(L: Any, eta: float) -> tuple[np.ndarray, float]:
    r"""Maximise :math:`\sum_b q_bL_b + H(q)/\eta` over the simplex numerically (scipy SLSQP on a softplus-free
    parametrisation: q itself, bounds [0, 1], equality Σq = 1); returns ``(q, value)``. Independent of the closed
    form: used to check Lemma 4.1."""
    from scipy.optimize import minimize

    t = finite_tensor("L", L, ndim=1)
    if t.numel() == 0 or t.numel() > 1000:
        raise ValueError(f"Invalid L: {t.numel()} entries (must be 1..1000)")
    e = number("eta", eta, 1e-6, 1e6)
    x = np.asarray(t.tolist(), dtype=np.float64)
    B = x.size

    def neg(q: np.ndarray) -> float:
        qc = np.clip(q, 1e-300, None)
        return -(q @ x - (q * np.log(qc)).sum() / e)

    def grad(q: np.ndarray) -> np.ndarray:
        qc = np.clip(q, 1e-300, None)
        return -(x - (np.log(qc) + 1.0) / e)

    res = minimize(neg, np.full(B, 1.0 / B), jac=grad, method="SLSQP", bounds=[(1e-12, 1.0)] * B,
                   constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1.0, "jac": lambda q: np.ones(B)}],
                   options={"ftol": 1e-15, "maxiter": 500})
    return res.x, float(-res.fun)


def numeric_allocation(q: Any, v: Any, n_bar: float) -> np.ndarray:
    r"""Minimise :math:`\sum_b \bar q_b v_b/n_b` s.t. :math:`\sum_b \bar q_b n_b = \bar n`, ``n > 0``, numerically
    (scipy SLSQP in log-coordinates ``n = e^x``) — the independent check of Theorem 4.2. Needs every ``v_b > 0``."""
    from scipy.optimize import minimize

    qt = _simplex("q", q)
    vt = _nonneg("v", v, qt)
    if bool((vt <= 0).any()) or qt.numel() > 1000:
        raise ValueError("Invalid v: must be > 0 everywhere (and at most 1000 bins) for the numerical solve")
    n = number("n_bar", n_bar, 1e-6, 1e6)
    qq = np.asarray(qt.tolist())
    vv = np.asarray(vt.tolist())
    res = minimize(lambda x: float(qq @ (vv * np.exp(-x))), np.full(qq.size, math.log(n)),
                   jac=lambda x: -qq * vv * np.exp(-x), method="SLSQP",
                   constraints=[{"type": "eq", "fun": lambda x: qq @ np.exp(x) / n - 1.0,
                                 "jac": lambda x: qq * np.exp(x) / n}],
                   options={"ftol": 1e-16, "maxiter": 1000})
    return np.exp(res.x)


def brute_force_allocation(counts: Any, v: Any, n_bar: int, arms: Any = range(2, 13)) -> tuple[np.ndarray, float]:
    """Enumerate every arm tuple (≤ 10⁶ of them) and return the best at the exact budget and its objective
    ``Σ_b c_b v_b/n_b`` — the check of :func:`allocate_rollouts`."""
    import itertools

    ct = _nonneg("counts", counts)
    vt = _nonneg("v", v, ct)
    ar = _arms(arms)
    nb = integer("n_bar", n_bar, 1, 10_000)
    if len(ar) ** ct.numel() > 10**6:
        raise ValueError(f"Invalid arms/counts: {len(ar)}^{ct.numel()} tuples (must be ≤ 1e6 to enumerate)")
    c = np.asarray(ct.tolist())
    vv = np.asarray(vt.tolist())
    grid = np.array(list(itertools.product(ar, repeat=c.size)), dtype=np.float64)
    ok = np.abs(grid @ c - nb * c.sum()) < 0.5
    obj = np.where(ok, (c * vv / grid).sum(1), np.inf)
    k = int(np.argmin(obj))
    return grid[k].astype(np.int64), float(obj[k])
