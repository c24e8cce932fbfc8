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
                       extra; skipped with a message if JAX is absent);
7. ``roofline``      — a compiled scalar loop with nothing but the Adam recurrence (numba, ``fastmath``, no
                       reductions, no floor rule, no NaN handling): an upper reference for what a CPU does;
8. ``fused-cuda`` / ``reference-cuda`` — when a CUDA device is present: the fused Triton kernel and the same
                       torch reference on the GPU.

Rows 4–7 are timed interleaved (one repeat of each per round, median of ``--repeats`` warm rounds).

The per-configuration loops are far too slow to run on the whole grid: they are timed on a subset of
configurations (spread over the grid) and their rate is extrapolated to the grid; the table says so. The
vectorised row runs the whole grid for all steps by default (``--vec-steps`` shortens it, extrapolating).

    python bench/sweep.py            # 256×256 grid × 10⁴ steps (≈ 1–2 min on a shared 2-core CPU)
    python bench/sweep.py --quick    # a few seconds
    python bench/sweep.py --grid 1024 --steps 100000 --gpu-only   # the GPU check (bench/gpu_check.sh)

Writes ``bench/results/sweep.json`` (``--out`` to change). Torch intra-op threads default to torch's own
default (all cores: what a reader gets on an idle machine); on a machine shared with other jobs pass
``--threads 1`` (two threads per op thrash there, ≈ 15× slower measured).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch

from theorybook import sweep
from theorybook.sweep import floor_cut, poly_sweep

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


def roofline_fn():
    """The Adam recurrence alone, compiled as fast as a CPU allows: numba ``fastmath``, cells in SIMD blocks of 64
    spread over threads, no reductions, no floor rule, no NaN semantics — an upper reference, not a sweep."""
    import numba

    @numba.njit(parallel=True, fastmath=True)
    def run(b1, b2, k, steps, lr, x0, out):
        n = b1.shape[0]
        for blk in numba.prange((n + 63) // 64):
            lo, hi = blk * 64, min(blk * 64 + 64, n)
            x = np.full(hi - lo, x0)
            g = x ** (k - 1)
            m, v = g.copy(), g * g
            a1, a2 = 1.0 - b1[lo:hi], 1.0 - b2[lo:hi]
            for _ in range(steps):
                for j in range(hi - lo):
                    xj = x[j] - lr * m[j] / math.sqrt(v[j])
                    gj = xj * xj * xj if k == 4 else xj ** (k - 1)
                    m[j] += a1[j] * (gj - m[j])
                    v[j] += a2[j] * (gj * gj - v[j])
                    x[j] = xj
            out[lo:hi] = x
        return out

    return run


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

        import numpy as np
        from theorybook.kernels.cpu import cpu_fused_available

        vs = a.vec_steps or steps
        axis = torch.linspace(LO, HI, n, dtype=torch.float64)
        b1g, b2g = (t.reshape(-1).contiguous() for t in torch.meshgrid(axis, axis, indexing="ij"))
        jx = jax_sweep_fn(k, steps, thr, tail)
        jb1, jb2 = b1g.tolist(), b2g.tolist()
        if jx is not None:
            import jax.numpy as jnp
            jb1, jb2 = jnp.asarray(np.asarray(jb1)), jnp.asarray(np.asarray(jb2))
        fast: dict[str, tuple] = {}

        def vec():
            with reference_only():
                grid_sweep(n, k, vs, thr, "cpu")

        fast["vectorised"] = (vec, vs, "torch reference, whole grid" + ("" if vs == steps else
                                                                            f", {vs} steps, extrapolated"))
        if cpu_fused_available():
            import theorybook.kernels.cpu as kcpu

            kcpu.MIN_CELL_STEPS = 0  # the row times the compiled loop whatever the size (--quick included)
            fast["fused-cpu"] = (lambda: grid_sweep(n, k, steps, thr, "cpu"), steps,
                                 "poly_sweep's compiled per-cell loop (numba prange), whole grid")
            roof = roofline_fn()
            nb1, nb2, out = np.asarray(b1g.tolist()), np.asarray(b2g.tolist()), np.empty(cells)
            fast["roofline"] = (lambda: roof(nb1, nb2, k, steps, LR, X0, out), steps,
                                "compiled recurrence only (numba fastmath, no reductions)")
        else:
            print("numba not installed: fused-cpu and roofline rows skipped")
        if jx is not None:
            fast["jax"] = (lambda: jx(jb1, jb2), steps, "JAX jit(vmap(scan)), float64, same reductions")
        else:
            print("JAX not installed (pip install -e '.[bench]'): jax row skipped")
        for fn, _, _ in fast.values():  # warm: compile every path at the timed shape
            fn()
        times: dict[str, list[float]] = {name: [] for name in fast}
        for _ in range(a.repeats):
            for name, (fn, _, _) in fast.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        for name, (_, st, note) in fast.items():
            row(name, cells, st, statistics.median(times[name]), note + f", median of {a.repeats} interleaved")

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
        sam = {}
        sanity = "CPU rows skipped (--gpu-only)"

    gpu = {}
    if torch.cuda.is_available():
        gpu["device"] = torch.cuda.get_device_name()
        # compile / warm the kernel at the timed grid shape (Triton specialises on sizes), a few steps only
        grid_sweep(n, k, 10, thr, "cuda")
        held: dict[str, sweep.SweepStats] = {}
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
    for fast in ("vectorised", "fused-cpu", "jax", "roofline", "reference-cuda", "fused-cuda"):
        for slow in ("python-loop", "torch-percfg", "torch.optim", "vectorised", "jax", "reference-cuda"):
            if fast in by and slow in by and fast != slow:
                ratios[f"{fast}/{slow}"] = by[fast] / by[slow]
    roofline_fraction = {name: by[name] / by["roofline"] for name in by if "roofline" in by and "cuda" not in name}

    print(f"Adam on x^{k}/{k}, {n}x{n} (beta1, beta2) grid in [{LO}, {HI}]^2, lr={LR}, {steps} steps, "
          f"float64, torch threads={a.threads}")
    print("grid time = cells x steps / rate (extrapolated where the note says so); x = rate ratio to the row")
    print(f"{'row':<16}{'cell-steps/s':>14}{'grid time':>12}{'x python':>11}{'x optim':>11}  note")
    for r in rows:
        xp = r["cell_steps_per_s"] / by["python-loop"] if "python-loop" in by else float("nan")
        xo = r["cell_steps_per_s"] / by["torch.optim"] if "torch.optim" in by else float("nan")
        print(f"{r['name']:<16}{r['cell_steps_per_s']:>14.3e}{r['grid_seconds']:>11.1f}s{xp:>11.1f}{xo:>11.1f}"
              f"  {r['note']}")
    if roofline_fraction:
        print("fraction of the roofline row: " + ", ".join(f"{k_} {v_:.2f}" for k_, v_ in roofline_fraction.items()))
    if "fused-cpu" in by and "vectorised" in by:
        r5 = by["fused-cpu"] / by["vectorised"]
        print(f"goal fused-cpu >= 5x vectorised torch: {r5:.1f}x -> {'met' if r5 >= 5 else 'NOT met'}")
        if "jax" in by:
            rj = by["fused-cpu"] / by["jax"]
            print(f"goal fused-cpu >= jax jit: {rj:.2f}x -> {'met' if rj >= 1 else 'NOT met'}")
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

    result = dict(
        benchmark="sweep", k=k, grid=n, steps=steps, lr=LR, beta_range=[LO, HI], dtype="float64",
        threads=a.threads, quick=a.quick, rows=rows, ratios=ratios, roofline_fraction=roofline_fraction,
        goal_vectorised_100x=goal, gpu=gpu, sam=sam,
        sanity=sanity,
        env=dict(torch=torch.__version__, python=sys.version.split()[0], machine=platform.machine(),
                 processor=platform.processor()),
    )
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {a.out}")
    missed = not a.quick and not a.gpu_only and not all(goal.values())
    return 1 if missed else 0  # bench/run_all.py convention: non-zero = target missed


if __name__ == "__main__":
    sys.exit(main())
