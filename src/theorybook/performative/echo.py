"""The change-vs-learn sweep (the empirical echo chamber): deploy, let the world react, retrain, measure."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from ..validate import finite_tensor, integer, memory_guard, number, one_of
from .experiment import (
    LogisticModel,
    Population,
    _check_share,
    _features,
    _labels,
    _risk_from_scores,
    _rows_mv,
    _top_mask,
    fit_logistic,
    loss_lipschitz,
)

__all__ = ["Tradeoff", "tradeoff"]


# --- the change-vs-learn sweep ----------------------------------------------------------------------------
class Tradeoff(NamedTuple):
    """One change-vs-learn sweep over shares ξ (all fields are CPU tensors of shape (S,))."""

    shares: torch.Tensor
    r_sample: torch.Tensor  # m/n, the observed performative response rate in the sample
    r_pop: torch.Tensor  # m_pop/N in the population (zero under sample performativity)
    emp_risk: torch.Tensor  # 𝓡(d̂_1, θ̂_2): retrained model on the distorted sample it was fitted to
    pop_risk: torch.Tensor  # 𝓡(d_1, θ̂_2): on the (possibly shifted) population
    clean_risk: torch.Tensor  # 𝓡(d_0, θ̂_2): on the undistorted population
    gap: torch.Tensor  # pop_risk − emp_risk, the generalisation gap the theorems bound
    deployed_pop: torch.Tensor  # 𝓡(d_1, θ̂_1): the deployed model on the shifted population
    deployed_sample: torch.Tensor  # 𝓡(d̂_1, θ̂_1): the deployed model on the shifted sample
    L_loss: torch.Tensor  # L_ℓ(θ̂_2) on 𝒵
    C_inf: torch.Tensor  # sup_z ℓ(θ̂_2; z) on 𝒵
    L_f: torch.Tensor  # Lipschitz constant of x ↦ σ(wᵀx + b): ‖w‖/4
    s_max: torch.Tensor  # max_z |s(θ̂_2; x)| on 𝒵: the largest loss change one label flip can cause
    deployed: LogisticModel  # θ̂_1 = G(d̂_0), the model whose predictions trigger the response
    sample_idx: torch.Tensor  # (n,) indices of the sample in the population


def tradeoff(pop: Population, n: int, shares, *, mode: str = "full", lam: float = 1e-4,
             seed: int = 1, covariate: int | None = None) -> Tradeoff:
    """The change-vs-learn experiment: draw a sample of n from the population, deploy θ̂_1 = G(d̂_0), let the
    world react with share ξ, retrain θ̂_2 = G(d̂_1) and measure risks.

    ``mode="sample"``: sample performativity — only the sample self-negates (:func:`flip_top_positives`).
    ``mode="full"``: the population self-negates while the sample self-fulfils (:func:`fulfil_top_negatives`),
    the empirical echo chamber. ``mode="random"``: the same numbers of flips in the same directions, but of units
    drawn uniformly at random among the eligible (not the deployed model's top scores) — the control in which the
    data change does not follow the model's predictions. ``mode="covariate"``: the same numbers of flips in the same
    directions, of the eligible units ranked by one covariate instead of the model's scores — the covariate most
    correlated with the label in the undistorted sample, oriented towards risk (a one-criterion rule a caseworker
    might use; no model) — the control in which the data change is structured like the echo chamber's but does not
    come from the model's predictions. ``mode="population"``: only the population self-negates (the classical
    performative setting); the sample, and so the retrained model, stays as it was. All retrainings over the
    shares run as one batched Newton solve. ``covariate``: with ``mode="covariate"``, rank by this column (index)
    instead of the one the rule picks, still oriented towards risk by its sign of correlation with the label in the
    sample (``None``: the rule's column).
    """
    if not isinstance(pop, Population):
        raise TypeError(f"Invalid pop: {type(pop).__name__} (must be a Population from population())")
    mode = one_of("mode", mode, ("full", "sample", "random", "covariate", "population"))
    if covariate is not None and mode != "covariate":
        raise ValueError(f"Invalid covariate: {covariate!r} (only with mode='covariate')")
    X_pop = _features(pop.X)
    if covariate is not None:
        covariate = integer("covariate", covariate, 0, X_pop.shape[1] - 1)
    y_pop = _labels(pop.y, X_pop, binary=True)
    N = X_pop.shape[0]
    n = integer("n", n, 2)
    seed = integer("seed", seed, 0)
    lam = number("lam", lam, 0.0, math.inf, low_open=True)
    if n > N:
        raise ValueError(f"Invalid n: {n} (must be ≤ population size {N})")
    shares_t = finite_tensor("shares", shares).to(torch.float64).reshape(-1)
    if shares_t.numel() == 0 or shares_t.numel() > 1000:
        raise ValueError(f"Invalid shares: {shares_t.numel()} values (need 1 to 1000)")
    for xi in shares_t.tolist():
        _check_share(xi)
    memory_guard(8.0 * 4 * shares_t.numel() * N, lower="the number of shares or the population size")
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randperm(N, generator=gen)[:n].to(X_pop.device)
    X, y = X_pop[idx], y_pop[idx]
    deployed = fit_logistic(X, y, lam)
    # scores of the deployed model, once; the responses below are flips of the top-ξ eligible scores
    s_smp = _rows_mv(deployed.w, X.T) + deployed.b
    s_dep = _rows_mv(deployed.w, X_pop.T) + deployed.b
    if mode == "random":  # random keys: the top-ξ of them is a uniform draw of the same size
        r_smp = torch.rand(n, generator=gen, dtype=torch.float64).to(X.device)
        r_pop = torch.rand(N, generator=gen, dtype=torch.float64).to(X.device)
    if mode == "covariate":  # the covariate most correlated with the label in the sample, oriented towards risk
        xc, yc = X - X.mean(0), y - y.mean()
        corr = (xc * yc[:, None]).sum(0) / (xc.norm(dim=0) * yc.norm()).clamp(min=1e-300)
        j = int(corr.abs().argmax()) if covariate is None else covariate
        sign = 1.0 if float(corr[j]) >= 0 else -1.0
        c_smp, c_pop = sign * X[:, j], sign * X_pop[:, j]
    ys, yp, ms, mp = [], [], [], []
    for xi in shares_t.tolist():
        if mode == "sample":
            flipped = _top_mask(s_smp, y > 0.5, xi)
            y1 = torch.where(flipped, torch.zeros_like(y), y)
            yp.append(y_pop)
            mp.append(0)
        elif mode == "population":
            flipped = torch.zeros_like(y, dtype=torch.bool)
            y1 = y
            fpop = _top_mask(s_dep, y_pop > 0.5, xi)
            yp.append(torch.where(fpop, torch.zeros_like(y_pop), y_pop))
            mp.append(int(fpop.sum()))
        else:
            key_s, key_p = ((s_smp, s_dep) if mode == "full" else (r_smp, r_pop) if mode == "random"
                            else (c_smp, c_pop))
            flipped = _top_mask(key_s, y < 0.5, xi)
            y1 = torch.where(flipped, torch.ones_like(y), y)
            fpop = _top_mask(key_p, y_pop > 0.5, xi)
            yp.append(torch.where(fpop, torch.zeros_like(y_pop), y_pop))
            mp.append(int(fpop.sum()))
        ys.append(y1)
        ms.append(int(flipped.sum()))
    Y, YP = torch.stack(ys), torch.stack(yp)
    refit = fit_logistic(X, Y, lam)
    s_pop = _rows_mv(refit.w, X_pop.T) + refit.b.unsqueeze(-1)
    emp = _risk_from_scores(_rows_mv(refit.w, X.T) + refit.b.unsqueeze(-1), Y)
    pop_r = _risk_from_scores(s_pop, YP)
    clean = _risk_from_scores(s_pop, y_pop.expand_as(YP))
    s_hi = (refit.b + refit.w.clamp(min=0).sum(-1)).abs()
    s_lo = (refit.b + refit.w.clamp(max=0).sum(-1)).abs()
    c_inf = torch.nn.functional.softplus(torch.maximum(s_hi, s_lo))
    dep_pop = _risk_from_scores(s_dep.unsqueeze(0), YP)
    dep_smp = _risk_from_scores(s_smp.unsqueeze(0), Y)
    summary = [emp, pop_r, clean, pop_r - emp, dep_pop, dep_smp, loss_lipschitz(refit), c_inf,
               torch.linalg.vector_norm(refit.w, dim=-1) / 4, torch.maximum(s_hi, s_lo)]
    dt = torch.float64
    # the per-share summaries are tiny: return them on the CPU, ready for tables and plots
    return Tradeoff(shares_t, torch.tensor(ms, dtype=dt) / n, torch.tensor(mp, dtype=dt) / N,
                    *(t.detach().cpu().to(dt) for t in summary), deployed, idx)
