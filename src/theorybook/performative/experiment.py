"""Synthetic performative learning: population, L2-logistic RERM, performative label flips, retraining and the
label-flip Wasserstein-DRO risks (Rodemann et al., ICML 2026, arXiv 2602.04402).

Notation follows the paper. A data point is z = (x, y) ∈ 𝒵 = [0, 1]⁴ × {0, 1} with the Euclidean metric on
(x, y) ∈ ℝ⁵, so 𝒟_𝒵 = √5 and a label flip moves an atom by exactly 1. The loss is the cross-entropy of the
logistic model, ℓ(θ; x, y) = y·log(1 + e^{−s}) + (1 − y)·log(1 + e^{s}) with the score s = wᵀx + b, and RERM
minimises the L2-regularised empirical risk

    θ̂ = G(d̂) = argmin_θ  (1/n) Σᵢ ℓ(θ; zᵢ) + (λ/2)‖θ‖²,      (γ = λ: Condition 3.1),

with θ = (w, b) and the bias regularised too, so the objective is λ-strongly convex in the whole θ.

The SIAB records of the paper's case study are not public; :func:`population` draws a synthetic population
(the substitute the project chose, [reconstruction]).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..device import resolve_device, resolve_dtype
from ..validate import in_range, integer, one_of, positive

__all__ = [
    "TRUE_W",
    "TRUE_B",
    "Population",
    "LogisticModel",
    "population",
    "fit_logistic",
    "predict_proba",
    "scores",
    "risk",
    "loss_lipschitz",
    "flip_top_positives",
    "fulfil_top_negatives",
    "wasserstein",
    "dro_risk",
    "RetrainTrace",
    "retrain",
    "Tradeoff",
    "tradeoff",
]

#: Ground-truth logistic coefficients of the synthetic population (base rate ≈ 0.35 on x ~ U[0, 1]⁴).
TRUE_W = (3.0, -2.0, 1.5, 0.5)
TRUE_B = -2.2


class Population(NamedTuple):
    """A drawn data set: features ``X`` (n, 4) in [0, 1]⁴, labels ``y`` in {0, 1}, ``prob`` = P(y = 1 | x)."""

    X: torch.Tensor
    y: torch.Tensor
    prob: torch.Tensor


class LogisticModel(NamedTuple):
    """θ = (w, b) of an L2-logistic regression; leading batch dimensions allowed (w: (..., d), b: (...))."""

    w: torch.Tensor
    b: torch.Tensor
    lam: float

    @property
    def theta(self) -> torch.Tensor:
        """θ = (w, b) stacked on the last axis."""
        return torch.cat([self.w, self.b.unsqueeze(-1)], dim=-1)


def population(n: int, seed: int = 0, *, device=None, dtype: torch.dtype | None = None) -> Population:
    """Draw n individuals: x ~ U[0, 1]⁴, y ~ Bernoulli(σ(w*ᵀx + b*)) with (w*, b*) = (TRUE_W, TRUE_B).

    Labels are "remains unemployed" (1) vs "finds a job" (0) in the paper's reading; the base rate is ≈ 0.35.
    """
    integer("n", n, 1)
    integer("seed", seed, 0)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    gen = torch.Generator().manual_seed(seed)
    X = torch.rand(n, len(TRUE_W), generator=gen, dtype=torch.float64)
    prob = torch.sigmoid(X @ torch.tensor(TRUE_W, dtype=torch.float64) + TRUE_B)
    y = (torch.rand(n, generator=gen, dtype=torch.float64) < prob).to(torch.float64)
    return Population(X.to(dev, dt), y.to(dev, dt), prob.to(dev, dt))


def _design(X: torch.Tensor) -> torch.Tensor:
    return torch.cat([X, torch.ones_like(X[:, :1])], dim=1)


def _rows_mv(A: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """A (..., a) @ M (a, b) as one matrix-vector product per row: on a busy multi-core CPU a stack of gemv is
    far faster than a threaded gemm for these tall-skinny shapes (b ≤ 25)."""
    if A.ndim == 1:
        return A @ M
    flat = A.reshape(-1, A.shape[-1])
    return torch.stack([row @ M for row in flat]).reshape(*A.shape[:-1], M.shape[1])


def fit_logistic(X: torch.Tensor, y: torch.Tensor, lam: float = 1e-4, *, iters: int = 30,
                 tol: float = 1e-10, init: LogisticModel | None = None) -> LogisticModel:
    """RERM θ̂ = G(d̂) by Newton's method on (1/n)Σℓ + (λ/2)‖θ‖² (d + 1 = 5 unknowns, converges in ≈ 8 steps).

    ``y`` may carry leading batch dimensions (B, n) sharing the features ``X`` (n, d): all B fits run at once.
    The Hessian (1/n)Σσ(1−σ)x̃x̃ᵀ + λI is ⪰ λI, so each step is a well-posed 5×5 solve. ``init`` warm-starts
    (repeated retraining); Newton steps are damped to length ≤ 10 so a far start cannot overshoot.
    """
    positive("lam", lam)
    integer("iters", iters, 1)
    if X.ndim != 2 or y.shape[-1] != X.shape[0]:
        raise ValueError(f"Invalid shapes: X {tuple(X.shape)}, y {tuple(y.shape)} (need (n, d) and (..., n))")
    Z = _design(X)
    n, k = Z.shape
    outer = (Z.unsqueeze(2) * Z.unsqueeze(1)).reshape(n, k * k)  # rows x̃x̃ᵀ: the Hessian is one mat-vec
    theta = torch.zeros(*y.shape[:-1], k, dtype=X.dtype, device=X.device)
    if init is not None:
        theta = theta + init.theta.to(X.device, X.dtype)
    eye = torch.eye(k, dtype=X.dtype, device=X.device)
    for _ in range(iters):
        p = torch.sigmoid(_rows_mv(theta, Z.T))
        grad = _rows_mv(p - y, Z) / n + lam * theta
        hess = _rows_mv(p * (1 - p), outer).reshape(*theta.shape[:-1], k, k) / n + lam * eye
        step = torch.linalg.solve(hess, grad.unsqueeze(-1)).squeeze(-1)
        step = step * (10.0 / torch.linalg.vector_norm(step, dim=-1, keepdim=True).clamp(min=10.0))
        theta = theta - step
        if float(step.abs().max()) < tol:
            break
    return LogisticModel(theta[..., :-1], theta[..., -1], float(lam))


def scores(model: LogisticModel, X: torch.Tensor) -> torch.Tensor:
    """s = wᵀx + b, shape (..., n)."""
    return _rows_mv(model.w, X.T) + model.b.unsqueeze(-1)


def predict_proba(model: LogisticModel, X: torch.Tensor) -> torch.Tensor:
    """Predicted risk σ(wᵀx + b)."""
    return torch.sigmoid(scores(model, X))


def risk(model: LogisticModel, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """𝓡(d̂, θ) = (1/n) Σ ℓ(θ; xᵢ, yᵢ), the unregularised cross-entropy (nats); batched over model/labels."""
    s = scores(model, X)
    return (y * torch.nn.functional.softplus(-s) + (1 - y) * torch.nn.functional.softplus(s)).mean(-1)


def loss_lipschitz(model: LogisticModel) -> torch.Tensor:
    """L_ℓ(θ) = sup_z ‖∇_z ℓ(θ; z)‖ over 𝒵 = [0, 1]⁴ × [0, 1] (Condition 3.3).

    ∇_x ℓ = (σ(s) − y)·w and ∂_y ℓ = −s, so ‖∇_z ℓ‖² ≤ ‖w‖² + s², and s ranges over
    [b + Σ min(wᵢ, 0), b + Σ max(wᵢ, 0)] on the cube: L_ℓ = √(‖w‖² + s_max²) with s_max = max|s|.
    """
    hi = model.b + model.w.clamp(min=0).sum(-1)
    lo = model.b + model.w.clamp(max=0).sum(-1)
    s_max = torch.maximum(hi.abs(), lo.abs())
    return torch.sqrt((model.w**2).sum(-1) + s_max**2)


def _check_share(share) -> None:
    in_range("share", share, 0.0, 1.0, low_open=True, high_open=True)


def _top_mask(key: torch.Tensor, eligible: torch.Tensor, share: float) -> torch.Tensor:
    """Mask of the ⌊share·#eligible⌉ eligible entries with the largest ``key``."""
    k = int(round(share * int(eligible.sum())))
    mask = torch.zeros_like(eligible)
    if k > 0:
        idx = torch.where(eligible, key, torch.full_like(key, -torch.inf)).topk(k).indices
        mask[idx] = True
    return mask


def flip_top_positives(model: LogisticModel, X: torch.Tensor, y: torch.Tensor, share: float):
    """Self-negating response: the share ξ of positives (y = 1) with the highest predicted risk receive
    "training" and flip to y = 0. Returns ``(y_new, flipped)``; m = ``flipped.sum()`` atoms moved by 1."""
    _check_share(share)
    flipped = _top_mask(scores(model, X), y > 0.5, share)
    return torch.where(flipped, torch.zeros_like(y), y), flipped


def fulfil_top_negatives(model: LogisticModel, X: torch.Tensor, y: torch.Tensor, share: float):
    """Self-fulfilling response [reconstruction]: the share ξ of negatives (y = 0) with the highest predicted
    risk adopt the predicted label y = 1 (flagged, discouraged). Returns ``(y_new, flipped)``."""
    _check_share(share)
    flipped = _top_mask(scores(model, X), y < 0.5, share)
    return torch.where(flipped, torch.ones_like(y), y), flipped


def wasserstein(a: torch.Tensor, b: torch.Tensor, p: float = 2.0, *, weights_a=None, weights_b=None) -> float:
    """W_p between two empirical measures with atoms ``a`` (n, k) and ``b`` (m, k), Euclidean ground metric,
    by exact optimal transport (POT's network simplex ``ot.emd2``): W_p = (min_π Σ πᵢⱼ ‖aᵢ − bⱼ‖^p)^{1/p}."""
    import numpy as np
    import ot
    from scipy.spatial.distance import cdist

    in_range("p", p, 1.0, float("inf"))
    A = np.asarray(torch.as_tensor(a).detach().cpu().to(torch.float64).reshape(len(a), -1))
    B = np.asarray(torch.as_tensor(b).detach().cpu().to(torch.float64).reshape(len(b), -1))
    if A.shape[1] != B.shape[1] or len(A) == 0 or len(B) == 0:
        raise ValueError(f"Invalid atoms: shapes {A.shape} and {B.shape} (need (n, k) and (m, k), n, m ≥ 1)")
    wa = np.full(len(A), 1.0 / len(A)) if weights_a is None else np.asarray(weights_a, dtype=np.float64)
    wb = np.full(len(B), 1.0 / len(B)) if weights_b is None else np.asarray(weights_b, dtype=np.float64)
    # exact pairwise distances (scipy), not the |a|² + |b|² − 2ab expansion, whose √(rounding) ≈ 1e-8 on
    # coincident atoms would bias W_1 upwards
    cost = cdist(A, B, metric="euclidean") ** p
    return float(ot.emd2(wa, wb, cost, numItermax=10_000_000)) ** (1.0 / p)


def dro_risk(model: LogisticModel, X: torch.Tensor, y: torch.Tensor, radius, sense: str = "max",
             p: float = 2.0) -> torch.Tensor:
    """sup (sense="max") or inf (sense="min") of 𝓡(d, θ) over d in the W_p-ball of radius ρ around d̂ = (X, y),
    restricted to label shifts (features stay, labels may move in [0, 1]) [reconstruction].

    Moving atom i's label to the other class costs mass 1/n × distance 1, i.e. W_p^p budget 1/n, and
    changes its loss by its margin: flipping y = 1 → 0 adds s, flipping 0 → 1 adds −s. Moving only a
    fraction f of the mass costs f/n, so the optimum is a fractional knapsack with unit weights: spend the
    budget ρ^p on the largest gains (max: self-negation = W-DRO min-max) or the most negative ones
    (min: self-fulfilment = min-min). Relaxing the transport to features too can only widen the interval;
    Kantorovich–Rubinstein caps it at 𝓡 ± L_ℓ ρ. ``radius`` may be a float or a 1-D sequence of radii (one
    sort serves them all; the radii become the last axis of the result).
    """
    one_of("sense", sense, ("max", "min"))
    in_range("p", p, 1.0, float("inf"))
    radii = torch.as_tensor(radius, dtype=torch.float64).reshape(-1)
    in_range("radius", radii, 0.0, float("inf"))
    s = scores(model, X)
    gain = torch.where(y > 0.5, s, -s)  # loss change when atom i changes class
    gain = gain if sense == "max" else -gain
    n = gain.shape[-1]
    best = gain.clamp(min=0).sort(dim=-1, descending=True).values
    zero = torch.zeros_like(best[..., :1])
    csum = torch.cat([zero, best.cumsum(-1)], -1)  # csum[k] = sum of the k largest gains
    padded = torch.cat([best, zero], -1)
    budget = radii.pow(p).clamp(max=1.0).to(best) * n  # number of atoms that may move (fractional)
    whole = budget.floor().long().clamp(max=n)
    extra = csum[..., whole] + (budget - whole.to(best)) * padded[..., whole]
    base = risk(model, X, y).unsqueeze(-1)
    out = base + extra / n if sense == "max" else base - extra / n
    return out if torch.as_tensor(radius).ndim > 0 else out[..., 0]


class RetrainTrace(NamedTuple):
    """Repeated RERM under the stateful transition of :func:`retrain` (index t = 0 … T)."""

    thetas: torch.Tensor  # (T + 1, d + 1): θ̂_1 … θ̂_{T+1} fitted on d̂_0 … d̂_T (summaries on the CPU)
    step_drift: torch.Tensor  # (T,): W_2(d̂_{t−1}, d̂_t), exact (a Brenier map, see retrain)
    total_drift: torch.Tensor  # (T,): W_2(d̂_0, d̂_t)
    theta_steps: torch.Tensor  # (T,): ‖θ̂_{t+1} − θ̂_t‖
    features: torch.Tensor  # (n, d): the final sample's features


def retrain(X: torch.Tensor, y: torch.Tensor, rounds: int, eps: float, *, kappa: float = 0.02,
            lam: float = 1e-4) -> RetrainTrace:
    """Repeated RERM θ̂_{t+1} = G(d̂_t), d̂_t = Tr(d̂_{t−1}, θ̂_t) with the stateful strategic transition

        Tr(d, θ): x ↦ c + ε (x − c) − κ ε w(θ)        (c = (½, …, ½), labels unchanged)

    [reconstruction]. Tr is jointly ε-Wasserstein-sensitive (Condition 3.2) when κ ≤ 1: scaling by ε
    multiplies every transport cost by ε, and the shift moves by κε‖w − w'‖ ≤ ε‖θ − θ'‖. Each composed map
    x ↦ c + εᵗ(x − c) − v is the gradient of a convex function, so by Brenier's theorem the identity coupling
    is optimal and W_2 is computed exactly: W_2² = (1/n) Σ ‖xᵢ⁽ᵗ⁾ − xᵢ⁽ᵗ⁻¹⁾‖².
    """
    integer("rounds", rounds, 1)
    positive("eps", eps)
    in_range("kappa", kappa, 0.0, 1.0, high_open=False)
    positive("lam", lam)
    c = torch.full_like(X[0], 0.5)
    x0, x = X, X
    model = fit_logistic(x, y, lam)
    thetas, steps, totals, dth = [model.theta], [], [], []
    for _ in range(rounds):
        x_new = c + eps * (x - c) - kappa * eps * model.w
        steps.append(((x_new - x) ** 2).sum(1).mean().sqrt())
        totals.append(((x_new - x0) ** 2).sum(1).mean().sqrt())
        x = x_new
        new = fit_logistic(x, y, lam, init=model)
        dth.append(torch.linalg.vector_norm(new.theta - model.theta))
        model = new
        thetas.append(model.theta)
    return RetrainTrace(*(torch.stack(v).cpu() for v in (thetas, steps, totals, dth)), x)


class Tradeoff(NamedTuple):
    """One change-vs-learn sweep over shares ξ (all fields are tensors of shape (S,))."""

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
    deployed: LogisticModel  # θ̂_1 = G(d̂_0), the model whose predictions trigger the response
    sample_idx: torch.Tensor  # (n,) indices of the sample in the population


def tradeoff(pop: Population, n: int, shares, *, mode: str = "full", lam: float = 1e-4,
             seed: int = 1) -> Tradeoff:
    """The change-vs-learn experiment: draw a sample of n from the population, deploy θ̂_1 = G(d̂_0), let the
    world react with share ξ, retrain θ̂_2 = G(d̂_1) and measure risks.

    ``mode="sample"``: sample performativity — only the sample self-negates (:func:`flip_top_positives`).
    ``mode="full"``: the population self-negates while the sample self-fulfils (:func:`fulfil_top_negatives`),
    the empirical echo chamber. All retrainings over the shares run as one batched Newton solve.
    """
    one_of("mode", mode, ("full", "sample"))
    N = pop.X.shape[0]
    integer("n", n, 2)
    if n > N:
        raise ValueError(f"Invalid n: {n} (must be ≤ population size {N})")
    shares_t = torch.as_tensor(shares, dtype=torch.float64).reshape(-1)
    _check_share(shares_t)
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randperm(N, generator=gen)[:n].to(pop.X.device)
    X, y = pop.X[idx], pop.y[idx]
    deployed = fit_logistic(X, y, lam)
    ys, yp, ms, mp = [], [], [], []
    for xi in shares_t.tolist():
        if mode == "sample":
            y1, flipped = flip_top_positives(deployed, X, y, xi)
            yp.append(pop.y)
            mp.append(0)
        else:
            y1, flipped = fulfil_top_negatives(deployed, X, y, xi)
            ypop, fpop = flip_top_positives(deployed, pop.X, pop.y, xi)
            yp.append(ypop)
            mp.append(int(fpop.sum()))
        ys.append(y1)
        ms.append(int(flipped.sum()))
    Y, YP = torch.stack(ys), torch.stack(yp)
    refit = fit_logistic(X, Y, lam)
    emp = risk(refit, X, Y)
    pop_r = risk(refit, pop.X, YP)
    s_hi = (refit.b + refit.w.clamp(min=0).sum(-1)).abs()
    s_lo = (refit.b + refit.w.clamp(max=0).sum(-1)).abs()
    c_inf = torch.nn.functional.softplus(torch.maximum(s_hi, s_lo))
    dt = pop.X.dtype
    summary = [emp, pop_r, risk(refit, pop.X, pop.y.expand_as(YP)), pop_r - emp, risk(deployed, pop.X, YP),
               risk(deployed, X, Y), loss_lipschitz(refit), c_inf, torch.linalg.vector_norm(refit.w, dim=-1) / 4]
    # the per-share summaries are tiny: return them on the CPU, ready for tables and plots
    return Tradeoff(shares_t, torch.tensor(ms, dtype=dt) / n, torch.tensor(mp, dtype=dt) / N,
                    *(t.cpu() for t in summary), deployed, idx)
