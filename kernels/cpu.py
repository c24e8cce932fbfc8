"""Fused CPU sweeps on L(x) = x^k/k: one compiled loop per cell, its state in registers (numba ``prange``).

The torch reference (:func:`theorybook.sweep.poly_sweep` with ``run_sweep``) launches about a dozen tensor
operations per step over all cells, so each step streams the whole state through memory several times. Here
each cell runs its whole trajectory in a compiled scalar loop — x, m, v, g and the four reductions stay in
registers — and cells are spread over threads with ``prange``. Same semantics as the reference, operation by
operation (the update order, ``torch.lerp``'s two-branch formula, the float-floor freeze, ``fmin``/``fmax``
ignoring NaN, the first-below step, the tail window and the end-of-run canonicalisation of non-finite cells);
results agree to a few ulps (``x ** k`` and ``1/sqrt`` are not guaranteed to round like torch's vectorised
versions), which ``tests/test_kernels.py`` checks.

Used automatically by :func:`theorybook.sweep.poly_sweep` on CPU when numba is installed, no trajectory is
recorded and the sweep is big enough for the compiled loop to pay for its one-time compilation
(:data:`MIN_CELL_STEPS`); ``THEORYBOOK_CPU_FUSED=0`` turns it off. A compiler that is missing or fails falls back
to the torch path with a one-line notice.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable

import torch

__all__ = ["MIN_CELL_STEPS", "cpu_fused_available", "cpu_poly_sweep", "poly_sweep_cpu_fused"]

#: Below this many cell-steps the torch path is used (the compiled loop's first call costs ~1 s of JIT).
MIN_CELL_STEPS = 2_000_000

_METHOD_ID = {"gd": 0, "heavy_ball": 1, "rmsprop": 2, "adam": 3}
_kernel = None
_failed = False


def cpu_fused_available() -> bool:
    """True when numba imports and ``THEORYBOOK_CPU_FUSED`` is not ``0``."""
    if os.environ.get("THEORYBOOK_CPU_FUSED", "1") == "0" or _failed:
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _build():
    import numba
    from numba import njit, prange

    @njit(inline="always")
    def lerp(a, b, w, one):
        # torch.lerp: a + w (b − a) for |w| < ½, else b − (b − a)(1 − w); ``one`` carries the cell dtype so that
        # float32 cells stay float32 (a float64 literal would promote the arithmetic)
        if abs(w) < 0.5:
            return a + w * (b - a)
        return b - (b - a) * (one - w)

    @njit(inline="always")
    def ipow(x, k, one):
        # x**k by squaring, in x's dtype (numba's float32 ** int64 would promote to float64)
        r = one
        b = x
        e = k
        while e > 0:
            if e & 1:
                r = r * b
            b = b * b
            e >>= 1
        return r

    @njit(inline="always")
    def fpow(x, k):
        return x**k

    @njit(parallel=True, fastmath=False, nogil=True, error_model="numpy")
    def sweep(method, x0, kf, kint, lr, w1, w2, consts, steps, thr, use_thr, tail_from, cut,
              final, minl, first, tailmax):
        # w1 = 1 − β₁ (or 1 − β), w2 = 1 − β₂, computed by torch in the cell dtype as the reference does;
        # consts = (1, k as a float of the cell dtype when one degree serves all cells)
        n = x0.shape[0]
        one = consts[0]
        for i in prange(n):
            k = kint
            kd = consts[1] if kint > 0 else kf[i]
            x = x0[i]
            g = (ipow(x, k - 1, one) if kint > 0 else fpow(x, kf[i] - one))
            if method != 0:  # heavy ball, RMSProp, Adam: m₀ = g₀, v₀ = g₀² (no zero-initialisation bias)
                m = g
                v = g * g
            else:  # zeros of the cell dtype (a float64 literal would type every variable float64)
                m = one - one
                v = one - one
            cur = (ipow(x, k, one) if kint > 0 else fpow(x, kf[i])) / kd
            mn = cur
            fb = -1
            tm = consts[2]  # −inf in the cell dtype
            if steps == 0:
                tm = cur
            eta = lr[i]
            a1 = w1[i]
            a2 = w2[i]
            for t in range(steps):
                if method == 0:
                    x = x - eta * g
                    g = (ipow(x, k - 1, one) if kint > 0 else fpow(x, kf[i] - one))
                elif method == 1:
                    x = x - eta * m
                    g = (ipow(x, k - 1, one) if kint > 0 else fpow(x, kf[i] - one))
                    m = lerp(m, g, a1, one)
                else:
                    if not (g * g < cut):
                        x = x - eta * m * (one / math.sqrt(v))
                    g = (ipow(x, k - 1, one) if kint > 0 else fpow(x, kf[i] - one))
                    if method == 3:
                        m = lerp(m, g, a1, one)
                    else:
                        m = lerp(m, g, one, one)
                    v = lerp(v, g * g, a2, one)
                cur = (ipow(x, k, one) if kint > 0 else fpow(x, kf[i])) / kd
                step = t + 1
                if cur < mn or (mn != mn):
                    if cur == cur:
                        mn = cur
                if use_thr and fb < 0 and cur <= thr:
                    fb = step
                if step >= tail_from:
                    if cur > tm or (tm != tm):
                        if cur == cur:
                            tm = cur
            final[i] = cur
            minl[i] = mn
            first[i] = fb
            tailmax[i] = tm
        return 0

    del numba
    return sweep


def _get_kernel():
    global _kernel, _failed
    if _kernel is None and not _failed:
        try:
            _kernel = _build()
        except Exception as err:  # noqa: BLE001 - any compiler failure falls back to torch
            _failed = True
            warnings.warn(f"theorybook: fused CPU sweep unavailable ({type(err).__name__}: {err}); using torch",
                          RuntimeWarning, stacklevel=3)
    return _kernel


def poly_sweep_cpu_fused(method: str, kt, x0t: torch.Tensor, hp: tuple[torch.Tensor, ...], steps: int, *,
                         threshold: float | None = None, tail: int = 0, dtype: torch.dtype | None = None):
    """The compiled per-cell loop; same arguments and result as the Triton dispatch (``SweepStats``).

    ``kt`` is a Python int (one degree for all cells) or a tensor of per-cell degrees; ``x0t`` and ``hp`` are
    broadcast tensors of the cell shape on the CPU. Returns ``None`` if compilation failed (caller falls back).
    """
    from theorybook.device import to_numpy
    from theorybook.sweep import SweepStats, canonicalise, floor_cut

    kern = _get_kernel()
    if kern is None:
        return None
    import numpy as np

    dt = x0t.dtype if dtype is None else dtype
    shape = x0t.shape
    n = x0t.numel()
    x0 = to_numpy(x0t.reshape(-1).contiguous())
    npdt = x0.dtype

    def arr(t):
        return np.ascontiguousarray(to_numpy(t.expand(shape).reshape(-1)), dtype=npdt)

    if isinstance(kt, int):
        kf, kint = np.zeros(1, dtype=npdt), kt
    else:
        kf, kint = arr(kt), 0
    names = {"gd": ("lr",), "heavy_ball": ("lr", "beta"), "rmsprop": ("lr", "beta2"),
             "adam": ("lr", "beta1", "beta2")}[method]
    vals = dict(zip(names, hp, strict=True))
    zeros = torch.zeros((), dtype=x0t.dtype)
    lr = arr(vals["lr"])
    w1 = arr(1 - vals.get("beta", vals.get("beta1", zeros)))  # torch's own 1 − β in the cell dtype
    w2 = arr(1 - vals.get("beta2", zeros))
    consts = np.array([1.0, float(kt) if isinstance(kt, int) else 1.0, -np.inf], dtype=npdt)
    final, minl, tailm = (np.empty(n, dtype=npdt) for _ in range(3))
    first = np.empty(n, dtype=np.int64)
    tail_from = steps - tail + 1 if tail else steps
    cut = floor_cut(dt)
    try:
        thr = 0.0 if threshold is None else float(threshold)
        kern(_METHOD_ID[method], x0, kf, kint, lr, w1, w2, consts, steps, thr, threshold is not None, tail_from, cut,
             final, minl, first, tailm)
    except Exception as err:  # noqa: BLE001 - fall back to torch, once, with a notice
        global _failed
        _failed = True
        warnings.warn(f"theorybook: fused CPU sweep failed ({type(err).__name__}: {err}); using torch",
                      RuntimeWarning, stacklevel=2)
        return None

    def back(a):
        return torch.from_numpy(a).reshape(shape)

    last, tmax = back(final), back(tailm)
    fin, tmax, div = canonicalise(last, tmax)
    return SweepStats(fin, back(minl), back(first), tmax, div, None)


def cpu_poly_sweep(method: str, cell_steps: float) -> Callable | None:
    """The fused CPU sweep for ``method`` when it applies and pays off, else ``None``."""
    if method not in _METHOD_ID or cell_steps < MIN_CELL_STEPS or not cpu_fused_available():
        return None

    def fn(kt, x0t, hp, steps, threshold=None, tail=0, dtype=None):
        return poly_sweep_cpu_fused(method, kt, x0t, hp, steps, threshold=threshold, tail=tail, dtype=dtype)

    return fn
