"""Brute-force references for the exact engine: parity on grids and kinks, the monotonicity search (with the
lemma's control, the principal's utility) and what principal ties buy (attainment)."""

from __future__ import annotations

import math

import torch

from ..validate import integer, memory_guard, one_of
from .engine import (
    _DT,
    TIES,
    ContractTypes,
    _check_types,
    engine_utility,
    kinks,
    optimal_contract,
    principal_utility,
    reward_at_kinks,
)

__all__ = ["brute_force_parity", "monotonicity_gap", "attainment_gap"]


def brute_force_parity(types: ContractTypes, n_grid: int = 5001) -> dict[str, float]:
    """Largest |engine − brute force| for U on a grid of ``n_grid`` α, at every kink (principal ties: the value
    there) and at every kink's left limit (= the brute-force value under agent ties), plus |α* − α*_bf| and
    |U* − U*_bf| where the brute-force optimum is the best of the grid and the kinks."""
    types = _check_types(types)
    G = integer("n_grid", n_grid, 2)
    kk = kinks(types)
    memory_guard(8.0 * types.n_types * (G + 2 * kk.points.numel()), lower="n_grid or types")
    grid = torch.linspace(0.0, 1.0, G, dtype=_DT, device=types.device)
    R_steps = reward_at_kinks(types)
    # engine on the grid: the piece containing α is the last point ≤ α (right-continuity)
    pos = torch.searchsorted(kk.points, grid, right=True) - 1
    U_grid_engine = (1.0 - grid) * R_steps[pos]
    U_grid_bf = principal_utility(types, grid)
    pts = kk.points[kk.last]
    R_at = R_steps[kk.last]
    U_pts_engine = (1.0 - pts) * R_at
    U_pts_bf = principal_utility(types, pts)
    # left limit at a kink = value just before its group of equal positions
    idx_last = torch.nonzero(kk.last).ravel()
    R_left = torch.cat([R_steps[:1], R_steps[idx_last[:-1]]])
    U_left_engine = (1.0 - pts) * R_left
    U_left_bf = principal_utility(types, pts, tie="agent")
    a_star, u_star = optimal_contract(types)
    cand = torch.cat([grid, pts])
    U_cand = torch.cat([U_grid_bf, U_pts_bf])
    j = int(U_cand.argmax())
    return {
        "grid": float((U_grid_engine - U_grid_bf).abs().max()),
        "kinks": float((U_pts_engine - U_pts_bf).abs().max()),
        "left_limits": float((U_left_engine[1:] - U_left_bf[1:]).abs().max()) if pts.numel() > 1 else 0.0,
        "alpha_star": abs(a_star - float(cand[j])),
        "u_star": abs(u_star - float(U_cand[j])),
        "n_points": int(G + 2 * pts.numel()),
    }


def _pairwise_points(types: ContractTypes, R: torch.Tensor | None = None) -> torch.Tensor:
    """Every type's pairwise indifference points α_{θ,ii'} = (c_i − c_{i'})/(R_i − R_{i'}) in [0, 1], with 0, 1
    and the midpoints between consecutive ones: (T, P) sorted, padded by repeating 1. ``R`` replaces the expected
    rewards by another payment score (a non-linear contract's)."""
    R, c = (types.R if R is None else R), types.costs
    T, n = R.shape
    i, j = torch.triu_indices(n, n, 1, device=R.device)
    dR = R[:, i] - R[:, j]
    with torch.no_grad():
        a = torch.where(dR != 0, (c[:, i] - c[:, j]) / torch.where(dR != 0, dR, torch.ones_like(dR)),
                        torch.full_like(dR, 2.0))
    a = torch.where((a >= 0) & (a <= 1), a, torch.ones_like(a))
    a = torch.cat([torch.zeros(T, 1, dtype=_DT, device=R.device), a, torch.ones(T, 1, dtype=_DT, device=R.device)], 1)
    a = torch.sort(a, 1).values
    mid = 0.5 * (a[:, 1:] + a[:, :-1])
    return torch.sort(torch.cat([a, mid], 1), 1).values


def monotonicity_gap(types: ContractTypes, tie: str = "principal", quantity: str = "reward",
                     contract: str = "linear") -> float:
    """min over types θ and consecutive candidate points α < α' of R_θ(α') − R_θ(α), by brute force.

    The candidates are all of θ's pairwise indifference points in [0, 1] (where a best response can change),
    the midpoints between them, 0 and 1 — so R_θ is checked everywhere it can move, independently of the
    envelope walk. Σ_θ w_θ R_θ is non-decreasing iff this is ≥ 0 for every type with w_θ > 0 (Lemma [secondary]).
    ``quantity="utility"`` measures the principal's utility u(α, θ) = (1 − α)R_θ(α) instead — the lemma's control,
    a function of the same best responses that is *not* monotone. ``contract="quadratic"`` lets the agent answer a
    non-linear contract paying α·r_j² on outcome j (score S_i = Σ_j F_ij r_j²; points and ties from S) and still
    measures the expected reward R_θ(α) — the lemma's control: the exchange argument makes S monotone, not R.
    ``contract="bonus"`` pays α on the top outcome only (score S_i = F_{i,m}), the single-outcome contract of the
    contract-design literature — the sceptic's control (its R can fall too, but on the chapter's family, whose
    costs rise with R, it rarely does).
    """
    types = _check_types(types)
    one_of("tie", tie, TIES)
    one_of("quantity", quantity, ("reward", "utility"))
    one_of("contract", contract, ("linear", "quadratic", "bonus"))
    pay = {"linear": lambda: types.R, "quadratic": lambda: types.F @ types.rewards**2,
           "bonus": lambda: types.F[:, :, -1]}[contract]()
    T, n = types.R.shape
    P = n * (n - 1) + 3
    memory_guard(8.0 * T * P * 2, lower="n_types or n_actions")
    pts = _pairwise_points(types, pay)  # (T, P)
    chunk = max(1, (1 << 22) // (n * P))  # types per chunk: the (chunk, n, P) utilities stay at ~32 MiB
    worst = math.inf
    for lo in range(0, T, chunk):
        R, S = types.R[lo:lo + chunk], pay[lo:lo + chunk]
        c, a = types.costs[lo:lo + chunk], pts[lo:lo + chunk]
        u = S[:, :, None] * a[:, None, :] - c[:, :, None]  # (chunk, n, P)
        tied = u >= u.max(1, keepdim=True).values - 1e-12
        key = S[:, :, None].expand_as(u)
        key = key if tie == "principal" else -key
        idx = torch.where(tied, key, torch.full_like(key, -math.inf)).argmax(1)
        Rv = R.gather(1, idx)
        if quantity == "utility":
            Rv = (1.0 - a) * Rv
        worst = min(worst, float((Rv[:, 1:] - Rv[:, :-1]).min()))
    return worst


def attainment_gap(types: ContractTypes) -> dict[str, float]:
    """sup_α U(α) (engine, principal ties, attained) against the best value actually attained under agent ties
    (brute force at 0 and every kink: under agent ties U = (1 − α)R_j on (κ_j, κ_{j+1}], largest at the right
    end, so these points contain its maximum; only kinks whose principal-tie U is within 1e−3 of the sup are
    evaluated, which loses nothing because agent-tie U ≤ principal-tie U at every point).
    Returns ``sup``, ``agent_max`` and ``shortfall`` = their gap."""
    types = _check_types(types)
    _, u_star = optimal_contract(types)
    kk = kinks(types)
    pts = torch.cat([kk.points[kk.last], torch.ones(1, dtype=_DT, device=types.device)])
    # agent-tie U(κ) = (1 − κ)R(κ⁻) ≤ (1 − κ)R(κ) = principal U(κ): points whose principal U is below
    # sup − margin cannot hold the agent-tie maximum once a value above sup − margin is found
    margin = 1e-3
    U_pr = engine_utility(types, pts)
    near = pts[U_pr >= u_star - margin]
    agent_max = float(principal_utility(types, near, tie="agent").max())
    if agent_max < u_star - margin:  # pragma: no cover - the filter was too tight: fall back to every point
        agent_max = float(principal_utility(types, pts, tie="agent").max())
    return {"sup": u_star, "agent_max": agent_max, "shortfall": u_star - agent_max}
