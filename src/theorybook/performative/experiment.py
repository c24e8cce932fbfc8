"""Synthetic performative learning: population, L2-logistic RERM, performative label flips, label-shift
Wasserstein-DRO risks (min-max and min-min) and repeated retraining (Rodemann et al., ICML 2026,
arXiv 2602.04402).

Notation follows the paper. A data point is z = (x, y) ∈ 𝒵 = [0, 1]⁴ × {0, 1} with the Euclidean metric on
(x, y) ∈ ℝ⁵, so a label flip moves an atom by exactly 1. The loss is the cross-entropy of the logistic model,
ℓ(θ; x, y) = y·log(1 + e^{−s}) + (1 − y)·log(1 + e^{s}) with the score s = wᵀx + b (linear in y, so it extends to
soft labels y ∈ [0, 1]), and RERM minimises the L2-regularised empirical risk

    θ̂ = G(d̂) = argmin_θ  (1/n) Σᵢ ℓ(θ; zᵢ) + (λ/2)‖θ‖²,      (γ = λ: Condition 3.1),

with θ = (w, b) and the bias regularised too, so the objective is λ-strongly convex in the whole θ.

The SIAB records of the paper's case study are not public; :func:`population` draws a synthetic population
([reconstruction]).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from ..device import resolve_device, resolve_dtype, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number, one_of

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
    "dro_labels",
    "dro_risk",
    "minmin_risk",
    "RetrainTrace",
    "retrain",
    "estimate_La",
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
    """θ = (w, b) of an L2-logistic regression; leading batch dimensions allowed (w: (..., d), b: (...)).

    ``converged`` is False when Newton's method stopped at ``iters`` before its step fell below the
    tolerance (the fit is then not G(d̂) and should not be trusted)."""

    w: torch.Tensor
    b: torch.Tensor
    lam: float
    converged: bool = True

    @property
    def theta(self) -> torch.Tensor:
        """θ = (w, b) stacked on the last axis."""
        return torch.cat([self.w, self.b.unsqueeze(-1)], dim=-1)


# --- validation helpers -----------------------------------------------------------------------------------
def _model(model) -> LogisticModel:
    if not isinstance(model, LogisticModel):
        raise TypeError(f"Invalid model: {type(model).__name__} (must be a LogisticModel from fit_logistic)")
    finite_tensor("model.w", model.w)
    finite_tensor("model.b", model.b)
    return model


def _features(X) -> torch.Tensor:
    X = finite_tensor("X", X, ndim=2)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"Invalid X: shape {tuple(X.shape)} (need n ≥ 1 rows and d ≥ 1 features)")
    return X


def _labels(y, X: torch.Tensor, *, binary: bool) -> torch.Tensor:
    """Labels on X's device/dtype; binary → {0, 1} only, else [0, 1] (soft labels). ±1 labels are refused."""
    y = finite_tensor("y", y)
    if y.ndim < 1 or y.shape[-1] != X.shape[0]:
        raise ValueError(f"Invalid y: shape {tuple(y.shape)} (need (..., n) with n = {X.shape[0]} = rows of X)")
    y = y.to(X.device, X.dtype)
    if binary:
        bad = (y != 0) & (y != 1)
        if bool(bad.any()):
            raise ValueError(f"Invalid y: values {sorted(set(to_numpy(y[bad]).ravel().tolist()))[:4]} (labels must be "
                             "0 = finds a job or 1 = remains unemployed; map ±1 labels with (y + 1)/2)")
    elif bool(((y < 0) | (y > 1)).any()):
        raise ValueError(f"Invalid y: range [{float(y.min()):g}, {float(y.max()):g}] (labels must lie in [0, 1]; "
                         "map ±1 labels with (y + 1)/2)")
    return y


def _model_fits(model: LogisticModel, X: torch.Tensor) -> None:
    if model.w.shape[-1] != X.shape[1]:
        raise ValueError(f"Invalid X: {X.shape[1]} features, but the model has {model.w.shape[-1]} weights")


# --- population and RERM ----------------------------------------------------------------------------------
def population(n: int, seed: int = 0, *, device=None, dtype: torch.dtype | None = None) -> Population:
    """Draw n individuals: x ~ U[0, 1]⁴, y ~ Bernoulli(σ(w*ᵀx + b*)) with (w*, b*) = (TRUE_W, TRUE_B).

    Labels are "remains unemployed" (1) vs "finds a job" (0) in the paper's reading; the base rate is ≈ 0.35.
    Sampling happens on the CPU (a seeded ``torch.Generator``), then moves to the resolved device.
    """
    n = integer("n", n, 1)
    seed = integer("seed", seed, 0)
    memory_guard(n * 8.0 * 14, lower="n")
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

    ``y`` ∈ [0, 1] (soft labels allowed: ℓ is linear in y) may carry leading batch dimensions (B, n) sharing the
    features ``X`` (n, d): all B fits run at once. The Hessian (1/n)Σσ(1−σ)x̃x̃ᵀ + λI is ⪰ λI, so each step is a
    well-posed solve. ``init`` warm-starts (repeated retraining); Newton steps are damped to length ≤ 10 so a
    far start cannot overshoot. The result's ``converged`` flag says whether the last step fell below ``tol``.
    """
    X = _features(X)
    y = _labels(y, X, binary=False)
    lam = number("lam", lam, 0.0, math.inf, low_open=True)
    iters = integer("iters", iters, 1, 10_000)
    tol = number("tol", tol, 0.0, 1.0, low_open=True)
    k = X.shape[1] + 1
    batch = math.prod(y.shape[:-1])
    memory_guard(8.0 * X.shape[0] * (k * k + 3 * max(batch, 1) + 2 * k),
                 lower="the number of rows of X or of label sets")
    theta0 = None
    if init is not None:
        init = _model(init)
        if init.w.shape[-1] != k - 1:
            raise ValueError(f"Invalid init: {init.w.shape[-1]} weights for {k - 1} features")
        theta0 = init.theta.to(X.device, X.dtype)
    return _newton(X, y, lam, iters, tol, theta0)


def _newton(X: torch.Tensor, y: torch.Tensor, lam: float, iters: int = 30, tol: float = 1e-10,
            theta0: torch.Tensor | None = None) -> LogisticModel:
    """Newton's method behind :func:`fit_logistic` (arguments already validated)."""
    Z = _design(X)
    n, k = Z.shape
    outer = (Z.unsqueeze(2) * Z.unsqueeze(1)).reshape(n, k * k)  # rows x̃x̃ᵀ: the Hessian is one mat-vec
    theta = torch.zeros(*y.shape[:-1], k, dtype=X.dtype, device=X.device)
    if theta0 is not None:
        theta = theta + theta0
    eye = torch.eye(k, dtype=X.dtype, device=X.device)
    converged = False
    for _ in range(iters):
        p = torch.sigmoid(_rows_mv(theta, Z.T))
        grad = _rows_mv(p - y, Z) / n + lam * theta
        hess = _rows_mv(p * (1 - p), outer).reshape(*theta.shape[:-1], k, k) / n + lam * eye
        step = torch.linalg.solve(hess, grad.unsqueeze(-1)).squeeze(-1)
        step = step * (10.0 / torch.linalg.vector_norm(step, dim=-1, keepdim=True).clamp(min=10.0))
        theta = theta - step
        size = float(step.abs().max())
        if not math.isfinite(size):
            break
        if size < tol * max(1.0, float(theta.abs().max())):
            converged = True
            break
    else:
        # out of iterations: accept a step at the float64 noise floor of an ill-conditioned (far-shifted) design
        converged = math.isfinite(size) and size < 1e-7 * max(1.0, float(theta.abs().max()))
    return LogisticModel(theta[..., :-1], theta[..., -1], float(lam), converged)


def scores(model: LogisticModel, X: torch.Tensor) -> torch.Tensor:
    """s = wᵀx + b, shape (..., n)."""
    model, X = _model(model), _features(X)
    _model_fits(model, X)
    return _rows_mv(model.w.to(X), X.T) + model.b.to(X).unsqueeze(-1)


def predict_proba(model: LogisticModel, X: torch.Tensor) -> torch.Tensor:
    """Predicted risk σ(wᵀx + b)."""
    return torch.sigmoid(scores(model, X))


def _risk_from_scores(s: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return (y * torch.nn.functional.softplus(-s) + (1 - y) * torch.nn.functional.softplus(s)).mean(-1)


def risk(model: LogisticModel, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """𝓡(d̂, θ) = (1/n) Σ ℓ(θ; xᵢ, yᵢ), the unregularised cross-entropy (nats); batched over model/labels;
    y ∈ [0, 1]."""
    X = _features(X)
    return _risk_from_scores(scores(model, X), _labels(y, X, binary=False))


def loss_lipschitz(model: LogisticModel) -> torch.Tensor:
    """L_ℓ(θ) = sup_z ‖∇_z ℓ(θ; z)‖ over 𝒵 = [0, 1]⁴ × [0, 1] (Condition 3.3).

    ∇_x ℓ = (σ(s) − y)·w and ∂_y ℓ = −s, so ‖∇_z ℓ‖² ≤ ‖w‖² + s², and s ranges over
    [b + Σ min(wᵢ, 0), b + Σ max(wᵢ, 0)] on the cube: L_ℓ = √(‖w‖² + s_max²) with s_max = max|s|.
    """
    model = _model(model)
    hi = model.b + model.w.clamp(min=0).sum(-1)
    lo = model.b + model.w.clamp(max=0).sum(-1)
    s_max = torch.maximum(hi.abs(), lo.abs())
    return torch.sqrt((model.w**2).sum(-1) + s_max**2)


# --- performative responses -------------------------------------------------------------------------------
def _check_share(share) -> float:
    return number("share", share, 0.0, 1.0, low_open=True, high_open=True)


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
    "training" and flip to y = 0. Labels must be 0/1 (one set, shape (n,)). Returns ``(y_new, flipped)``;
    m = ``flipped.sum()`` atoms moved by 1."""
    share = _check_share(share)
    X = _features(X)
    y = _labels(y, X, binary=True)
    if y.ndim != 1:
        raise ValueError(f"Invalid y: shape {tuple(y.shape)} (one label set of shape (n,))")
    flipped = _top_mask(scores(model, X), y > 0.5, share)
    return torch.where(flipped, torch.zeros_like(y), y), flipped


def fulfil_top_negatives(model: LogisticModel, X: torch.Tensor, y: torch.Tensor, share: float):
    """Self-fulfilling response [reconstruction]: the share ξ of negatives (y = 0) with the highest predicted
    risk adopt the predicted label y = 1 (flagged, discouraged). Returns ``(y_new, flipped)``."""
    share = _check_share(share)
    X = _features(X)
    y = _labels(y, X, binary=True)
    if y.ndim != 1:
        raise ValueError(f"Invalid y: shape {tuple(y.shape)} (one label set of shape (n,))")
    flipped = _top_mask(scores(model, X), y < 0.5, share)
    return torch.where(flipped, torch.ones_like(y), y), flipped


def wasserstein(a: torch.Tensor, b: torch.Tensor, p: float = 2.0, *, weights_a=None, weights_b=None) -> float:
    """W_p between two empirical measures with atoms ``a`` (n, k) and ``b`` (m, k), Euclidean ground metric,
    by exact optimal transport (POT's network simplex ``ot.emd2``): W_p = (min_π Σ πᵢⱼ ‖aᵢ − bⱼ‖^p)^{1/p}."""
    import numpy as np
    import ot
    from scipy.spatial.distance import cdist

    p = number("p", p, 1.0, 64.0)
    A = to_numpy(finite_tensor("a", a)).astype(np.float64)
    B = to_numpy(finite_tensor("b", b)).astype(np.float64)
    A = A.reshape(len(A), -1) if A.ndim else A.reshape(1, 1)
    B = B.reshape(len(B), -1) if B.ndim else B.reshape(1, 1)
    if A.shape[1] != B.shape[1] or len(A) == 0 or len(B) == 0:
        raise ValueError(f"Invalid atoms: shapes {A.shape} and {B.shape} (need (n, k) and (m, k), n, m ≥ 1)")
    memory_guard(3 * 8.0 * len(A) * len(B), lower="the number of atoms in a or b")

    def _weights(name, wts, size):
        if wts is None:
            return np.full(size, 1.0 / size)
        w_ = to_numpy(finite_tensor(name, wts, ndim=1)).astype(np.float64)
        if w_.shape != (size,) or (w_ < 0).any() or not math.isclose(float(w_.sum()), 1.0, rel_tol=1e-9):
            raise ValueError(f"Invalid {name}: need {size} non-negative weights summing to 1")
        return w_

    wa, wb = _weights("weights_a", weights_a, len(A)), _weights("weights_b", weights_b, len(B))
    # exact pairwise distances (scipy), not the |a|² + |b|² − 2ab expansion, whose √(rounding) ≈ 1e-8 on
    # coincident atoms would bias W_1 upwards
    cost = cdist(A, B, metric="euclidean") ** p
    return float(ot.emd2(wa, wb, cost, numItermax=10_000_000)) ** (1.0 / p)


# --- label-shift Wasserstein DRO --------------------------------------------------------------------------
def _radii(radius) -> tuple[torch.Tensor, bool]:
    r = finite_tensor("radius", radius)
    if r.ndim > 1 or r.numel() == 0 or bool((r < 0).any()):
        raise ValueError(f"Invalid radius: {radius!r} (must be a number ≥ 0 or a 1-D sequence of them)")
    return r.to(torch.float64).reshape(-1), r.ndim == 1


def _optimal_labels(s: torch.Tensor, y: torch.Tensor, radii: torch.Tensor, sense: str, p: float,
                    labels: str) -> torch.Tensor:
    """The optimal labels (R, n) of the label-shift DRO problem (see :func:`dro_labels`), s and y of shape (n,)."""
    n = s.shape[-1]
    budget = (radii.to(s).pow(p) * n).unsqueeze(-1)  # Σᵢ |Δyᵢ|^p (moved mass × distance^p, times n)
    # direction that raises (max) or lowers (min) the loss: ∂ℓ/∂y = −s, so raising the loss lowers y where s > 0
    down = (s > 0) if sense == "max" else (s < 0)
    a = s.abs()
    room = torch.where(down, y, 1 - y)  # how far the label can move in the useful direction
    if labels == "binary":
        room = (room > 0.5).to(s)  # a binary label either flips (distance 1) or stays
    a = torch.where(room > 0, a, torch.zeros_like(a))
    if labels == "binary" or p == 1.0:
        # linear cost in the moved mass (binary: fractional mass f of a flip costs f; p = 1: cost |Δy|):
        # a fractional knapsack — fill the largest |s| first
        order = a.argsort(descending=True)
        cap = room[order]
        used = cap.cumsum(-1)
        before = used - cap
        amount = (budget - before).clamp(min=0)
        amount = torch.minimum(amount, cap)  # (R, n), in sorted order
        move = torch.zeros(len(radii), n, dtype=s.dtype, device=s.device)
        move[:, order] = amount
        move = torch.where(a > 0, move, torch.zeros_like(move))
    else:
        # p > 1, labels in [0, 1]: maximise Σ aᵢΔᵢ s.t. Σ Δᵢ^p ≤ B, 0 ≤ Δᵢ ≤ uᵢ. By Jensen no mass splitting
        # helps; KKT gives Δᵢ = min(uᵢ, (aᵢ/ν)^{1/(p−1)}) — water-filling, ν found by bisection in log space.
        full = (room.pow(p) * (a > 0)).sum()
        amax = float(a.max()) if bool((a > 0).any()) else 0.0
        move = torch.zeros(len(radii), n, dtype=s.dtype, device=s.device)
        if amax > 0:
            lo = torch.full((len(radii), 1), math.log(amax) - 80.0, dtype=s.dtype, device=s.device)
            hi = torch.full_like(lo, math.log(amax) + 80.0)
            pos = a > 0
            la = torch.log(a.clamp(min=1e-300))

            def delta(log_nu):
                d = torch.exp((la - log_nu) / (p - 1.0)).clamp(max=1e300)
                return torch.where(pos, torch.minimum(d, room), torch.zeros_like(d))

            for _ in range(200):
                mid = (lo + hi) / 2
                over = delta(mid).pow(p).sum(-1, keepdim=True) > budget
                lo, hi = torch.where(over, mid, lo), torch.where(over, hi, mid)
            move = delta(hi)
            move = torch.where(budget >= full, torch.where(pos, room, torch.zeros_like(room)), move)
    sign = torch.where(down, -torch.ones_like(s), torch.ones_like(s))
    return (y + sign * move).clamp(0, 1)


def dro_labels(model: LogisticModel, X: torch.Tensor, y: torch.Tensor, radius, sense: str = "max",
               p: float = 2.0, *, labels: str = "binary") -> torch.Tensor:
    """The worst (``sense="max"``) or best (``"min"``) distribution for θ in the W_p-ball of radius ρ around
    d̂ = (X, y), restricted to label shifts (features stay) [reconstruction]; returned as effective labels.

    ``labels="binary"``: 𝒵 has labels in {0, 1}. An atom's label can only flip, moving it by 1; moving a
    fraction f of atom i's mass costs f/n of the W_p^p budget ρ^p and changes the risk by f·gᵢ/n, gᵢ its margin
    (ℓ(s, 0) − ℓ(s, 1) = s). The optimum is a fractional knapsack; the mixture of flipped and unflipped mass
    has the same risk as the soft label 1 − f, which is what is returned (shape (n,) or (R, n) for R radii).

    ``labels="interval"``: 𝒵 has labels in [0, 1]; moving y by Δ costs |Δ|^p/n and changes ℓ by −sΔ. For
    p > 1 partial moves are cheaper per unit gain: the optimum is water-filling (Hölder's inequality when no
    label reaches 0 or 1: sup − 𝓡 = ρ·(mean |s|^q)^{1/q}, 1/p + 1/q = 1, over the atoms that can move).
    """
    model = _model(model)
    X = _features(X)
    sense = one_of("sense", sense, ("max", "min"))
    labels = one_of("labels", labels, ("binary", "interval"))
    p = number("p", p, 1.0, 64.0)
    y = _labels(y, X, binary=labels == "binary")
    if y.ndim != 1 or model.w.ndim != 1:
        raise ValueError(f"Invalid y/model: one label set (n,) and one model, got y {tuple(y.shape)}")
    radii, vector = _radii(radius)
    memory_guard(8.0 * 6 * X.shape[0] * len(radii), lower="the number of radii or of rows of X")
    out = _optimal_labels(scores(model, X), y, radii, sense, p, labels)
    return out if vector else out[0]


def dro_risk(model: LogisticModel, X: torch.Tensor, y: torch.Tensor, radius, sense: str = "max",
             p: float = 2.0, *, labels: str = "binary") -> torch.Tensor:
    """sup (``sense="max"``, self-negation: the min-max of W-DRO) or inf (``"min"``, self-fulfilment) of
    𝓡(d, θ) over d in the label-shift W_p-ball of radius ρ around d̂ = (X, y); exact for the label space
    ``labels`` ("binary": {0, 1}; "interval": [0, 1]) — see :func:`dro_labels`. ``radius`` may be a float or a
    1-D sequence (the radii become the last axis). Kantorovich–Rubinstein caps both at 𝓡 ± L_ℓ ρ."""
    yd = dro_labels(model, X, y, radius, sense, p, labels=labels)
    return _risk_from_scores(scores(model, _features(X)).unsqueeze(0), yd if yd.ndim == 2 else yd.unsqueeze(0)
                             ).reshape(yd.shape[:-1])


def minmin_risk(X: torch.Tensor, y: torch.Tensor, radius, p: float = 2.0, *, labels: str = "binary",
                lam: float = 1e-4, max_rounds: int = 30, tol: float = 1e-7) -> tuple[torch.Tensor, LogisticModel]:
    """The min-min ("distributionally favourable") risk inf_θ inf_{W_p(d̂, d) ≤ ρ} 𝓡(d, θ) over label shifts
    [reconstruction], by alternating minimisation: θ ← G(d) (Newton), d ← argmin over the ball (the closed form
    of :func:`dro_labels`) until the risk changes by less than ``tol``. Each half-step can only lower the
    (λ-regularised) objective, so the returned value is the risk at a local optimum — an upper bound on the
    min-min. Returns ``(risk, model)``, batched over the radii when ``radius`` is a sequence."""
    X = _features(X)
    labels = one_of("labels", labels, ("binary", "interval"))
    y = _labels(y, X, binary=labels == "binary")
    p = number("p", p, 1.0, 64.0)
    lam = number("lam", lam, 0.0, math.inf, low_open=True)
    max_rounds = integer("max_rounds", max_rounds, 1, 1000)
    tol = number("tol", tol, 0.0, 1.0, low_open=True)
    radii, vector = _radii(radius)
    memory_guard(8.0 * 8 * X.shape[0] * len(radii), lower="the number of radii or of rows of X")
    model = fit_logistic(X, y.expand(len(radii), -1), lam)
    yd = y.expand(len(radii), -1)
    value = _risk_from_scores(scores(model, X), yd)
    for _ in range(max_rounds):
        s = scores(model, X)
        yd = torch.stack([_optimal_labels(s[i], y, radii[i:i + 1], "min", p, labels)[0] for i in range(len(radii))])
        model = _newton(X, yd, lam, theta0=model.theta)
        new = _risk_from_scores(scores(model, X), yd)
        done = bool(((value - new).abs() <= tol).all())
        value = new
        if done:
            break
    if vector:
        return value, model
    return value[0], LogisticModel(model.w[0], model.b[0], model.lam, model.converged)


# --- repeated retraining ----------------------------------------------------------------------------------
class RetrainTrace(NamedTuple):
    """Repeated RERM under the stateful transition of :func:`retrain` (rounds t = 1 … T; CPU tensors)."""

    thetas: torch.Tensor  # (T + 1, d + 1): θ̂_1 … θ̂_{T+1}, θ̂_{t+1} = G(d̂_t)
    step_drift: torch.Tensor  # (T,): δ_t = W_2(d̂_{t−1}, d̂_t), exact (a translation)
    total_drift: torch.Tensor  # (T,): W_2(d̂_0, d̂_t)
    theta_steps: torch.Tensor  # (T,): ‖θ̂_{t+1} − θ̂_t‖ = ‖G(d̂_t) − G(d̂_{t−1})‖, paired with δ_t
    shifts: torch.Tensor  # (T + 1, d): the common feature shift v_t of d̂_t = d̂_0 + v_t (v_0 = 0)
    L_a: float  # ‖ŵ_1‖, the best response's sensitivity to a translation along ŵ (intercept absorbs it)
    rho: float  # ε(1 + μ L_a): the growth factor of the drift that Theorem 3.10 predicts
    features: torch.Tensor  # (n, d): the final sample's features (on the input's device)


def retrain(X: torch.Tensor, y: torch.Tensor, rounds: int, eps: float, *, mu: float = 1.0, kappa: float = 0.05,
            lam: float = 1e-4, saturation: float | None = None, frozen: bool = False) -> RetrainTrace:
    """Repeated RERM θ̂_{t+1} = G(d̂_t), d̂_t = Tr(d̂_{t−1}, θ̂_t), under a stateful *gaming* transition
    [reconstruction]. States are translates d̂_0 + v of the sample (labels kept), and

        Tr(d̂_0 + v, θ) = d̂_0 + ε v − ε (κ + μ (b(θ) − b̂_1)) ŵ,       ŵ = ŵ_1/‖ŵ_1‖, θ̂_1 = G(d̂_0):

    each round units keep a share ε ∈ (0, 1] of their accumulated gaming and move further against the risk
    direction ŵ by κ plus μ times how far the retrained intercept has risen to compensate (an arms race).
    On the translates, W_p(d̂_0 + v, d̂_0 + v') = ‖v − v'‖, so Tr is jointly ε-sensitive (Condition 3.2) for
    μ ≤ 1. Logistic RERM absorbs a translation in its intercept, b ↦ b − wᵀΔv, so G is L_a = ‖w‖-Lipschitz
    along ŵ and the drift obeys δ_{t+1} = ε(1 + μ L_a) δ_t: Theorem 3.10's one-step bound is tight, and the
    drift dies out for ε(1 + L_a) < 1 and grows geometrically for ε(1 + L_a) > 1 (μ = 1).

    ``saturation=c`` makes the response non-linear (gaming effort saturates): the arms-race term
    μ(b(θ) − b̂_1) becomes c·tanh(μ(b(θ) − b̂_1)/c). It is still 1-Lipschitz in θ (μ ≤ 1), so Tr stays jointly
    ε-sensitive and Theorem 3.10's bound applies, but the one-step bound is no longer attained: the drift grows
    at first and levels off below δ₁Σρ^s. ``frozen=True`` never retrains: every round reacts to θ̂_1 (deploy
    once), the ablation without the model's response; ``thetas`` then stays θ̂_1 and ``theta_steps`` is 0.
    """
    X = _features(X)
    y = _labels(y, X, binary=False)
    if y.ndim != 1:
        raise ValueError(f"Invalid y: shape {tuple(y.shape)} (one label set of shape (n,))")
    rounds = integer("rounds", rounds, 1, 1000)
    eps = number("eps", eps, 0.0, 1.0, low_open=True)
    mu = number("mu", mu, 0.0, 1.0)
    kappa = number("kappa", kappa, 0.0, 1.0)
    lam = number("lam", lam, 0.0, math.inf, low_open=True)
    if saturation is not None:
        saturation = number("saturation", saturation, 0.0, math.inf, low_open=True)
    if not isinstance(frozen, bool):
        raise TypeError(f"Invalid frozen: {frozen!r} (must be a bool)")
    model = fit_logistic(X, y, lam)
    w_norm = float(torch.linalg.vector_norm(model.w))
    if w_norm == 0.0:
        raise ValueError("Invalid X/y: the initial fit has w = 0, so there is no risk direction to game")
    direction = model.w / w_norm
    b_ref = model.b
    v = torch.zeros_like(X[0])
    thetas, shifts, steps, totals, dth = [model.theta], [v], [], [], []
    for t in range(rounds):
        race = mu * (model.b - b_ref)
        if saturation is not None:
            race = saturation * torch.tanh(race / saturation)
        v_new = eps * v - eps * (kappa + race) * direction
        steps.append(torch.linalg.vector_norm(v_new - v))
        totals.append(torch.linalg.vector_norm(v_new))
        v = v_new
        if not math.isfinite(float(v.abs().max())) or float(v.abs().max()) > 1e6:
            raise ValueError(f"Invalid rounds/eps: the drift left any sensible range at round {t + 1} "
                             f"(|v| = {float(v.abs().max()):.3g}); lower rounds or eps")
        if frozen:
            dth.append(torch.zeros_like(model.b))
            thetas.append(model.theta)
            shifts.append(v)
            continue
        new = _newton(X + v, y, lam, theta0=model.theta)
        if not new.converged:
            raise ValueError(f"Invalid rounds/eps: retraining did not converge at round {t + 1}; lower rounds or eps")
        dth.append(torch.linalg.vector_norm(new.theta - model.theta))
        model = new
        thetas.append(model.theta)
        shifts.append(v)
    rho = eps * (1.0 + mu * w_norm)
    cpu = [torch.stack(z).cpu() for z in (thetas, steps, totals, dth, shifts)]
    return RetrainTrace(*cpu, w_norm, rho, X + v)


def estimate_La(theta_steps, step_drift) -> float:
    """L̂_a = max_t ‖G(d̂_t) − G(d̂_{t−1})‖ / W_p(d̂_{t−1}, d̂_t): the Lipschitz constant of the best response read
    off a run. Entry t of both sequences must belong to the same round (as in :class:`RetrainTrace`); rounds
    with zero drift are skipped."""
    th = finite_tensor("theta_steps", theta_steps, ndim=1).to(torch.float64).cpu()
    dr = finite_tensor("step_drift", step_drift, ndim=1).to(torch.float64).cpu()
    if th.shape != dr.shape or th.numel() == 0:
        raise ValueError(f"Invalid theta_steps/step_drift: shapes {tuple(th.shape)} and {tuple(dr.shape)} "
                         "(must match, one entry per round)")
    if bool((th < 0).any()) or bool((dr < 0).any()):
        raise ValueError("Invalid theta_steps/step_drift: norms and distances must be ≥ 0")
    keep = dr > 0
    if not bool(keep.any()):
        raise ValueError("Invalid step_drift: all zero (no drift, no Lipschitz ratio)")
    return float((th[keep] / dr[keep]).max())
