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

import numpy as np
import torch

__all__ = ["MIN_CELL_STEPS", "cpu_fused_available", "cpu_poly_sweep", "cpu_sam_sweep", "poly_sweep_cpu_fused",
           "sam_quadratic_cpu_fused"]

#: Below this many cell-steps the torch path is used (the compiled loop's first call costs ~1 s of JIT).
MIN_CELL_STEPS = 2_000_000

_METHOD_ID = {"gd": 0, "heavy_ball": 1, "rmsprop": 2, "adam": 3}
_kernels: dict[tuple[int, int], Callable] = {}
_failed = False

#: Cells advanced in lockstep by one thread: the innermost loop runs over a block's cells, branch-free, so the
#: compiler vectorises it (SIMD across cells, as jax.vmap does); blocks are spread over threads with prange.
#: 128 cells × 12 state/constant arrays ≈ 16 KB stay in L1; measured on the Adam sweep (single thread, best of 15,
#: bench grid): 128, 256 and 512 within 5 % of each other; 128 gives two threads 512 blocks to share.
BLOCK = 128
#: A block's arrays are rows of one buffer with this row length (elements): the row stride (1344 B in float64) is
#: not a multiple of 4 KiB, so a store to one array and a load from another at the same index do not alias in the
#: low 12 address bits, which the core's memory disambiguation compares (a false dependency that stalled the loop:
#: 1.39e9 → 1.57e9 cell-steps/s on one thread, measured).
ROW = BLOCK + 40


def cpu_fused_available() -> bool:
    """True when numba imports and ``THEORYBOOK_CPU_FUSED`` is not ``0``."""
    if os.environ.get("THEORYBOOK_CPU_FUSED", "1") == "0" or _failed:
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _build(method: int, kint: int):
    """Compile the sweep for one method and one integer degree (``kint`` > 0) or per-cell float degrees (0).

    Both are compile-time constants of the closure, so the step has no branch on them; x^(k−1) for an integer
    degree is unrolled repeated squaring.

    The loop per block of :data:`BLOCK` cells (the innermost loop, branch-free, vectorised by LLVM across cells):

    * the state is x, m, v, g² (``gg``: the floor test of the next step and the v-update share it) and, for
      RMSProp and Adam, r = 1/√v for the *next* step, computed at the end of this one (same operands, same two
      IEEE operations as computing it at the start of the next step): no operation of a step waits for the
      divider, so the out-of-order core does not fill its scheduler with operations stalled behind a square root
      and a division (~20 cycles each), which bounded the loop at a third of the roofline before;
    * a cell at the float floor (g² < cut) is frozen for good (the reference keeps its x, so g and g² stay); its
      lanes compute on 1 instead of on m, v near the subnormal range (slow-path arithmetic: measured 27 % slower
      per cell-step on the bench grid, where 47 % of the cells reach the floor), and its y is NaN, which both
      reductions skip: its y is the previous step's, already counted, except before step 1 and before the
      tail's first step, where ``seed_frozen`` adds it once;
    * ``torch.lerp(a, b, w)`` is ``base + c·(b − a)`` with the per-cell ``base`` (a if |w| < ½ else b) and
      ``c`` (w, or −(1 − w)) chosen once before the loop: bitwise the same two formulas, no per-step test;
    * the reductions are kept on the *raw* loss y = x·g = x^k (one multiply): L = f(y) = y/k is monotone, so
      min/max commute with it and f is applied once at the end; the threshold test f(y) ≤ thr is the exact
      equivalent y ≤ T (T found once on the host, :func:`_raw_threshold`);
    * min over t ≥ 1 is one ``minpd`` (the running value is never NaN, a NaN y loses the comparison); the
      first-below step is a count of the steps whose running minimum is still above T (no per-lane branch:
      first = count + 1 once the minimum has crossed); the tail maximum is a second loop over the tail steps
      with one ``maxpd`` more.
    """
    from numba import njit, prange

    if kint > 0:
        e_g = kint - 1

        @njit(inline="always")
        def grad(x, kf_i, one):
            r = one
            base = x
            e = e_g
            while e > 0:  # e_g is a compile-time constant: this loop is unrolled
                if e & 1:
                    r = r * base
                base = base * base
                e >>= 1
            return r

        @njit(inline="always")
        def raw(x, g, kf_i):
            return x * g  # x^k = x · x^(k−1)

        if kint & (kint - 1) == 0:
            inv_k = 1.0 / kint  # a power of two: multiplying by 2^-j rounds exactly as dividing by 2^j

            @njit(inline="always")
            def fin(y, kf_i, kd):
                return y * (kd * 0 + inv_k)  # kd·0 + c keeps the cell dtype
        else:

            @njit(inline="always")
            def fin(y, kf_i, kd):
                return y / kd
    else:

        @njit(inline="always")
        def grad(x, kf_i, one):
            return x ** (kf_i - one)

        @njit(inline="always")
        def raw(x, g, kf_i):
            return x**kf_i / kf_i

        @njit(inline="always")
        def fin(y, kf_i, kd):
            return y

    moments = method != 0

    @njit(inline="always")
    def step1(xj, gj, mj, vj, qj, rj, eta, c1, s1, c2, s2, kj, one, cut, nan):
        # one step of one cell on scalars: (x, g, m, v, g²) → the same after the update, and the raw loss y
        # (NaN for a frozen cell: the reductions skip it, see below)
        if method == 0:
            xj = xj - eta * gj
            gj = grad(xj, kj, one)
            y = raw(xj, gj, kj)
        elif method == 1:
            xj = xj - eta * mj
            gj = grad(xj, kj, one)
            mj = (mj if s1 else gj) + c1 * (gj - mj)
            y = raw(xj, gj, kj)
        else:
            # At the floor (g² < cut) the reference keeps x, so g and g² stay as they are: the cell is frozen for
            # good, and its m and v are never read again (they are not outputs). Its lanes compute on 1 instead
            # of on values near the subnormal range, whose arithmetic takes a slow path (measured: a sweep with
            # 47 % of its cells at the floor ran 27 % slower per cell-step than one with none). A live cell's
            # operations are the reference's, in its order.
            frozen = qj < cut
            xa = one if frozen else xj
            va = one if frozen else vj
            mo = one if frozen else (mj if method == 3 else gj)
            moved = xa - eta * mo * rj  # rj = rsq(v, g²): 1/√v, or 1/√1 for a frozen cell
            ga = grad(moved, kj, one)
            if method == 3:
                ma = one if frozen else mj
                mj = (ma if s1 else ga) + c1 * (ga - ma)
            qa = ga * ga
            vj = (va if s2 else qa) + c2 * (qa - va)
            y = nan if frozen else raw(moved, ga, kj)
            xj = xj if frozen else moved
            gj = gj if frozen else ga
            qj = qj if frozen else qa
        return xj, gj, mj, vj, qj, y

    @njit(inline="always")
    def reduce1(y, mo, cn, to, thr_raw, in_tail):
        # a NaN y (a frozen cell) loses both comparisons: its y is the previous step's, already counted
        mo = y if y < mo else mo
        cn += 1 if mo > thr_raw else 0
        if in_tail:
            to = y if y > to else to
        return mo, cn, to

    @njit(inline="always")
    def rsq(vj, qj, one, cut):
        # the divider's work of a step: 1/√v as the reference's rsqrt (two IEEE operations); 1 for a frozen cell
        return one / math.sqrt(one if qj < cut else vj)

    @njit(inline="always")
    def body(j, x, g, m, v, gg, r, eta, c1, s1, c2, s2, kfb, kd, one, cut, nan, thr_raw, mt, cnt, tm, in_tail):
        kj = kfb[j] if kint == 0 else kd
        xj, gj, mj, vj, qj, y = step1(x[j], g[j], m[j], v[j], gg[j], r[j], eta[j], c1[j], s1[j], c2[j], s2[j], kj,
                                      one, cut, nan)
        x[j], m[j], v[j], gg[j] = xj, mj, vj, qj
        if method >= 2:
            # the next step's divider work, started now: nothing in this step waits for it (see _build)
            r[j] = rsq(vj, qj, one, cut)
        if method != 3:  # Adam never reads g back (it recomputes it from x): one store less
            g[j] = gj
        mt[j], cnt[j], tm[j] = reduce1(y, mt[j], cnt[j], tm[j], thr_raw, in_tail)

    @njit(inline="always")
    def advance(x, g, m, v, gg, r, eta, c1, s1, c2, s2, kfb, kd, one, cut, nan, thr_raw, mt, cnt, tm, nb, nsteps,
                in_tail):
        for _ in range(nsteps):
            for j in range(nb):
                body(j, x, g, m, v, gg, r, eta, c1, s1, c2, s2, kfb, kd, one, cut, nan, thr_raw, mt, cnt, tm,
                     in_tail)

    @njit(inline="always")
    def seed_frozen(x, gg, kfb, kd, one, cut, acc, nb, take_max):
        # a cell frozen before a reduction starts contributes its (constant) y to it here, once: at step 1 (the
        # running minimum) or at the tail's first step (the tail maximum), where its NaN y is skipped
        if method >= 2:
            for j in range(nb):
                if gg[j] < cut:
                    kj = kfb[j] if kint == 0 else kd
                    y = raw(x[j], grad(x[j], kj, one), kj)
                    if take_max:
                        acc[j] = y if y > acc[j] else acc[j]
                    else:
                        acc[j] = y if y < acc[j] else acc[j]

    @njit(fastmath=False, nogil=True, error_model="numpy")
    def run_block(blk, x0, kf, lr, w1, w2, consts, steps, thr_raw, use_thr, tail_from, cut, final, minl, first,
                  tailmax):
        # One block of BLOCK cells, start to finish: a serial function of its own, called once per block by the
        # parallel ``sweep`` below. Kept out of the parallel function so that numba's parfor passes (which type and
        # lower the loop body a second time, as an outlined function) see one call rather than the whole inlined
        # step: 15.3 s → 9.9 s of compilation for the Adam, k = 4, float64 sweep (one process, measured). The
        # block's code is the same either way: when it was split out, every output of 8 signatures was compared
        # bit for bit with the unsplit kernel's (identical); tests/test_cpu_fused.py holds it to the torch reference.
        # w1 = 1 − β₁ (or 1 − β), w2 = 1 − β₂, computed by torch in the cell dtype as the reference does;
        # consts = (1, k in the cell dtype when one degree serves all cells, −inf); thr_raw: see _raw_threshold
        n = x0.shape[0]
        one = consts[0]
        kd = consts[1]
        ninf = consts[2]
        half = one / (one + one)
        nan = ninf - ninf  # NaN in the cell dtype
        n_pre = min(max(tail_from - 1, 0), steps)
        lo = blk * BLOCK
        hi = min(lo + BLOCK, n)
        nb = hi - lo
        buf = np.empty((12, ROW), dtype=x0.dtype)  # see ROW
        x, eta, c1, c2, g, m = buf[0, :nb], buf[1, :nb], buf[2, :nb], buf[3, :nb], buf[4, :nb], buf[5, :nb]
        v, gg, c0, mt, tm = buf[6, :nb], buf[7, :nb], buf[8, :nb], buf[9, :nb], buf[10, :nb]
        r = buf[11, :nb]
        x[:] = x0[lo:hi]
        kfb = kf[lo:hi].copy() if kint == 0 else kf[:1].copy()
        eta[:] = lr[lo:hi]
        c1[:] = w1[lo:hi]
        c2[:] = w2[lo:hi]
        s1 = np.empty(nb, dtype=np.bool_)
        s2 = np.empty(nb, dtype=np.bool_)
        cnt = np.zeros(nb, dtype=np.int64)
        for j in range(nb):
            kj = kfb[j] if kint == 0 else kd
            # torch.lerp's two formulas: a + w·(b − a) for |w| < ½, else b − (b − a)(1 − w) = b + (−(1 − w))(b − a)
            s1[j] = abs(c1[j]) < half
            c1[j] = c1[j] if s1[j] else -(one - c1[j])
            s2[j] = abs(c2[j]) < half
            c2[j] = c2[j] if s2[j] else -(one - c2[j])
            gj = grad(x[j], kj, one)
            g[j] = gj
            gg[j] = gj * gj
            if moments:
                m[j] = gj
                v[j] = gj * gj
            else:
                m[j] = one - one
                v[j] = one - one
            c0[j] = fin(raw(x[j], gj, kj), kj, kd)
            mt[j] = -ninf
            tm[j] = ninf
        if method >= 2:  # the first step's divider work (later steps start theirs in body)
            for j in range(nb):
                r[j] = rsq(v[j], gg[j], one, cut)
        if steps > 0:
            seed_frozen(x, gg, kfb, kd, one, cut, mt, nb, False)
        advance(x, g, m, v, gg, r, eta, c1, s1, c2, s2, kfb, kd, one, cut, nan, thr_raw, mt, cnt, tm, nb, n_pre,
                False)
        if steps - n_pre > 0:
            seed_frozen(x, gg, kfb, kd, one, cut, tm, nb, True)
        advance(x, g, m, v, gg, r, eta, c1, s1, c2, s2, kfb, kd, one, cut, nan, thr_raw, mt, cnt, tm, nb,
                steps - n_pre, True)
        for j in range(nb):
            kj = kfb[j] if kint == 0 else kd
            i = lo + j
            final[i] = fin(raw(x[j], grad(x[j], kj, one), kj), kj, kd) if steps > 0 else c0[j]
            mf = fin(mt[j], kj, kd)
            minl[i] = mf if mf < c0[j] else c0[j]  # fmin(c₀, min over t ≥ 1): neither is NaN
            tailmax[i] = fin(tm[j], kj, kd) if steps > 0 else c0[j]
            first[i] = cnt[j] + 1 if (use_thr and mt[j] <= thr_raw) else -1
        return 0

    @njit(parallel=True, fastmath=False, nogil=True, error_model="numpy")
    def sweep(x0, kf, lr, w1, w2, consts, steps, thr_raw, use_thr, tail_from, cut, final, minl, first, tailmax):
        nblocks = (x0.shape[0] + BLOCK - 1) // BLOCK
        for blk in prange(nblocks):
            # int64 explicitly: the parfor's index is uint64 in its outlined body and int64 when the body is typed
            # first, and each would compile its own run_block
            run_block(np.int64(blk), x0, kf, lr, w1, w2, consts, steps, thr_raw, use_thr, tail_from, cut, final, minl,
                      first, tailmax)
        return 0

    return sweep


def _raw_threshold(threshold: float | None, kint: int, kd: float, npdt) -> float:
    """The largest raw loss y (in the cell dtype) whose loss f(y) passes ``f(y) <= threshold`` (compared as the
    kernel compares it, in float64): then ``f(y) <= threshold`` ⇔ ``y <= T`` exactly, f being non-decreasing.
    f(y) = y·2⁻ʲ (k = 2ʲ), y/k (other integer k) or y itself (per-cell degrees). A binary search over the ordered
    bit patterns; −inf when no threshold is tracked (nothing is ever below)."""
    import numpy as np

    if threshold is None:
        return -math.inf
    dt = np.dtype(npdt)
    ity = {4: np.int32, 8: np.int64}[dt.itemsize]
    one = dt.type(1)
    if kint > 0 and kint & (kint - 1) == 0:
        inv = dt.type(1.0 / kint)

        def f(y):
            return y * inv
    elif kint > 0:
        kdt = dt.type(kd)

        def f(y):
            return y / kdt
    else:

        def f(y):
            return y * one

    sign = 1 << (8 * dt.itemsize - 1)

    def to_float(key: int):
        bits = key if key >= 0 else (-key) | sign
        return np.array([bits - (1 << (8 * dt.itemsize)) if bits >= sign else bits], dtype=ity).view(dt)[0]

    def key_of(y) -> int:
        bits = int(np.array([y], dtype=dt).view(ity)[0]) % (1 << (8 * dt.itemsize))
        return -(bits & (sign - 1)) if bits & sign else bits

    def ok(key: int) -> bool:
        with np.errstate(all="ignore"):
            return float(f(to_float(key))) <= threshold

    lo, hi = key_of(dt.type(-np.inf)), key_of(dt.type(np.inf))  # ok(lo): f(−inf) = −inf; not ok(hi): thr finite
    if not ok(lo):
        return -math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return float(to_float(lo))


def _get_kernel(method: int, kint: int):
    global _failed
    key = (method, kint)
    if key not in _kernels and not _failed:
        try:
            _kernels[key] = _build(method, kint)
        except Exception as err:  # noqa: BLE001 - any compiler failure falls back to torch
            _failed = True
            warnings.warn(f"theorybook: fused CPU sweep unavailable ({type(err).__name__}: {err}); using torch",
                          RuntimeWarning, stacklevel=3)
    return _kernels.get(key)


def poly_sweep_cpu_fused(method: str, kt, x0t: torch.Tensor, hp: tuple[torch.Tensor, ...], steps: int, *,
                         threshold: float | None = None, tail: int = 0, dtype: torch.dtype | None = None):
    """The compiled per-cell loop; same arguments and result as the Triton dispatch (``SweepStats``).

    ``kt`` is a Python int (one degree for all cells) or a tensor of per-cell degrees; ``x0t`` and ``hp`` are
    broadcast tensors of the cell shape on the CPU. Returns ``None`` if compilation failed (caller falls back).
    """
    import numpy as np

    from theorybook.device import to_numpy
    from theorybook.sweep import SweepStats, canonicalise, floor_cut

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
    kern = _get_kernel(_METHOD_ID[method], kint)
    if kern is None:
        return None
    from numba.core.errors import NumbaError

    try:
        thr_raw = _raw_threshold(threshold, kint, float(kt) if isinstance(kt, int) else 1.0, npdt)
        kern(x0, kf, lr, w1, w2, consts, steps, thr_raw, threshold is not None, tail_from, cut, final, minl, first,
             tailm)
    except NumbaError as err:  # the first call compiles: a compiler failure falls back to torch, with a notice
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


# --- deterministic SAM on the 2-D quadratic saddle ------------------------------------------------------------

_sam_kernel: list[Callable] = []


def _fma():
    """``fma(a, b, c)`` with one rounding (LLVM's llvm.fma): torch's CPU ``vector_norm`` of a length-2 row is
    sqrt(fma(b, b, a·a)) (see :mod:`theorybook.kernels.sam`)."""
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def fma(typingctx, a, b, c):
        if not (isinstance(a, types.Float) and a == b == c):
            return None

        def codegen(context, builder, signature, args):
            return builder.fma(*args)

        return a(a, b, c), codegen

    return fma


def _build_sam():
    """Compile the SAM sweep (one kernel; numba specialises it per dtype on first call). The flags are run-time
    arguments, loop-invariant branches that the compiler unswitches; one compilation instead of eight.

    Per cell, operation by operation as :func:`theorybook.sam_saddle.dynamics.sam_sweep`'s torch path:
    g = Λw; wᵖ = w + ρ·(g/(‖g‖ + ε)) (normalised) or w + ρg; g̃ = Λwᵖ; b ← γb + g̃; w ← w − ηb (or w − ηg̃ without
    momentum); ℓ = ½((λ₁w₁)w₁ + (λ₂w₂)w₂). Every step is IEEE mul/add/div/sqrt with no contraction, plus the one
    fma inside the norm, so the result is bitwise the reference's on CPU.
    """
    from numba import njit, prange

    fma = _fma()

    @njit(inline="always")
    def norm2(a, b):
        return math.sqrt(fma(b, b, a * a))

    @njit(parallel=True, fastmath=False, nogil=True, error_model="numpy")
    def sweep(w0, rho, lr, mom, consts, steps, tail_from, normalized, has_momentum, has_threshold, last, minl, first,
              tailmax, wout, dist):
        n = rho.shape[0]
        l0, l1, thr, eps, half, ninf = consts[0], consts[1], consts[2], consts[3], consts[4], consts[5]
        nblocks = (n + BLOCK - 1) // BLOCK
        for blk in prange(nblocks):
            lo = blk * BLOCK
            hi = min(lo + BLOCK, n)
            nb = hi - lo
            x = w0[lo:hi, 0].copy()
            y = w0[lo:hi, 1].copy()
            r = rho[lo:hi].copy()
            eta = lr[lo:hi].copy()
            gam = mom[lo:hi].copy()
            bx = x.copy()
            by = x.copy()
            cur = x.copy()
            mn = x.copy()
            tm = x.copy()
            fb = first[lo:hi]
            for j in range(nb):
                bx[j] = half - half
                by[j] = half - half
                c = half * ((l0 * x[j]) * x[j] + (l1 * y[j]) * y[j])
                cur[j] = c
                mn[j] = c
                tm[j] = ninf
                fb[j] = -1
            for t in range(steps):
                step = t + 1
                in_tail = step >= tail_from
                for j in range(nb):
                    xj = x[j]
                    yj = y[j]
                    gx = l0 * xj
                    gy = l1 * yj
                    if normalized:
                        den = norm2(gx, gy) + eps
                        px = xj + r[j] * (gx / den)
                        py = yj + r[j] * (gy / den)
                    else:
                        px = xj + r[j] * gx
                        py = yj + r[j] * gy
                    qx = l0 * px
                    qy = l1 * py
                    if has_momentum:
                        bxj = gam[j] * bx[j] + qx
                        byj = gam[j] * by[j] + qy
                        bx[j] = bxj
                        by[j] = byj
                        xj = xj - eta[j] * bxj
                        yj = yj - eta[j] * byj
                    else:
                        xj = xj - eta[j] * qx
                        yj = yj - eta[j] * qy
                    x[j] = xj
                    y[j] = yj
                    c = half * ((l0 * xj) * xj + (l1 * yj) * yj)
                    cur[j] = c
                    mo = mn[j]
                    mn[j] = c if (c < mo or mo != mo) else mo
                    if has_threshold:
                        fb[j] = step if (fb[j] < 0 and c <= thr) else fb[j]
                    if in_tail:
                        to = tm[j]
                        tm[j] = c if (c > to or to != to) else to
            last[lo:hi] = cur
            minl[lo:hi] = mn
            tailmax[lo:hi] = tm
            for j in range(nb):
                wout[lo + j, 0] = x[j]
                wout[lo + j, 1] = y[j]
                dist[lo + j] = norm2(x[j], y[j])
        return 0

    return sweep


def sam_quadratic_cpu_fused(w0: torch.Tensor, rho: torch.Tensor, lr: torch.Tensor, momentum: torch.Tensor | None,
                            steps: int, *, lam: tuple[float, float], normalized: bool, threshold: float | None = None,
                            tail: int = 0):
    """The compiled per-cell SAM loop on CPU tensors; same arguments and result (``SAMSweep``) as
    :func:`theorybook.kernels.sam.sam_quadratic_fused`. ``None`` if compilation failed (the caller falls back)."""
    global _failed
    import numpy as np

    from theorybook.device import to_numpy
    from theorybook.sam_saddle.dynamics import NORM_EPS, SAMSweep, fused_sweep_args
    from theorybook.sweep import canonicalise

    cells, n = fused_sweep_args(w0, steps, tail, lam)
    dt = w0.dtype

    def flat(t):
        return np.ascontiguousarray(to_numpy(torch.as_tensor(t, dtype=dt).expand(cells).reshape(-1)))

    w = np.ascontiguousarray(to_numpy(w0.reshape(n, 2)))
    npdt = w.dtype
    rho_f, lr_f = flat(rho), flat(lr)
    mom_f = lr_f if momentum is None else flat(momentum)  # unused when there is no momentum
    consts = np.array([float(lam[0]), float(lam[1]), 0.0 if threshold is None else float(threshold), NORM_EPS, 0.5,
                       -np.inf], dtype=npdt)
    last, mn, tmax, dist = (np.empty(n, dtype=npdt) for _ in range(4))
    first = np.empty(n, dtype=np.int64)
    w_out = np.empty((n, 2), dtype=npdt)
    if not _sam_kernel and not _failed:
        try:
            _sam_kernel.append(_build_sam())
        except Exception as err:  # noqa: BLE001 - any compiler failure falls back to torch
            _failed = True
            warnings.warn(f"theorybook: fused CPU SAM sweep unavailable ({type(err).__name__}: {err}); using torch",
                          RuntimeWarning, stacklevel=2)
    if not _sam_kernel:
        return None
    kern = _sam_kernel[0]
    from numba.core.errors import NumbaError

    tail_from = steps - tail + 1 if tail else steps
    try:
        kern(w, rho_f, lr_f, mom_f, consts, steps, tail_from, bool(normalized), momentum is not None,
             threshold is not None, last, mn, first, tmax, w_out, dist)
    except NumbaError as err:
        _failed = True
        warnings.warn(f"theorybook: fused CPU SAM sweep failed ({type(err).__name__}: {err}); using torch",
                      RuntimeWarning, stacklevel=2)
        return None

    def back(a):
        return torch.from_numpy(a).reshape(cells)

    last_t, tmax_t = back(last), back(tmax)
    if steps == 0:
        tmax_t = last_t.clone()
    final, tmax_t, diverged = canonicalise(last_t, tmax_t)
    return SAMSweep(final, back(mn), back(first), tmax_t, diverged, torch.from_numpy(w_out).reshape(*cells, 2),
                    back(dist))


def cpu_sam_sweep(cell_steps: float) -> Callable | None:
    """The fused CPU SAM sweep when it applies and pays off (numba present, ≥ MIN_CELL_STEPS), else ``None``."""
    if cell_steps < MIN_CELL_STEPS or not cpu_fused_available():
        return None
    return sam_quadratic_cpu_fused
