"""The learned control-affine Gaussian model ``y′ ≈ f(s) + G(s)a`` from random play, by least squares.

Features (our choice, [reconstruction]; the paper uses neural networks [secondary]): ``φ(q)`` = the monomials of
degree ≤ ``degree`` in the four joint angles; ``f(s)`` is linear in ``φ(q) ⊗ (1, v)`` and in the products
``v_i v_j`` (damping and Coriolis terms); ``G(q) = Σ_j φ_j(q) W_j`` (activations centred at ½). With ``rank = k``
the ``G`` part is refitted as the paper's low-rank head ``G = L R(s)`` (``L``: n_y × k) by reduced-rank
regression in the noise-whitened outputs: the ``G``-part fitted values are projected on their top-``k``
principal directions (the Gaussian maximum-likelihood solution for a fixed ``L`` shared by all states).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import torch

from ..validate import finite_tensor, integer, memory_guard

__all__ = ["Dynamics", "fit_dynamics", "monomials"]


def monomials(q: torch.Tensor, degree: int) -> torch.Tensor:
    """All monomials of degree ≤ ``degree`` in the last dimension of ``q`` (constant first)."""
    q = finite_tensor("q", q)
    degree = integer("degree", degree, 0, 4)
    if q.ndim < 1 or q.shape[-1] < 1 or q.shape[-1] > 16:
        raise ValueError(f"Invalid q: shape {tuple(q.shape)} (must be (..., n) with 1 ≤ n ≤ 16)")
    cols = [torch.ones_like(q[..., 0])]
    for d in range(1, degree + 1):
        for idx in itertools.combinations_with_replacement(range(q.shape[-1]), d):
            c = q[..., idx[0]]
            for i in idx[1:]:
                c = c * q[..., i]
            cols.append(c)
    return torch.stack(cols, dim=-1)


class Dynamics(NamedTuple):
    """A fitted model: ``coef_f`` (n_y × n_f), ``coef_G`` (n_φ × n_y × n_a), noise covariance ``Q`` (n_y × n_y),
    ``rank`` (None: full) and the feature ``degree``. ``G(qpos)`` evaluates ``Σ_j φ_j(q) W_j`` (batched)."""

    coef_f: torch.Tensor
    coef_G: torch.Tensor
    Q: torch.Tensor
    rank: int | None
    degree: int

    def G(self, qpos) -> torch.Tensor:
        """The learned control matrix at postures ``qpos`` (..., 4) → (..., n_y, n_a)."""
        q = finite_tensor("qpos", qpos).to(self.coef_G.device, self.coef_G.dtype)
        return torch.einsum("...j,jya->...ya", monomials(q, self.degree), self.coef_G)


def _f_features(qpos: torch.Tensor, qvel: torch.Tensor, degree: int) -> torch.Tensor:
    phi = monomials(qpos, degree)
    lin = (phi[..., :, None] * torch.cat([torch.ones_like(qvel[..., :1]), qvel], -1)[..., None, :]).flatten(-2)
    iu = torch.triu_indices(qvel.shape[-1], qvel.shape[-1], device=qvel.device)
    quad = qvel[..., iu[0]] * qvel[..., iu[1]]
    return torch.cat([lin, quad], -1)


def fit_dynamics(data, *, rank: int | None = None, degree: int = 2) -> Dynamics:
    """Least-squares fit of ``y′ = f(s) + G(q)a + ε`` to play transitions ``data`` (a :class:`Play`, or any
    tuple ``(qpos, qvel, act, y_next)`` of (N, ·) tensors); ``rank = k`` fits the low-rank head ``G = L R(s)``."""
    if not isinstance(data, tuple) or len(data) != 4:
        raise TypeError("Invalid data: must be a Play tuple (qpos, qvel, act, y_next)")
    names = ("qpos", "qvel", "act", "y_next")
    qpos, qvel, act, y = (finite_tensor(n, x, ndim=2) for n, x in zip(names, data, strict=True))
    dev = qpos.device
    qvel, act, y = qvel.to(dev), act.to(dev), y.to(dev)
    N, n_y = y.shape
    if not (qpos.shape[0] == qvel.shape[0] == act.shape[0] == N) or qvel.shape[1] != qpos.shape[1] \
            or qpos.shape[1] != n_y or qpos.shape[1] > 16 or act.shape[1] > 64:
        raise ValueError(f"Invalid data: shapes {tuple(qpos.shape)}, {tuple(qvel.shape)}, {tuple(act.shape)}, "
                         f"{tuple(y.shape)} (must be (N, n), (N, n), (N, n_a), (N, n) with n ≤ 16, n_a ≤ 64)")
    degree = integer("degree", degree, 0, 3)
    n_a = act.shape[1]
    rank = None if rank is None else integer("rank", rank, 1, n_y)
    ff = _f_features(qpos, qvel, degree)
    phi = monomials(qpos, degree)
    n_phi = phi.shape[-1]
    memory_guard(N * (ff.shape[-1] + n_phi * n_a) * 8 * 3, lower="the number of play steps")
    if N < 2 * (ff.shape[-1] + n_phi * n_a):
        raise ValueError(f"Invalid data: {N} transitions (need ≥ {2 * (ff.shape[-1] + n_phi * n_a)} for "
                         f"{ff.shape[-1] + n_phi * n_a} features at degree {degree})")
    psi = (phi[:, :, None] * (act - 0.5)[:, None, :]).flatten(1)
    X = torch.cat([ff, psi], 1)
    scale = X.abs().amax(0).clamp_min(1e-12)  # column scaling for conditioning
    Xs = X / scale
    gram = Xs.mT @ Xs
    gram = gram + 1e-10 * torch.diagonal(gram).mean() * torch.eye(gram.shape[0], dtype=X.dtype, device=dev)
    W = torch.linalg.solve(gram, Xs.mT @ y) / scale[:, None]  # normal equations: (n_f + n_φ n_a) × n_y
    resid = y - X @ W
    Q = resid.mT @ resid / (N - X.shape[1])
    Wf, WG = W[:ff.shape[-1]].mT, W[ff.shape[-1]:].mT  # n_y × ·
    if rank is not None and rank < n_y:
        Lq = torch.linalg.cholesky(Q)
        fitted = torch.linalg.solve_triangular(Lq, WG @ psi.mT, upper=False)  # whitened G-part, n_y × N
        U = torch.linalg.eigh(fitted @ fitted.mT)[1][:, -rank:]
        proj = Lq @ U @ U.mT @ torch.linalg.inv(Lq)
        WG = proj @ WG
        resid = y - ff @ Wf.mT - psi @ WG.mT
        Q = resid.mT @ resid / (N - ff.shape[1] - rank * (n_y + n_phi * n_a - rank))
    coef_G = WG.reshape(n_y, n_phi, n_a).permute(1, 0, 2).contiguous()
    return Dynamics(Wf, coef_G, Q, rank, degree)
