"""The fused CPU sweep (kernels/cpu.py, numba) against the torch reference: same flags, ulp-level values.

Tiers, as for the Triton kernels: bitwise where the operations are the same IEEE operations in the same order
(GD on x²/2: a multiply, a subtract, a square and a halving); otherwise the divergence flags and first-below
steps agree exactly and the reductions agree to a relative error set by the dtype — x**k by squaring and
1/√v are not guaranteed to round like torch's vectorised pow and rsqrt, and in oscillating cells an ulp of
difference is amplified over the 40 steps (measured worst case: 3e-12 relative in float64, 9e-3 in float32
for heavy ball and Adam at k = 6).
"""

from __future__ import annotations

import pytest
import torch

from theorybook import sweep
from theorybook.sweep import POLY_METHODS, poly_sweep

numba = pytest.importorskip("numba", reason="numba not installed: the fused CPU path is off, torch runs")
from theorybook.kernels import cpu  # noqa: E402

STEPS = 40
X0 = torch.tensor([1.5, -0.7, 3.0, 1e30, 1e200], dtype=torch.float64)[None, :, None]
LR_WIDE = torch.logspace(-3, 6, 10, dtype=torch.float64)[:, None, None]
LR_NORM = torch.logspace(-3, 0.5, 10, dtype=torch.float64)[:, None, None]
BETA = torch.tensor([0.3, 0.9, 0.999], dtype=torch.float64)[None, None, :]
CASES = {
    "gd": dict(lr=LR_WIDE),
    "heavy_ball": dict(lr=LR_WIDE, beta=BETA),
    "rmsprop": dict(lr=LR_NORM, beta2=BETA),
    "adam": dict(lr=LR_NORM, beta1=0.9, beta2=BETA),
}
RTOL = {torch.float64: 1e-9, torch.float32: 5e-2}


def _both(method, k, dtype, threshold=1e-3, tail=7, x0=X0):
    hp = CASES[method]
    saved, sweep._fused = sweep._fused, lambda *_a: None
    try:
        ref = poly_sweep(method, k, STEPS, x0=x0, threshold=threshold, tail=tail, dtype=dtype, device="cpu", **hp)
    finally:
        sweep._fused = saved
    spec = POLY_METHODS[method]
    ts = torch.broadcast_tensors(*(torch.as_tensor(v, dtype=dtype) for v in (k, x0, *(hp[n] for n in spec.hparams))))
    kt = k if isinstance(k, int) else ts[0]
    got = cpu.poly_sweep_cpu_fused(method, kt, ts[1].clone(), ts[2:], STEPS, threshold=threshold, tail=tail,
                                   dtype=dtype)
    assert got is not None, "the numba kernel failed to compile"
    return ref, got


def _close(a, b, rtol):
    same = (a == b) | (a.isnan() & b.isnan())
    rel = (a - b).abs() / b.abs().clamp_min(torch.finfo(b.dtype).tiny)
    return bool((same | (rel <= rtol)).all())


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("method", list(CASES))
def test_parity_with_torch_reference(method, dtype, k=4):
    # one degree per method: each (method, degree, dtype) is a separate compilation (~1 s each)
    ref, got = _both(method, k, dtype)
    assert torch.equal(got.diverged, ref.diverged)
    assert torch.equal(got.first_below, ref.first_below)
    for name in ("final_loss", "min_loss", "tail_max"):
        assert _close(getattr(got, name), getattr(ref, name), RTOL[dtype]), name
    assert torch.isinf(got.final_loss[got.diverged]).all() and torch.isinf(got.tail_max[got.diverged]).all()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_bitwise_tier_gd_k2(dtype):
    ref, got = _both("gd", 2, dtype)
    for name in ("final_loss", "min_loss", "tail_max", "first_below", "diverged"):
        a, b = getattr(got, name), getattr(ref, name)
        assert bool(((a == b) | (a.isnan() & b.isnan())).all()), name


@pytest.mark.parametrize("method", ["rmsprop", "adam"])
def test_frozen_cells_reductions(method):
    # Cells at the float floor compute on 1 and report a NaN y that the reductions skip (kernels/cpu.py); their
    # constant y must still count: frozen before step 1 (x0 = 1e-120: g² underflows, the loss is 0 ≤ threshold,
    # so the first-below step is 1), and frozen before the tail starts (x0 = 1e-70 reaches the floor within a few
    # steps at lr = 1; the tail maximum is its constant loss, not −inf).
    x0 = torch.tensor([1e-120, 1e-70, 1e-60, 0.5, 2.0], dtype=torch.float64)[None, :, None]
    ref, got = _both(method, 4, torch.float64, x0=x0)
    assert torch.equal(got.first_below, ref.first_below) and torch.equal(got.diverged, ref.diverged)
    assert bool((got.first_below[:, 0] == 1).all())
    for name in ("final_loss", "min_loss", "tail_max"):
        assert _close(getattr(got, name), getattr(ref, name), RTOL[torch.float64]), name
    assert bool(torch.isfinite(got.tail_max[:, :2]).all())


def test_per_cell_degrees_and_no_threshold():
    k = torch.tensor([2.0, 4.0, 6.0], dtype=torch.float64)[None, None, :]
    ref, got = _both("adam", k, torch.float64, threshold=None, tail=0)
    assert bool((got.first_below == -1).all())
    assert _close(got.final_loss, ref.final_loss, 1e-9)


def test_dispatch_picks_cpu_path_for_big_sweeps_only(monkeypatch):
    assert sweep._fused("adam", torch.device("cpu"), None, 10.0) is None
    assert callable(sweep._fused("adam", torch.device("cpu"), None, 1e9))
    assert sweep._fused("adam", torch.device("cpu"), "x", 1e9) is None  # trajectories: reference
    monkeypatch.setenv("THEORYBOOK_CPU_FUSED", "0")
    assert sweep._fused("adam", torch.device("cpu"), None, 1e9) is None


def test_poly_sweep_uses_it_and_agrees():
    b = torch.linspace(0.5, 0.99, 40, dtype=torch.float64)
    b1, b2 = sweep.grid(b, b)
    steps = cpu.MIN_CELL_STEPS // b1.numel() + 1
    fused = poly_sweep("adam", 4, steps, lr=1e-3, beta1=b1, beta2=b2, threshold=1e-6, tail=10, device="cpu")
    saved, sweep._fused = sweep._fused, lambda *_a: None
    try:
        ref = poly_sweep("adam", 4, steps, lr=1e-3, beta1=b1, beta2=b2, threshold=1e-6, tail=10, device="cpu")
    finally:
        sweep._fused = saved
    # Over 1251 steps an ulp of difference is amplified where the dynamics spike or approach the float floor
    # (min loss ~1e-25 and below: relative differences up to O(1) in a few % of cells). What a phase diagram reads
    # agrees exactly — the divergence flags and the first step below the threshold — and every cell whose min
    # loss stays above 1e-12 agrees to 1e-6 relative (measured: 1.4e-11).
    assert torch.equal(fused.diverged, ref.diverged)
    assert (fused.first_below == ref.first_below).double().mean() >= 0.99
    big = ref.min_loss >= 1e-12
    assert big.sum() > 100
    assert _close(fused.min_loss[big], ref.min_loss[big], 1e-6)


# --- deterministic SAM on the 2-D quadratic saddle: bitwise (IEEE ops in the reference's order, one fma) -------

from theorybook.sam_saddle import dynamics as sam_dyn  # noqa: E402

SAM_W0 = torch.tensor([[1e-3, 1e-3], [0.5, -0.2], [0.0, 1e-8], [0.0, 0.0], [1e30, -1e30]])  # saddle, and overflow
SAM_LR = torch.logspace(-3, 5, 9)[:, None, None]  # converging, oscillating, overflowing-to-inf-then-NaN cells
SAM_RHO = torch.tensor([0.0, 0.1, 0.6, 3.0])[:, None]  # ρ* = 1/2 for λ = ±2: both sides of Theorem 1
SAM_MOM = {"none": 0.0, "mixed": torch.tensor([0.0, 0.5, 0.9])[:, None, None, None]}
SAM_FIELDS = ("final_loss", "min_loss", "first_below", "tail_max", "diverged", "final_w", "final_distance")


def _bitwise(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and bool(((a == b) | (a.isnan() & b.isnan())).all())


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("normalized", [True, False], ids=["normalized", "plain"])
@pytest.mark.parametrize("mom", list(SAM_MOM))
@pytest.mark.parametrize("threshold", [-1e-2, None], ids=["thr", "nothr"])
def test_sam_cpu_fused_is_bitwise_the_reference(dtype, normalized, mom, threshold):
    args = (SAM_W0, SAM_LR, SAM_RHO, 60)
    kw = dict(lam=(2.0, -2.0), normalized=normalized, momentum=SAM_MOM[mom], threshold=threshold, tail=5,
              dtype=dtype, device="cpu")
    saved, sam_dyn._fused_sam = sam_dyn._fused_sam, lambda *_a: None
    try:
        ref = sam_dyn.sam_sweep(*args, **kw)
    finally:
        sam_dyn._fused_sam = saved
    saved, sam_dyn._fused_sam = sam_dyn._fused_sam, lambda _dev, d, _n=0: cpu.sam_quadratic_cpu_fused
    try:
        got = sam_dyn.sam_sweep(*args, **kw)
    finally:
        sam_dyn._fused_sam = saved
    assert bool(ref.diverged.any()) and not bool(ref.diverged.all())  # both kinds of cells are exercised
    for name in SAM_FIELDS:
        assert _bitwise(getattr(ref, name), getattr(got, name)), name


def test_sam_dispatch_uses_the_cpu_kernel_only_for_big_sweeps(monkeypatch):
    assert sam_dyn._fused_sam(torch.device("cpu"), 2, 10.0) is None
    assert sam_dyn._fused_sam(torch.device("cpu"), 2, 1e8) is cpu.sam_quadratic_cpu_fused
    assert sam_dyn._fused_sam(torch.device("cpu"), 3, 1e8) is None
    monkeypatch.setenv("THEORYBOOK_CPU_FUSED", "0")
    assert sam_dyn._fused_sam(torch.device("cpu"), 2, 1e8) is None


# --- the reductions on the raw loss y = x^k: the threshold test f(y) <= thr as y <= T, the first-below count ------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("k", [4, 6, 0], ids=["k4", "k6", "per-cell"])
@pytest.mark.parametrize("thr", [1e-3, 0.37, 5e-320, -1.0, 0.0, 1e300])
def test_raw_threshold_is_exact(dtype, k, thr):
    import numpy as np

    npdt = np.float64 if dtype == torch.float64 else np.float32
    kd = float(k) if k else 1.0
    t = cpu._raw_threshold(thr, k, kd, npdt)

    def f(y):
        y = npdt(y)
        if k and k & (k - 1) == 0:
            return y * npdt(1.0 / k)
        return y / npdt(kd) if k else y

    with np.errstate(all="ignore"):
        tt = npdt(t)
        assert float(f(tt)) <= thr or tt == -np.inf  # T passes ...
        up = np.nextafter(tt, npdt(np.inf))
        assert not float(f(up)) <= thr  # ... and the next value up does not
    assert cpu._raw_threshold(None, k, kd, npdt) == -float("inf")


@pytest.mark.parametrize("k", [4, 6])
@pytest.mark.parametrize("thr", [0.3, 2.0, 1e-2])
def test_first_below_count_matches_reference(k, thr):
    # thresholds that cells cross at different steps (and some never, some at t = 1): the count-based first-below
    # step must be the reference's step exactly, the tail max and min loss within the tier
    ref, got = _both("adam", k, torch.float64, threshold=thr, tail=5)
    assert torch.equal(got.first_below, ref.first_below)
    assert bool((ref.first_below > 1).any()) and bool((ref.first_below == -1).any())
    for name in ("min_loss", "tail_max"):
        assert _close(getattr(got, name), getattr(ref, name), RTOL[torch.float64]), name
