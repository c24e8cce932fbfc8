"""Claim 2's risk on a *coupled* unseen-coordinates instance [reconstruction — ours, **not** the paper's construction].

The chapter's instance cannot show claim 2's Ω(1) risk: its loss is separable, so SA-GD never moves an unseen
coordinate. Here every sample's loss also carries one data-independent coupling term,

.. math::  f(w; z) = \\sum_i z_i\\,\\phi(w_i) + \\psi(\\langle u, w\\rangle - \\tau),\\qquad
           \\phi(x) = \\tfrac12\\min(x, 0)^2,\\quad \\psi(\\sigma) = \\tfrac\\lambda2\\max(\\sigma, 0)^2,\\quad
           u = \\mathbf 1/\\sqrt d,

non-negative, convex and β-smooth with β = 1 + λ (the Hessian is ``diag(z_i φ'') + λ·1[σ > 0] uuᵀ``). With
``a_i`` the fraction of samples containing ``i``: ``F̂(w) = Σ a_i φ(w_i) + ψ(⟨u, w⟩ − τ)`` and
``F(w) = ½ Σ φ(w_i) + ψ(⟨u, w⟩ − τ)``. The start ``w₀ = b·1`` with ``τ = ⟨u, w₀⟩ = b√d`` is an empirical
minimiser with ``F(w₀) = 0`` (every ``w_i ≥ 0`` and ``σ = 0``), and ``∇F̂(w₀) = 0``: GD and SAM never leave it.

Why SA-GD creates risk: ``F̂(w + v) = 0`` for all ``‖v‖ ≤ ρ`` (a flat ERM) needs ``w_i ≥ ρ`` on every seen coordinate
and ``⟨u, w⟩ ≤ τ − ρ``, so ``Σ_unseen w_i ≤ db − √d ρ − #seen·ρ``: with ``ρ > b`` every flat ERM puts negative
mass of order ``(ρ − b)·#seen`` on the few unseen coordinates, and ``F ≥ (Σ_unseen w_i)²/(4k)`` (k unseen).

Exact inner maximum on the orthant (``w_i ≥ 0`` wherever ``a_i > 0``), with ``σ = ⟨u, w⟩ − τ`` [derived here]:

.. math::  \\max_{\\lVert v\\rVert\\le\\rho}\\hat F(w + v) = \\max\\Big\\{\\psi(\\sigma + \\rho),\\
           \\max_{i\\ \\mathrm{seen}}\\ \\sup_{0 < r \\le \\rho}\\ \\tfrac{a_i}2(r - w_i)_+^2
           + \\psi\\big(\\sigma - r/\\sqrt d + \\sqrt{(d-1)/d}\\,\\sqrt{\\rho^2 - r^2}\\big)\\Big\\}.

Proof: let ``N`` be the seen coordinates that ``v`` pushes below 0 and ``r = ‖v_N‖``. The chapter's orthant lemma
bounds the φ-part by ``max_i a_i(r − w_i)_+²/2``; and ``⟨u, v⟩ ≤ −Σ_N|v_i|/√d + ‖u_{N^c}‖‖v_{N^c}‖ ≤
−r/√d + √((d−1)/d)·√(ρ² − r²)`` (ℓ₁ ≥ ℓ₂ on N, |N| ≥ 1), and ψ is non-decreasing; with N empty, ``⟨u, v⟩ ≤ ρ``.
The bound is attained by ``v = −r e_i + √(ρ² − r²)·u_{−i}/‖u_{−i}‖`` (or ``ρu``). For a given ``a_i`` the smallest
``w_i`` is best, so only one coordinate per value of ``a_i`` (≤ n of them) is a candidate; the 1-D supremum over
``r`` is taken on a 257-point grid and refined by golden section. :func:`coupled_sharpness_search` checks it by brute
force.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number
from .instance import _check_01, _generator, heldout_risks

__all__ = ["COUPLED_UNSEEN", "COUPLING_LAMBDA", "RWP_SIGMA_COUPLED", "RWP_STREAM_COUPLED", "CoupledCheck",
           "CoupledInstance", "CoupledRun", "CoupledStudy",
           "coupled_empirical_risk", "coupled_heldout", "coupled_instance", "coupled_population_risk", "coupled_rwp",
           "coupled_sa_gd",
           "coupled_sharpness", "coupled_sharpness_check", "coupled_sharpness_search", "coupled_study"]

#: The coupling's curvature λ (so β = 1 + λ = 1.1): small, so that SA-GD lifts the seen coordinates before the coupling
#: pushes them down (the run stays on the orthant where the exact inner max holds; pilot seeds 9001–9040).
COUPLING_LAMBDA = 0.1
#: The scan over the dimension at n = 4 samples: d = K·2ⁿ ∈ {48, 64, 96}, so K = 3, 4, 6 coordinates are unseen on
#: average (the chapter's instance is d = 64).
COUPLED_UNSEEN = (3, 4, 6)
_GRID = 257
_MAX_STEPS = 2**18


class CoupledInstance(NamedTuple):
    """``Z`` (n×d, 0/1), ``a``, ``seen``, and the construction's constants: ``b`` (the start ``w₀ = b·1``), ``rho``,
    ``tau = b√d`` and ``lam`` (λ); ``draws`` is how many instances were drawn before one had an unseen coordinate."""

    Z: torch.Tensor
    a: np.ndarray
    seen: np.ndarray
    d: int
    n: int
    b: float
    rho: float
    tau: float
    lam: float
    draws: int


def coupled_instance(n: int = 4, seed: int = 0, unseen: int = 4, bd: float = 5.0, rho_over_b: float = 2.0,
                     lam: float = COUPLING_LAMBDA, device: Any = None) -> CoupledInstance:
    """Draw ``n`` samples ``z ∈ {0,1}^d`` (``d = unseen·2ⁿ``, i.i.d. Bernoulli(½) entries, CPU generator seeded with
    ``seed``), redrawing until some coordinate is unseen (at most 1000 draws), with ``b = bd/d``,
    ``ρ = rho_over_b·b``, ``τ = b√d`` and λ = ``lam``."""
    nn = integer("n", n, 1, 16)
    s = integer("seed", seed, 0)
    k = integer("unseen", unseen, 1, 64)
    b_d = number("bd", bd, 0.0, 100.0, low_open=True)
    rb = number("rho_over_b", rho_over_b, 0.0, 100.0, low_open=True)
    lm = number("lam", lam, 0.0, 100.0)
    d = k * 2**nn
    memory_guard(9.0 * nn * d, lower="n or unseen")
    dev = resolve_device(device)
    gen = _generator(s)
    for draw in range(1, 1001):
        Z = torch.randint(0, 2, (nn, d), generator=gen, dtype=torch.uint8).to(torch.float64)
        a = to_numpy(Z.mean(0))
        if bool((a == 0).any()):
            b = b_d / d
            return CoupledInstance(Z.to(dev), a, a > 0, d, nn, b, rb * b, b * math.sqrt(d), lm, draw)
    raise ValueError(f"Invalid seed/n/unseen: no instance with an unseen coordinate in 1000 draws (n = {nn})")


def _as_coupled(instance: Any) -> CoupledInstance:
    if not isinstance(instance, CoupledInstance):
        raise TypeError(f"Invalid instance: {type(instance).__name__} (must be a CoupledInstance)")
    return instance


def _psi(x: Any, lam: float) -> Any:
    return 0.5 * lam * np.maximum(x, 0.0) ** 2


def _w(w: Any, d: int) -> np.ndarray:
    wt = finite_tensor("w", w)
    if wt.ndim < 1 or wt.shape[-1] != d:
        raise ValueError(f"Invalid w: shape {tuple(wt.shape)} (its last dimension must be d = {d})")
    return to_numpy(wt).astype(np.float64)


def _fhat_raw(W: np.ndarray, Zn: np.ndarray, tau: float, lam: float) -> np.ndarray:
    """``F̂`` at the rows of ``W`` (..., d), sample by sample over ``Zn`` (n, d)."""
    return (0.5 * np.minimum(W, 0.0) ** 2 @ Zn.T).mean(-1) + _psi(W.sum(-1) / math.sqrt(W.shape[-1]) - tau, lam)


def _grad_raw(x: np.ndarray, a: np.ndarray, tau: float, lam: float) -> np.ndarray:
    """``∇F̂(x) = a ⊙ min(x, 0) + λ·max(⟨u, x⟩ − τ, 0)·u`` for one ``x`` (d,)."""
    sq = math.sqrt(x.shape[-1])
    return a * np.minimum(x, 0.0) + lam * max(float(x.sum()) / sq - tau, 0.0) / sq


def coupled_empirical_risk(w: Any, instance: CoupledInstance) -> np.ndarray:
    """``F̂(w) = (1/n) Σ_j f(w; z_j)``, sample by sample (``w`` (..., d))."""
    inst = _as_coupled(instance)
    W = _w(w, inst.d)
    return _fhat_raw(W, to_numpy(_check_01("Z", inst.Z).to("cpu")), inst.tau, inst.lam)


def coupled_population_risk(w: Any, instance: CoupledInstance) -> np.ndarray:
    """``F(w) = ½ Σ φ(w_i) + ψ(⟨u, w⟩ − τ)`` in closed form."""
    inst = _as_coupled(instance)
    W = _w(w, inst.d)
    return 0.25 * (np.minimum(W, 0.0) ** 2).sum(-1) + _psi(W.sum(-1) / math.sqrt(inst.d) - inst.tau, inst.lam)


def coupled_heldout(W: Any, instance: CoupledInstance, m: int = 10_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``F`` at the rows of ``W`` (P, d) measured on ``m`` held-out draws (:func:`~.instance.heldout_risks` for
    ``Σ z_i φ(w_i)``, every coordinate drawn; the coupling term is data-independent and added as is). Returns the
    means and standard errors."""
    inst = _as_coupled(instance)
    Wn = _w(W, inst.d).reshape(-1, inst.d)
    h = heldout_risks(Wn, m, seed)
    return h.mean + _psi(Wn.sum(-1) / math.sqrt(inst.d) - inst.tau, inst.lam), h.stderr


def _golden(fun, lo: float, hi: float, iters: int = 60) -> float:
    g = (math.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = fun(x1), fun(x2)
    for _ in range(iters):
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = fun(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = fun(x1)
    return 0.5 * (lo + hi)


def _inner(w: np.ndarray, a: np.ndarray, cls: list[np.ndarray], sig: float, rho: float, lam: float,
           d: int) -> tuple[float, int, float]:
    """(max_{‖v‖≤ρ} F̂(w + v), i*, r*) on the orthant; ``i* = −1`` for the pure coupling direction ``v = ρu``."""
    sq, c1 = math.sqrt(d), math.sqrt((d - 1) / d)
    best = (float(_psi(sig + rho, lam)), -1, 0.0)
    cand = np.array([idx[np.argmin(w[idx])] for idx in cls], dtype=np.int64)
    if cand.size == 0:
        return best
    R = rho * np.arange(1, _GRID) / (_GRID - 1)
    ac, wc = a[cand][:, None], w[cand][:, None]
    H = 0.5 * ac * np.maximum(R - wc, 0.0) ** 2 + _psi(sig - R / sq + c1 * np.sqrt(np.maximum(rho**2 - R**2, 0.0)),
                                                       lam)
    c, j = np.unravel_index(int(np.argmax(H)), H.shape)
    val, r = float(H[c, j]), float(R[j])
    ai, wi = float(a[cand[c]]), float(w[cand[c]])

    def h(x: float) -> float:
        return 0.5 * ai * max(x - wi, 0.0) ** 2 + float(_psi(sig - x / sq + c1 * math.sqrt(max(rho**2 - x * x, 0.0)),
                                                            lam))

    if j < R.size - 1:  # an interior grid maximum: refine on its bracket
        x = _golden(h, float(R[j - 1]) if j > 0 else 0.0, float(R[j + 1]))
        if h(x) > val:
            val, r = h(x), x
    if val > best[0]:
        best = (val, int(cand[c]), r)
    return best


def _classes(a: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(a == v) for v in np.unique(a[a > 0])]


def coupled_sharpness(w: Any, instance: CoupledInstance, rho: float | None = None) -> float:
    """``S_ρ(w) = max_{‖v‖≤ρ} F̂(w + v) − F̂(w)`` by the exact formula of the module docstring (``ρ`` defaults to the
    instance's). Valid on the orthant: raises ``ValueError`` where a seen coordinate is negative."""
    inst = _as_coupled(instance)
    r = inst.rho if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    wn = _w(w, inst.d)
    if wn.ndim != 1:
        raise ValueError(f"Invalid w: shape {wn.shape} (must be one vector of length d)")
    if bool(((wn < 0) & inst.seen).any()):
        raise ValueError("Invalid w: negative on a seen coordinate (the exact inner max needs w_i ≥ 0 where a_i > 0)")
    sig = float(wn.sum() / math.sqrt(inst.d) - inst.tau)
    top = _inner(wn, inst.a, _classes(inst.a), sig, r, inst.lam, inst.d)[0]
    return top - float(_psi(sig, inst.lam))


def coupled_sharpness_search(w: Any, instance: CoupledInstance, rho: float | None = None, directions: int = 4000,
                             seed: int = 0) -> float:
    """``S_ρ(w)`` by brute force for small ``d`` (≤ 16): ``F̂(w + ρu)`` at ``directions`` random points of the sphere,
    the best five polished by SLSQP under ``‖v‖² ≤ ρ²``. Uses neither the formula nor its maximiser."""
    from scipy.optimize import minimize

    inst = _as_coupled(instance)
    r = inst.rho if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    k = integer("directions", directions, 1, 10**6)
    s = integer("seed", seed, 0)
    wn = _w(w, inst.d)
    if wn.ndim != 1 or inst.d > 16:
        raise ValueError(f"Invalid w/instance: d = {inst.d}, shape {wn.shape} (brute force is for one w, d ≤ 16)")
    Zn, sq = to_numpy(inst.Z.to("cpu")), math.sqrt(inst.d)

    def fhat(v: np.ndarray) -> np.ndarray:
        return _fhat_raw(wn + v, Zn, inst.tau, inst.lam)

    def grad(v: np.ndarray) -> np.ndarray:
        return _grad_raw(wn + v, inst.a, inst.tau, inst.lam)

    rng = np.random.default_rng(s)
    cand = rng.normal(size=(k, inst.d))
    cand *= r / np.linalg.norm(cand, axis=1, keepdims=True)
    cand = np.vstack([cand, r * np.ones(inst.d) / sq, -r * np.eye(inst.d)])
    vals = fhat(cand)
    best = float(vals.max())
    for v0 in cand[np.argsort(vals)[-5:]]:
        res = minimize(lambda v: -float(fhat(v)), v0, jac=lambda v: -grad(v), method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda v: r * r - float(v @ v), "jac": lambda v: -2 * v}],
                       options={"ftol": 1e-15, "maxiter": 300})
        v = res.x * min(1.0, r / max(float(np.linalg.norm(res.x)), 1e-300))
        best = max(best, float(fhat(v)))
    return best - float(fhat(np.zeros(inst.d)))


class CoupledCheck(NamedTuple):
    max_rel: float
    points: int


def coupled_sharpness_check(points: int = 40, seed: int = 0) -> CoupledCheck:
    """The exact formula against brute force at ``points`` random (instance, w): ``n ∈ {2, 3}``, ``d = 2·2ⁿ``
    (≤ 16), ``w_i ~ U[0, 2ρ]`` on seen coordinates and ``U[−1, 1]·ρ√d`` on unseen ones, ``σ = ⟨u, w⟩ − τ`` spread
    over ``[−2ρ, ρ]`` by the choice of τ (every branch of the formula is visited)."""
    P = integer("points", points, 1, 10_000)
    s = integer("seed", seed, 0)
    rng = np.random.default_rng(s)
    rel = []
    for p in range(P):
        nn = 2 + p % 2
        inst = coupled_instance(nn, s * 10_000 + p, unseen=2, bd=2.5, rho_over_b=float(rng.uniform(1.0, 4.0)))
        w = np.where(inst.seen, rng.uniform(0.0, 2.0 * inst.rho, inst.d),
                     rng.uniform(-1.0, 1.0, inst.d) * inst.rho * math.sqrt(inst.d))
        sig = float(rng.uniform(-2.0, 1.0)) * inst.rho
        inst = inst._replace(tau=float(w.sum() / math.sqrt(inst.d)) - sig, lam=float(rng.uniform(0.2, 2.0)))
        c = coupled_sharpness(w, inst)
        bf = coupled_sharpness_search(w, inst, directions=2000, seed=s + p)
        rel.append(abs(c - bf) / max(abs(c), 1e-300))
    return CoupledCheck(float(max(rel)), P)


class CoupledRun(NamedTuple):
    """SA-GD's end point ``w`` after ``steps`` steps (the first with ``S_ρ ≤ factor·S_ρ(w₀)``, or the cap),
    ``sharpness0 = S_ρ(w₀)``, ``sharpness = S_ρ(w_T)``, ``empirical = F̂(w_T)``, ``min_seen`` (the smallest seen
    coordinate met along the run: the formula is exact while it is ≥ 0) and ``hit`` (the factor was reached)."""

    w: np.ndarray
    steps: int
    sharpness0: float
    sharpness: float
    empirical: float
    min_seen: float
    hit: bool


def coupled_sa_gd(instance: CoupledInstance, w0: Any = None, rho: float | None = None, lr: float | None = None,
                  steps: int = 2**17, factor: float = 1e-3) -> CoupledRun:
    """SA-GD with the exact inner maximum: ``w_{t+1} = w_t − η ∇F̂(w_t + v_t)``, ``v_t`` the maximiser of the module
    docstring, from ``w₀`` (default ``b·1``), ``η = 1/β`` by default, until ``S_ρ(w_t) ≤ factor·S_ρ(w₀)`` or
    ``steps`` steps. Raises ``ValueError`` if a seen coordinate turns negative (outside the formula's domain)."""
    inst = _as_coupled(instance)
    r = inst.rho if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    beta = 1.0 + inst.lam
    eta = 1.0 / beta if lr is None else number("lr", lr, 0.0, 2.0 / beta, low_open=True)
    T = integer("steps", steps, 0, _MAX_STEPS)
    f = number("factor", factor, 0.0, 1.0, low_open=True)
    w = np.full(inst.d, inst.b) if w0 is None else _w(w0, inst.d).copy()
    if w.ndim != 1:
        raise ValueError(f"Invalid w0: shape {w.shape} (must be one vector of length d)")
    a, seen, d, lam = inst.a, inst.seen, inst.d, inst.lam
    if bool(((w < 0) & seen).any()):
        raise ValueError("Invalid w0: negative on a seen coordinate (the exact inner max needs w_i ≥ 0 where a_i > 0)")
    sq, c1 = math.sqrt(d), math.sqrt((d - 1) / d)
    cls = _classes(a)
    total = float(w.sum())
    sig = total / sq - inst.tau
    top, i, rr = _inner(w, a, cls, sig, r, lam, d)
    s0 = top - float(_psi(sig, lam))
    cur, t, min_seen = s0, 0, float(w[seen].min())
    while t < T and cur > f * s0:
        if i < 0:
            g = lam * max(sig + r, 0.0) / sq
            w -= eta * g
        else:
            g = lam * max(sig - rr / sq + c1 * math.sqrt(max(r * r - rr * rr, 0.0)), 0.0) / sq
            lift = eta * a[i] * max(rr - w[i], 0.0)
            w -= eta * g
            w[i] += lift
        min_seen = min(min_seen, float(w[seen].min()))
        if min_seen < 0:
            raise ValueError(f"SA-GD left the orthant at step {t + 1} (a seen coordinate is {min_seen:.3g}): the exact "
                             "inner max does not apply; choose a larger b or a smaller λ")
        total = float(w.sum())
        sig = total / sq - inst.tau
        top, i, rr = _inner(w, a, cls, sig, r, lam, d)
        cur = top - float(_psi(sig, lam))
        t += 1
    emp = float(coupled_empirical_risk(w, inst))
    return CoupledRun(w, t, s0, cur, emp, min_seen, bool(cur <= f * s0))


#: RWP's noise scale on the coupled instance, per coordinate, as a multiple of ρ: chosen from the grid
#: ``dynamics.RWP_SIGMAS`` by the fewest median steps to S_ρ ≤ 10⁻³S_ρ(w₀) on pilot seeds 9041–9050
#: (``bench/flat_minima_rwp_pilot.py``; risk not used in the choice).
RWP_SIGMA_COUPLED = 1.0
#: The stream tag of RWP's noise on the coupled instance: its generator is seeded with ``(seed, RWP_STREAM_COUPLED)``.
RWP_STREAM_COUPLED = 58


def coupled_rwp(instance: CoupledInstance, sigma: float, w0: Any = None, rho: float | None = None,
                lr: float | None = None, steps: int = 2**17, factor: float = 1e-3, seed: int = 0) -> CoupledRun:
    r"""Random-weight-perturbation GD (RWP) on the coupled loss, the flat-seeking rival of :func:`coupled_sa_gd`:
    ``w_{t+1} = w_t − η ∇F̂(w_t + σξ_t)``, ``ξ_t ~ N(0, I_d)`` (numpy generator seeded with
    ``(seed, RWP_STREAM_COUPLED)``), from ``w₀`` (default ``b·1``) with ``η = 1/β`` by default, until
    ``S_ρ(w_t) ≤ factor·S_ρ(w₀)`` (``S_ρ`` at the instance's flatness radius, checked every step) or ``steps`` steps —
    the same start, step, flatness radius, stopping rule and cap as SA-GD. ``S_ρ`` is evaluated exactly (the formula of
    the module docstring) where the iterate is on the orthant and a cheap lower bound —
    ``max_i a_i(ρ − w_i)₊²/2 − ψ(σ)`` (push one coordinate by ρ) and ``ψ(σ + ρ) − ψ(σ)`` (move along u) — does not
    already exceed the target; off the orthant the point is not flat (``F̂ > 0``) and the run goes on.
    ``min_seen`` may be negative (RWP does not need the orthant; only the flatness checks do)."""
    inst = _as_coupled(instance)
    sg = number("sigma", sigma, 0.0, math.inf, low_open=True)
    r = inst.rho if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    beta = 1.0 + inst.lam
    eta = 1.0 / beta if lr is None else number("lr", lr, 0.0, 2.0 / beta, low_open=True)
    T = integer("steps", steps, 0, _MAX_STEPS)
    f = number("factor", factor, 0.0, 1.0, low_open=True)
    sd = integer("seed", seed, 0)
    w = np.full(inst.d, inst.b) if w0 is None else _w(w0, inst.d).copy()
    if w.ndim != 1:
        raise ValueError(f"Invalid w0: shape {w.shape} (must be one vector of length d)")
    a, seen, d, lam = inst.a, inst.seen, inst.d, inst.lam
    if bool(((w < 0) & seen).any()):
        raise ValueError("Invalid w0: negative on a seen coordinate (the exact inner max needs w_i ≥ 0 where a_i > 0)")
    sq = math.sqrt(d)
    cls = _classes(a)
    rng = np.random.default_rng(np.random.SeedSequence((sd, RWP_STREAM_COUPLED)))

    def sharp(w: np.ndarray, target: float) -> float:
        """S_ρ(w) where it may be ≤ target; a lower bound above target (or inf off the orthant) otherwise."""
        if bool((w[seen] < 0).any()):
            return math.inf
        sig = float(w.sum()) / sq - inst.tau
        p0 = float(_psi(sig, lam))
        lb = max(0.5 * float((a * np.maximum(r - w, 0.0) ** 2).max()) - p0, float(_psi(sig + r, lam)) - p0)
        if lb > target:
            return lb
        return _inner(w, a, cls, sig, r, lam, d)[0] - p0

    s0 = sharp(w, math.inf)
    cur, t, min_seen = s0, 0, float(w[seen].min())
    while t < T and cur > f * s0:
        for x in rng.standard_normal((min(256, T - t), d)):
            y = w + sg * x
            g = a * np.minimum(y, 0.0) + lam * max(float(y.sum()) / sq - inst.tau, 0.0) / sq
            w -= eta * g
            min_seen = min(min_seen, float(w[seen].min()))
            t += 1
            cur = sharp(w, f * s0)
            if cur <= f * s0:
                break
    if cur > f * s0:
        cur = sharp(w, math.inf)  # the cap ended the run: S_ρ itself (not the bound), inf off the orthant
    emp = float(coupled_empirical_risk(w, inst))
    return CoupledRun(w, t, s0, cur, emp, min_seen, bool(cur <= f * s0))


class CoupledStudy(NamedTuple):
    """Per dimension of the scan (tuples, one entry per ``d = unseen·2ⁿ``): the instance's ``d`` and ``k`` (#unseen),
    SA-GD's run, the held-out ``F`` (mean, s.e.) of its end point and of the start ``w₀ = b·1``, the closed-form ``F``
    of the end point, ``‖w_T‖``, ``Σ_unseen w_i(T)`` and the flat-set bound ``db − √dρ − #seen·ρ``; and, on the
    chapter's dimension (``instance``), the controls: SA-GD at the radii ``small_rho`` (< b) and SA-GD on the
    uncoupled loss (λ = 0), with their held-out ``F``. At every ``d`` of the scan, two rivals of SA-GD's flat end point
    measured on the same held-out draws: RWP (:func:`coupled_rwp`, noise ``rwp_sigma``·ρ per coordinate) and the flat
    ERM of least population risk (``ρ`` on the seen coordinates, the unseen ones sharing the flat-set bound equally:
    ``F = bound²/(4k)``, the least ``F`` over the flat set since ``F ≥ (Σ_unseen w_i)²/(4k)`` there)."""

    n: int
    d: tuple[int, ...]
    k: tuple[int, ...]
    runs: tuple[CoupledRun, ...]
    risk: tuple[float, ...]
    risk_se: tuple[float, ...]
    start_risk: tuple[float, ...]
    closed_risk: tuple[float, ...]
    norm: tuple[float, ...]
    unseen_sum: tuple[float, ...]
    flat_bound: tuple[float, ...]
    instance: CoupledInstance
    small_rho: tuple[float, ...]
    small_runs: tuple[CoupledRun, ...]
    small_risk: tuple[float, ...]
    uncoupled_run: CoupledRun
    uncoupled_risk: float
    start_grad: float
    m: int
    rwp_sigma: float
    rwp_runs: tuple[CoupledRun, ...]
    rwp_risk: tuple[float, ...]
    rwp_norm: tuple[float, ...]
    flatmin_runs: tuple[CoupledRun, ...]
    flatmin_risk: tuple[float, ...]
    flatmin_norm: tuple[float, ...]


def _least_risk_flat_erm(inst: CoupledInstance, s0: float) -> CoupledRun:
    """The flat ERM of least population risk as a :class:`CoupledRun` (no steps): ``w_i = ρ`` on the seen coordinates
    and ``bound/k`` on the k unseen ones, with its ``F̂`` and ``S_ρ`` evaluated (formula of the module docstring)."""
    un = ~inst.seen
    k = int(un.sum())
    bound = inst.d * inst.b - math.sqrt(inst.d) * inst.rho - int(inst.seen.sum()) * inst.rho
    w = np.where(inst.seen, inst.rho, bound / k)
    sh = max(coupled_sharpness(w, inst), 0.0)  # 0 up to round-off at the flat set's boundary
    return CoupledRun(w, 0, s0, sh, float(coupled_empirical_risk(w, inst)), float(w[inst.seen].min()), True)


def coupled_study(seed: int = 0, n: int = 4, unseen: Any = COUPLED_UNSEEN, chapter_unseen: int = 4,
                  mc_samples: int = 10_000, steps: int = 2**17, rwp_sigma: float | None = None) -> CoupledStudy:
    """SA-GD from ``w₀ = b·1`` on :func:`coupled_instance` (``n`` samples) for each expected number of unseen
    coordinates in ``unseen`` (``d = unseen·2ⁿ``; instance seeds ``seed·100 + unseen``), the held-out risks (draws
    seeded with ``seed``), and the controls on ``d = chapter_unseen·2ⁿ``: SA-GD with ``ρ ∈ {¼, ½, ¾}·b`` (below the
    start's margin) and SA-GD with the coupling removed (λ = 0), same start, η and budget; at every ``d``, RWP with
    noise ``rwp_sigma``·ρ per coordinate (default :data:`RWP_SIGMA_COUPLED`, from the pilot; noise seeded with
    ``seed``), same start, η, flatness rule and cap, and the least-risk flat ERM."""
    s = integer("seed", seed, 0)
    nn = integer("n", n, 1, 6)
    if not isinstance(unseen, (list, tuple)) or not unseen:
        raise TypeError("Invalid unseen: must be a non-empty sequence of expected unseen counts")
    ks = tuple(integer("unseen", x, 1, 8) for x in unseen)
    kc = integer("chapter_unseen", chapter_unseen, 1, 8)
    m = integer("mc_samples", mc_samples, 2)
    T = integer("steps", steps, 0, _MAX_STEPS)
    rs = RWP_SIGMA_COUPLED if rwp_sigma is None else number("rwp_sigma", rwp_sigma, 0.0, 100.0, low_open=True)
    rows: dict[str, list] = {k: [] for k in ("d", "k", "runs", "risk", "se", "start", "closed", "norm", "usum",
                                             "bound", "rwp", "rwp_risk", "fm", "fm_risk")}
    for K in ks:
        inst = coupled_instance(nn, s * 100 + K, unseen=K)
        run = coupled_sa_gd(inst, steps=T)
        rwp = coupled_rwp(inst, rs * inst.rho, steps=T, seed=s)
        fm = _least_risk_flat_erm(inst, run.sharpness0)
        mean, se = coupled_heldout(np.stack([run.w, np.full(inst.d, inst.b), rwp.w, fm.w]), inst, m, s)
        un = ~inst.seen
        rows["d"].append(inst.d)
        rows["k"].append(int(un.sum()))
        rows["runs"].append(run)
        rows["risk"].append(float(mean[0]))
        rows["se"].append(float(se[0]))
        rows["start"].append(float(mean[1]))
        rows["closed"].append(float(coupled_population_risk(run.w, inst)))
        rows["norm"].append(float(np.linalg.norm(run.w)))
        rows["usum"].append(float(run.w[un].sum()))
        rows["bound"].append(inst.d * inst.b - math.sqrt(inst.d) * inst.rho - int(inst.seen.sum()) * inst.rho)
        rows["rwp"].append(rwp)
        rows["rwp_risk"].append(float(mean[2]))
        rows["fm"].append(fm)
        rows["fm_risk"].append(float(mean[3]))
    inst = coupled_instance(nn, s * 100 + kc, unseen=kc)
    small = tuple(f * inst.b for f in (0.25, 0.5, 0.75))
    sruns = tuple(coupled_sa_gd(inst, rho=x, steps=T) for x in small)
    mean, _ = coupled_heldout(np.stack([x.w for x in sruns]), inst, m, s)
    plain = inst._replace(lam=0.0)
    urun = coupled_sa_gd(plain, lr=1.0 / (1.0 + inst.lam), steps=T)
    umean, _ = coupled_heldout(urun.w, plain, m, s)  # the ablated model's own risk (λ = 0)
    # ∇F̂(w₀) sample by sample: GD (any η) and SAM (no ascent at a zero gradient) stay at w₀ exactly when it is 0
    w0 = np.full(inst.d, inst.b)
    Zn = to_numpy(inst.Z.to("cpu"))
    sig0 = float(w0.sum() / math.sqrt(inst.d) - inst.tau)
    g0 = (Zn * np.minimum(w0, 0.0)).mean(0) + inst.lam * max(sig0, 0.0) / math.sqrt(inst.d)
    return CoupledStudy(nn, tuple(rows["d"]), tuple(rows["k"]), tuple(rows["runs"]), tuple(rows["risk"]),
                        tuple(rows["se"]), tuple(rows["start"]), tuple(rows["closed"]), tuple(rows["norm"]),
                        tuple(rows["usum"]), tuple(rows["bound"]), inst, small, sruns,
                        tuple(float(x) for x in mean), urun, float(umean[0]), float(np.abs(g0).max()), m, rs,
                        tuple(rows["rwp"]), tuple(rows["rwp_risk"]),
                        tuple(float(np.linalg.norm(r.w)) for r in rows["rwp"]), tuple(rows["fm"]),
                        tuple(rows["fm_risk"]), tuple(float(np.linalg.norm(r.w)) for r in rows["fm"]))
