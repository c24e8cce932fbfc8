r"""Fused Triton sweep of deterministic SAM on the 2-D quadratic saddle ℓ(w) = ½(λ₁w₁² + λ₂w₂²).

The reference is :func:`theorybook.sam_saddle.dynamics.sam_sweep` (``noise=None``), i.e. the update of
:func:`theorybook.sam_saddle.dynamics.sam_update` with ``grad_fn = saddle_quadratic_grad(lam)``:

.. math::
    g = \Lambda w,\quad w^p = w + \rho\,\frac{g}{\lVert g\rVert + 10^{-16}}\ \text{(normalised)}\ \text{or}\
    w + \rho g,\quad \tilde g = \Lambda w^p,\quad b \leftarrow \gamma b + \tilde g,\quad w \leftarrow w - \eta b

(no buffer at all when every cell has γ = 0, as in the reference: then w ← w − η g̃). One program owns
``BLOCK`` cells, keeps (w₁, w₂, b₁, b₂) and the running reductions in registers, loops over all steps and
writes only the per-cell loss reductions, the final iterate and its distance ‖w_T‖ to the saddle.

Rounding, operation by operation as the CPU reference computes it:

* ``torch.linalg.vector_norm`` of a length-2 row on CPU is ``sqrt(fma(g₂, g₂, g₁·g₁))`` (measured: it agrees
  bitwise with that formula on 10⁵ random rows in float64 and float32, and *not* with ``sqrt(g₁²+g₂²)``),
  reproduced with ``tl.fma``;
* every other operation is one IEEE rounding (mul, add, div, sqrt), with ``enable_fp_fusion=False`` so no
  ``a*b+c`` is contracted; float32 ``/`` and ``sqrt`` use ``div_rn`` / ``sqrt_rn`` (approximate by default on
  GPUs);
* the loss is ``0.5 * ((λ₁w₁)w₁ + (λ₂w₂)w₂)``, the order of ``saddle_quadratic``.

Hence on CPU (Triton interpreter, ``TRITON_INTERPRET=1``) the kernel agrees with the reference bit for bit,
divergent cells included. On a GPU the torch reference's own norm reduction rounds differently, so there the
agreement is at rounding level (amplified by the dynamics), not bitwise.

Beale is not fused: its torch gradient evaluates y**(0..6) with a tensor exponent (SLEEF ``pow``) and a matmul
whose accumulation order is BLAS's, so no bitwise tier would be possible; it stays on the torch path.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from theorybook.kernels._common import _div, block_size, compile_ptx_for

from theorybook import validate
from theorybook.sam_saddle.dynamics import NORM_EPS, SAMSweep, fused_sweep_args
from theorybook.sweep import canonicalise

__all__ = ["sam_quadratic_fused", "compile_ptx"]


@triton.jit
def _norm2(a, b):
    """torch's CPU ``vector_norm`` of the row (a, b): sqrt(fma(b, b, a·a)), IEEE sqrt."""
    s = tl.fma(b, b, a * a)
    if s.dtype == tl.float32:
        r = tl.sqrt_rn(s)
    else:
        r = tl.sqrt(s)
    return r


@triton.jit
def _loss(x, y, l0, l1):
    return 0.5 * ((l0 * x) * x + (l1 * y) * y)


@triton.jit
def _sam_quad_kernel(
    w0_ptr, rho_ptr, lr_ptr, mom_ptr, consts_ptr,
    last_ptr, min_ptr, first_ptr, tail_ptr, w_ptr, dist_ptr,
    n_cells, steps, tail_from,
    NORMALIZED: tl.constexpr, HAS_MOMENTUM: tl.constexpr, HAS_THRESHOLD: tl.constexpr, BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cells
    x = tl.load(w0_ptr + 2 * offs, mask=mask, other=0.0)
    y = tl.load(w0_ptr + 2 * offs + 1, mask=mask, other=0.0)
    l0 = tl.load(consts_ptr)
    l1 = tl.load(consts_ptr + 1)
    thr = tl.load(consts_ptr + 2)
    eps = tl.load(consts_ptr + 3)
    rho = tl.load(rho_ptr + offs, mask=mask, other=0.0)
    lr = tl.load(lr_ptr + offs, mask=mask, other=0.0)
    if HAS_MOMENTUM:
        mom = tl.load(mom_ptr + offs, mask=mask, other=0.0)
    bx = tl.zeros_like(x)
    by = tl.zeros_like(y)
    cur = _loss(x, y, l0, l1)
    mn = cur
    first = tl.full((BLOCK,), -1, tl.int64)
    tmax = tl.full((BLOCK,), float("-inf"), x.dtype)
    for t in range(steps):
        gx = l0 * x
        gy = l1 * y
        if NORMALIZED:
            den = _norm2(gx, gy) + eps
            px = x + rho * _div(gx, den)
            py = y + rho * _div(gy, den)
        else:
            px = x + rho * gx
            py = y + rho * gy
        qx = l0 * px
        qy = l1 * py
        if HAS_MOMENTUM:
            bx = mom * bx + qx
            by = mom * by + qy
            x = x - lr * bx
            y = y - lr * by
        else:
            x = x - lr * qx
            y = y - lr * qy
        cur = _loss(x, y, l0, l1)
        step = t + 1
        mn = tl.where((cur < mn) | (mn != mn), cur, mn)  # fmin: NaN ignored
        if HAS_THRESHOLD:
            first = tl.where((cur <= thr) & (first < 0), step, first)
        tmax = tl.where((step >= tail_from) & ((cur > tmax) | (tmax != tmax)), cur, tmax)  # fmax
    tl.store(last_ptr + offs, cur, mask=mask)
    tl.store(min_ptr + offs, mn, mask=mask)
    tl.store(first_ptr + offs, first, mask=mask)
    tl.store(tail_ptr + offs, tmax, mask=mask)
    tl.store(w_ptr + 2 * offs, x, mask=mask)
    tl.store(w_ptr + 2 * offs + 1, y, mask=mask)
    tl.store(dist_ptr + offs, _norm2(x, y), mask=mask)


def sam_quadratic_fused(
    w0: torch.Tensor,
    rho: torch.Tensor,
    lr: torch.Tensor,
    momentum: torch.Tensor | None,
    steps: int,
    *,
    lam: tuple[float, float],
    normalized: bool,
    threshold: float | None = None,
    tail: int = 0,
    block: int | None = None,
) -> SAMSweep:
    """Fused :func:`theorybook.sam_saddle.dynamics.sam_sweep` on the 2-D quadratic saddle.

    ``w0``: the starting points already broadcast to (*cells, 2); ``rho``, ``lr``, ``momentum``: tensors of
    the cell shape (same dtype and device), ``momentum=None`` when every cell has γ = 0 (the reference then
    keeps no buffer). ``lam``: the two curvatures λ. Runs compiled on CUDA, and under the Triton interpreter on
    CPU tensors when ``TRITON_INTERPRET=1`` was set before this module was imported (the parity tests).
    """
    cells, n = fused_sweep_args(w0, steps, tail, lam)
    dt, dev = w0.dtype, w0.device

    def flat(t):
        return torch.as_tensor(t, dtype=dt, device=dev).expand(cells).reshape(-1).contiguous()

    w = w0.reshape(-1).contiguous().clone()
    rho_f, lr_f = flat(rho), flat(lr)
    mom_f = lr_f if momentum is None else flat(momentum)  # unused slot: any valid pointer
    consts = torch.tensor([float(lam[0]), float(lam[1]), 0.0 if threshold is None else threshold, NORM_EPS],
                          dtype=dt, device=dev)
    last = torch.empty(n, dtype=dt, device=dev)
    mn, tmax, dist = torch.empty_like(last), torch.empty_like(last), torch.empty_like(last)
    first = torch.empty(n, dtype=torch.int64, device=dev)
    w_out = torch.empty_like(w)
    if n:
        blk = block or block_size(n, dev)
        tail_from = steps - tail + 1 if tail else steps
        _sam_quad_kernel[(triton.cdiv(n, blk),)](
            w, rho_f, lr_f, mom_f, consts, last, mn, first, tmax, w_out, dist, n, steps, tail_from,
            NORMALIZED=bool(normalized), HAS_MOMENTUM=momentum is not None,
            HAS_THRESHOLD=threshold is not None, BLOCK=blk,
            enable_fp_fusion=False,  # no implicit a*b+c → fma: one rounding per op, as torch
        )
    last, mn, first, tmax, dist = (t.reshape(cells) for t in (last, mn, first, tmax, dist))
    if steps == 0:
        tmax = last.clone()
    final, tmax, diverged = canonicalise(last, tmax)
    return SAMSweep(final, mn, first, tmax, diverged, w_out.reshape(*cells, 2), dist)


def compile_ptx(dtype: torch.dtype, *, normalized: bool = True, momentum: bool = True, arch: int = 90,
                block: int = 128) -> str:
    """PTX of the fused SAM kernel compiled ahead of time for CUDA ``sm_<arch>``: needs Triton's NVIDIA
    backend, not a GPU (a CI compile check). Not available under ``TRITON_INTERPRET=1``."""
    validate.one_of("dtype", dtype, (torch.float32, torch.float64))
    p = "*fp64" if dtype == torch.float64 else "*fp32"
    sig = {n: p for n in ("w0_ptr", "rho_ptr", "lr_ptr", "mom_ptr", "consts_ptr", "last_ptr", "min_ptr",
                          "tail_ptr", "w_ptr", "dist_ptr")}
    sig.update(first_ptr="*i64", n_cells="i32", steps="i32", tail_from="i32")
    consts = dict(NORMALIZED=bool(normalized), HAS_MOMENTUM=bool(momentum), HAS_THRESHOLD=True, BLOCK=block)
    return compile_ptx_for(_sam_quad_kernel, sig, consts, arch)
