r"""Fused Triton sweeps of GD / heavy ball / RMSProp / Adam on L(x) = x^k/k.

One program owns ``BLOCK`` cells. It loads x₀ and the cell's hyper-parameters once, keeps (x, m, v) and the
running reductions in registers, loops over all ``steps`` updates and writes only the per-cell reductions
(last loss, min loss, first step below the threshold, tail max). Nothing of size cells × steps exists.

The arithmetic mirrors the torch reference in :mod:`theorybook.sweep` operation by operation, so that on a CPU
(Triton interpreter, ``TRITON_INTERPRET=1``) the iterates agree bit for bit wherever the reference's own
rounding is reproducible:

* ``x.pow(n)`` with an ``int`` exponent: torch computes n = 1 as a copy, n = 2 as ``x*x`` and n = 3 as
  ``x*x*x``; the kernel does the same. Every other power (and every power when k is a per-cell tensor) is the
  *correctly rounded* x^n, computed here in double-word arithmetic (error-free products via ``fma``); torch's
  vectorised ``pow`` (SLEEF, ≤ 1 ulp) returns the correctly rounded value for ~98 % of inputs, so those
  powers agree to ≤ 1 ulp, not always bitwise.
* ``torch.lerp(a, b, w)`` = ``fma(w, b−a, a)`` if |w| < 0.5 else ``fma(w−1, b−a, b)`` (ATen's vectorised CPU
  kernel), reproduced with ``tl.fma``.
* ``rsqrt(v)`` = ``1/sqrt(v)`` with IEEE ``sqrt_rn`` / ``div_rn`` (also on GPUs, where ``/`` and ``sqrt`` on
  float32 are approximate by default).
* the kernel is launched with ``enable_fp_fusion=False``: no ``a*b+c`` is silently contracted into an ``fma``
  (only the explicit ``tl.fma`` calls above are fused), so each operation rounds as torch's separate ops do.

On a GPU the torch reference itself runs CUDA's ``pow``/``rsqrt`` (not SLEEF), so there the agreement is at
rounding level, not bitwise (``tests/test_kernels.py`` states the tiers).

The wrapper :func:`poly_sweep_fused` canonicalises non-finite results with exactly the torch code of
:func:`theorybook.sweep.run_sweep` (diverged → ``final_loss = inf``, ``tail_max = inf``).
"""

from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl
from theorybook.kernels._common import _div, block_size, compile_ptx_for

from theorybook import validate
from theorybook.sweep import POLY_METHODS, SweepStats, canonicalise, floor_cut

__all__ = ["METHOD_IDS", "poly_sweep_fused", "compile_ptx", "fused_for"]

METHOD_IDS = {"gd": 0, "heavy_ball": 1, "rmsprop": 2, "adam": 3}


@triton.jit
def _pow_cr(x, n, N_MAX: tl.constexpr):
    """x^n (n ≥ 1 per cell, ≤ N_MAX) correctly rounded up to near-ties: double-word Horner x·x·…·x."""
    hi = x
    lo = tl.zeros_like(x)
    for i in tl.static_range(1, N_MAX):
        p = hi * x
        e = tl.fma(hi, x, -p) + lo * x
        e = tl.where((p - p) == 0.0, e, 0.0)  # p = ±inf/NaN: no error term (it would be NaN)
        s = p + e
        lo_new = e - (s - p)
        act = i < n
        hi = tl.where(act, s, hi)
        lo = tl.where(act, lo_new, lo)
    return hi


@triton.jit
def _pow_cr_const(x, N: tl.constexpr):
    """x^N for a compile-time N ≥ 1, correctly rounded up to near-ties."""
    hi = x
    lo = tl.zeros_like(x)
    for _i in tl.static_range(1, N):
        p = hi * x
        e = tl.fma(hi, x, -p) + lo * x
        e = tl.where((p - p) == 0.0, e, 0.0)
        hi = p + e
        lo = e - (hi - p)
    return hi


@triton.jit
def _pow_torch_int(x, N: tl.constexpr):
    """torch's ``x.pow(N)`` for a Python-int N ≥ 1: copy, x*x, x*x*x special cases, else pow (≈ CR)."""
    if N == 1:
        r = x
    elif N == 2:
        r = x * x
    elif N == 3:
        r = x * x * x
    else:
        r = _pow_cr_const(x, N)
    return r


@triton.jit
def _rsqrt(v):
    """1 / sqrt(v), both IEEE-rounded (torch's CPU ``rsqrt``)."""
    if v.dtype == tl.float32:
        r = tl.div_rn(tl.full(v.shape, 1.0, v.dtype), tl.sqrt_rn(v))
    else:
        r = 1.0 / tl.sqrt(v)
    return r


@triton.jit
def _grad(x, kk, K: tl.constexpr, K_MAX: tl.constexpr):
    """g = x^{k−1}; K > 0: one int degree for all cells; K == 0: per-cell float degree ``kk``."""
    if K > 0:
        g = _pow_torch_int(x, K - 1)
    else:
        g = _pow_cr(x, kk - 1.0, K_MAX - 1)
    return g


@triton.jit
def _loss(x, kk, K: tl.constexpr, K_MAX: tl.constexpr):
    """L = x^k / k (IEEE division)."""
    if K > 0:
        num = _pow_torch_int(x, K)
    else:
        num = _pow_cr(x, kk, K_MAX)
    return _div(num, kk)


@triton.jit
def _lerp(a, b, w):
    """``torch.lerp(a, b, w)`` as ATen's vectorised CPU kernel computes it."""
    d = b - a
    small = tl.abs(w) < 0.5
    return tl.fma(tl.where(small, w, w - 1.0), d, tl.where(small, a, b))


@triton.jit
def _poly_sweep_kernel(
    x0_ptr, k_ptr, h0_ptr, h1_ptr, h2_ptr, consts_ptr,
    last_ptr, min_ptr, first_ptr, tail_ptr,
    n_cells, steps, tail_from,
    METHOD: tl.constexpr, K: tl.constexpr, K_MAX: tl.constexpr, HAS_THRESHOLD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cells
    x = tl.load(x0_ptr + offs, mask=mask, other=1.0)
    cut = tl.load(consts_ptr)
    thr = tl.load(consts_ptr + 1)
    if K > 0:
        kk = tl.full((BLOCK,), K, x.dtype)
    else:
        kk = tl.load(k_ptr + offs, mask=mask, other=2.0)
    lr = tl.load(h0_ptr + offs, mask=mask, other=0.0)
    # EMA weights 1 − β (the reference's torch.lerp weights); RMSProp's β₁ = 0 gives w₁ = 1.
    if METHOD == 1:
        w1 = 1.0 - tl.load(h1_ptr + offs, mask=mask, other=0.0)
    elif METHOD == 2:
        w1 = tl.full((BLOCK,), 1.0, x.dtype)
        w2 = 1.0 - tl.load(h1_ptr + offs, mask=mask, other=0.0)
    elif METHOD == 3:
        w1 = 1.0 - tl.load(h1_ptr + offs, mask=mask, other=0.0)
        w2 = 1.0 - tl.load(h2_ptr + offs, mask=mask, other=0.0)
    # init: m₀ = g₀, v₀ = g₀² (GD carries no moments)
    g0 = _grad(x, kk, K, K_MAX)
    m = g0
    v = g0 * g0
    cur = _loss(x, kk, K, K_MAX)
    mn = cur
    first = tl.full((BLOCK,), -1, tl.int64)
    tmax = tl.full((BLOCK,), float("-inf"), x.dtype)
    for t in range(steps):
        if METHOD == 0:  # gd
            x = x - lr * _grad(x, kk, K, K_MAX)
        elif METHOD == 1:  # EMA heavy ball
            x = x - lr * m
            m = _lerp(m, _grad(x, kk, K, K_MAX), w1)
        else:  # rmsprop / adam, frozen at the float floor
            g_now = _grad(x, kk, K, K_MAX)
            at_floor = g_now * g_now < cut
            x = tl.where(at_floor, x, x - lr * m * _rsqrt(v))
            g = _grad(x, kk, K, K_MAX)
            m = _lerp(m, g, w1)
            v = _lerp(v, g * g, w2)
        cur = _loss(x, kk, K, K_MAX)
        step = t + 1
        mn = tl.where((cur < mn) | (mn != mn), cur, mn)  # fmin: NaN ignored
        if HAS_THRESHOLD:
            first = tl.where((cur <= thr) & (first < 0), step, first)
        tmax = tl.where((step >= tail_from) & ((cur > tmax) | (tmax != tmax)), cur, tmax)  # fmax
    tl.store(last_ptr + offs, cur, mask=mask)
    tl.store(min_ptr + offs, mn, mask=mask)
    tl.store(first_ptr + offs, first, mask=mask)
    tl.store(tail_ptr + offs, tmax, mask=mask)


def poly_sweep_fused(
    method: str,
    kt: int | torch.Tensor,
    x0t: torch.Tensor,
    hp: tuple[torch.Tensor, ...] | list[torch.Tensor],
    steps: int,
    *,
    threshold: float | None = None,
    tail: int = 0,
    dtype: torch.dtype | None = None,
    block: int | None = None,
) -> SweepStats:
    """Fused :func:`theorybook.sweep.poly_sweep` (reductions only): same arguments as the reference after
    broadcasting — ``kt`` a Python int (one degree) or a tensor of the cell shape, ``x0t`` the initial
    iterates, ``hp`` the method's hyper-parameter tensors (order of ``POLY_METHODS[method].hparams``).

    Runs compiled on CUDA, and under the Triton interpreter on CPU tensors when ``TRITON_INTERPRET=1`` was set
    before this module was imported (the parity tests).
    """
    validate.one_of("method", method, tuple(METHOD_IDS))
    validate.integer("steps", steps, 0)
    validate.integer("tail", tail, 0)
    names = POLY_METHODS[method].hparams
    if len(hp) != len(names):
        raise ValueError(f"Invalid hp: {len(hp)} tensors (must be {len(names)}: {names})")
    dt = x0t.dtype if dtype is None else dtype
    validate.one_of("dtype", dt, (torch.float32, torch.float64))
    dev = x0t.device
    shape = x0t.shape
    n = x0t.numel()

    def flat(t):
        return torch.as_tensor(t, dtype=dt, device=dev).expand(shape).reshape(-1).contiguous()

    x0 = flat(x0t)
    hps = [flat(h) for h in hp] + [x0] * (3 - len(hp))  # unused slots: any valid pointer
    if isinstance(kt, torch.Tensor):
        kf = flat(kt)
        k_const, k_max = 0, int(kf.max().item()) if n else 2
    else:
        kf, k_const, k_max = x0, int(kt), int(kt)
    consts = torch.tensor([floor_cut(dt), 0.0 if threshold is None else threshold], dtype=dt, device=dev)
    last = torch.empty(n, dtype=dt, device=dev)
    mn = torch.empty_like(last)
    tmax = torch.empty_like(last)
    first = torch.empty(n, dtype=torch.int64, device=dev)
    if n:
        blk = block or block_size(n, dev)
        tail_from = steps - tail + 1 if tail else steps
        _poly_sweep_kernel[(triton.cdiv(n, blk),)](
            x0, kf, hps[0], hps[1], hps[2], consts, last, mn, first, tmax, n, steps, tail_from,
            METHOD=METHOD_IDS[method], K=k_const, K_MAX=k_max, HAS_THRESHOLD=threshold is not None,
            BLOCK=blk, enable_fp_fusion=False,  # no implicit a*b+c → fma: one rounding per op, as torch
        )
    last, mn, first, tmax = (t.reshape(shape) for t in (last, mn, first, tmax))
    if steps == 0:
        tmax = last.clone()
    final, tmax, diverged = canonicalise(last, tmax)
    return SweepStats(final, mn, first, tmax, diverged, None)


def compile_ptx(method: str, k: int | None, dtype: torch.dtype, *, arch: int = 90, block: int = 128) -> str:
    """PTX of the fused kernel for ``method`` with one int degree ``k`` (``None``: per-cell degrees ≤ 8),
    compiled ahead of time for CUDA ``sm_<arch>``: needs Triton's NVIDIA backend, not a GPU (a CI compile
    check). Not available under ``TRITON_INTERPRET=1`` (the kernel is then interpreted, not compiled)."""
    validate.one_of("method", method, tuple(METHOD_IDS))
    validate.one_of("dtype", dtype, (torch.float32, torch.float64))
    p = "*fp64" if dtype == torch.float64 else "*fp32"
    sig = {n: p for n in ("x0_ptr", "k_ptr", "h0_ptr", "h1_ptr", "h2_ptr", "consts_ptr", "last_ptr", "min_ptr",
                          "tail_ptr")}
    sig.update(first_ptr="*i64", n_cells="i32", steps="i32", tail_from="i32")
    consts = dict(METHOD=METHOD_IDS[method], K=k or 0, K_MAX=k or 8, HAS_THRESHOLD=True, BLOCK=block)
    return compile_ptx_for(_poly_sweep_kernel, sig, consts, arch)


@functools.cache
def fused_for(method: str):
    """``fn(kt, x0t, hp, steps, threshold=, tail=, dtype=) -> SweepStats`` for ``method``."""
    return functools.partial(poly_sweep_fused, method)
