"""Benchmark: one Adam phase diagram (x^k/k, a β₁ × β₂ grid) computed four ways, side by side in one run.

Rows (cell-steps per second, and ratios against the per-configuration loops):

1. ``python-loop``   — per configuration, a plain Python-float loop (the recurrence written out by hand);
2. ``torch-percfg``  — per configuration, the torch reference :func:`~theorybook.sweep.poly_sweep` called on
                       one scalar configuration at a time (a loop over the grid);
3. ``torch.optim``   — per configuration, ``torch.optim.Adam`` on a one-element parameter with ``backward()``
                       (the code a reader would write; it has bias correction and ε = 1e-8, so it is a timing
                       baseline, not the same recurrence);
4. ``vectorised``    — the torch reference of :func:`theorybook.sweep.poly_sweep` on CPU: every cell in one
                       tensor, reductions only (the fused path switched off);
5. ``fused-cpu``     — :func:`theorybook.sweep.poly_sweep` as a reader gets it on CPU: the compiled per-cell loop
                       (numba ``prange``, ``kernels/cpu.py``), same reductions;
6. ``jax``           — JAX ``jit(vmap(scan))`` of the same recurrence and reductions, float64 (the ``bench``
                       extra, which ``make bench`` installs; the run fails, saying so, if JAX is absent);
7. ``fused-cuda`` / ``reference-cuda`` — when a CUDA device is present: the fused Triton kernel and the same
                       torch reference on the GPU.

Rows 4–6 are timed interleaved (one repeat of each per round, median of ``--repeats`` warm rounds), together with
the **roofline** microbenchmarks: this machine's sustained vector throughput per operation class (FMA, un-fused
multiply + add, division, square root and the fused loop's 1/√v pair; numba loops over an L1-sized array per
thread, on all ``--threads`` threads). The roofline is the lower bound on the time of one Adam cell-step that the
fused loop's op count (:data:`ADAM_OPS`: read off ``kernels/cpu.py``) gives at those rates — each resource's work
over its peak, the largest of them — and every CPU row is printed as a fraction of it. No row may exceed 1.0 (the
run fails if one does: the model would be wrong).

What limits the fused loop (noted in the JSON): the divider and the vector pipes, about equally. One IEEE
division and one square root per cell-step (1/√v: the same IEEE operations as torch's ``rsqrt`` on CPU) occupy the
divide/square-root unit about as long as the loop's ~32 other vector operations (multiplies, adds, compares,
selects of the floor rule) occupy the FP pipes, and which one binds depends on the run. Two things held the loop at
a third of this roofline before and were fixed in ``kernels/cpu.py``: every operation after 1/√v waited for it
(now r = 1/√v is computed one step ahead, so nothing waits for the divider), and cells at the float floor computed
on values near the subnormal range (slow-path arithmetic; frozen cells now compute on 1). A third, 4 KiB aliasing
between the block's arrays, is avoided by their padded row stride. An estimate-plus-Newton reciprocal square root
would move the divider work to the FMA pipes but is no longer the reference's rounding; it is not used.

The per-configuration loops are far too slow to run on the whole grid: they are timed on a subset of
configurations (spread over the grid) and their rate is extrapolated to the grid; the table says so. The
vectorised row runs the whole grid for all steps by default (``--vec-steps`` shortens it, extrapolating).

    python bench/sweep.py            # 256×256 grid × 10⁴ steps (≈ 1–2 min on a shared 2-core CPU)
    python bench/sweep.py --quick    # a few seconds
    python bench/sweep.py --grid 1024 --steps 100000 --gpu-only   # the GPU check (bench/gpu_check.sh)

Writes ``bench/results/sweep.json`` (``--out`` to change) with the machine (CPU model, cores, load average at the
start and the end: a loaded machine slows every row, interleaving keeps the ratios comparable). ``--threads``
(default: torch's default, all cores) sets torch's intra-op threads and numba's threads (the fused loop and the
roofline microbenchmarks); JAX uses its own pool over all cores. Exit status non-zero when a peer row cannot run
or a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from theorybook import sweep
from theorybook.sweep import floor_cut, poly_sweep

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
LR, LO, HI, X0 = 1e-3, 0.02, 0.98, 1.0  # the Adam chapter's phase diagram (adam_degenerate.phase_diagram)


# ------------------------------------------------------------------------------------------------------------
# the per-configuration baselines
# ------------------------------------------------------------------------------------------------------------


def python_loop(k: int, b1: float, b2: float, steps: int, threshold: float, tail: int) -> tuple[float, float]:
    """Adam (ε = 0, no bias correction, float-floor freeze) on x^k/k in Python floats → (final, min) loss."""
    cut = floor_cut(torch.float64)
    x = X0
    g = x ** (k - 1)
    m, v = g, g * g
    loss = x**k / k
    low, first, tail_max, tail_from = loss, -1, -math.inf, steps - tail + 1
    for t in range(1, steps + 1):
        g = x ** (k - 1) if abs(x) < 1e30 else math.inf
        if g * g >= cut:
            x = x - LR * m / math.sqrt(v) if v > 0 else math.nan
        g = x ** (k - 1) if abs(x) < 1e30 else math.inf
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        loss = x**k / k if abs(x) < 1e30 else math.inf
        low = min(low, loss)
        if first < 0 and loss <= threshold:
            first = t
        if t >= tail_from:
            tail_max = max(tail_max, loss)
    return loss, low


def optim_loop(k: int, b1: float, b2: float, steps: int, threshold: float, tail: int) -> tuple[float, float]:
    """``torch.optim.Adam`` on a one-element parameter, reductions tracked in Python → (final, min) loss."""
    p = torch.tensor([X0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([p], lr=LR, betas=(b1, b2))
    low, first, tail_max, tail_from = math.inf, -1, -math.inf, steps - tail + 1
    loss = math.inf
    for t in range(steps + 1):
        opt.zero_grad()
        obj = p.pow(k).sum() / k
        loss = obj.item()
        low = min(low, loss)
        if t >= 1 and first < 0 and loss <= threshold:
            first = t
        if t >= tail_from:
            tail_max = max(tail_max, loss)
        if t < steps:
            obj.backward()
            opt.step()
    return loss, low


# ------------------------------------------------------------------------------------------------------------
# timing helpers
# ------------------------------------------------------------------------------------------------------------


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _median_time(fn, repeats: int, device: str = "cpu") -> float:
    times = []
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@contextmanager
def reference_only():
    """Force the torch reference even on CUDA (the dispatch hook returns no kernel)."""
    saved = sweep._fused
    sweep._fused = lambda *_args: None
    try:
        yield
    finally:
        sweep._fused = saved


def subset(n: int, count: int) -> list[tuple[float, float]]:
    """``count`` (β₁, β₂) configurations spread over the n×n grid (a deterministic diagonal-ish stride)."""
    axis = torch.linspace(LO, HI, n, dtype=torch.float64).tolist()
    idx = [(round(i * (n - 1) / max(count - 1, 1)), round(i * 7919 % n)) for i in range(count)]
    return [(axis[i], axis[j]) for i, j in idx]


def jax_sweep_fn(k: int, steps: int, threshold: float, tail: int):
    """JAX ``jit(vmap(scan))`` of the same Adam recurrence and reductions (float64); ``None`` without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    cut = floor_cut(torch.float64)
    tail_from = steps - tail + 1

    def cell(b1, b2):
        x = jnp.float64(X0)
        g = x ** (k - 1)
        loss0 = x**k / k

        def step(c, t):
            x, m, v, g, low, first, tmax = c
            x = jnp.where(g * g < cut, x, x - LR * m / jnp.sqrt(v))
            g = x ** (k - 1)
            m = m + (1 - b1) * (g - m)
            v = v + (1 - b2) * (g * g - v)
            loss = x**k / k
            low = jnp.fmin(low, loss)
            first = jnp.where((first < 0) & (loss <= threshold), t + 1, first)
            tmax = jnp.where(t + 1 >= tail_from, jnp.fmax(tmax, loss), tmax)
            return (x, m, v, g, low, first, tmax), None

        init = (x, g, g * g, g, loss0, jnp.int64(-1), jnp.float64(-jnp.inf))
        (x, _, _, _, low, first, tmax), _ = jax.lax.scan(step, init, jnp.arange(steps))
        return x**k / k, low, first, tmax

    fn = jax.jit(jax.vmap(cell))

    def run(b1, b2):
        out = fn(b1, b2)
        jax.block_until_ready(out)
        return out

    return run


# ------------------------------------------------------------------------------------------------------------
# the roofline: this machine's sustained vector throughput per operation class × the fused loop's op count
# ------------------------------------------------------------------------------------------------------------

#: Work per Adam cell-step (k = 4, threshold tracked) as kernels/cpu.py's loop executes it, per cell (one SIMD lane);
#: read off the loop body (``advance``, method 3) and checked against its vectorised assembly. ``tail`` ops run on
#: the tail steps only (weighted by the tail's share of the steps).
ADAM_OPS = {  # counted in the compiled inner loop's assembly (AVX-512, k = 4, float64), one cell-step per lane
    "div": 1,        # 1/√v (IEEE, as torch's rsqrt: no estimate), for the next step
    "sqrt": 1,       # √v
    "mul": 9,        # η·m, ·(1/√v), 1·x, x·x, x·x², c₁·(g − m), g·g, c₂·(g² − v), y = x·g (the raw loss x⁴)
    "add": 5,        # x − …, g − m, base + …, g² − v, base + …
    "cmp": 7,        # g² < cut and its complement (floor rule), g² < cut for the next 1/√v, y < min, min > T,
                     # and the two per-cell lerp-branch flags (vptestnmb)
    "select": 8,     # a frozen cell's x, v, m and 1/√v inputs set to 1, its y to NaN, its x and g² kept;
                     # the two lerp bases (a or b, fixed per cell)
    "minmax": 1,     # running min of y (one minpd: NaN loses)
    "int": 2,        # first-below count += 1 (mask to vector, subtract)
    "tail_minmax": 1,  # running max of y, tail steps only
}


def ops_per_cell_step(tail_share: float) -> dict[str, float]:
    """The op classes the roofline charges: divider work (1 div + 1 sqrt, measured as a pair), multiplies (they
    need the FMA/multiply pipes) and all vector ALU ops (they share the FP pipes)."""
    o = ADAM_OPS
    simple = (o["mul"] + o["add"] + o["cmp"] + o["select"] + o["minmax"] + o["int"]
              + o["tail_minmax"] * tail_share)
    return {"div+sqrt": 1.0, "mul": float(o["mul"]), "alu": float(simple)}


def micro_kernels(lanes_per_thread: int = 512):
    """Numba loops that saturate one class each on every thread (prange over threads, one L1-sized array per
    thread: 512 float64 = 4 KiB = 64 SIMD vectors a pass). Per element and pass: four independent chains of the
    class (so that latency does not limit), combined by three adds (another pipe; not counted), one load and one
    store. Returns name → (zero-argument callable, class operations it performs)."""
    import numba
    from numba import njit, prange

    def chains(a, n, reps):  # 16 multiply-adds per element, in four independent chains, + 3 adds + 1 multiply
        for t in prange(a.shape[0]):
            x = a[t]
            for _ in range(reps):
                for j in range(n):
                    y = x[j]
                    p, q, r, s = y * 0.5 + 0.1, y * 0.5 + 0.2, y * 0.5 + 0.3, y * 0.5 + 0.4
                    p, q, r, s = p * 0.5 + 0.1, q * 0.5 + 0.2, r * 0.5 + 0.3, s * 0.5 + 0.4
                    p, q, r, s = p * 0.5 + 0.1, q * 0.5 + 0.2, r * 0.5 + 0.3, s * 0.5 + 0.4
                    p, q, r, s = p * 0.5 + 0.1, q * 0.5 + 0.2, r * 0.5 + 0.3, s * 0.5 + 0.4
                    x[j] = ((p + q) + (r + s)) * 0.25
        return 0

    # The same loop compiled twice: contracted into 16 FMAs per element, and not (16 multiplies + 16 adds + 3 adds
    # + 1 multiply = 36 ALU ops per element).
    fma = njit(parallel=True, fastmath={"contract"}, error_model="numpy")(chains)
    muladd = njit(parallel=True, fastmath=False, error_model="numpy")(chains)

    @njit(parallel=True, fastmath=False, error_model="numpy")
    def div(a, n, reps):  # 4 divisions per element (full mantissas: y oscillates around √8.8)
        for t in prange(a.shape[0]):
            x = a[t]
            for _ in range(reps):
                for j in range(n):
                    y = x[j]
                    x[j] = (1.7 / y + 1.9 / y) + (2.3 / y + 2.9 / y)
        return 0

    @njit(parallel=True, fastmath=False, error_model="numpy")
    def sqrt(a, n, reps):  # 4 square roots per element
        for t in prange(a.shape[0]):
            x = a[t]
            for _ in range(reps):
                for j in range(n):
                    y = x[j]
                    x[j] = (math.sqrt(y) + math.sqrt(y * 1.5)) + (math.sqrt(y * 2.5) + math.sqrt(y * 3.5))
        return 0

    @njit(parallel=True, fastmath=False, error_model="numpy")
    def divsqrt(a, n, reps):  # 4 of the fused loop's pair 1/√v per element
        for t in prange(a.shape[0]):
            x = a[t]
            for _ in range(reps):
                for j in range(n):
                    y = x[j]
                    x[j] = (1.7 / math.sqrt(y) + 1.9 / math.sqrt(y * 1.5)) + (
                        2.3 / math.sqrt(y * 2.5) + 2.9 / math.sqrt(y * 3.5))
        return 0

    threads = numba.get_num_threads()
    a = np.full((threads, lanes_per_thread + 8), 1.3)  # rows 4 KiB + a cache line apart: no shared lines
    plan = {}
    for name, fn, ops, reps in (("fma", fma, 16, 100_000), ("mul+add", muladd, 36, 50_000), ("div", div, 4, 40_000),
                                ("sqrt", sqrt, 4, 30_000), ("div+sqrt", divsqrt, 4, 15_000)):
        fn(a, lanes_per_thread, 1)  # compile
        plan[name] = (lambda fn=fn, reps=reps: fn(a, lanes_per_thread, reps), threads * lanes_per_thread * reps * ops)
    return plan


def roofline(rates: dict[str, float], tail_share: float) -> dict:
    """Lower bound on the time of one cell-step: every resource's work over its measured peak rate, the largest
    of them (perfect overlap of the others). Rates are class operations per second on all threads."""
    ops = ops_per_cell_step(tail_share)
    bound = {
        "div+sqrt": ops["div+sqrt"] / rates["div+sqrt"],
        "mul": ops["mul"] / rates["fma"],
        "alu": ops["alu"] / max(rates["mul+add"], rates["fma"]),
    }
    limit = max(bound, key=bound.get)
    return {"ops_per_cell_step": ops, "op_classes": ADAM_OPS, "class_rates_per_s": rates,
            "seconds_per_cell_step": bound, "limit": limit, "cell_steps_per_s": 1.0 / bound[limit]}


LIMITS = ("the divide/square-root unit and the vector pipes, about equally: one IEEE division and one square "
          "root per cell-step (1/sqrt(v), as torch's rsqrt on CPU) against ~32 other vector ops (mul, add, cmp, "
          "select) on the FP pipes; which one binds depends on the run's measured rates. Fixed in kernels/cpu.py: "
          "1/sqrt(v) is computed one step ahead, so no operation waits for the divider (before: the scheduler "
          "filled with operations stalled behind it, 0.34 of the roofline); frozen cells at the float floor "
          "compute on 1, not on subnormal-range values (a slow path: 27 % per cell-step on this grid); the block's "
          "arrays have a padded row stride (no 4 KiB aliasing). Not used: an estimate + Newton rsqrt (not the "
          "reference's rounding)")


def peers_missing() -> list[str]:
    """What keeps a CPU peer row from running (empty when JAX and numba import)."""
    missing = []
    for mod, what in (("jax", "JAX (the jax row)"), ("numba", "numba (the fused-cpu row and the roofline)")):
        try:
            __import__(mod)
        except ImportError as err:
            missing.append(f"{what}: {err}")
    from theorybook.kernels.cpu import cpu_fused_available

    if not missing and not cpu_fused_available():
        missing.append("the fused CPU path is off (THEORYBOOK_CPU_FUSED=0 or its compiler failed)")
    return missing


def _version(mod: str) -> str | None:
    try:
        return __import__(mod).__version__
    except ImportError:
        return None


def grid_sweep(n: int, k: int, steps: int, threshold: float, device: str) -> sweep.SweepStats:
    axis = torch.linspace(LO, HI, n, dtype=torch.float64, device=device)
    b1, b2 = torch.meshgrid(axis, axis, indexing="ij")
    return poly_sweep("adam", k, steps, x0=X0, lr=LR, beta1=b1, beta2=b2, threshold=threshold,
                      tail=max(1, steps // 5), device=device)


# ------------------------------------------------------------------------------------------------------------


def sam_compare(n: int, steps: int, repeats: int) -> dict:
    """Deterministic normalised SAM with momentum 0.5 on the 2-D quadratic saddle λ = (2, −2): an n×n (η, ρ) grid
    from w₀ = (10⁻³, 10⁻³), the torch reference vs the fused CPU loop, interleaved, medians; bitwise agreement."""
    from theorybook.kernels.cpu import cpu_fused_available

    from theorybook.sam_saddle import dynamics as sam_dyn

    if not cpu_fused_available():
        return {"skipped": "numba not installed"}
    lr = torch.logspace(-3, 0, n, dtype=torch.float64)[:, None]
    rho = torch.linspace(0.0, 1.5, n, dtype=torch.float64)[None, :]
    w0 = torch.tensor([1e-3, 1e-3], dtype=torch.float64)
    kw = dict(lam=(2.0, -2.0), normalized=True, momentum=0.5, threshold=-1e-2, tail=steps // 5, device="cpu")
    saved = sam_dyn._fused_sam

    def ref():
        sam_dyn._fused_sam = lambda *_a: None
        try:
            return sam_dyn.sam_sweep(w0, lr, rho, steps, **kw)
        finally:
            sam_dyn._fused_sam = saved

    def fused():
        return sam_dyn.sam_sweep(w0, lr, rho, steps, **kw)

    out = {"reference": ref(), "fused": fused()}  # warm (and compile)
    assert out["reference"].final_loss.shape == (n, n), out["reference"].final_loss.shape
    same = all(bool(((a == b) | (a.isnan() & b.isnan())).all()) for a, b in
               zip(out["reference"], out["fused"], strict=True))
    times: dict[str, list[float]] = {"reference": [], "fused": []}
    for _ in range(repeats):
        for name, fn in (("reference", ref), ("fused", fused)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k_: statistics.median(v_) for k_, v_ in times.items()}
    res = {"grid": n, "steps": steps, "cells": n * n, "seconds": med,
           "cell_steps_per_s": {k_: n * n * steps / v_ for k_, v_ in med.items()},
           "fused_over_reference": med["reference"] / med["fused"], "bitwise_equal": same}
    print(f"SAM (normalised, γ = 0.5) on the 2-D saddle, {n}x{n} (η, ρ) cells x {steps} steps: torch reference "
          f"{res['cell_steps_per_s']['reference']:.3e}, fused CPU {res['cell_steps_per_s']['fused']:.3e} cell-steps/s "
          f"-> {res['fused_over_reference']:.1f}x, bitwise equal: {same}")
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 32×32 grid × 300 steps")
    ap.add_argument("--grid", type=int, default=256, help="grid side n (n×n cells)")
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--vec-steps", type=int, default=None, help="CPU vectorised row: time fewer steps")
    ap.add_argument("--py-configs", type=int, default=24, help="configurations timed in the Python loop")
    ap.add_argument("--optim-configs", type=int, default=3, help="configurations timed with torch.optim.Adam")
    ap.add_argument("--optim-steps", type=int, default=1000, help="steps per torch.optim.Adam configuration")
    ap.add_argument("--repeats", type=int, default=3, help="warm repeats of the fast rows (median reported)")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch intra-op threads")
    ap.add_argument("--gpu-only", action="store_true", help="skip the CPU rows (GPU check)")
    ap.add_argument("--out", type=Path, default=RESULTS / "sweep.json")
    a = ap.parse_args(argv)
    if a.quick:
        a.grid, a.steps, a.py_configs, a.optim_configs, a.optim_steps = 32, 300, 8, 2, 300
    torch.set_num_threads(a.threads)
    machine = machine_info()
    if not a.gpu_only:
        missing = peers_missing()
        if missing:  # never a silent skip: the comparison is the point of this benchmark
            print("cannot run the peer rows: " + "; ".join(missing) + ". Install the bench extra: "
                  "pip install -e '.[bench]' (make bench does).", file=sys.stderr)
            return 2
        import numba

        numba.set_num_threads(a.threads)
    n, steps, k, thr = a.grid, a.steps, a.k, 1e-100
    cells = n * n
    tail = max(1, steps // 5)
    rows: list[dict] = []

    def row(name, cells_timed, steps_timed, seconds, note):
        rate = cells_timed * steps_timed / seconds
        rows.append(dict(name=name, cells_timed=cells_timed, steps_timed=steps_timed, seconds=seconds,
                         cell_steps_per_s=rate, grid_seconds=cells * steps / rate, note=note))

    # warm-up (imports, allocator, first-call dispatch), not timed
    grid_sweep(8, k, 10, thr, "cpu")

    if not a.gpu_only:
        cfg = subset(n, a.py_configs)
        t = _median_time(lambda: [python_loop(k, b1, b2, steps, thr, tail) for b1, b2 in cfg], a.repeats)
        row("python-loop", len(cfg), steps, t, f"{len(cfg)} configs timed, extrapolated to {n}x{n}")

        cfg_o = subset(n, a.optim_configs)
        t = _median_time(lambda: [poly_sweep("adam", k, a.optim_steps, x0=X0, lr=LR, beta1=b1, beta2=b2,
                                             threshold=thr, tail=tail) for b1, b2 in cfg_o], a.repeats)
        row("torch-percfg", len(cfg_o), a.optim_steps, t,
            f"{len(cfg_o)} configs x {a.optim_steps} steps timed, extrapolated")

        t = _median_time(lambda: [optim_loop(k, b1, b2, a.optim_steps, thr, tail) for b1, b2 in cfg_o],
                         a.repeats)
        row("torch.optim", len(cfg_o), a.optim_steps, t,
            f"{len(cfg_o)} configs x {a.optim_steps} steps timed, extrapolated")

        from theorybook.kernels.cpu import cpu_fused_available

        vs = a.vec_steps or steps
        axis = torch.linspace(LO, HI, n, dtype=torch.float64)
        b1g, b2g = (t.reshape(-1).contiguous() for t in torch.meshgrid(axis, axis, indexing="ij"))
        jx = jax_sweep_fn(k, steps, thr, tail)
        import jax.numpy as jnp

        jb1, jb2 = jnp.asarray(b1g.numpy()), jnp.asarray(b2g.numpy())
        fast: dict[str, tuple] = {}
        held: dict[str, sweep.SweepStats] = {}

        def vec():
            with reference_only():
                held["vectorised"] = grid_sweep(n, k, vs, thr, "cpu")

        fast["vectorised"] = (vec, vs, "torch reference, whole grid" + ("" if vs == steps else
                                                                            f", {vs} steps, extrapolated"))
        import theorybook.kernels.cpu as kcpu

        kcpu.MIN_CELL_STEPS = 0  # the row times the compiled loop whatever the size (--quick included)
        assert cpu_fused_available()

        def fused():
            held["fused-cpu"] = grid_sweep(n, k, steps, thr, "cpu")

        fast["fused-cpu"] = (fused, steps, f"poly_sweep's compiled per-cell loop (numba prange, {a.threads} threads), "
                                           "whole grid")
        fast["jax"] = (lambda: jx(jb1, jb2), steps, "JAX jit(vmap(scan)), float64, same reductions, XLA's own "
                                                    "thread pool")
        micro = {f"roofline:{name}": (fn, ops) for name, (fn, ops) in micro_kernels().items()}
        for fn, _, _ in fast.values():  # warm: compile every path at the timed shape
            fn()
        times: dict[str, list[float]] = {name: [] for name in (*fast, *micro)}
        cpu_times: dict[str, list[float]] = {name: [] for name in (*fast, *micro)}
        for _ in range(a.repeats):
            for name, fn in [*((nm, f[0]) for nm, f in fast.items()), *((nm, f[0]) for nm, f in micro.items())]:
                c0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
                c1 = resource.getrusage(resource.RUSAGE_SELF)
                cpu_times[name].append(max((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), 1e-6))
        for name, (_, st, note) in fast.items():
            row(name, cells, st, statistics.median(times[name]), note + f", median of {a.repeats} interleaved")
        rates = {name.split(":", 1)[1]: ops / statistics.median(times[name]) for name, (_, ops) in micro.items()}
        roof = roofline(rates, tail / steps)
        # the same on CPU time (this process's user + system seconds, all its threads): a rate per core-second × the
        # thread count, what each entry would do with the cores to itself — less sensitive to other processes'
        # load than the wall clock (a second view, not a replacement: the rows above are wall-clock)
        cpu_rates = {name.split(":", 1)[1]: ops * a.threads / statistics.median(cpu_times[name])
                     for name, (_, ops) in micro.items()}
        roof_cpu = roofline(cpu_rates, tail / steps)
        roof["cpu_time_view"] = dict(
            class_rates_per_s=cpu_rates, cell_steps_per_s=roof_cpu["cell_steps_per_s"], limit=roof_cpu["limit"],
            rows_cell_steps_per_s={nm: cells * st * a.threads / statistics.median(cpu_times[nm])
                                   for nm, (_, st, _) in fast.items()})
        roof["cpu_time_view"]["fraction"] = {nm: r / roof_cpu["cell_steps_per_s"] for nm, r in
                                             roof["cpu_time_view"]["rows_cell_steps_per_s"].items()}
        # the fused loop computes the reference's phase diagram: the flags a reader reads agree cell for cell
        ref_st, fz = held["vectorised"], held["fused-cpu"]
        agreement = {} if vs != steps else dict(
            diverged=float((ref_st.diverged == fz.diverged).double().mean()),
            first_below=float((ref_st.first_below == fz.first_below).double().mean()),
            final_loss_bitwise=float(((ref_st.final_loss == fz.final_loss)
                                      | (ref_st.final_loss.isnan() & fz.final_loss.isnan())).double().mean()))

        # sanity: the per-configuration loops compute the same phase diagram cells as the vectorised sweep
        small = subset(n, 4)
        ref = [python_loop(k, b1, b2, min(steps, 2000), thr, tail) for b1, b2 in small]
        axis_b1 = torch.tensor([c[0] for c in small], dtype=torch.float64)
        axis_b2 = torch.tensor([c[1] for c in small], dtype=torch.float64)
        vec = poly_sweep("adam", k, min(steps, 2000), x0=X0, lr=LR, beta1=axis_b1, beta2=axis_b2)
        agree = sum((r[1] <= 1e-100) == bool(m <= 1e-100) and math.isclose(r[1], float(m), rel_tol=1e-6)
                    for r, m in zip(ref, vec.min_loss.tolist(), strict=True))
        sanity = f"python-loop vs vectorised min loss (2000 steps, 4 configs): {agree}/4 agree to 1e-6"
        sam = sam_compare(n, max(10, steps // 5), a.repeats)
    else:
        sam, roof, agreement = {}, {}, {}
        sanity = "CPU rows skipped (--gpu-only)"

    gpu = {}
    if torch.cuda.is_available():
        gpu["device"] = torch.cuda.get_device_name()
        # compile / warm the kernel at the timed grid shape (Triton specialises on sizes), a few steps only
        grid_sweep(n, k, 10, thr, "cuda")
        held = {}
        with reference_only():
            grid_sweep(n, k, 10, thr, "cuda")
            t = _median_time(lambda: held.update(ref=grid_sweep(n, k, steps, thr, "cuda")), 1, "cuda")
        row("reference-cuda", cells, steps, t, "torch reference on the GPU, whole grid, 1 run")
        t = _median_time(lambda: held.update(fused=grid_sweep(n, k, steps, thr, "cuda")), a.repeats, "cuda")
        row("fused-cuda", cells, steps, t, f"fused Triton kernel, whole grid, median of {a.repeats}")
        ref_st = held["ref"]
        fs = held["fused"]
        conv_r, conv_f = ref_st.final_loss <= 1e-100, fs.final_loss <= 1e-100
        gpu.update(
            converged_agreement=float((conv_r == conv_f).double().mean()),
            diverged_agreement=float((ref_st.diverged == fs.diverged).double().mean()),
            first_below_agreement=float((ref_st.first_below == fs.first_below).double().mean()),
        )

    by = {r["name"]: r["cell_steps_per_s"] for r in rows}
    ratios = {}
    for fast in ("vectorised", "fused-cpu", "jax", "reference-cuda", "fused-cuda"):
        for slow in ("python-loop", "torch-percfg", "torch.optim", "vectorised", "jax", "reference-cuda"):
            if fast in by and slow in by and fast != slow:
                ratios[f"{fast}/{slow}"] = by[fast] / by[slow]
    roofline_fraction = {name: by[name] / roof["cell_steps_per_s"] for name in by if roof and "cuda" not in name}

    print(f"Adam on x^{k}/{k}, {n}x{n} (beta1, beta2) grid in [{LO}, {HI}]^2, lr={LR}, {steps} steps, "
          f"float64, torch threads={a.threads}")
    print("grid time = cells x steps / rate (extrapolated where the note says so); x = rate ratio to the row")
    print(f"{'row':<16}{'cell-steps/s':>14}{'grid time':>12}{'x python':>11}{'x optim':>11}  note")
    for r in rows:
        xp = r["cell_steps_per_s"] / by["python-loop"] if "python-loop" in by else float("nan")
        xo = r["cell_steps_per_s"] / by["torch.optim"] if "torch.optim" in by else float("nan")
        print(f"{r['name']:<16}{r['cell_steps_per_s']:>14.3e}{r['grid_seconds']:>11.1f}s{xp:>11.1f}{xo:>11.1f}"
              f"  {r['note']}")
    peer_goal: dict[str, bool] = {}
    over = []
    if roof:
        print(f"roofline ({a.threads} threads, measured interleaved with the rows): sustained rates " + ", ".join(
            f"{c} {r:.3g}/s" for c, r in roof["class_rates_per_s"].items()))
        print("  ops per Adam cell-step as the fused loop executes them: " + ", ".join(
            f"{c} {v}" for c, v in ADAM_OPS.items()) + f" (tail ops on {tail}/{steps} of the steps)")
        print("  lower bound per cell-step: " + ", ".join(
            f"{c} {t * 1e9:.3f} ns" for c, t in roof["seconds_per_cell_step"].items())
            + f" -> limit {roof['limit']}, roofline {roof['cell_steps_per_s']:.3e} cell-steps/s")
        print("fraction of the roofline: " + ", ".join(f"{k_} {v_:.3f}" for k_, v_ in roofline_fraction.items()))
        cv = roof["cpu_time_view"]
        print(f"  on CPU time (rate per core-second x {a.threads}; less sensitive to other load): roofline "
              f"{cv['cell_steps_per_s']:.3e} ({cv['limit']}); fraction " + ", ".join(
                  f"{k_} {v_:.3f}" for k_, v_ in cv["fraction"].items()))
        over = [name for name, f in [*roofline_fraction.items(), *((f"{k_} (cpu time)", v_) for k_, v_ in
                                                                     cv["fraction"].items())] if f > 1.0]
        if over:
            print(f"MODEL WRONG: {', '.join(over)} above the roofline (a resource or an op is missing from it)")
        rj = by["fused-cpu"] / by["jax"]
        rr = roofline_fraction["fused-cpu"]
        peer_goal = {"fused_over_jax_1.5": rj >= 1.5, "fused_roofline_0.5": rr >= 0.5}
        print(f"goal fused-cpu >= 1.5x jax (same run): {rj:.2f}x -> {'met' if rj >= 1.5 else 'NOT met'}")
        print(f"goal fused-cpu >= 0.5 of the roofline: {rr:.2f} -> {'met' if rr >= 0.5 else 'NOT met'}")
        r5 = by["fused-cpu"] / by["vectorised"]
        print(f"fused-cpu / vectorised torch: {r5:.1f}x")
    if agreement:
        print("fused-cpu vs torch reference on the whole grid (fraction of cells): " + ", ".join(
            f"{k_} {v_:.4f}" for k_, v_ in agreement.items()))
    print(sanity)
    goal = {}
    if "vectorised" in by and "python-loop" in by:
        scale = "" if (n, steps) == (256, 10_000) else f" (goal is for 256x256 x 1e4; this run: {n}x{n} x {steps})"
        for slow in ("python-loop", "torch-percfg", "torch.optim"):
            ratio = by["vectorised"] / by[slow]
            goal[slow] = ratio >= 100
            print(f"goal vectorised >= 100x {slow}: {ratio:.0f}x -> "
                  f"{'met' if goal[slow] else 'NOT met'}{scale}")
    for key, val in gpu.items():
        print(f"gpu {key}: {val}")
    if not torch.cuda.is_available():
        print("no CUDA device: fused-kernel rows not run")

    load_end = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    loaded = bool(load_end) and max(machine["load_avg_1_5_15_start"][0], load_end[0]) > 0.5 * (os.cpu_count() or 1)
    if loaded:
        print(f"machine loaded (load average {machine['load_avg_1_5_15_start'][0]} at the start, {load_end[0]} at "
              f"the end, {os.cpu_count()} cores): every row is slowed; the interleaved ratios and roofline fractions "
              "are the comparable numbers, re-run on an idle machine for absolute rates")
    result = dict(
        benchmark="sweep", k=k, grid=n, steps=steps, lr=LR, beta_range=[LO, HI], dtype="float64",
        threads=a.threads, quick=a.quick, rows=rows, ratios=ratios, roofline=roof, roofline_fraction=roofline_fraction,
        goal_vectorised_100x=goal, goal_peers=peer_goal, fused_vs_reference=agreement, gpu=gpu, sam=sam,
        sanity=sanity, limits=LIMITS,
        machine=dict(machine, load_avg_1_5_15_end=load_end, loaded=loaded),
        env=dict(torch=torch.__version__, python=sys.version.split()[0], machine=platform.machine(),
                 processor=platform.processor(), jax=_version("jax"), numba=_version("numba")),
    )
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {a.out}")
    missed = bool(over) or (not a.quick and not a.gpu_only and not (all(goal.values()) and all(peer_goal.values())))
    return 1 if missed else 0  # bench/run_all.py convention: non-zero = target missed


if __name__ == "__main__":
    sys.exit(main())
