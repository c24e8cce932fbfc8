"""The exact engine for linear contracts with a finite population of agent types (torch, float64).

Model [paper] + [secondary]. An agent type θ has ``n`` actions; action ``i`` induces an outcome distribution
F_{θ,i} ∈ Δ_m and costs c_{θ,i} ≥ 0. Outcome ``j`` is worth r_j ∈ [0, 1] to the principal, with r₁ = 0. A linear
contract α ∈ [0, 1] pays α·r_j on outcome ``j``. With R_{θ,i} = Σ_j F_{θ,i,j} r_j the agent best-responds

    i*(θ, α) ∈ argmax_i  α R_{θ,i} − c_{θ,i}                      (ties: principal-favouring = largest R)

and the principal earns u(α, θ) = (1 − α) R_{θ,i*(θ,α)}; U(α) = E_θ u(α, θ), R(α) = E_θ R_{θ,i*(θ,α)}.

The engine (no α-grid). Each type's agent utility max_i (α R_i − c_i) is a convex upper envelope in α; walking it
from α = 0 gives at most n − 1 kinks α_{θ,k} (indifference points (c_i − c_{i'})/(R_i − R_{i'})) at which R_θ(α)
jumps up. R(α) = Σ_θ w_θ R_θ(α) is therefore a step function: sort all kinks once, then a cumulative sum of
weighted jumps gives R at every kink (right-continuous under principal ties). An empirical Û_s reweights the same
events by the sample multiplicities, so for a batch of repetitions sup_α |Û_s − U|, α* and EUM's α̂ are exact,
from one (repetitions × kinks) tensor program: on each piece [κ_j, κ_{j+1}) the deviation (1 − α)(R̂_j − R_j)
is monotone in |·| and largest at the piece's left end, and Û_s = (1 − α)R̂_j is largest there too.

Brute force (:func:`best_response` with an explicit argmax per α) is the independent reference the engine is
tested against (:mod:`.brute_force`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import one_thread, resolve_device, to_numpy
from ..validate import finite_tensor, in_range, integer, memory_guard, number, one_of

__all__ = [
    "TIES",
    "ContractTypes",
    "Kinks",
    "EUMResult",
    "SweepResult",
    "random_types",
    "flat_types",
    "best_response",
    "expected_reward",
    "principal_utility",
    "kinks",
    "reward_at_kinks",
    "optimal_contract",
    "sample_types",
    "eum",
    "sup_deviation",
    "sample_complexity_sweep",
    "quantile_band",
    "engine_utility",
]

TIES = ("principal", "agent")
_DT = torch.float64
_SUM_TOL = 1e-9


def _device(device: Any) -> torch.device:
    """:func:`theorybook.device.resolve_device`, with a ``ValueError`` naming the parameter for a bad name."""
    if device is not None and not isinstance(device, (str, torch.device)):
        raise TypeError(f"Invalid device: {device!r} (must be None, a string or a torch.device)")
    try:
        return resolve_device(device)
    except RuntimeError as err:
        raise ValueError(f"Invalid device: {device!r} (must name a torch device, e.g. 'cpu' or 'cuda')") from err


_MAX_SEED = 2**63 - 1


def _as_f64(name: str, value: Any, ndim: int, device: torch.device) -> torch.Tensor:
    t = finite_tensor(name, value, ndim=ndim)
    if any(d == 0 for d in t.shape):
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (no dimension may be empty)")
    return t.to(device=device, dtype=_DT)


class ContractTypes:
    """A finite population of agent types: the distribution 𝒟 = Σ_θ w_θ δ_θ.

    Parameters
    ----------
    F:
        Outcome distributions F_{θ,i} ∈ Δ_m, shape ``(T, n, m)`` (rows non-negative, summing to 1 within 1e-9).
    costs:
        Action costs c_{θ,i} ≥ 0, shape ``(T, n)``.
    rewards:
        Outcome rewards r ∈ [0, 1]^m with r₁ = 0, shape ``(m,)``, m ≥ 2.
    weights:
        Type probabilities w on the simplex, shape ``(T,)``; ``None`` = uniform.
    device:
        Where every tensor lives (``None`` = :func:`theorybook.device.default_device`).
    """

    def __init__(self, F: Any, costs: Any, rewards: Any, weights: Any = None, *, device: Any = None) -> None:
        dev = _device(device)
        F = _as_f64("F", F, 3, dev)
        costs = _as_f64("costs", costs, 2, dev)
        rewards = _as_f64("rewards", rewards, 1, dev)
        T, n, m = F.shape
        if m < 2:
            raise ValueError(f"Invalid F: {m} outcome(s) (must have n_outcomes ≥ 2)")
        if rewards.shape != (m,):
            raise ValueError(f"Invalid rewards: shape {tuple(rewards.shape)} (must be ({m},), one per outcome)")
        if costs.shape != (T, n):
            raise ValueError(f"Invalid costs: shape {tuple(costs.shape)} (must be ({T}, {n}) = (types, actions))")
        if bool((rewards < 0).any()) or bool((rewards > 1).any()):
            raise ValueError(f"Invalid rewards: range [{rewards.min().item():g}, {rewards.max().item():g}] "
                             "(must be in [0, 1])")
        if rewards[0].item() != 0.0:
            raise ValueError(f"Invalid rewards: r_1 = {rewards[0].item():g} (must be 0)")
        if bool((F < 0).any()):
            raise ValueError(f"Invalid F: minimum entry {F.min().item():g} (must be ≥ 0)")
        err = (F.sum(-1) - 1).abs().max().item()
        if err > _SUM_TOL:
            raise ValueError(f"Invalid F: a row sums to 1 ± {err:.3g} (must sum to 1 within {_SUM_TOL:g})")
        if bool((costs < 0).any()):
            raise ValueError(f"Invalid costs: minimum {costs.min().item():g} (must be ≥ 0)")
        if weights is None:
            w = torch.full((T,), 1.0 / T, dtype=_DT, device=dev)
        else:
            w = _as_f64("weights", weights, 1, dev)
            if w.shape != (T,):
                raise ValueError(f"Invalid weights: shape {tuple(w.shape)} (must be ({T},), one per type)")
            if bool((w < 0).any()) or abs(w.sum().item() - 1) > _SUM_TOL:
                raise ValueError(f"Invalid weights: min {w.min().item():g}, sum {w.sum().item():.12g} "
                                 f"(must be ≥ 0 and sum to 1 within {_SUM_TOL:g})")
        self.F, self.costs, self.rewards, self.weights = F, costs, rewards, w
        self.R = F @ rewards  # R_{θ,i} = Σ_j F_{θ,i,j} r_j, shape (T, n)
        self.device = dev
        self._kinks: Kinks | None = None
        self._R_steps: torch.Tensor | None = None  # R at the kink points for the population's own weights

    @property
    def n_types(self) -> int:
        return int(self.F.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.F.shape[1])

    @property
    def n_outcomes(self) -> int:
        return int(self.F.shape[2])

    def __repr__(self) -> str:
        return f"ContractTypes(T={self.n_types}, n={self.n_actions}, m={self.n_outcomes}, device={self.device})"


def _check_types(types: Any) -> ContractTypes:
    if not isinstance(types, ContractTypes):
        raise TypeError(f"Invalid types: {type(types).__name__} (must be a ContractTypes)")
    return types


def random_types(n_types: int = 2000, n_actions: int = 10, n_outcomes: int = 6, seed: int = 0, *,
                 device: Any = None) -> ContractTypes:
    """The chapter's random type family [reconstruction] (the paper has no experiments).

    r = linspace(0, 1, m). Action 0 is *idle*: all mass on outcome 1 (so R = 0) at cost 0. Every other action has
    F ~ Dirichlet(1, …, 1) and cost c = κ_θ R² + U(0, 0.02) with κ_θ ~ U(0.5, 2): a convex cost in the expected
    reward, so that many actions reach the upper envelope. Sampled on the CPU from ``seed``, then moved to
    ``device``.
    """
    T = integer("n_types", n_types, 1)
    n = integer("n_actions", n_actions, 1)
    m = integer("n_outcomes", n_outcomes, 2)
    sd = integer("seed", seed, 0, _MAX_SEED)
    dev = _device(device)
    # F is built in place (its own 8·T·n·m bytes; ContractTypes' checks add boolean temporaries of 1/8 of that)
    memory_guard(2.0 * T * n * m * 8, lower="n_types, n_actions or n_outcomes")
    g = torch.Generator().manual_seed(sd)
    r = torch.linspace(0.0, 1.0, m, dtype=_DT)
    F = torch.rand(T, n, m, generator=g, dtype=_DT)
    F.neg_().log1p_().neg_()  # −log(1 − U) ~ Exp(1) = Gamma(1): normalised, Dirichlet(1) rows
    F.div_(F.sum(-1, keepdim=True))
    F[:, 0, :] = 0.0
    F[:, 0, 0] = 1.0
    kappa = 0.5 + 1.5 * torch.rand(T, 1, generator=g, dtype=_DT)
    R = F @ r
    costs = kappa * R**2 + 0.02 * torch.rand(T, n, generator=g, dtype=_DT)
    costs[:, 0] = 0.0
    return ContractTypes(F, costs, r, device=dev)


def flat_types(n_types: int = 2000, n_actions: int = 10, n_outcomes: int = 6, seed: int = 0, *,
               device: Any = None) -> ContractTypes:
    """A family whose required sample size cannot depend on n [reconstruction]: the control of the headline test.

    The *live part* is :func:`random_types` with two actions (idle + one action, drawn from ``seed``): at n = 2 the
    family is exactly that. The other n − 2 actions are *dominated*: F ~ Dirichlet(1) (drawn from ``seed`` + 1, so
    their expected rewards R vary from type to type like the live action's) at cost 1 + U(0, 0.02) > α·R for every
    α ≤ 1 — worse for the agent than idling, so never a best response. U(α), Û_s(α) and every sup-deviation are
    those of the live part, whatever n; the n per-action mean rewards are not (their largest deviation grows with
    the number of actions, as a union bound over actions pays).
    """
    T = integer("n_types", n_types, 1)
    n = integer("n_actions", n_actions, 2)
    m = integer("n_outcomes", n_outcomes, 2)
    sd = integer("seed", seed, 0, _MAX_SEED - 1)
    dev = _device(device)
    memory_guard(2.0 * T * n * m * 8, lower="n_types, n_actions or n_outcomes")
    live = random_types(T, 2, m, sd, device="cpu")
    F = torch.empty(T, n, m, dtype=_DT)
    F[:, :2] = live.F
    costs = torch.empty(T, n, dtype=_DT)
    costs[:, :2] = live.costs
    if n > 2:
        g = torch.Generator().manual_seed(sd + 1)
        D = torch.rand(T, n - 2, m, generator=g, dtype=_DT)
        D.neg_().log1p_().neg_()  # Dirichlet(1) rows, as in random_types
        F[:, 2:] = D.div_(D.sum(-1, keepdim=True))
        costs[:, 2:] = 1.0 + 0.02 * torch.rand(T, n - 2, generator=g, dtype=_DT)
    return ContractTypes(F, costs, live.rewards, device=dev)


def _alphas(alpha: Any, device: torch.device) -> tuple[torch.Tensor, bool]:
    if isinstance(alpha, (torch.Tensor, np.ndarray)):
        scalar_in = alpha.ndim == 0
    else:
        scalar_in = not hasattr(alpha, "__len__")
    if scalar_in:
        a = torch.tensor([number("alpha", alpha, 0.0, 1.0)], dtype=_DT, device=device)
    else:
        a = finite_tensor("alpha", alpha, ndim=1).to(device=device, dtype=_DT)
        in_range("alpha", a, 0.0, 1.0, high_open=False)
    return a, scalar_in


def best_response(types: ContractTypes, alpha: Any, tie: str = "principal", atol: float = 1e-12) -> torch.Tensor:
    """Brute-force best response i*(θ, α) = argmax_i α R_{θ,i} − c_{θ,i}, by explicit maximisation.

    Utilities within ``atol`` of the maximum tie; ``tie="principal"`` picks the tied action with the largest
    R_{θ,i} (the principal's favourite for α < 1), ``"agent"`` the smallest. ``alpha`` is a scalar (result
    shape ``(T,)``) or a 1-D tensor of A values in [0, 1] (result ``(T, A)``).
    """
    types = _check_types(types)
    one_of("tie", tie, TIES)
    tol = number("atol", atol, 0.0, 1.0)
    a, scalar_in = _alphas(alpha, types.device)
    T, n = types.R.shape
    memory_guard(8.0 * T * a.numel() + 4.0 * max(1 << 22, T * n) * 8, lower="the number of alpha values or types")
    step = max(1, (1 << 22) // (T * n))  # chunks of α keep the (T, n, chunk) utilities at ~32 MiB
    out = []
    for a_chunk in torch.split(a, step):
        u = types.R[:, :, None] * a_chunk - types.costs[:, :, None]  # (T, n, A): agent utility α R_i − c_i
        tied = u >= u.max(1, keepdim=True).values - tol
        key = types.R[:, :, None].expand_as(u)
        key = key if tie == "principal" else -key
        out.append(torch.where(tied, key, torch.full_like(key, -math.inf)).argmax(1))  # (T, chunk)
    idx = torch.cat(out, 1)
    return idx[:, 0] if scalar_in else idx


def expected_reward(types: ContractTypes, alpha: Any, tie: str = "principal") -> Any:
    """R(α) = Σ_θ w_θ R_{θ,i*(θ,α)} by brute force (float for scalar α, tensor ``(A,)`` otherwise)."""
    idx = best_response(types, alpha, tie)
    if idx.ndim == 1:
        return float(types.weights @ types.R.gather(1, idx[:, None])[:, 0])
    return types.weights @ types.R.gather(1, idx)


def principal_utility(types: ContractTypes, alpha: Any, tie: str = "principal") -> Any:
    """U(α) = (1 − α) R(α) by brute force (float for scalar α, tensor ``(A,)`` otherwise)."""
    Rbar = expected_reward(types, alpha, tie)
    if isinstance(Rbar, float):
        return (1.0 - number("alpha", alpha, 0.0, 1.0)) * Rbar
    a, _ = _alphas(alpha, types.device)
    return (1.0 - a) * Rbar


class Kinks(NamedTuple):
    """All kinks of all types, sorted: R(α) is a right-continuous step function jumping at ``alpha``.

    ``alpha`` (K,) sorted kink positions in (0, 1]; ``owner`` (K,) the type of each kink; ``jump`` (K,) the
    type's (unweighted) reward jump R_θ^{(k)} − R_θ^{(k−1)} > 0 there; ``base`` (T,) R_θ(0) under principal
    ties; ``points`` (K+1,) = [0, alpha]; ``last`` (K+1,) True where a point is the last of a run of equal
    positions (only there does the cumulative sum equal R at that α).
    """

    alpha: torch.Tensor
    owner: torch.Tensor
    jump: torch.Tensor
    base: torch.Tensor
    points: torch.Tensor
    last: torch.Tensor


def _pareto_actions(R: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Drop, per type, actions that can never be a (principal-tie) best response: those with another action of at
    least the same R at no greater cost. Sorted by R, action k survives iff its cost is below every cost at a later
    position (a suffix minimum); the walk then runs on the survivors (padded with dominated actions, which it
    never selects), so the kinks are unchanged and the cost falls from O(n) to O(#survivors) per step."""
    T, n = R.shape
    if n <= 8:
        return R, c
    order = torch.argsort(R, dim=1, stable=True)
    cs = c.gather(1, order)
    suffix = torch.flip(torch.cummin(torch.flip(cs, [1]), 1).values, [1])
    later = torch.cat([suffix[:, 1:], torch.full((T, 1), math.inf, dtype=c.dtype, device=c.device)], 1)
    keep = cs < later
    K = max(int(keep.sum(1).max()), 1)
    if K == n:
        return R, c
    pos = torch.arange(n, device=R.device).expand(T, n)
    sel = torch.argsort(torch.where(keep, pos, pos + n), 1)[:, :K]
    idx = order.gather(1, sel)
    return R.gather(1, idx), c.gather(1, idx)


def _envelope(types: ContractTypes, atol: float = 1e-12) -> Kinks:
    R, c = _pareto_actions(types.R, types.costs)
    T, n = R.shape
    rows = torch.arange(T, device=R.device)
    u0 = -c
    tied0 = u0 >= u0.max(1, keepdim=True).values - atol
    cur = torch.where(tied0, R, torch.full_like(R, -math.inf)).argmax(1)  # principal tie at α = 0
    cur_R, cur_c = R[rows, cur], c[rows, cur]
    cur_a = torch.zeros(T, dtype=_DT, device=R.device)
    base = cur_R.clone()
    alphas, jumps = [], []
    inf = torch.full_like(R, math.inf)
    for _ in range(n - 1):
        dR = R - cur_R[:, None]
        up = dR > 0
        # indifference point with each action of larger R: α = (c_i − c_cur)/(R_i − R_cur), never behind us
        cross = torch.where(up, (c - cur_c[:, None]) / torch.where(up, dR, torch.ones_like(dR)), inf)
        cross = torch.maximum(cross, cur_a[:, None])
        amin = cross.min(1).values
        tied = up & (cross <= amin[:, None] + atol)
        nxt = torch.where(tied, R, torch.full_like(R, -math.inf)).argmax(1)
        valid = torch.isfinite(amin) & (amin <= 1.0)
        if not bool(valid.any()):
            break
        new_R = R[rows, nxt]
        alphas.append(torch.where(valid, amin, torch.full_like(amin, math.inf)))
        jumps.append(torch.where(valid, new_R - cur_R, torch.zeros_like(amin)))
        cur_R = torch.where(valid, new_R, cur_R)
        cur_c = torch.where(valid, c[rows, nxt], cur_c)
        cur_a = torch.where(valid, amin, cur_a)
    if alphas:
        A, J = torch.stack(alphas, 1), torch.stack(jumps, 1)
        owner = rows[:, None].expand_as(A)
        keep = torch.isfinite(A)
        A, J, owner = A[keep], J[keep], owner[keep]
        order = torch.argsort(A, stable=True)
        A, J, owner = A[order], J[order], owner[order]
    else:
        A = torch.zeros(0, dtype=_DT, device=R.device)
        J = torch.zeros(0, dtype=_DT, device=R.device)
        owner = torch.zeros(0, dtype=torch.long, device=R.device)
    points = torch.cat([torch.zeros(1, dtype=_DT, device=R.device), A])
    last = torch.ones_like(points, dtype=torch.bool)
    last[:-1] = points[1:] != points[:-1]
    return Kinks(A, owner, J, base, points, last)


def kinks(types: ContractTypes) -> Kinks:
    """Every type's upper-envelope kinks in (0, 1], sorted (computed once per population and cached)."""
    types = _check_types(types)
    if types._kinks is None:
        with one_thread(types.device):  # many small ops: extra CPU threads only add synchronisation
            types._kinks = _envelope(types)
    return types._kinks


def reward_at_kinks(types: ContractTypes, weights: Any = None) -> torch.Tensor:
    """R at every point of ``kinks(types).points`` for type weights ``weights`` ((T,) or a batch (B, T);
    ``None`` = the population's own): w·R(0) + cumulative sum of weighted jumps (principal ties)."""
    types = _check_types(types)
    kk = kinks(types)
    if weights is None:
        if types._R_steps is None:
            types._R_steps = _steps(kk, types.weights)
        return types._R_steps
    w = finite_tensor("weights", weights).to(types.device, _DT)
    if w.ndim not in (1, 2) or w.shape[-1] != types.n_types:
        raise ValueError(f"Invalid weights: shape {tuple(w.shape)} (must be (T,) or (B, T) with T = {types.n_types})")
    memory_guard(2.0 * w.numel() / types.n_types * (kk.alpha.numel() + 1) * 8, lower="the batch of weights")
    return _steps(kk, w)


def _steps(kk: Kinks, w: torch.Tensor) -> torch.Tensor:
    base = (w @ kk.base)[..., None]
    inc = torch.cumsum(w[..., kk.owner] * kk.jump, dim=-1)
    return torch.cat([base, base + inc], dim=-1)


def optimal_contract(types: ContractTypes) -> tuple[float, float]:
    """α* = argmax_α U(α) and U(α*), exactly: U is largest at a piece's left end, so over {0} ∪ kinks.

    Attained because ties favour the principal (R right-continuous). Ties in U go to the smallest α.
    """
    types = _check_types(types)
    kk = kinks(types)
    U = (1.0 - kk.points) * reward_at_kinks(types)
    U = torch.where(kk.last, U, torch.full_like(U, -math.inf))
    j = int(U.argmax())
    return float(kk.points[j]), float(U[j])


def sample_types(n_types: int, s: int, reps: int = 1, seed: int = 0, *, device: Any = None) -> torch.Tensor:
    """``reps`` i.i.d. samples of ``s`` type indices from a uniform population of ``n_types`` (the weights of
    :func:`random_types`), shape ``(reps, s)``; drawn on the CPU from ``seed``, then moved to ``device``."""
    T = integer("n_types", n_types, 1)
    S = integer("s", s, 1)
    B = integer("reps", reps, 1)
    sd = integer("seed", seed, 0, _MAX_SEED)
    dev = _device(device)
    memory_guard(8.0 * S * B, lower="s or reps")
    g = torch.Generator().manual_seed(sd)
    return torch.randint(T, (B, S), generator=g).to(dev)


def _counts_weights(types: ContractTypes, sample_idx: Any) -> torch.Tensor:
    """Empirical weights ŵ_θ = (multiplicity of θ in the sample)/s, shape (B, T)."""
    if isinstance(sample_idx, torch.Tensor):
        t = sample_idx
        if t.dtype == torch.bool:
            raise TypeError("Invalid sample_idx: boolean tensor (must hold integer type indices)")
        if t.is_floating_point():
            t = finite_tensor("sample_idx", t)
            if not bool((t == t.round()).all()):
                raise ValueError("Invalid sample_idx: non-integer values (must be type indices)")
        t = t.to(types.device).long()
    else:
        t = finite_tensor("sample_idx", sample_idx)
        if not bool((t == t.round()).all()):
            raise ValueError("Invalid sample_idx: non-integer values (must be type indices)")
        t = t.to(types.device).long()
    if t.ndim == 1:
        t = t[None]
    if t.ndim != 2 or t.shape[1] == 0:
        raise ValueError(f"Invalid sample_idx: shape {tuple(t.shape)} (must be (s,) or (reps, s) with s ≥ 1)")
    lo, hi = int(t.min()), int(t.max())
    if lo < 0 or hi >= types.n_types:
        raise ValueError(f"Invalid sample_idx: range [{lo}, {hi}] (must be in [0, {types.n_types - 1}])")
    B, S = t.shape
    memory_guard(3.0 * B * (types.n_types + kinks(types).alpha.numel()) * 8, lower="reps")
    counts = torch.zeros(B, types.n_types, dtype=_DT, device=types.device)
    counts.scatter_add_(1, t, torch.ones(B, S, dtype=_DT, device=types.device))
    return counts / S


class EUMResult(NamedTuple):
    """Empirical utility maximisation for a batch of samples (tensors of shape (B,))."""

    alpha_hat: torch.Tensor  # α̂ = argmax Û_s (smallest maximiser)
    empirical_utility: torch.Tensor  # Û_s(α̂)
    utility: torch.Tensor  # U(α̂), the true utility of the chosen contract
    suboptimality: torch.Tensor  # U(α*) − U(α̂) ≥ 0


def _deviation_eum(types: ContractTypes, w_hat: torch.Tensor, rows: int = 32) -> tuple[torch.Tensor, EUMResult]:
    """sup-deviation and EUM for empirical weights ``w_hat`` (B, T), ``rows`` repetitions at a time.

    With D_j = R̂_j − R_j = (ŵ − w)·R(0) + Σ_{i≤j} (ŵ − w)_{owner_i} jump_i, the deviation at point j is (1 − κ_j)D_j
    and Û_s(κ_j) = U(κ_j) + (1 − κ_j)D_j. Blocks of ``rows`` keep the (rows, K) work arrays in cache.
    """
    kk = kinks(types)
    dev_ = types.device
    om = torch.where(kk.last, 1.0 - kk.points, torch.zeros_like(kk.points))  # non-last points never count
    U_true = (1.0 - kk.points) * reward_at_kinks(types)
    U_mask = torch.where(kk.last, U_true, torch.full_like(U_true, -math.inf))
    u_star = U_mask.max()
    dw = w_hat - types.weights
    d0 = dw @ kk.base
    K1 = kk.points.numel()
    owner = kk.owner.expand(min(rows, dw.shape[0]), -1)  # gather is ~3× faster than index_select here
    sups, idxs, vals = [], [], []
    for lo in range(0, dw.shape[0], rows):
        blk = dw[lo:lo + rows]
        D = torch.empty(blk.shape[0], K1, dtype=_DT, device=dev_)
        D[:, 0] = 0.0
        if K1 > 1:
            torch.cumsum(torch.gather(blk, 1, owner[:blk.shape[0]]).mul_(kk.jump), 1, out=D[:, 1:])
        D.add_(d0[lo:lo + rows, None]).mul_(om)  # (1 − κ_j) D_j
        sups.append(D.abs().max(1).values)
        best = D.add_(U_mask).max(1)  # Û_s at every point; first maximiser = smallest α
        vals.append(best.values)
        idxs.append(best.indices)
    sup = torch.cat(sups)
    j = torch.cat(idxs)
    res = EUMResult(kk.points[j], torch.cat(vals), U_true[j], u_star - U_true[j])
    return sup, res


def sup_deviation(types: ContractTypes, sample_idx: Any) -> torch.Tensor:
    """sup_α |Û_s(α) − U(α)| exactly, for each sample (row) of ``sample_idx`` ((s,) or (reps, s)); shape (reps,).

    On each piece [κ_j, κ_{j+1}) the deviation is (1 − α)(R̂_j − R_j), so its modulus is largest at κ_j.
    """
    types = _check_types(types)
    return _deviation_eum(types, _counts_weights(types, sample_idx))[0]


def eum(types: ContractTypes, sample_idx: Any) -> EUMResult:
    """EUM: α̂ = argmax_α Û_s(α) for each sample row, exactly over {0} ∪ kinks; with U(α̂) and the suboptimality."""
    types = _check_types(types)
    return _deviation_eum(types, _counts_weights(types, sample_idx))[1]


class SweepResult(NamedTuple):
    """sup-deviations and EUM suboptimalities for nested samples: row = repetition, column = sample size."""

    s: Any  # numpy (S,) sample sizes
    sup_dev: Any  # numpy (reps, S): sup_α |Û_s − U|
    subopt: Any  # numpy (reps, S): U(α*) − U(α̂_s)
    n_actions: int
    mean_dev: Any = None  # numpy (reps, S): max_i |R̂_i − R̄_i|, the n per-action mean rewards' deviation


def sample_complexity_sweep(types: ContractTypes | Sequence[ContractTypes], s_values: Any, reps: int = 200,
                            seed: int = 0) -> SweepResult | list[SweepResult]:
    """For ``reps`` independent i.i.d. streams of types, the sup-deviation and EUM suboptimality of the first
    s draws, for every s in ``s_values`` (strictly increasing): samples are nested, each repetition adds
    s_j − s_{j−1} fresh draws to its multiplicities (so the columns of one row are correlated, rows are i.i.d.).

    ``types`` may be a list of populations with the same number of types T (uniform weights): they are then fed
    the *same* index streams (common random numbers) and a list of results comes back. Indices are drawn on the
    CPU from ``seed`` (int32, counted by one ``bincount`` per increment) and the counts moved to the device.
    """
    many = isinstance(types, (list, tuple))
    pops = [_check_types(t) for t in (types if many else [types])]
    if not pops:
        raise ValueError("Invalid types: empty list (must hold at least one ContractTypes)")
    T = pops[0].n_types
    for p in pops:
        if p.n_types != T:
            raise ValueError(f"Invalid types: populations of {T} and {p.n_types} types (must share T)")
        if float((p.weights - 1.0 / T).abs().max()) > _SUM_TOL:
            raise ValueError("Invalid types: non-uniform weights (the sweep samples types uniformly)")
    if isinstance(s_values, (str, bytes)):
        raise TypeError(f"Invalid s_values: {s_values!r} (must be integers)")
    if isinstance(s_values, (torch.Tensor, np.ndarray)):
        raw = to_numpy(s_values).ravel().tolist()
    elif hasattr(s_values, "__len__"):
        raw = list(s_values)
    else:
        raw = [s_values]
    s_list = [integer("s_values", s, 1) for s in raw]
    if not s_list or any(b <= a for a, b in zip(s_list, s_list[1:], strict=False)):
        raise ValueError(f"Invalid s_values: {s_list} (must be non-empty and strictly increasing)")
    B = integer("reps", reps, 1)
    sd = integer("seed", seed, 0, _MAX_SEED)
    K = max(kinks(p).alpha.numel() for p in pops)
    # the draws are streamed in blocks, but their total (4 bytes each) is what bounds the work: guard it too
    memory_guard(8.0 * B * (4 * (K + 1) + 2 * T) + 4.0 * B * s_list[-1], lower="reps or s_values")
    g = torch.Generator().manual_seed(sd)
    counts = torch.zeros(B * T, dtype=torch.long)
    offset = (torch.arange(B, dtype=torch.int32) * T)[:, None]
    sup: list[list[torch.Tensor]] = [[] for _ in pops]
    sub: list[list[torch.Tensor]] = [[] for _ in pops]
    mdev: list[list[torch.Tensor]] = [[] for _ in pops]
    prev = 0
    with one_thread(pops[0].device):
        for s in s_list:
            _sweep_step(pops, counts, offset, g, s - prev, s, B, T, sup, sub, mdev)
            prev = s
    out = [SweepResult(np.asarray(s_list), to_numpy(torch.stack(a, 1)), to_numpy(torch.stack(b, 1)), p.n_actions,
                       to_numpy(torch.stack(c, 1)))
           for a, b, c, p in zip(sup, sub, mdev, pops, strict=True)]
    return out if many else out[0]


def _sweep_step(pops: list[ContractTypes], counts: torch.Tensor, offset: torch.Tensor, g: torch.Generator, todo: int,
                s: int, B: int, T: int, sup: list, sub: list, mdev: list) -> None:
    """Add ``todo`` fresh draws to every repetition's multiplicities, then evaluate every population at s: the
    sup-deviation, EUM's suboptimality, and the largest deviation of the n per-action mean rewards
    max_i |Σ_θ (ŵ_θ − w_θ) R_θ,i| (the union-bound alternative; float32 matmul, error ~1e-7 ≪ ε)."""
    while todo > 0:
        step = min(todo, max(1, (1 << 22) // B))
        idx = torch.randint(T, (B, step), generator=g, dtype=torch.int32).add_(offset)
        counts += torch.bincount(idx.ravel(), minlength=B * T)
        todo -= step
    w_hat = counts.view(B, T).to(dtype=_DT).div_(s)
    for k, p in enumerate(pops):
        wk = w_hat.to(p.device)
        d, e = _deviation_eum(p, wk)
        sup[k].append(d)
        sub[k].append(e.suboptimality)
        dw = (wk - p.weights[None, :]).float()
        mdev[k].append((dw @ p.R.float()).abs().amax(1).to(_DT))


def quantile_band(x: Any, p: float = 0.95) -> tuple[Any, Any]:
    """Empirical p-quantile of each column of ``x`` (reps, S) and the standard error of its logarithm.

    Error model (distribution-free): the empirical p-quantile of B i.i.d. draws sits at rank ≈ pB, whose rank
    fluctuates by √(Bp(1 − p)); the log-quantile's standard error is estimated as half the log-distance between
    the empirical quantiles at p ± √(p(1 − p)/B) (the order-statistic ±1σ band).
    """
    pp = number("p", p, 0.0, 1.0, low_open=True, high_open=True)
    arr = np.asarray(to_numpy(x) if isinstance(x, torch.Tensor) else x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 2 or not np.isfinite(arr).all() or (arr <= 0).any():
        raise ValueError(f"Invalid x: shape {arr.shape} (must be (reps ≥ 2, S), finite and > 0)")
    B = arr.shape[0]
    h = math.sqrt(pp * (1 - pp) / B)
    q = np.quantile(arr, pp, axis=0)
    lo = np.quantile(arr, max(pp - h, 0.0), axis=0)
    hi = np.quantile(arr, min(pp + h, 1.0), axis=0)
    return q, 0.5 * (np.log(hi) - np.log(lo))


def engine_utility(types: ContractTypes, alpha: Any, weights: Any = None) -> torch.Tensor:
    """U(α) = (1 − α)R(α) from the exact step function (principal ties) at any α in [0, 1] — a binary search
    into the sorted kinks; ``weights`` (T,) or (B, T) reweights the types (e.g. a sample's ŵ)."""
    types = _check_types(types)
    a, _ = _alphas(alpha, types.device)
    kk = kinks(types)
    Rk = reward_at_kinks(types, weights)
    pos = torch.searchsorted(kk.points, a, right=True) - 1
    return (1.0 - a) * Rk[..., pos]
