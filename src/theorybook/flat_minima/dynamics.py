"""SA-GD and SAM on the unseen-coordinates instance (exact inner maximum; batched), the closed-form step count and
sharpness curve of SA-GD, and the one-instance study of claims 2–3."""

from __future__ import annotations

import heapq
import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import one_thread, resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number
from .instance import BETA, Instance, _check_01, chapter_rho, unseen_instance

__all__ = ["DynamicsStudy", "PGD_RADII", "RWP_SIGMAS", "RWP_SIGMA_SEPARABLE", "RWP_STREAM", "RWPRun", "Trajectory",
           "dynamics_study", "gd", "perturbed_gd", "rwp_gd", "sa_gd", "sagd_sharpness_prediction", "sagd_steps", "sam"]

_MAX_STEPS = 2**20


# -- SA-GD and SAM on the instance ---------------------------------------------------------------------------
class Trajectory(NamedTuple):
    """Recorded at steps ``t``: ``S_ρ(w_t)``, ``F̂(w_t)``, ``F(w_t)`` (shape (..., len(t))), the final iterate and
    ``hit`` — SA-GD: the first step with ``S_ρ(w_t) ≤ 10⁻³ S_ρ(w_0)``; SAM: the first step with ``∇F̂(w_t) = 0``
    (a fixed point); −1 if never. ``in_orthant`` marks the recorded points with ``w_i ≥ 0`` on every seen
    coordinate, where the closed form of ``S_ρ`` applies; elsewhere ``sharpness`` holds 0.0 (not computed)."""

    t: np.ndarray
    sharpness: np.ndarray
    empirical: np.ndarray
    population: np.ndarray
    w: np.ndarray
    hit: np.ndarray
    in_orthant: np.ndarray


def _record_times(steps: int, points: int = 120) -> np.ndarray:
    if steps == 0:
        return np.array([0])
    return np.unique(np.concatenate([[0], np.round(np.geomspace(1, steps, points)).astype(np.int64)]))


def _dynamics_args(Z: Any, w0: Any, lr: float, rho: float, steps: int):
    Zt = _check_01("Z", Z)
    if Zt.ndim != 2:
        raise ValueError(f"Invalid Z: shape {tuple(Zt.shape)} (must be (n, d))")
    wt = finite_tensor("w0", w0)
    if wt.ndim < 1 or wt.shape[-1] != Zt.shape[-1]:
        raise ValueError(f"Invalid w0: shape {tuple(wt.shape)} (its last dimension must be d = {Zt.shape[-1]})")
    eta = number("lr", lr, 0.0, 2.0 / BETA, low_open=True)
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    T = integer("steps", steps, 0, _MAX_STEPS)
    memory_guard(8.0 * wt.numel() * 130, lower="the size of w0")
    a = to_numpy(Zt.mean(0)).astype(np.float64)
    W = to_numpy(wt).astype(np.float64).reshape(-1, Zt.shape[-1]).copy()
    return Zt, a, W, wt.shape[:-1], eta, r, T


def _finish(Zt, a, W_hist, rec, batch_shape, W, hit, r) -> Trajectory:
    H = np.stack(W_hist, axis=1)  # (B, R, d)
    Zn = to_numpy(Zt.to("cpu"))
    emp = (0.5 * np.minimum(H, 0.0) ** 2 @ Zn.T).mean(-1)
    pop = 0.5 * (0.5 * np.minimum(H, 0.0) ** 2).sum(-1)
    inside = ~((H < 0) & (a > 0)).any(-1)
    sh = np.where(inside, 0.5 * (a * np.maximum(r - H, 0.0) ** 2).max(-1), 0.0)  # the closed form needs the orthant
    shp = tuple(batch_shape)
    return Trajectory(rec, sh.reshape(shp + (-1,)), emp.reshape(shp + (-1,)), pop.reshape(shp + (-1,)),
                      W.reshape(shp + (-1,)), hit.reshape(shp) if shp else hit.reshape(()),
                      inside.reshape(shp + (-1,)))


def _descend(a: np.ndarray, W: np.ndarray, T: int, size, step) -> tuple:
    """The loop SAM and GD share: ``T`` steps of ``W ← step(W, g, m)`` with ``g = ∇F̂(W) = a ⊙ min(W, 0)`` and
    ``m = size(g)`` (a (B, 1) measure of g that is 0 exactly at the method's fixed points), recording ``W`` at
    :func:`_record_times`; ``hit`` is each run's first step with ``m = 0``, and the loop stops once every run has
    one. Returns ``(history, record times, W, hit)``."""
    rec = _record_times(T)
    rec_list = list(rec)
    hist: list[np.ndarray] = []
    hit = np.full(W.shape[0], -1, dtype=np.int64)
    j = 0
    for t in range(T + 1):
        while j < len(rec_list) and rec_list[j] == t:
            hist.append(W.copy())
            j += 1
        g = a * np.minimum(W, 0.0)
        m = size(g)
        hit = np.where((hit < 0) & (m[:, 0] == 0), t, hit)
        if t == T:
            break
        if not bool((m > 0).any()):  # every run is at a fixed point
            while j < len(rec_list):
                hist.append(W.copy())
                j += 1
            break
        W = step(W, g, m)
    return hist, rec, W, hit


def sa_gd(Z: Any, w0: Any, lr: float = 1.0, rho: float = 0.0078125, steps: int = 2**15) -> Trajectory:
    """SA-GD: gradient descent on ``F̂_ρ(w) = max_{‖v‖≤ρ} F̂(w + v)`` with the exact inner maximum,

    .. math::  v_t = -\\rho\\, e_{i_t},\\ i_t = \\arg\\max_i a_i(\\rho - w_{t,i})_+^2\\ (\\text{ties: lowest } i),
               \\qquad w_{t+1} = w_t - \\eta\\,\\nabla\\hat F(w_t + v_t).

    Here ``∇F̂(w_t + v_t) = a ⊙ min(w_t + v_t, 0)`` is non-zero only in coordinate ``i_t``, so each step moves
    one coordinate: ``w_{i} ← w_i + η a_i (ρ − w_i)_+``; the loop keeps the scores ``a_i(ρ − w_i)_+²`` in a heap and
    updates the one that changed (exact; O(log d) per step). ``w0`` (..., d) must be ≥ 0 on seen coordinates
    (the iterates then stay there); batched over its leading dimensions."""
    with one_thread("cpu"):  # small tensors: a second thread only adds synchronisation
        Zt, a, W, batch_shape, eta, r, T = _dynamics_args(Z, w0, lr, rho, steps)
    if bool(((W < 0) & (a > 0)).any()):
        raise ValueError("Invalid w0: negative on a seen coordinate (SA-GD's exact inner max is implemented on the "
                         "orthant w_i ≥ 0 wherever a_i > 0)")
    rec = _record_times(T)
    rec_list = [int(x) for x in rec]
    hist = [np.empty_like(W) for _ in rec]
    hit = np.full(W.shape[0], -1, dtype=np.int64)
    al = a.tolist()
    for b in range(W.shape[0]):
        wl = W[b].tolist()
        # a heap of (−score, i): its top is the arg-max with ties going to the lowest index, like numpy's argmax
        heap = [(-(al[i] * max(r - wl[i], 0.0) ** 2), i) for i in range(len(wl))]
        heapq.heapify(heap)
        thr = 1e-3 * -heap[0][0]
        ptr, hb = 0, -1
        for t in range(T + 1):
            if t == rec_list[ptr]:
                hist[ptr][b] = wl
                ptr += 1
            neg, i = heap[0]
            if hb < 0 and -neg <= thr:
                hb = t
            if t == T:
                break
            if neg >= 0.0:  # S_ρ = 0: no coordinate can move any more; the rest of the run is constant
                for j in range(ptr, len(rec_list)):
                    hist[j][b] = wl
                break
            wi = wl[i] + eta * al[i] * (r - wl[i])
            wl[i] = wi
            heapq.heapreplace(heap, (-(al[i] * max(r - wi, 0.0) ** 2), i))
        W[b] = wl
        hit[b] = hb
    return _finish(Zt, a, hist, rec, batch_shape, W, hit, r)


def sam(Z: Any, w0: Any, lr: float = 1.0, rho: float = 0.0078125, steps: int = 2**15) -> Trajectory:
    """SAM (Foret et al. 2021): normalised ascent, then descent,

    .. math::  g_t = \\nabla\\hat F(w_t),\\quad v_t = \\rho\\,g_t/\\lVert g_t\\rVert\\ (v_t = 0 \\text{ if } g_t = 0),
               \\qquad w_{t+1} = w_t - \\eta\\,\\nabla\\hat F(w_t + v_t).

    A zero gradient means no ascent and no move: once ``g_t = 0`` the iterate is a fixed point, and the loop
    stops early (the rest of the trajectory is constant). Batched over the leading dimensions of ``w0``."""
    with one_thread("cpu"):  # small tensors: a second thread only adds synchronisation
        Zt, a, W, batch_shape, eta, r, T = _dynamics_args(Z, w0, lr, rho, steps)

    def step(W: np.ndarray, g: np.ndarray, gn: np.ndarray) -> np.ndarray:
        v = np.where(gn > 0, r * g / np.where(gn > 0, gn, 1.0), 0.0)
        return W - eta * a * np.minimum(W + v, 0.0)

    hist, rec, W, hit = _descend(a, W, T, lambda g: np.linalg.norm(g, axis=-1, keepdims=True), step)
    return _finish(Zt, a, hist, rec, batch_shape, W, hit, r)


class DynamicsStudy(NamedTuple):
    """SA-GD from 0 and SAM from ``−ρ`` on the seen coordinates, on one instance; ``predicted_hit`` is
    ``Σ_i k_i`` with ``k_i`` the number of SA-GD steps coordinate ``i`` needs (:func:`sagd_steps`)."""

    instance: Instance
    rho: float
    sagd: Trajectory
    sam: Trajectory
    predicted_hit: int


def sagd_sharpness_prediction(a: Any, rho: float, t: Any, lr: float = 1.0) -> np.ndarray:
    """SA-GD's ``S_ρ(w_t)`` from ``w₀ = 0`` without simulating it (η ≤ 1/max a, so no coordinate overshoots ρ).

    A step on coordinate ``i`` multiplies its gap ``ρ − w_i`` by ``1 − ηa_i``, and SA-GD always steps on the
    largest score ``a_i(ρ − w_i)²``; the scores popped are therefore the merged, sorted sequences
    ``a_i(1 − ηa_i)^{2k}ρ²``, ``k = 0, 1, …``, and ``S_ρ(w_t)`` is half the ``(t+1)``-th largest element."""
    av = to_numpy(finite_tensor("a", a, ndim=1)).astype(np.float64)
    if av.size == 0 or np.any(av < 0) or np.any(av > 1):
        raise ValueError("Invalid a: must be a non-empty vector of fractions in [0, 1]")
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    eta = number("lr", lr, 0.0, 1.0, low_open=True)
    tt = to_numpy(finite_tensor("t", t)).astype(np.float64).ravel()
    if tt.size == 0 or np.any(tt < 0) or np.any(tt != np.round(tt)) or tt.max() > _MAX_STEPS:
        raise ValueError(f"Invalid t: steps must be integers in [0, {_MAX_STEPS}]")
    seen = av[av > 0]
    if seen.size == 0:
        return np.zeros(tt.size)
    need = int(tt.max()) + 1
    K = max(8, 2 * need // seen.size + 8)
    while True:
        memory_guard(8.0 * seen.size * K * 2, lower="t (the largest step) or the size of a")
        k = np.arange(K)
        sc = seen[:, None] * (1.0 - eta * seen[:, None]) ** (2 * k[None, :]) * r * r
        flat = np.sort(sc.ravel())[::-1]
        cutoff = flat[need - 1] if flat.size >= need else -1.0
        if cutoff > sc[:, -1].max() or sc[:, -1].max() == 0.0:  # every element above the cut-off was generated
            break
        K *= 2
    vals = np.concatenate([flat, np.zeros(max(0, need - flat.size))])
    return 0.5 * vals[tt.astype(np.int64)]


def dynamics_study(d: int = 4096, n: int = 10, seed: int = 0, rho: float | None = None, steps: int = 2**15,
                   device: Any = None) -> DynamicsStudy:
    """Claims 2–3 on one instance: SA-GD from ``w₀ = 0`` and SAM from ``w₀ = −ρ`` on the seen coordinates (0 on
    the unseen ones), η = 1/β = 1."""
    with one_thread(resolve_device(device)):
        return _dynamics(d, n, seed, rho, steps, device)


def _dynamics(d: int, n: int, seed: int, rho: float | None, steps: int, device: Any) -> DynamicsStudy:
    inst = unseen_instance(d, n, seed, device)
    r = chapter_rho(d) if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    T = integer("steps", steps, 0, _MAX_STEPS)
    zero = torch.zeros_like(inst.a)
    sg = sa_gd(inst.Z, zero, 1.0, r, T)
    w_sam0 = torch.where(inst.seen, torch.full_like(inst.a, -r), zero)
    sm = sam(inst.Z, w_sam0, 1.0, r, T)
    return DynamicsStudy(inst, r, sg, sm, sagd_steps(inst.a))


def gd(Z: Any, w0: Any, lr: float = 1.0, steps: int = 2**15) -> Trajectory:
    """Plain gradient descent on ``F̂`` (no ascent step) — the control of SA-GD and SAM:
    ``w_{t+1} = w_t − η a ⊙ min(w_t, 0)``. ``sharpness`` is recorded with ``ρ = 1/(2√d)``; ``hit`` is the first
    step with ``∇F̂(w_t) = 0`` (a fixed point, where the loop stops)."""
    with one_thread("cpu"):
        Zt, a, W, batch_shape, eta, _, T = _dynamics_args(Z, w0, lr, 1.0, steps)
    r = chapter_rho(int(Zt.shape[-1]))
    hist, rec, W, hit = _descend(a, W, T, lambda g: np.abs(g).max(-1, keepdims=True), lambda W, g, m: W - eta * g)
    return _finish(Zt, a, hist, rec, batch_shape, W, hit, r)


#: The perturbation radii of perturbed GD, as multiples of ρ√d (the norm of the flat point ρ·1 on all coordinates):
#: a 5-point grid, the best of which is the control's value.
PGD_RADII = (0.0625, 0.125, 0.25, 0.5, 1.0)


def perturbed_gd(a: Any, rho: float, steps: int = 2**15, seed: int = 0, radii: Any = PGD_RADII,
                 period: int = 128) -> np.ndarray:
    """Perturbed gradient descent (Jin et al. 2017) on ``F̂`` from ``w₀ = 0`` inside the unit ball, for each radius
    in ``radii`` (× ρ√d): whenever the gradient vanishes (every ``period`` steps: GD contracts a negative seen
    coordinate by ``1 − a_i`` per step, η = 1, and ``(1 − a_i)^period ≤ 0.9^128 ≈ 1.4e-6``) add a point drawn
    uniformly from the ball of that radius and project onto the unit ball; ``steps`` GD steps in all, the budget
    of SA-GD. Returns ``S_ρ(w_T)/S_ρ(0)`` per radius (seen coordinates clamped at 0, a ≤ 1.4e-6·|w| change).
    Between perturbations the GD steps are applied in closed form, ``w_i ← w_i (1 − a_i)^period`` for w_i < 0."""
    av = torch.as_tensor(to_numpy(finite_tensor("a", a, ndim=1)), dtype=torch.float64)
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    T = integer("steps", steps, 0, _MAX_STEPS)
    sd = integer("seed", seed, 0)
    per = integer("period", period, 1, 10**6)
    rad = torch.as_tensor(to_numpy(finite_tensor("radii", radii, ndim=1)), dtype=torch.float64)
    if rad.numel() == 0 or bool((rad <= 0).any()):
        raise ValueError("Invalid radii: must be a non-empty vector of positive multiples of ρ√d")
    d = av.numel()
    memory_guard(8.0 * 4 * rad.numel() * d, lower="radii or d")
    g = torch.Generator().manual_seed(sd)
    R = (rad * r * math.sqrt(d))[:, None]
    W = torch.zeros(rad.numel(), d, dtype=torch.float64)
    shrink = (1.0 - av).clamp_min(0.0) ** per
    for _ in range(max(1, T // per)):
        xi = torch.randn(rad.numel(), d, generator=g, dtype=torch.float64)
        u = torch.rand(rad.numel(), 1, generator=g, dtype=torch.float64) ** (1.0 / d)
        W += R * u * xi / xi.norm(dim=1, keepdim=True)
        W /= W.norm(dim=1, keepdim=True).clamp_min(1.0)
        W = torch.where(W < 0, W * shrink, W)
    seen = av > 0
    gap = (r - torch.where(seen, W.clamp_min(0.0), W)).clamp_min(0.0)
    s_T = (av * gap**2 / 2).amax(1)
    return to_numpy(s_T / (float(av.max()) * r**2 / 2))


#: The noise scales σ of random-weight-perturbation GD (RWP), per coordinate, as multiples of ρ: the perturbation
#: σξ (ξ ~ N(0, I_d)) has norm ≈ σ√d, so the grid spans the same norms as PGD_RADII × ρ√d (fixed before any RWP run).
RWP_SIGMAS = (0.0625, 0.125, 0.25, 0.5, 1.0)
#: RWP's noise scale on the separable instance, per coordinate, as a multiple of ρ: chosen from RWP_SIGMAS by the fewest
#: median steps to S_ρ ≤ 10⁻³S_ρ(0) on pilot seeds 9041–9050 (``bench/flat_minima_rwp_pilot.py``).
RWP_SIGMA_SEPARABLE = 1.0
#: The stream tag of RWP's noise: its generator is seeded with ``(seed, RWP_STREAM)`` (numpy SeedSequence), apart from
#: the instances', the held-out draws' and perturbed GD's streams.
RWP_STREAM = 57


class RWPRun(NamedTuple):
    """Random-weight-perturbation GD's end point ``w`` after ``steps`` steps — the first with
    ``S_ρ(w) ≤ factor·S_ρ(w₀)`` (``hit``) or the cap — with ``ratio = S_ρ(w)/S_ρ(w₀)`` and ``norm = ‖w‖``."""

    w: np.ndarray
    steps: int
    ratio: float
    hit: bool
    norm: float


def rwp_gd(a: Any, rho: float, sigma: float, steps: int = 2**15, seed: int = 0, lr: float = 1.0,
           factor: float = 1e-3, chunk: int = 256) -> RWPRun:
    """Random-weight-perturbation gradient descent (RWP: Bisla et al. 2022; Li et al. 2024) on ``F̂`` from
    ``w₀ = 0`` in the unit ball,

    .. math::  w_{t+1} = \\Pi_{\\lVert w\\rVert\\le1}\\big(w_t - \\eta\\,\\nabla\\hat F(w_t + \\sigma\\xi_t)\\big),
               \\qquad \\xi_t \\sim \\mathcal N(0, I_d),

    the flat-seeking rival of SA-GD with a random perturbation in place of the worst-case one, until
    ``S_ρ(w_t) ≤ factor·S_ρ(w₀)`` or ``steps`` steps (``S_ρ`` at the flatness radius ``rho``, checked every step).
    ``∇F̂(x) = a ⊙ min(x, 0)``: a step only raises seen coordinates and the projection scales by a positive factor,
    so the iterates stay on the orthant where the closed form of ``S_ρ`` holds. Noise from a numpy generator
    seeded with ``(seed, RWP_STREAM)``, drawn ``chunk`` steps at a time."""
    av = to_numpy(finite_tensor("a", a, ndim=1)).astype(np.float64)
    if av.size == 0 or np.any(av < 0) or np.any(av > 1) or not np.any(av > 0):
        raise ValueError("Invalid a: must be a non-empty vector of fractions in [0, 1], not all 0")
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    sg = number("sigma", sigma, 0.0, math.inf, low_open=True)
    T = integer("steps", steps, 0, _MAX_STEPS)
    sd = integer("seed", seed, 0)
    eta = number("lr", lr, 0.0, 2.0 / BETA, low_open=True)
    f = number("factor", factor, 0.0, 1.0, low_open=True)
    ch = integer("chunk", chunk, 1, 4096)
    d = av.size
    memory_guard(8.0 * ch * d * 2, lower="chunk or d")
    rng = np.random.default_rng(np.random.SeedSequence((sd, RWP_STREAM)))
    w = np.zeros(d)
    s0 = 0.5 * float(av.max()) * r * r
    cur, t = s0, 0
    while t < T and cur > f * s0:
        xi = rng.standard_normal((min(ch, T - t), d))
        for x in xi:
            w -= eta * av * np.minimum(w + sg * x, 0.0)
            nr = math.sqrt(float(w @ w))
            if nr > 1.0:
                w /= nr
            t += 1
            cur = 0.5 * float((av * np.maximum(r - w, 0.0) ** 2).max())
            if cur <= f * s0:
                break
    return RWPRun(w, t, cur / s0, bool(cur <= f * s0), float(np.linalg.norm(w)))


def sagd_steps(a: Any, lr: float = 1.0, factor: float = 1e-3) -> int:
    """Steps SA-GD needs from ``w₀ = 0`` until ``S_ρ(w_t) ≤ factor · S_ρ(w₀)``, without simulating it: every step
    before then acts on a coordinate above the threshold, so the count is ``Σ_i k_i`` with ``k_i`` the least ``k``
    such that ``a_i (1 − η a_i)^{2k} ρ² ≤ factor · ρ² max a`` (η ≤ 1, so no coordinate overshoots ρ). ρ cancels:
    the count depends only on the sample fractions ``a``."""
    av = to_numpy(finite_tensor("a", a, ndim=1)).astype(np.float64)
    if av.size == 0 or np.any(av < 0) or np.any(av > 1) or not np.any(av > 0):
        raise ValueError("Invalid a: must be a non-empty vector of fractions in [0, 1], not all 0")
    eta = number("lr", lr, 0.0, 1.0, low_open=True)
    f = number("factor", factor, 0.0, 1.0, low_open=True, high_open=True)
    seen = av[av > 0]
    thr = f * float(seen.max())
    # k_i = ⌈ln(thr/a_i) / (2 ln(1 − η a_i))⌉ (0 where a_i ≤ thr); η a_i = 1 empties the gap in one step
    with np.errstate(divide="ignore"):
        lg = np.log1p(-eta * seen)
    k = np.where(seen <= thr, 0.0, np.where(np.isfinite(lg), np.ceil(np.log(thr / seen) / (2 * lg) - 1e-12), 1.0))
    return int(k.sum())
