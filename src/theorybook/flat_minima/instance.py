"""The "unseen coordinates" instance: sampling, the risks, ρ-sharpness (closed form and brute force), the two ERMs.

Instance [reconstruction — ours, Feldman-style, **not** the paper's construction]: a sample ``z ∈ {0, 1}^d`` has
i.i.d. Bernoulli(½) entries and

.. math::  f(w; z) = \\sum_i z_i\\,\\phi(w_i),\\qquad \\phi(u) = \\tfrac12\\min(u, 0)^2,

non-negative, convex and β-smooth with β = 1. With ``n`` samples ``Z ∈ {0,1}^{n×d}`` and ``a_i = c_i/n`` (the
fraction of samples containing ``i``): ``F̂(w) = Σ_i a_i φ(w_i)`` and ``F(w) = ½ Σ_i φ(w_i)``. A coordinate with
``a_i = 0`` is *unseen*: the data say nothing about it.

ρ-sharpness ``S_ρ(w) = max_{‖v‖≤ρ} F̂(w + v) − F̂(w)``. On the orthant ``w_i ≥ 0`` (wherever ``a_i > 0``) it has
the closed form ``S_ρ(w) = max_i a_i (ρ − w_i)_+² / 2``, attained at ``v = −ρ e_{i*}`` [derived; proof in
:mod:`theorybook.flat_minima.theory`].

Claim 4 [reconstruction]: least squares ``f(w; (a, y)) = ½(aᵀw − y)²`` with ``a ~ N(0, I_d/d)``, ``w* ~ N(0, I)``,
``y = aᵀw* + σξ``, so ``F(w) = ‖w − w*‖²/(2d) + σ²/2``; GD, SA-GD and SAM from ``w₀ = 0``; the replace-one
divergence ``δ = mean_i ‖w_T(S) − w_T(S⁽ⁱ⁾)‖`` against the stability template ``2ηGT/n`` (Hardt et al. 2016).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number

__all__ = [
    "BETA", "CHAPTER_SEEDS", "HELDOUT_STREAM", "STABILITY_NS", "HeldOut", "Instance", "MonteCarlo", "SharpnessCheck",
    "chapter_rho", "empirical_risk", "expected_unseen", "flat_erm", "heldout_risks", "phi", "population_risk",
    "population_risk_mc", "prob_some_unseen", "rho_sharpness", "rho_sharpness_search", "sharp_erm", "sharpness_check",
    "unseen_instance",
]

#: Smoothness of f(·; z): φ'' ∈ {0, 1}, so β = 1 and the step sizes allowed are η ∈ (0, 2/β].
BETA = 1.0
#: The seed of the chapter's instances, Monte Carlo and stability data.
CHAPTER_SEEDS = (2026,)
#: The sample sizes of the stability study.
STABILITY_NS = (50, 100, 200, 400, 800)




def chapter_rho(d: int = 4096) -> float:
    """The chapter's radius ``ρ = 1/(2√d)``: then ``#seen·ρ² ≤ ¼`` and the flat ERM fits in the unit ball."""
    return 1.0 / (2.0 * math.sqrt(integer("d", d, 1)))


# -- the instance --------------------------------------------------------------------------------------------
class Instance(NamedTuple):
    """``Z`` (n×d, entries 0/1, float64), ``a = Z.mean(0)`` and the mask ``seen = a > 0``."""

    Z: torch.Tensor
    a: torch.Tensor
    seen: torch.Tensor


def _check_01(name: str, Z: Any, ndim_min: int = 2) -> torch.Tensor:
    t = finite_tensor(name, Z)
    if t.ndim < ndim_min:
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (must be (..., n, d) with n, d ≥ 1)")
    if t.numel() == 0 or t.shape[-1] < 1 or t.shape[-2] < 1:
        raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (must have n ≥ 1 samples and d ≥ 1 coordinates)")
    if not bool(((t == 0) | (t == 1)).all()):
        raise ValueError(f"Invalid {name}: entries must be 0 or 1 (a sample z ∈ {{0, 1}}^d)")
    return t.to(torch.float64)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def unseen_instance(d: int = 4096, n: int = 10, seed: int = 0, device: Any = None) -> Instance:
    """Draw ``n`` samples ``z ∈ {0,1}^d`` with i.i.d. Bernoulli(½) entries (CPU generator, then moved to
    ``device``). Each coordinate is unseen with probability ``2⁻ⁿ``."""
    d = integer("d", d, 1)
    n = integer("n", n, 1)
    s = integer("seed", seed, 0)
    memory_guard(9.0 * n * d, lower="d or n")
    dev = resolve_device(device)
    Z = torch.randint(0, 2, (n, d), generator=_generator(s), dtype=torch.uint8).to(dev, torch.float64)
    a = Z.mean(0)
    return Instance(Z, a, a > 0)


def phi(u: Any) -> torch.Tensor:
    """``φ(u) = ½ min(u, 0)²`` elementwise: non-negative, convex, ``φ'(u) = min(u, 0)`` is 1-Lipschitz."""
    t = finite_tensor("u", u)
    return 0.5 * torch.clamp(t, max=0.0) ** 2


def empirical_risk(w: Any, Z: Any) -> torch.Tensor:
    """``F̂(w) = (1/n) Σ_j f(w; z_j) = (1/n) Σ_j Σ_i Z_ji φ(w_i)`` for ``w`` (..., d) and ``Z`` (..., n, d)
    (leading dimensions broadcast); computed sample by sample, not from the counts ``a``."""
    wt = finite_tensor("w", w)
    Zt = _check_01("Z", Z)
    if wt.ndim < 1 or wt.shape[-1] != Zt.shape[-1]:
        raise ValueError(f"Invalid w: shape {tuple(wt.shape)} (its last dimension must be d = {Zt.shape[-1]})")
    per_sample = torch.einsum("...jd,...d->...j", Zt, phi(wt).to(Zt.device, torch.float64))
    return per_sample.mean(-1)


def population_risk(w: Any) -> torch.Tensor:
    """``F(w) = E_z f(w; z) = ½ Σ_i φ(w_i)`` in closed form (each ``z_i`` has mean ½)."""
    wt = finite_tensor("w", w)
    if wt.ndim < 1:
        raise ValueError("Invalid w: a scalar (must have a last dimension d ≥ 1)")
    return 0.5 * phi(wt).sum(-1)


class MonteCarlo(NamedTuple):
    """Monte-Carlo estimate of ``F(w)`` and its standard error."""

    mean: float
    stderr: float
    m: int


def population_risk_mc(w: Any, m: int = 10_000, seed: int = 0) -> MonteCarlo:
    """``F(w)`` by Monte Carlo: the mean of ``f(w; z)`` over ``m`` fresh samples ``z``.

    Only coordinates with ``φ(w_i) > 0`` can contribute to ``f(w; z) = Σ_i z_i φ(w_i)``, so fresh bits are drawn
    for those coordinates only (the estimator is the same; the cost is ``m × |supp φ(w)|``)."""
    wt = finite_tensor("w", w)
    if wt.ndim != 1 or wt.numel() < 1:
        raise ValueError(f"Invalid w: shape {tuple(wt.shape)} (must be one vector of length d ≥ 1)")
    m = integer("m", m, 2)
    s = integer("seed", seed, 0)
    p = phi(wt).to("cpu", torch.float64)
    supp = p[p > 0]
    memory_guard(9.0 * m * max(int(supp.numel()), 1), lower="m")
    if supp.numel() == 0:
        return MonteCarlo(0.0, 0.0, m)
    z = torch.randint(0, 2, (m, int(supp.numel())), generator=_generator(s), dtype=torch.uint8).to(torch.float64)
    f = z @ supp
    return MonteCarlo(float(f.mean()), float(f.std() / math.sqrt(m)), m)


class HeldOut(NamedTuple):
    """Held-out estimates of ``F`` at ``P`` points from the same ``m`` fresh samples: ``mean`` and ``stderr``
    (shape (P,)) and ``m``."""

    mean: np.ndarray
    stderr: np.ndarray
    m: int


#: The stream tag of the held-out draws: their generator is seeded with ``(seed, HELDOUT_STREAM)``, so they share
#: no bits with the instances drawn from ``seed`` (or any other seed).
HELDOUT_STREAM = 44


def heldout_risks(W: Any, m: int = 10_000, seed: int = 0, chunk: int = 1024, full_product: bool = False) -> HeldOut:
    """``F`` at the rows of ``W`` (P, d) (or one ``w`` (d,)) measured on ``m`` held-out samples: fresh
    ``z ∈ {0, 1}^d`` with i.i.d. Bernoulli(½) entries — the chapter's distribution, every coordinate drawn — and
    ``f(w; z) = Σ_i z_i φ(w_i)`` evaluated sample by sample (no closed form). All points see the same draws (a
    paired comparison). The generator is seeded with ``(seed, HELDOUT_STREAM)`` through numpy's ``SeedSequence``:
    a stream disjoint from the instances'. Every coordinate's bit is drawn (one uniform byte holds eight); the
    products skip the coordinates where ``φ(w_i) = 0`` at every point, whose terms are exactly 0 —
    ``full_product=True`` multiplies all ``d`` columns instead (the same numbers, slower; a test compares them)."""
    Wt = finite_tensor("W", W)
    if Wt.ndim not in (1, 2) or Wt.shape[-1] < 1 or Wt.numel() == 0:
        raise ValueError(f"Invalid W: shape {tuple(Wt.shape)} (must be (d,) or (P, d) with d ≥ 1)")
    m = integer("m", m, 2)
    s = integer("seed", seed, 0)
    ch = integer("chunk", chunk, 1, 10**6)
    if not isinstance(full_product, bool):
        raise TypeError(f"Invalid full_product: {full_product!r} (must be a bool)")
    Wt = Wt.reshape(-1, Wt.shape[-1]).to("cpu", torch.float64)
    P, d = Wt.shape
    memory_guard(9.0 * min(ch, m) * d + 16.0 * m * P, lower="m or d")
    state = int(np.random.SeedSequence((s, HELDOUT_STREAM)).generate_state(1, np.uint64)[0]) % (2**63 - 1)
    gen = _generator(state)
    phiW = phi(Wt).T.contiguous()  # (d, P)
    # the terms z_i φ(w_i) with φ(w_i) = 0 at every point are exactly 0: read only the other bits (same sums)
    cols = torch.arange(d) if full_product else torch.nonzero((phiW > 0).any(1)).reshape(-1)
    phiS = phiW[cols]
    byte_col, bit = cols // 8, (cols % 8).to(torch.uint8)
    f = torch.zeros(m, P, dtype=torch.float64)
    nbytes = (d + 7) // 8
    for start in range(0, m, ch):
        b = min(ch, m - start)
        # eight fair bits per uniform byte: bit i % 8 of byte i // 8 is z_i ~ Bernoulli(½), i.i.d. over i and draws
        byte = torch.randint(0, 256, (b, nbytes), generator=gen, dtype=torch.uint8)
        if cols.numel():
            z = (byte[:, byte_col] >> bit) & 1
            f[start:start + b] = z.to(torch.float64) @ phiS
    mean = f.mean(0)
    se = f.std(0) / math.sqrt(m)
    return HeldOut(to_numpy(mean), to_numpy(se), m)


def _sharpness_raw(w: torch.Tensor, a: torch.Tensor, rho: float) -> torch.Tensor:
    return 0.5 * (a * torch.clamp(rho - w, min=0.0) ** 2).amax(-1)


def rho_sharpness(w: Any, Z: Any, rho: float) -> torch.Tensor:
    """``S_ρ(w) = max_{‖v‖≤ρ} F̂(w + v) − F̂(w) = max_i a_i (ρ − w_i)_+² / 2`` (exact on the orthant).

    Valid where ``w_i ≥ 0`` for every seen coordinate (``a_i > 0``); unseen coordinates may have any sign.
    ``w`` (..., d), ``Z`` (..., n, d)."""
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    wt = finite_tensor("w", w)
    Zt = _check_01("Z", Z)
    if wt.ndim < 1 or wt.shape[-1] != Zt.shape[-1]:
        raise ValueError(f"Invalid w: shape {tuple(wt.shape)} (its last dimension must be d = {Zt.shape[-1]})")
    a = Zt.mean(-2)
    wt = wt.to(a.device, torch.float64)
    if bool(((wt < 0) & (a > 0)).any()):
        raise ValueError("Invalid w: negative on a seen coordinate (the closed form of S_ρ needs w_i ≥ 0 "
                         "wherever a_i > 0)")
    return _sharpness_raw(wt, a, r)


def rho_sharpness_search(w: Any, Z: Any, rho: float, directions: int = 4000, seed: int = 0) -> float:
    """``S_ρ(w)`` by brute force, for small ``d``: ``F̂(w + v)`` is convex in ``v``, so its maximum over the ball
    lies on the sphere; evaluate ``F̂`` at ``directions`` random points ``ρu`` of the sphere, then polish the best
    three with SLSQP (constraint ``‖v‖² ≤ ρ²``). Uses no closed form and no knowledge of the maximiser."""
    from scipy.optimize import minimize

    r = number("rho", rho, 0.0, math.inf, low_open=True)
    k = integer("directions", directions, 1, 10**6)
    s = integer("seed", seed, 0)
    wt = finite_tensor("w", w, ndim=1).to("cpu", torch.float64)
    Zt = _check_01("Z", Z).to("cpu")
    if Zt.ndim != 2 or wt.shape[0] != Zt.shape[1]:
        raise ValueError(f"Invalid w/Z: shapes {tuple(wt.shape)}, {tuple(Zt.shape)} (must be (d,) and (n, d))")
    d = wt.shape[0]
    if d > 8:
        raise ValueError(f"Invalid w: d = {d} (brute force is for d ≤ 8)")
    Zn, wn = to_numpy(Zt), to_numpy(wt)

    def fhat(v: np.ndarray) -> np.ndarray:
        return (0.5 * np.minimum(wn + v, 0.0) ** 2 @ Zn.T).mean(-1)

    rng = np.random.default_rng(s)
    u = rng.normal(size=(k, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    cand = r * u
    vals = fhat(cand)
    best = float(vals.max())
    a = Zn.mean(0)
    for v0 in cand[np.argsort(vals)[-3:]]:
        res = minimize(lambda v: -float(fhat(v)), v0, jac=lambda v: -a * np.minimum(wn + v, 0.0), method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda v: r * r - float(v @ v), "jac": lambda v: -2 * v}],
                       options={"ftol": 1e-15, "maxiter": 200})
        v = res.x * min(1.0, r / max(float(np.linalg.norm(res.x)), 1e-300))
        best = max(best, float(fhat(v)))
    return best - float(fhat(np.zeros(d)))


class SharpnessCheck(NamedTuple):
    """Closed form vs brute force at random orthant points: the largest relative error and the values."""

    max_rel: float
    points: int
    closed: np.ndarray
    brute: np.ndarray


def sharpness_check(points: int = 100, seed: int = 0, d: int = 3, n: int = 5) -> SharpnessCheck:
    """At ``points`` random instances (``Z`` Bernoulli(½), re-drawn until some coordinate is seen) and points ``w``
    with ``w_i ~ U[0, 0.8ρ]`` (probability 0.9) or ``U[ρ, 1.5ρ]`` (0.1) on seen coordinates and ``U[−1, 1]`` on
    unseen ones (ρ ~ U[0.1, 1]) — keeping ``w_i ≤ 0.8ρ`` makes the caps of the sphere where ``F̂(w + v) > 0`` wide
    enough (≥ 10 % of the sphere) for a random search to land in them: compare
    :func:`rho_sharpness` (closed form) with :func:`rho_sharpness_search` (brute force)."""
    P = integer("points", points, 1, 10_000)
    s = integer("seed", seed, 0)
    dd = integer("d", d, 1, 8)
    nn = integer("n", n, 1, 1000)
    rng = np.random.default_rng(s)
    closed, brute = [], []
    for k in range(P):
        Z = rng.integers(0, 2, size=(nn, dd)).astype(np.float64)
        while Z.sum() == 0:
            Z = rng.integers(0, 2, size=(nn, dd)).astype(np.float64)
        rho = float(rng.uniform(0.1, 1.0))
        seen = Z.mean(0) > 0
        w_seen = np.where(rng.random(dd) < 0.9, rng.uniform(0.0, 0.8 * rho, dd), rng.uniform(rho, 1.5 * rho, dd))
        w = np.where(seen, w_seen, rng.uniform(-1.0, 1.0, dd))
        closed.append(float(rho_sharpness(w, Z, rho)))
        brute.append(rho_sharpness_search(w, Z, rho, 500, s + k))
    c, b = np.array(closed), np.array(brute)
    rel = np.where((c == 0) & (b == 0), 0.0, np.abs(c - b) / np.maximum(np.abs(c), 1e-300))
    return SharpnessCheck(float(rel.max()), P, c, b)


def _as_instance(instance: Any) -> Instance:
    if not isinstance(instance, Instance):
        raise TypeError(f"Invalid instance: {type(instance).__name__} (must be an Instance from unseen_instance)")
    return instance


def flat_erm(instance: Instance, rho: float, c: float = 0.8) -> torch.Tensor:
    """The flat ERM: ``w_i = ρ`` on seen coordinates and ``−c·u`` on the unseen ones, ``u`` uniform of norm 1.

    ``F̂ = 0``, ``S_ρ = 0`` and ``F = c²/4``. Raises ``ValueError`` when the instance has no unseen coordinate
    or when ``#seen·ρ² + c² > 1`` (the point would leave the unit ball)."""
    inst = _as_instance(instance)
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    cc = number("c", c, 0.0, 1.0)
    unseen = ~inst.seen
    k = int(unseen.sum())
    if k == 0:
        raise ValueError("Invalid instance: it has no unseen coordinate (choose another seed, a larger d or a "
                         "smaller n)")
    n_seen = int(inst.seen.sum())
    if n_seen * r * r + cc * cc > 1.0 + 1e-12:
        raise ValueError(f"Invalid rho/c: #seen·ρ² + c² = {n_seen * r * r + cc * cc:.4g} (must be ≤ 1 for the flat "
                         "ERM to lie in the unit ball)")
    w = torch.full_like(inst.a, r)
    w[unseen] = -cc / math.sqrt(k)
    return w


def sharp_erm(instance: Instance) -> torch.Tensor:
    """The sharp ERM ``w = 0``: ``F̂ = F = 0`` and ``S_ρ = ρ² max_i a_i / 2``."""
    inst = _as_instance(instance)
    return torch.zeros_like(inst.a)


def expected_unseen(d: int, n: int) -> float:
    """``E #unseen = d·2⁻ⁿ``."""
    return integer("d", d, 1) * 2.0 ** (-integer("n", n, 1))


def prob_some_unseen(d: int, n: int) -> float:
    """``P(#unseen ≥ 1) = 1 − (1 − 2⁻ⁿ)^d`` (computed with ``log1p``/``expm1``)."""
    dd, nn = integer("d", d, 1), integer("n", n, 1)
    return -math.expm1(dd * math.log1p(-(2.0 ** -nn)))
