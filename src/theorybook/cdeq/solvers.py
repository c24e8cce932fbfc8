"""The classical solvers of the teacher's fixed point, each with an exact count of layer calls (NFE).

All start from ``z₀ = 0`` and produce, after ``n`` calls of ``f``, the iterate ``z_n`` (the last call's output is
used; no extra call evaluates the final residual), so the three methods are compared at **every** NFE from 1:

* Picard: ``z_{k+1} = f(z_k)``.
* Anderson (type II, memory ``m``; our implementation from the equations): with ``g_i = f(z_i)`` and residuals
  ``r_i = g_i − z_i`` of the last ``m_k = min(m, k+1)`` iterates, ``z_{k+1} = Σ α_i g_i`` where ``α`` minimises
  ``‖Σ α_i r_i‖²`` subject to ``Σ α_i = 1`` (a ridge ``λ·mean diag`` on the Gram matrix). At NFE 1 this is the Picard
  step ``f(z₀)``; at NFE 2 it is the paper code's 2-point step :func:`anderson2`.
* Broyden ("good" Broyden on ``g(z) = f(z) − z`` in inverse form, ``J₀⁻¹ = −I``, kept as low-rank factors; ours):
  ``z_{k+1} = z_k − J_k⁻¹ g_k``,
  ``J_{k+1}⁻¹ = J_k⁻¹ + (Δz − J_k⁻¹Δg) Δzᵀ J_k⁻¹ / (Δzᵀ J_k⁻¹ Δg)``. At NFE 1 it is the Picard step. torchdeq's
  ``broyden_solver`` produces the same iterates but spends one more call to evaluate the last residual
  (:func:`torchdeq_solve`, checked in the seeded verdicts).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch

from ..validate import finite_tensor, integer, memory_guard, number, one_of
from .model import _MAX_NFE, LinearDEQ, _teacher

__all__ = ["ANDERSON_M", "METHODS", "Solved", "anderson2", "picard_nfe_to", "solve", "solver_trajectory",
           "torchdeq_solve"]

METHODS = ("picard", "anderson", "broyden", "exact")
#: Anderson's memory (torchdeq's default) and the ridge on its Gram matrix (relative to its mean diagonal).
ANDERSON_M, ANDERSON_LAM = 6, 1e-10


def anderson2(f: Callable[[torch.Tensor], torch.Tensor], z_prev: torch.Tensor, z_curr: torch.Tensor) -> torch.Tensor:
    """The paper code's 2-point Anderson step [paper, code], per row: with ``r = f(z) − z``,

    ``α₁ = −⟨r_prev, r_curr − r_prev⟩ / ‖r_curr − r_prev‖²``, ``α₀ = 1 − α₁``, output ``α₀ f(z_prev) + α₁ f(z_curr)``

    (the minimiser of ``‖α₀ r_prev + α₁ r_curr‖`` subject to ``α₀ + α₁ = 1``). Costs 2 calls of ``f``; when the two
    residuals coincide, ``α₁ = 0``."""
    if not callable(f):
        raise TypeError(f"Invalid f: {f!r} (must be callable)")
    z_prev = finite_tensor("z_prev", z_prev)
    z_curr = finite_tensor("z_curr", z_curr)
    if z_prev.shape != z_curr.shape or z_prev.ndim == 0:
        raise ValueError(f"Invalid z_curr: shape {tuple(z_curr.shape)} (must match z_prev {tuple(z_prev.shape)})")
    f_prev, f_curr = f(z_prev), f(z_curr)
    for name, v in (("f(z_prev)", f_prev), ("f(z_curr)", f_curr)):
        if not isinstance(v, torch.Tensor) or v.shape != z_prev.shape:
            raise ValueError(f"Invalid f: {name} is not a tensor of shape {tuple(z_prev.shape)}")
    r_prev, r_curr = f_prev - z_prev, f_curr - z_curr
    dr = r_curr - r_prev
    num = -(r_prev * dr).sum(-1, keepdim=True)
    den = (dr * dr).sum(-1, keepdim=True)
    a1 = torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(den))
    return (1 - a1) * f_prev + a1 * f_curr


class Solved(NamedTuple):
    """A solver's state ``z`` and the number of layer calls it made (``calls``)."""

    z: torch.Tensor
    calls: int


def _counting_layer(teacher: LinearDEQ, x: torch.Tensor) -> tuple[Callable[[torch.Tensor], torch.Tensor], list[int]]:
    step = teacher.step_fn(x)
    calls = [0]

    def f(z: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        return step(z)

    return f, calls


def _anderson_iter(f: Callable, z0: torch.Tensor, n: int, m: int, lam: float):
    Z: list[torch.Tensor] = []
    G: list[torch.Tensor] = []
    z = z0
    for _ in range(n):
        g = f(z)
        Z, G = (Z + [z])[-m:], (G + [g])[-m:]
        if len(G) == 1:
            z = g
        else:
            R = torch.stack([gi - zi for gi, zi in zip(G, Z, strict=True)], 1)  # (B, m_k, H)
            A = R @ R.transpose(1, 2)
            mk = A.shape[-1]
            scale = A.diagonal(dim1=1, dim2=2).mean(-1).clamp_min(torch.finfo(A.dtype).tiny)[:, None, None]
            A = A + lam * scale * torch.eye(mk, dtype=A.dtype, device=A.device)
            a = torch.linalg.solve(A, torch.ones(A.shape[0], mk, 1, dtype=A.dtype, device=A.device))
            a = a / a.sum(1, keepdim=True)
            z = (a.transpose(1, 2) @ torch.stack(G, 1)).squeeze(1)
        yield z


def _broyden_iter(f: Callable, z0: torch.Tensor, n: int):
    # J_k⁻¹ = −I + Σ_{i<k} u_i v_iᵀ, kept as low-rank factors per sample (B, n, H): O(B·H·k) per step
    B, H = z0.shape
    U = torch.zeros(B, max(n - 1, 1), H, dtype=z0.dtype, device=z0.device)
    V = torch.zeros_like(U)
    k_used = 0

    def jinv(w: torch.Tensor) -> torch.Tensor:  # J⁻¹ w
        u, v = U[:, :k_used], V[:, :k_used]
        return -w + torch.einsum("bkh,bk->bh", u, torch.einsum("bkh,bh->bk", v, w))

    def jinv_t(w: torch.Tensor) -> torch.Tensor:  # (wᵀ J⁻¹)ᵀ
        u, v = U[:, :k_used], V[:, :k_used]
        return -w + torch.einsum("bkh,bk->bh", v, torch.einsum("bkh,bh->bk", u, w))

    z = z0
    g = f(z) - z
    for k in range(n):
        dz = -jinv(g)
        z_new = z + dz
        yield z_new
        if k == n - 1:
            return
        g_new = f(z_new) - z_new
        dg = g_new - g
        vT = jinv_t(dz)
        den = (vT * dg).sum(-1, keepdim=True)
        ok = den.abs() > torch.finfo(den.dtype).tiny
        U[:, k_used] = torch.where(ok, (dz - jinv(dg)) / torch.where(ok, den, torch.ones_like(den)),
                                   torch.zeros_like(dz))
        V[:, k_used] = vT
        k_used += 1
        z, g = z_new, g_new


def _iterates(teacher: LinearDEQ, x: torch.Tensor, nfe: int, method: str):
    f, calls = _counting_layer(teacher, x)
    z0 = torch.zeros(x.shape[0], teacher.hidden, dtype=x.dtype, device=x.device)
    if method == "picard":
        def gen():
            z = z0
            for _ in range(nfe):
                z = f(z)
                yield z
        return gen(), calls
    if method == "anderson":
        return _anderson_iter(f, z0, nfe, ANDERSON_M, ANDERSON_LAM), calls
    return _broyden_iter(f, z0, nfe), calls


def _check_method(method: str, x: torch.Tensor, teacher: LinearDEQ, nfe: int) -> None:
    one_of("method", method, METHODS)
    H = teacher.hidden
    memory_guard(8.0 * x.shape[0] * H * (2 * ANDERSON_M + 8), lower="x")
    memory_guard(8.0 * x.shape[0] * H * (2 * nfe + 2 if method == "broyden" else nfe), lower="nfe or x")


def solve(teacher: LinearDEQ, x: torch.Tensor, nfe: int, method: str = "picard") -> Solved:
    """``method``'s iterate after exactly ``nfe ≥ 1`` calls of ``f`` from ``z₀ = 0`` (see the module docstring);
    ``"exact"``: the linear solve (``calls = 0``; ``nfe`` ignored)."""
    teacher = _teacher(teacher)
    one_of("method", method, METHODS)
    nfe = integer("nfe", nfe, 1, _MAX_NFE)
    x = teacher._x(x)
    with torch.no_grad():
        if method == "exact":
            return Solved(teacher.fixed_point(x), 0)
        _check_method(method, x, teacher, nfe if method == "broyden" else 1)
        it, calls = _iterates(teacher, x, nfe, method)
        *_, z = it
    return Solved(z, calls[0])


def solver_trajectory(teacher: LinearDEQ, x: torch.Tensor, nfe_max: int, method: str = "picard") -> torch.Tensor:
    """All iterates ``z_1 … z_{nfe_max}`` of ``method`` (``z_n`` after exactly ``n`` calls): shape
    (nfe_max, batch, H). One run gives every NFE, so a least NFE is counted exactly."""
    teacher = _teacher(teacher)
    one_of("method", method, METHODS[:3])
    nfe_max = integer("nfe_max", nfe_max, 1, _MAX_NFE)
    x = teacher._x(x)
    _check_method(method, x, teacher, nfe_max)
    with torch.no_grad():
        it, _ = _iterates(teacher, x, nfe_max, method)
        return torch.stack(list(it))


def torchdeq_solve(teacher: LinearDEQ, x: torch.Tensor, max_iter: int, method: str = "broyden") -> Solved:
    """torchdeq's ``anderson_solver`` / ``broyden_solver`` / ``fixed_point_iter`` with ``max_iter``, ``tol = 0`` and
    ``return_final=True`` from ``z₀ = 0`` (a reference for our solvers; ``calls`` counts every call of ``f``)."""
    from torchdeq.solver import anderson_solver, broyden_solver, fixed_point_iter

    teacher = _teacher(teacher)
    one_of("method", method, METHODS[:3])
    max_iter = integer("max_iter", max_iter, 1, 1024)
    x = teacher._x(x)
    with torch.no_grad():
        f, calls = _counting_layer(teacher, x)
        z0 = torch.zeros(x.shape[0], teacher.hidden, dtype=x.dtype, device=x.device)
        fn = {"picard": fixed_point_iter, "anderson": anderson_solver, "broyden": broyden_solver}[method]
        z, _, _ = fn(f, z0, max_iter=max_iter, tol=0.0, return_final=True)
    return Solved(z.reshape(z0.shape), calls[0])


def picard_nfe_to(gamma: float, tol: float) -> int:
    """The least ``k ≥ 0`` with ``γ^k ≤ tol``: Picard's worst-case NFE to a relative error ``tol`` (``‖z_k − z*‖ ≤
    γ^k‖z*‖`` from ``z₀ = 0``)."""
    gamma = number("gamma", gamma, 0.0, 1.0, low_open=True, high_open=True)
    tol = number("tol", tol, 0.0, math.inf, low_open=True)
    if tol >= 1.0:
        return 0
    k = max(0, math.ceil(math.log(tol) / math.log(gamma) - 1e-9))
    while k * math.log(gamma) > math.log(tol):
        k += 1
    while k > 0 and (k - 1) * math.log(gamma) <= math.log(tol):
        k -= 1
    return k

