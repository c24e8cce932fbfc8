"""JoSE's closed form in torch float64 (batched over states; runs unchanged on CUDA).

For a control-affine Gaussian channel ``y′ | s, a ~ N(f(s) + G(s)a, Q(s))`` and a precoder ``a = Θ(s)z`` the
information the latent ``z ~ N(0, Σ)`` carries about the next joint velocity is

    I(z; y′) = ½ log det(I + G̃ΘΣΘᵀG̃ᵀ),   G̃ = Q^{-1/2} G   (nats; real channel),

and under the power budget ``tr(ΘΣΘᵀ) ≤ P`` it is maximised (Theorem C.1 [secondary]; Telatar 1999) by the right
singular vectors ``V_r`` of ``G̃`` with water-filled powers ``p_i = (ν − 1/σ_i²)⁺``, ``Σ p_i = P``:
``JoSE = ½ Σ log(1 + σ_i² p_i)``. Here ``Q^{-1/2}`` is the inverse Cholesky factor (any square root gives the same
``G̃ᵀG̃ = GᵀQ⁻¹G``, hence the same capacity and right singular vectors).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..validate import finite_tensor, integer, memory_guard, number

__all__ = ["WaterFilling", "Jose", "water_filling", "jose", "precoder_capacity", "gaussian_capacity",
           "principal_angles"]


class WaterFilling(NamedTuple):
    """Powers ``p_i`` (same shape as the gains), water level ``ν`` and capacity ``½ Σ log(1 + g_i p_i)`` (nats)."""

    powers: torch.Tensor
    level: torch.Tensor
    capacity: torch.Tensor


class Jose(NamedTuple):
    """JoSE at each state: capacity (nats), precoder ``Θ`` (n_a × k, orthonormal columns), water-filled powers
    (k) and the singular values of the whitened channel ``G̃`` (all of them, descending)."""

    capacity: torch.Tensor
    precoder: torch.Tensor
    powers: torch.Tensor
    singular_values: torch.Tensor


def _power(power) -> float:
    return number("power", power, 0.0, 1e12, low_open=True)


def water_filling(gains, power) -> WaterFilling:
    """Water-filling over parallel channels with gains ``g_i = σ_i² ≥ 0`` (last dimension; leading dims batch):
    ``p_i = (ν − 1/g_i)⁺`` with ``Σ p_i = P``. Capacity ``½ Σ log(1 + g_i p_i)`` in nats.

    The level is found exactly: sort the gains, and take the largest ``m`` with ``ν_m = (P + Σ_{i≤m} 1/g_i)/m >
    1/g_m``. Zero gains never receive power; if all gains are zero the capacity is 0 and the level is reported as
    ``P/n``.
    """
    g = finite_tensor("gains", gains)
    if g.ndim == 0:
        g = g.reshape(1)
    if g.shape[-1] == 0:
        raise ValueError("Invalid gains: empty last dimension (need at least one channel)")
    if bool((g < 0).any()):
        raise ValueError(f"Invalid gains: min {float(g.min()):g} (must be ≥ 0: gains are squared singular values)")
    if bool((g > 1e150).any()):
        raise ValueError(f"Invalid gains: max {float(g.max()):g} (must be ≤ 1e150)")
    P = _power(power)
    gs, order = torch.sort(g, dim=-1, descending=True)
    inv = torch.where(gs > 0, 1.0 / gs.clamp_min(1e-300), torch.full_like(gs, float("inf")))
    m = torch.arange(1, g.shape[-1] + 1, dtype=g.dtype, device=g.device)
    csum = torch.cumsum(torch.where(torch.isfinite(inv), inv, torch.zeros_like(inv)), dim=-1)
    nu_m = (P + csum) / m
    valid = (nu_m > inv) & torch.isfinite(inv)
    # the active set is a prefix of the sorted gains: its size is the number of valid m's
    count = valid.sum(dim=-1, keepdim=True).clamp_min(1)
    level = torch.gather(nu_m, -1, count - 1)
    any_gain = valid.any(dim=-1, keepdim=True)
    level = torch.where(any_gain, level, torch.full_like(level, P / g.shape[-1]))
    ps = torch.where(torch.isfinite(inv), (level - inv).clamp_min(0.0), torch.zeros_like(inv))
    ps = torch.where(any_gain, ps, torch.zeros_like(ps))
    powers = torch.empty_like(ps).scatter_(-1, order, ps)
    cap = 0.5 * torch.log1p(gs * ps).sum(-1)
    return WaterFilling(powers, level.squeeze(-1), cap)


def _whiten(G, Q) -> torch.Tensor:
    G = finite_tensor("G", G)
    if G.ndim < 2:
        raise ValueError(f"Invalid G: shape {tuple(G.shape)} (must be (..., n_y, n_a))")
    Q = finite_tensor("Q", Q).to(G.device, G.dtype)
    n = G.shape[-2]
    if Q.ndim < 2 or Q.shape[-2:] != (n, n):
        raise ValueError(f"Invalid Q: shape {tuple(Q.shape)} (must be (..., {n}, {n}) to match G's {n} rows)")
    memory_guard(G.numel() * 8 * 6 + Q.numel() * 8 * 4, lower="the batch of states")
    if not torch.allclose(Q, Q.mT, rtol=1e-10, atol=1e-12 * float(Q.abs().max().clamp_min(1e-300))):
        raise ValueError("Invalid Q: not symmetric (must be symmetric positive definite)")
    L, info = torch.linalg.cholesky_ex(Q)
    if bool((info != 0).any()):
        raise ValueError("Invalid Q: not positive definite (must be symmetric positive definite)")
    return torch.linalg.solve_triangular(L, G.expand(*torch.broadcast_shapes(G.shape[:-2], Q.shape[:-2]),
                                                     *G.shape[-2:]), upper=False)


def jose(G, Q, power, *, k: int | None = None) -> Jose:
    """Theorem C.1 [secondary]: the optimal ``k``-dimensional precoder of the channel ``(G, Q)`` under
    ``tr Σ_a ≤ P`` — the top-``k`` right singular vectors of ``G̃ = Q^{-1/2}G`` with water-filled powers.
    ``k = None`` uses all ``n_a`` columns (modes beyond the rank get zero power). Batched over leading dims."""
    Gt = _whiten(G, Q)
    n_a = Gt.shape[-1]
    k = n_a if k is None else integer("k", k, 1, n_a)
    P = _power(power)
    _, s, Vh = torch.linalg.svd(Gt, full_matrices=True)
    gains = torch.zeros(*s.shape[:-1], n_a, dtype=s.dtype, device=s.device)
    gains[..., :s.shape[-1]] = s**2
    wf = water_filling(gains[..., :k], P)
    return Jose(wf.capacity, Vh[..., :k, :].mT, wf.powers, s)


def precoder_capacity(G, Q, Theta, power) -> torch.Tensor:
    """Capacity through a fixed precoder: ``Θ`` (n_a × k, batched) is orthonormalised (QR) first, then the
    whitened channel ``G̃Θ`` is water-filled under ``tr Σ ≤ P`` (``tr ΘΣΘᵀ = tr Σ`` for orthonormal ``Θ``)."""
    Gt = _whiten(G, Q)
    T = finite_tensor("Theta", Theta).to(Gt.device, Gt.dtype)
    if T.ndim < 2 or T.shape[-2] != Gt.shape[-1] or T.shape[-1] > T.shape[-2] or T.shape[-1] < 1:
        raise ValueError(f"Invalid Theta: shape {tuple(T.shape)} (must be (..., {Gt.shape[-1]}, k), 1 ≤ k ≤ "
                         f"{Gt.shape[-1]})")
    memory_guard(T.numel() * 8 * 6, lower="the number of precoders")
    Qf, R = torch.linalg.qr(T)
    if bool((torch.diagonal(R, dim1=-2, dim2=-1).abs() < 1e-12 * R.abs().amax((-2, -1), keepdim=True)[..., 0]).any()):
        raise ValueError("Invalid Theta: columns are linearly dependent (must have full column rank)")
    s = torch.linalg.svdvals(Gt @ Qf)
    return water_filling(s**2, power).capacity


def gaussian_capacity(G, Q, Sigma) -> torch.Tensor:
    """``I(a; y′) = ½ log det(I + G̃ Σ G̃ᵀ)`` (nats) for ``a ~ N(·, Σ)``, ``Σ ⪰ 0`` (n_a × n_a, batched)."""
    Gt = _whiten(G, Q)
    S = finite_tensor("Sigma", Sigma).to(Gt.device, Gt.dtype)
    n_a = Gt.shape[-1]
    if S.ndim < 2 or S.shape[-2:] != (n_a, n_a):
        raise ValueError(f"Invalid Sigma: shape {tuple(S.shape)} (must be (..., {n_a}, {n_a}))")
    S = 0.5 * (S + S.mT)
    if bool((torch.linalg.eigvalsh(S) < -1e-9 * S.abs().amax((-2, -1)).clamp_min(1e-300)[..., None]).any()):
        raise ValueError("Invalid Sigma: not positive semi-definite")
    eye = torch.eye(Gt.shape[-2], dtype=Gt.dtype, device=Gt.device)
    return 0.5 * torch.linalg.slogdet(eye + Gt @ S @ Gt.mT)[1]


def principal_angles(A, B) -> torch.Tensor:
    """Principal angles (degrees, ascending) between the column spans of ``A`` (n × p) and ``B`` (n × q), batched;
    ``min(p, q)`` angles. With ``Â`` the orthonormal basis of the smaller span: ``arcsin`` of the singular values of
    ``(I − P_B)Â`` below 45° (accurate for small angles), ``arccos`` of those of ``ÂᵀB̂`` above (Björck–Golub)."""
    A = finite_tensor("A", A)
    B = finite_tensor("B", B).to(A.device, A.dtype)
    if A.ndim < 2 or B.ndim < 2 or A.shape[-2] != B.shape[-2] or min(A.shape[-1], B.shape[-1]) < 1:
        raise ValueError(f"Invalid A, B: shapes {tuple(A.shape)} and {tuple(B.shape)} (must be (..., n, p) and "
                         "(..., n, q) with the same n)")
    if A.shape[-1] > A.shape[-2] or B.shape[-1] > B.shape[-2]:
        raise ValueError("Invalid A, B: more columns than rows (must span subspaces of dimension ≤ n)")
    memory_guard((A.numel() + B.numel()) * 8 * 6, lower="the batch")
    qa, qb = torch.linalg.qr(A)[0], torch.linalg.qr(B)[0]
    if qa.shape[-1] > qb.shape[-1]:
        qa, qb = qb, qa
    c = torch.linalg.svdvals(qa.mT @ qb).clamp(-1.0, 1.0)  # cosines, descending (p = dim of the smaller span)
    s = torch.linalg.svdvals(qa - qb @ (qb.mT @ qa)).clamp(0.0, 1.0)  # sines, descending
    ang_c = torch.rad2deg(torch.arccos(c))
    ang_s = torch.rad2deg(torch.arcsin(torch.flip(s, dims=(-1,))))
    return torch.where(ang_c < 45.0, ang_s, ang_c)
