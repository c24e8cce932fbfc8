"""Claim 4 [reconstruction]: replace-one stability of GD, SA-GD and SAM on least squares, and the trust-region
inner maximum SA-GD needs there."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import one_thread, resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number, one_of
from .instance import STABILITY_NS, _generator

__all__ = ["StabilityResult", "inner_max_quadratic", "stability", "ALGORITHMS"]

ALGORITHMS = ("gd", "sa-gd", "sam")
_ALGORITHMS = ALGORITHMS


# -- claim 4: stability on least squares ---------------------------------------------------------------------
def inner_max_quadratic(H: Any, g: Any, rho: float) -> torch.Tensor:
    """``argmax_{‖v‖≤ρ} gᵀv + ½ vᵀHv`` for symmetric PSD ``H`` (..., d, d) and ``g`` (..., d).

    The maximum of a convex quadratic lies on the sphere: ``v = (λI − H)⁻¹ g`` with ``λ > λ_max(H)`` solving the
    secular equation ``‖v(λ)‖ = ρ`` (Newton on the concave ``1/‖v(λ)‖ − 1/ρ``, from the left, after one
    eigendecomposition); when ``g`` has no component on the top eigenvector (``g = 0`` included), the
    "hard case" ``v = ρ q_max`` or ``v(λ_max) + τ q_max``."""
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    Ht = finite_tensor("H", H)
    gt = finite_tensor("g", g)
    if Ht.ndim < 2 or Ht.shape[-1] != Ht.shape[-2] or Ht.shape[-1] < 1:
        raise ValueError(f"Invalid H: shape {tuple(Ht.shape)} (must be (..., d, d))")
    if gt.ndim < 1 or gt.shape[-1] != Ht.shape[-1]:
        raise ValueError(f"Invalid g: shape {tuple(gt.shape)} (its last dimension must be d = {Ht.shape[-1]})")
    memory_guard(8.0 * Ht.numel() * 4, lower="the size of H")
    Ht = Ht.to(torch.float64)
    gt = gt.to(Ht.device, torch.float64)
    scale = max(float(Ht.abs().max()), 1.0)
    if not torch.allclose(Ht, Ht.transpose(-1, -2), atol=1e-10 * scale, rtol=0.0):
        raise ValueError("Invalid H: not symmetric")
    try:
        batch = torch.broadcast_shapes(Ht.shape[:-2], gt.shape[:-1])
    except RuntimeError as err:
        raise ValueError(f"Invalid g: shape {tuple(gt.shape)} does not broadcast with H {tuple(Ht.shape)}") from err
    dd = Ht.shape[-1]
    lam, Q = np.linalg.eigh(to_numpy(Ht.expand(*batch, dd, dd)))
    if bool((lam[..., 0] < -1e-10 * scale).any()):
        raise ValueError(f"Invalid H: not positive semidefinite (smallest eigenvalue {float(lam[..., 0].min()):.3g})")
    v = _inner_max_eig(lam, Q, to_numpy(gt.expand(*batch, dd)), r)
    return torch.as_tensor(v, dtype=torch.float64).to(Ht.device)


def _inner_max_eig(lam: np.ndarray, Q: np.ndarray, g: np.ndarray, rho: float) -> np.ndarray:
    """The trust-region maximiser from the eigendecomposition ``H = Q diag(λ) Qᵀ`` (numpy, batched)."""
    gt = np.einsum("...ji,...j->...i", Q, g)  # g in the eigenbasis
    gap = np.clip(lam[..., -1:] - lam, 0.0, None)
    scale = np.abs(lam).max(-1, keepdims=True) + 1e-300
    on_top = gap <= 1e-12 * scale
    g2 = gt**2
    gtop2 = (g2 * on_top).sum(-1, keepdims=True)
    gnorm = np.sqrt(g2.sum(-1, keepdims=True))
    off = np.where(on_top, 0.0, gt / np.where(on_top, 1.0, gap))
    off2 = (off**2).sum(-1, keepdims=True)
    hard = (np.sqrt(gtop2) <= 1e-14 * (gnorm + scale * rho)) & (off2 <= rho**2)
    # Newton on ψ(μ) = 1/‖v(μ)‖ − 1/ρ (μ = λ − λ_max > 0; ψ concave and increasing), from a lower bound of the
    # root — ‖v(μ)‖ ≥ ‖g_top‖/μ and ‖v(μ)‖ ≥ ‖g‖/(gap_max + μ) — so the iterates increase to it monotonically.
    mu = np.maximum(np.sqrt(gtop2) / rho, gnorm / rho - gap.max(-1, keepdims=True))
    mu = np.where(hard, 1.0, np.maximum(mu, 1e-300))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for it in range(100):  # noqa: B007 - ``it`` gates the convergence test
            den = gap + mu
            nrm2 = (g2 / den**2).sum(-1, keepdims=True)
            nrm = np.sqrt(nrm2)
            psi = 1.0 / nrm - 1.0 / rho
            dpsi = (g2 / den**3).sum(-1, keepdims=True) / (nrm2 * nrm)  # dψ/dμ = −(d‖v‖/dμ)/‖v‖²
            step = np.where(hard | ~np.isfinite(psi / dpsi), 0.0, psi / dpsi)
            mu = mu - step
            if it >= 2 and bool((np.abs(step) <= 1e-15 * mu).all()):  # quadratic convergence: done
                break
        vt = gt / (gap + mu)
    # hard case (g has no component on the top eigenspace and the rest is inside the ball): go to the sphere along
    # the last top eigenvector
    e_top = np.zeros_like(gt)
    e_top[..., -1] = 1.0
    v_hard = off + np.sqrt(np.clip(rho**2 - off2, 0.0, None)) * e_top
    vt = np.where(hard, v_hard, vt)
    return np.einsum("...ij,...j->...i", Q, vt)


class StabilityResult(NamedTuple):
    """Per sample size ``n``: the replace-one divergence ``δ`` (mean over replacements, and its s.e.), the
    generalisation gap ``F(w_T) − F̂(w_T)`` on the base data set, the largest per-sample gradient norm met ``G``,
    and the stability template ``2ηGT/n``."""

    algorithm: str
    n: np.ndarray
    delta: np.ndarray
    delta_se: np.ndarray
    gap: np.ndarray
    G: np.ndarray
    template: np.ndarray
    empirical: np.ndarray
    population: np.ndarray


def _ls_data(ns: tuple[int, ...], d: int, replacements: int, sigma: float, seed: int, dev: torch.device):
    """``w*``, and per ``n``: the base data ``(A, y)`` and the replacement samples ``(A2, y2)`` (row ``i`` of
    ``A2`` replaces row ``i`` of ``A`` in data set ``S⁽ⁱ⁾``)."""
    gen = _generator(seed)
    wstar = torch.randn(d, generator=gen, dtype=torch.float64)
    out = []
    for n in ns:
        A = torch.randn(n, d, generator=gen, dtype=torch.float64) / math.sqrt(d)
        y = A @ wstar + sigma * torch.randn(n, generator=gen, dtype=torch.float64)
        A2 = torch.randn(replacements, d, generator=gen, dtype=torch.float64) / math.sqrt(d)
        y2 = A2 @ wstar + sigma * torch.randn(replacements, generator=gen, dtype=torch.float64)
        out.append(tuple(x.to(dev) for x in (A, y, A2, y2)))
    return wstar.to(dev), out


def _stability(algs: tuple[str, ...], ns: tuple[int, ...], d: int, rho: float, eta: float, T: int, R: int,
               sig: float, seed: int, dev: torch.device) -> list[StabilityResult]:
    """All algorithms, sample sizes and data sets as one batch of runs (the dynamics only see ``Ĥ`` and ``b``).

    The data are drawn with torch (CPU generator, on ``dev``); the 200 small (d = 20) steps run in numpy, whose
    per-operation overhead is a few microseconds."""
    wstar_t, data_t = _ls_data(ns, d, R, sig, seed, dev)
    wstar = to_numpy(wstar_t)
    data = [tuple(to_numpy(x) for x in item) for item in data_t]
    Hs, bs = [], []
    for A, y, A2, y2 in data:
        n = A.shape[0]
        H0, b0 = A.T @ A / n, A.T @ y / n
        Ar, yr = A[:R], y[:R]
        # S⁽ⁱ⁾: remove row i, add the fresh row (rank-two update of Ĥ, one-term update of b)
        Hr = H0 + (A2[:, :, None] * A2[:, None, :] - Ar[:, :, None] * Ar[:, None, :]) / n
        br = b0 + (A2 * y2[:, None] - Ar * yr[:, None]) / n
        Hs.append(np.concatenate([H0[None], Hr]))
        bs.append(np.concatenate([b0[None], br]))
    H1, b1 = np.concatenate(Hs), np.concatenate(bs)  # (P, d, d), (P, d) with P = len(ns)·(R + 1)
    K, P = len(algs), H1.shape[0]
    H = np.tile(H1, (K, 1, 1))
    b = np.tile(b1, (K, 1))
    block = {a: slice(k * P, (k + 1) * P) for k, a in enumerate(algs)}
    if "sa-gd" in algs:
        lam, Q = np.linalg.eigh(H[block["sa-gd"]])
    w = np.zeros((K * P, d))
    U = np.empty((K * P, T, d))  # the points where gradients are taken (w + v)
    for t in range(T):
        g = np.einsum("bij,bj->bi", H, w) - b
        v = np.zeros_like(w)
        if "sam" in algs:
            gs = g[block["sam"]]
            gn = np.linalg.norm(gs, axis=-1, keepdims=True)
            v[block["sam"]] = np.where(gn > 0, rho * gs / np.where(gn > 0, gn, 1.0), 0.0)
        if "sa-gd" in algs:
            v[block["sa-gd"]] = _inner_max_eig(lam, Q, g[block["sa-gd"]], rho)
        u = w + v
        U[:, t] = u
        w = w - eta * (np.einsum("bij,bj->bi", H, u) - b)
    U = U.reshape(K, P, T, d)
    W = w.reshape(K, P, d)
    results = []
    for k, alg in enumerate(algs):
        res: dict[str, list[float]] = {key: [] for key in ("delta", "se", "gap", "G", "emp", "pop")}
        start = 0
        for A, y, A2, y2 in data:
            sl = slice(start, start + R + 1)
            start += R + 1
            wT, Uk = W[k, sl], U[k, sl]
            dist = np.linalg.norm(wT[1:] - wT[0], axis=-1)
            res["delta"].append(float(dist.mean()))
            res["se"].append(float(dist.std(ddof=1) / math.sqrt(R)) if R > 1 else 0.0)
            # per-sample gradient norms |aᵀu − y|·‖a‖ at every evaluation point of every run: one GEMM with the
            # base samples, then the replaced sample of each run S⁽ⁱ⁾ swapped in
            # float32 is plenty here: G only scales the template, which has ≥ 10× slack
            X = (Uk.reshape(-1, d).astype(np.float32) @ A.T.astype(np.float32)).reshape(R + 1, T, -1)
            X -= y.astype(np.float32)
            idx = np.arange(R)
            X[idx + 1, :, idx] = 0.0  # the replaced samples are not in S⁽ⁱ⁾ ...
            big = np.maximum(X.max(1), -X.min(1))  # (R + 1, n): max over t of |aᵀu_t − y|
            G = float((big.astype(np.float64) * np.linalg.norm(A, axis=-1)).max())
            rep = np.abs(np.einsum("rtd,rd->rt", Uk[1:], A2) - y2[:, None]).max(1)  # ... their fresh ones are
            G = max(G, float((rep * np.linalg.norm(A2, axis=-1)).max()))
            res["G"].append(G)
            emp = 0.5 * float(((A @ wT[0] - y) ** 2).mean())
            pop = float(((wT[0] - wstar) ** 2).sum()) / (2 * d) + sig**2 / 2
            res["emp"].append(emp)
            res["pop"].append(pop)
            res["gap"].append(pop - emp)
        nn_arr = np.array(ns, dtype=np.float64)
        Garr = np.array(res["G"])
        results.append(StabilityResult(alg, np.array(ns), np.array(res["delta"]), np.array(res["se"]),
                                       np.array(res["gap"]), Garr, 2 * eta * Garr * T / nn_arr, np.array(res["emp"]),
                                       np.array(res["pop"])))
    return results


def stability(algorithm: str | Sequence[str], n: int | Sequence[int] = STABILITY_NS, *, d: int = 20,
              rho: float = 0.05, lr: float = 0.5, steps: int = 200, replacements: int = 20, sigma: float = 0.5,
              seed: int = 0, device: Any = None) -> StabilityResult | list[StabilityResult]:
    """Replace-one stability of GD, SA-GD or SAM on least squares (claim 4, [reconstruction]).

    For each ``n``: a data set ``S`` of ``n`` samples and ``replacements`` data sets ``S⁽ⁱ⁾`` (sample ``i``
    replaced by a fresh one); every run starts at ``w₀ = 0`` and takes ``steps`` full-batch steps of size ``lr``.
    With ``Ĥ = AᵀA/n``, ``b = Aᵀy/n``: GD ``w ← w − η(Ĥw − b)``; SA-GD ``w ← w − η(Ĥ(w + v) − b)`` with ``v`` the
    exact inner maximiser (:func:`inner_max_quadratic`); SAM the same with ``v = ρg/‖g‖``, ``g = Ĥw − b``.
    ``algorithm`` is one of ``"gd"``, ``"sa-gd"``, ``"sam"`` (one result) or a tuple of them (a list of
    results, all run as one batch on the same data)."""
    algs_raw = (algorithm,) if isinstance(algorithm, str) else algorithm
    if not isinstance(algs_raw, (list, tuple)) or not algs_raw:
        raise TypeError(f"Invalid algorithm: {algorithm!r} (must be one of {_ALGORITHMS} or a tuple of them)")
    algs = tuple(one_of("algorithm", a, _ALGORITHMS) for a in algs_raw)
    ns_raw = (n,) if not isinstance(n, (list, tuple)) else tuple(n)
    if not ns_raw:
        raise ValueError("Invalid n: empty (give at least one sample size)")
    ns = tuple(integer("n", x, 2, 10**6) for x in ns_raw)
    dd = integer("d", d, 1, 1000)
    r = number("rho", rho, 0.0, math.inf, low_open=True)
    eta = number("lr", lr, 0.0, 10.0, low_open=True)
    T = integer("steps", steps, 1, 20_000)
    R = integer("replacements", replacements, 1, 10_000)
    if R > min(ns):
        raise ValueError(f"Invalid replacements: {R} (must be ≤ the smallest n = {min(ns)})")
    sig = number("sigma", sigma, 0.0, 1e6)
    s = integer("seed", seed, 0)
    memory_guard(8.0 * ((R + 1) * len(ns) * len(algs) * (T + 2) * (dd + 2) + (R + 1) * T * max(ns)
                        + sum(ns) * (dd + 2) + (R + 1) * len(ns) * len(algs) * 3 * dd * dd),
                 lower="n, d, steps or replacements")
    dev = resolve_device(device)
    with one_thread(dev):
        out = _stability(algs, ns, dd, r, eta, T, R, sig, s, dev)
    return out[0] if isinstance(algorithm, str) else out
