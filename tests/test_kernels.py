"""Parity of the fused Triton sweeps (``theorybook.kernels``) with the torch reference (``theorybook.sweep``).

On CPU (CI) the Triton kernels run under the Triton interpreter (``TRITON_INTERPRET=1``, set below before the
kernel module defines its ``@triton.jit`` functions). ``THEORYBOOK_KERNEL_DEVICE=cuda`` runs the same tests
compiled on a GPU (``bench/gpu_check.sh``). Skipped when Triton is not installed (optional dependency
``pip install .[kernels]``).

Three tiers, by how much of the reference's rounding the kernel can reproduce (see ``kernels/poly.py``):

* ``exact`` (k = 2, CPU): every operation has one IEEE rounding on both sides → all five outputs
  bitwise equal.
* ``ulp`` (k = 4, CPU): the dynamics are bitwise equal (g = x·x·x on both sides); only the loss x⁴ uses
  torch's SLEEF ``pow`` (≤ 1 ulp from the correctly rounded value the kernel computes) → losses within 1 ulp.
* ``amplified`` (k ≥ 6, per-cell k, and everything on a GPU): the 1-ulp ``pow`` differences enter the
  recurrence and the dynamics amplify them, so only rounding-scale agreement *in distribution* can be
  asserted: divergence flags identical, median loss error ≤ 4 ulp, 95 % of cells ≤ 10³ ulp.
"""

from __future__ import annotations

import importlib
import math
import os
import subprocess
import sys

import pytest
import torch

DEVICE = os.environ.get("THEORYBOOK_KERNEL_DEVICE", "cpu")
if DEVICE == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"  # must precede the @triton.jit decorations in kernels/poly.py

triton = pytest.importorskip("triton", reason="Triton not installed (optional: pip install .[kernels])")

if DEVICE == "cuda" and not torch.cuda.is_available():  # pragma: no cover - GPU runs only
    pytest.skip("THEORYBOOK_KERNEL_DEVICE=cuda but no CUDA device", allow_module_level=True)

from triton.runtime.interpreter import InterpretedFunction  # noqa: E402

import theorybook.sweep as sweep  # noqa: E402
from theorybook import kernels  # noqa: E402
from theorybook.sweep import POLY_METHODS, poly_sweep  # noqa: E402


def _kernel_module(name: str, jit_attr: str):
    """Import ``name``; on CPU, re-import it if it was imported earlier without the interpreter (re-decorates
    its @triton.jit functions under TRITON_INTERPRET)."""
    mod = importlib.import_module(name)
    if DEVICE == "cpu" and not isinstance(getattr(mod, jit_attr), InterpretedFunction):
        mod = importlib.reload(mod)
    return mod


_kernel_module("theorybook.kernels._common", "_div")  # shared @triton.jit helpers: before the kernels using them
poly = _kernel_module("theorybook.kernels.poly", "_poly_sweep_kernel")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy overflow in the interpreter
STEPS = 40
DTYPES = (torch.float64, torch.float32)

# x0 axis: ordinary starts, a large one, and starts whose first gradient overflows (1e200: inf in float32 already,
# x³ = inf in float64), so non-finite iterates are reported as the reference does (poly_sweep refuses NaN/inf x0)
X0 = torch.tensor([1.5, -0.7, 3.0, 1e30, 1e200], dtype=torch.float64)[None, :, None]
# lr axis spans converging, oscillating and (for GD / heavy ball) overflowing-to-inf-then-NaN cells
LR_WIDE = torch.logspace(-3, 6, 10)[:, None, None]
LR_NORM = torch.logspace(-3, 0.5, 10)[:, None, None]
BETA = torch.tensor([0.3, 0.9, 0.999])[None, None, :]

CASES = {
    "gd": dict(lr=LR_WIDE),
    "heavy_ball": dict(lr=LR_WIDE, beta=BETA),
    "rmsprop": dict(lr=LR_NORM, beta2=BETA),
    "adam": dict(lr=LR_NORM, beta1=0.9, beta2=BETA),
}


def _both(method: str, k, dtype: torch.dtype, steps: int = STEPS, threshold: float | None = 1e-3,
          tail: int = 7, **hp):
    """(reference, fused) on the same broadcast inputs, the fused one called exactly as sweep._fused does."""
    dev = torch.device(DEVICE)
    saved, sweep._fused = sweep._fused, lambda *_a: None  # the torch reference, also on CUDA
    try:
        ref = poly_sweep(method, k, steps, x0=X0, threshold=threshold, tail=tail, dtype=dtype, device=dev,
                         **hp)
    finally:
        sweep._fused = saved
    spec = POLY_METHODS[method]
    ts = torch.broadcast_tensors(*(torch.as_tensor(v, dtype=dtype, device=dev)
                                   for v in (k, X0, *(hp[n] for n in spec.hparams))))
    kt = ts[0]
    if bool((kt == kt.reshape(-1)[0]).all()):
        kt = int(kt.reshape(-1)[0])
    fn = kernels.poly_sweep_kernel(method)
    fused = fn(kt, ts[1].clone(), ts[2:], steps, threshold=threshold, tail=tail, dtype=dtype)
    return ref, fused


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise-equal values, NaN == NaN."""
    return a.shape == b.shape and a.dtype == b.dtype and bool(((a == b) | (a.isnan() & b.isnan())).all())


def _ulps(ref: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    """|got − ref| in units of eps·|ref| (floored at the smallest normal); 0 where both agree exactly."""
    fi = torch.finfo(ref.dtype)
    same = (ref == got) | (ref.isnan() & got.isnan())
    err = (got - ref).abs() / (ref.abs().clamp_min(fi.tiny) * fi.eps)
    return torch.where(same, torch.zeros_like(err), err.nan_to_num(nan=math.inf))


def _agree_short(ref, fused) -> None:
    """Short runs (≤ a dozen steps, no room for amplification): bitwise on the CPU interpreter; on a GPU
    (other pow/rsqrt/fma rounding) identical flags and first_below, values within 10³ ulp."""
    if DEVICE == "cpu":
        for name in ("final_loss", "min_loss", "first_below", "tail_max", "diverged"):
            assert _same(getattr(ref, name), getattr(fused, name)), name
        return
    _check_reporting(ref, fused)  # pragma: no cover - GPU runs only
    assert torch.equal(ref.first_below, fused.first_below)  # pragma: no cover
    for name in ("final_loss", "min_loss", "tail_max"):  # pragma: no cover
        assert float(_ulps(getattr(ref, name), getattr(fused, name)).max()) <= 1e3, name


def _check_reporting(ref, fused):
    """Divergence is reported identically: same flags, inf final loss and tail max on diverged cells."""
    assert torch.equal(ref.diverged, fused.diverged)
    assert bool(torch.isinf(fused.final_loss[fused.diverged]).all())
    assert bool(torch.isinf(fused.tail_max[fused.diverged]).all())
    assert fused.trajectory is None and fused.first_below.dtype == torch.int64


EXACT = [(m, dt) for m in CASES for dt in DTYPES]


def _torch_lerp_uses_fma() -> bool:
    """Whether torch's CPU lerp rounds as fma(w, b − a, a) for |w| < 0.5 (else fma(w − 1, b − a, b)), the form
    the kernel mirrors; probed exactly (Fraction arithmetic rounds once, like an fma) on fixed inputs."""
    from fractions import Fraction

    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(2, 512, generator=g, dtype=torch.float64)
    for w in (0.1, 0.07, 0.9, 0.999):
        out = torch.lerp(a, b, w).tolist()
        for x, y, o in zip(a.tolist(), b.tolist(), out, strict=True):
            d = y - x
            exact = Fraction(w) * Fraction(d) + Fraction(x) if w < 0.5 else Fraction(w - 1) * Fraction(d) + Fraction(y)
            if float(exact) != o:
                return False
    return True


TORCH_LERP_FMA = _torch_lerp_uses_fma()


@pytest.mark.skipif(DEVICE != "cpu", reason="bitwise tiers hold for the CPU reference only")
@pytest.mark.parametrize(("method", "dtype"), EXACT, ids=[f"{m}-{str(d)[6:]}" for m, d in EXACT])
def test_exact_tier_k2(method, dtype):
    ref, fused = _both(method, 2, dtype, **CASES[method])
    if method in ("heavy_ball", "rmsprop", "adam") and not TORCH_LERP_FMA:
        # this torch/CPU rounds lerp differently from the fma form the kernel mirrors (see _torch_lerp_uses_fma)
        _amplified_check(ref, fused)
        return
    for name in ("final_loss", "min_loss", "first_below", "tail_max", "diverged"):
        assert _same(getattr(ref, name), getattr(fused, name)), name
    _check_reporting(ref, fused)
    if method in ("gd", "heavy_ball"):  # the grid really contains cells that overflow and cells that converge
        assert 0 < int(ref.diverged.sum()) < ref.diverged.numel()


ULP = [("gd", torch.float64), ("heavy_ball", torch.float32), ("adam", torch.float64),
       ("rmsprop", torch.float32)]


@pytest.mark.skipif(DEVICE != "cpu", reason="bitwise tiers hold for the CPU reference only")
@pytest.mark.parametrize(("method", "dtype"), ULP, ids=[f"{m}-{str(d)[6:]}" for m, d in ULP])
def test_ulp_tier_k4(method, dtype):
    ref, fused = _both(method, 4, dtype, **CASES[method])
    _check_reporting(ref, fused)
    assert torch.equal(ref.first_below, fused.first_below)
    for name in ("final_loss", "min_loss", "tail_max"):
        assert float(_ulps(getattr(ref, name), getattr(fused, name)).max()) <= 1.0, name


AMPLIFIED = [("adam", torch.float64, "mixed"), ("heavy_ball", torch.float32, 6),
             ("rmsprop", torch.float64, 8)]


def _amplified_check(ref, fused):
    _check_reporting(ref, fused)
    agree = float((ref.first_below == fused.first_below).double().mean())
    assert agree >= 0.95, f"first_below agrees on {agree:.1%} of cells"
    for name in ("final_loss", "min_loss"):
        u = _ulps(getattr(ref, name), getattr(fused, name)).reshape(-1)
        u = u[torch.isfinite(getattr(ref, name).reshape(-1))]
        assert float(u.median()) <= 4.0 and float(u.quantile(0.95)) <= 1e3, (name, float(u.max()))


@pytest.mark.parametrize(("method", "dtype", "k"), AMPLIFIED,
                         ids=[f"{m}-{str(d)[6:]}-k{k}" for m, d, k in AMPLIFIED])
def test_amplified_tier(method, dtype, k):
    kk = torch.tensor([2.0, 4.0, 6.0])[None, None, :] if k == "mixed" else k
    ref, fused = _both(method, kk, dtype, **CASES[method])
    _amplified_check(ref, fused)


@pytest.mark.skipif(DEVICE != "cuda", reason="GPU run only: every tier is 'amplified' against CUDA torch")
@pytest.mark.parametrize(("method", "dtype"), EXACT, ids=[f"{m}-{str(d)[6:]}" for m, d in EXACT])
@pytest.mark.parametrize("k", [2, 4])
def test_device_tier(method, dtype, k):  # pragma: no cover - GPU runs only
    ref, fused = _both(method, k, dtype, **CASES[method])
    _amplified_check(ref, fused)


@pytest.mark.parametrize(("steps", "tail", "threshold"),
                         [(0, 0, 1e-3), (0, 5, None), (3, 10, 0.5), (5, 0, None)])
def test_edge_arguments(steps, tail, threshold):
    """steps = 0 (reductions of x₀ alone), tail longer than the run, no threshold (first_below all −1)."""
    ref, fused = _both("adam", 2, torch.float64, steps=steps, threshold=threshold, tail=tail, **CASES["adam"])
    _agree_short(ref, fused)
    if threshold is None:
        assert bool((fused.first_below == -1).all())


def test_dispatch_contract(monkeypatch):
    """poly_sweep through the fused path (forced on this device) returns what the reference returns."""
    hp = dict(lr=LR_NORM, beta1=0.9, beta2=BETA)
    monkeypatch.setattr(sweep, "_fused", lambda m, d, r, *_: None)
    ref = poly_sweep("adam", 2, 12, x0=X0, threshold=1e-3, tail=3, device=DEVICE, **hp)
    monkeypatch.setattr(sweep, "_fused", lambda m, d, r, *_: kernels.poly_sweep_kernel(m) if r is None else None)
    fused = poly_sweep("adam", 2, 12, x0=X0, threshold=1e-3, tail=3, device=DEVICE, **hp)
    _agree_short(ref, fused)
    rec = poly_sweep("adam", 2, 12, x0=X0, record="loss", device=DEVICE, **hp)  # trajectories: reference
    assert rec.trajectory is not None and rec.trajectory.shape == (13, *ref.final_loss.shape)


def test_dispatch_selection():
    assert kernels.poly_sweep_kernel("sgd_nesterov") is None
    for m in POLY_METHODS:
        assert callable(kernels.poly_sweep_kernel(m))
    assert sweep._fused("adam", torch.device("cpu"), None) is None  # small CPU sweep → torch reference
    assert sweep._fused("adam", torch.device("cuda"), "x") is None  # trajectory asked → reference


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(steps=-1), "steps"), (dict(tail=-2), "tail"), (dict(hp=()), "hp"),
    (dict(dtype=torch.float16), "dtype"),
])
def test_fused_validation(kwargs, match):
    args = dict(kt=2, x0t=torch.ones(3, dtype=torch.float64),
                hp=(torch.full((3,), 0.1, dtype=torch.float64),), steps=3, tail=0, dtype=torch.float64)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        poly.poly_sweep_fused("gd", **args)


_PTX_SCRIPT = """
import torch
from theorybook.kernels.poly import compile_ptx
for method, k, dt in (("adam", None, torch.float64), ("rmsprop", 4, torch.float32)):
    ptx = compile_ptx(method, k, dt)
    assert ".entry" in ptx and "approx" not in ptx, (method, k, dt)
    assert "sqrt.rn" in ptx and "div.rn" in ptx, (method, k, dt)
print("ok")
"""


@pytest.mark.slow
def test_compiles_for_cuda_without_a_gpu():
    """The interpreter does not compile; this does: PTX for sm_90 (H100/H200), no approximate sqrt/div.

    Runs in a subprocess without TRITON_INTERPRET (under it the kernel is interpreted, not compiled)."""
    _compile_in_subprocess(_PTX_SCRIPT)


def _compile_in_subprocess(script: str) -> None:
    """Run a PTX-compile check script in a subprocess without TRITON_INTERPRET (under it kernels are
    interpreted, not compiled); it must print "ok"."""
    try:
        import triton.backends.nvidia  # noqa: F401
    except ImportError:  # pragma: no cover
        pytest.skip("Triton's NVIDIA backend is not installed")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


# ------------------------------------------------------------------------------------------------------------
# SAM on the 2-D quadratic saddle (kernels/sam.py) against theorybook.sam_saddle.dynamics.sam_sweep.
# One tier on CPU, ``exact``: every operation of the reference is one IEEE rounding or the fma of torch's
# length-2 vector_norm, which the kernel reproduces → all seven outputs bitwise equal, diverged cells included.
# On a GPU (CUDA torch's own norm reduction) the ``amplified`` tier applies.
# ------------------------------------------------------------------------------------------------------------
import theorybook.sam_saddle.dynamics as sam_dyn  # noqa: E402

sam_kernel = _kernel_module("theorybook.kernels.sam", "_sam_quad_kernel")

SAM_W0 = torch.tensor([[1e-3, 1e-3], [0.5, -0.2], [0.0, 1e-8], [0.0, 0.0]])  # (4, 2); (0, 0): the saddle
# lr axis: converging, oscillating, and (large η) overflowing-to-inf-then-NaN cells in both dtypes
SAM_LR = torch.logspace(-3, 5, 9)[:, None, None]
SAM_RHO = torch.tensor([0.0, 0.1, 0.6, 3.0])[:, None]  # ρ* = 1/2 for λ = ±2: both sides of Theorem 1
SAM_MOM = {"none": 0.0, "mixed": torch.tensor([0.0, 0.5, 0.9])[:, None, None, None]}
SAM_STEPS = 60
SAM_FIELDS = ("final_loss", "min_loss", "first_below", "tail_max", "diverged", "final_w", "final_distance")


def _sam_both(dtype, normalized, momentum, *, steps=SAM_STEPS, threshold=-1e-2, tail=5, lam=(2.0, -2.0),
              lr=SAM_LR):
    """(reference, fused): sam_sweep with dispatch off, and the kernel called exactly as sam_sweep calls it."""
    dev = torch.device(DEVICE)
    args = (SAM_W0, lr, SAM_RHO, steps)
    kw = dict(lam=lam, normalized=normalized, momentum=momentum, threshold=threshold, tail=tail, dtype=dtype,
              device=dev)
    saved, sam_dyn._fused_sam = sam_dyn._fused_sam, lambda *_a: None
    try:
        ref = sam_dyn.sam_sweep(*args, **kw)
    finally:
        sam_dyn._fused_sam = saved
    saved, sam_dyn._fused_sam = sam_dyn._fused_sam, lambda _dev, d, _n=0: kernels.sam_sweep_kernel() if d == 2 else None
    try:
        fused = sam_dyn.sam_sweep(*args, **kw)
    finally:
        sam_dyn._fused_sam = saved
    return ref, fused


def _sam_same(ref, fused):
    for name in SAM_FIELDS:
        assert _same(getattr(ref, name), getattr(fused, name)), name


SAM_EXACT = [(dt, nz, m) for dt in DTYPES for nz in (True, False) for m in SAM_MOM]


def _torch_norm_uses_fma() -> bool:
    """Whether this torch build/CPU computes a 2-vector norm as sqrt(fma(g2, g2, g1·g1)) — the form the kernel
    mirrors. Probed exactly (Fraction arithmetic rounds once, like an fma) on fixed rows."""
    import math
    from fractions import Fraction

    g = torch.Generator().manual_seed(0)
    scales = torch.logspace(-3, 3, 400, dtype=torch.float64)[:, None]
    rows = torch.randn(400, 2, generator=g, dtype=torch.float64) * scales
    norms = torch.linalg.vector_norm(rows, dim=-1)
    for (a, b), n in zip(rows.tolist(), norms.tolist(), strict=True):
        if math.sqrt(float(Fraction(b) ** 2 + Fraction(a * a))) != n:
            return False
    return True


TORCH_NORM_FMA = _torch_norm_uses_fma()


@pytest.mark.skipif(DEVICE != "cpu", reason="bitwise tiers hold for the CPU reference only")
@pytest.mark.parametrize(("dtype", "normalized", "mom"), SAM_EXACT,
                         ids=[f"{str(d)[6:]}-{'norm' if n else 'unnorm'}-{m}" for d, n, m in SAM_EXACT])
def test_sam_exact_tier(dtype, normalized, mom):
    ref, fused = _sam_both(dtype, normalized, SAM_MOM[mom])
    if not TORCH_NORM_FMA:
        # this torch/CPU rounds ‖g‖ differently from the fma form the kernel mirrors: bitwise equality cannot
        # hold, so the same tolerance as the GPU tier applies (still: identical divergence reporting)
        _sam_amplified(ref, fused)
        return
    _sam_same(ref, fused)
    _sam_reporting(ref, fused)
    # the grid really contains diverging and converging/trapped cells, and the threshold is crossed somewhere
    assert 0 < int(ref.diverged.sum()) < ref.diverged.numel()
    assert bool((ref.first_below > 0).any()) and bool((ref.first_below == -1).any())
    assert bool(torch.isnan(ref.final_w).any())  # inf − inf in the iterate: NaN propagates the same way


def _sam_reporting(ref, fused):
    """Divergence reported identically (as ``_check_reporting``; SAMSweep has no trajectory field)."""
    assert torch.equal(ref.diverged, fused.diverged)
    assert bool(torch.isinf(fused.final_loss[fused.diverged]).all())
    assert bool(torch.isinf(fused.tail_max[fused.diverged]).all())
    assert fused.first_below.dtype == torch.int64


def _sam_amplified(ref, fused):
    _sam_reporting(ref, fused)
    agree = float((ref.first_below == fused.first_below).double().mean())
    assert agree >= 0.95, f"first_below agrees on {agree:.1%} of cells"
    for name in ("final_loss", "min_loss", "final_distance"):
        r = getattr(ref, name).reshape(-1)
        u = _ulps(r, getattr(fused, name).reshape(-1))[torch.isfinite(r)]
        assert float(u.median()) <= 4.0 and float(u.quantile(0.95)) <= 1e3, (name, float(u.max()))


@pytest.mark.skipif(DEVICE != "cuda", reason="GPU run only: against CUDA torch the tier is 'amplified'")
@pytest.mark.parametrize(("dtype", "normalized", "mom"), SAM_EXACT,
                         ids=[f"{str(d)[6:]}-{'norm' if n else 'unnorm'}-{m}" for d, n, m in SAM_EXACT])
def test_sam_device_tier(dtype, normalized, mom):  # pragma: no cover - GPU runs only
    ref, fused = _sam_both(dtype, normalized, SAM_MOM[mom])
    _sam_amplified(ref, fused)


@pytest.mark.parametrize(("steps", "tail", "threshold", "lam"),
                         [(0, 0, -1e-2, (2.0, -2.0)), (0, 4, None, (2.0, -2.0)), (3, 10, 0.0, (1.0, -0.25)),
                          (7, 0, None, (-1.0, -3.0))])
def test_sam_edge_arguments(steps, tail, threshold, lam):
    """steps = 0 (reductions of w₀ alone), tail longer than the run, no threshold, other curvatures."""
    ref, fused = _sam_both(torch.float64, True, SAM_MOM["mixed"], steps=steps, threshold=threshold, tail=tail,
                           lam=lam)
    if DEVICE == "cpu":
        _sam_same(ref, fused)
    else:  # pragma: no cover - GPU runs only
        _sam_amplified(ref, fused)
    if threshold is None:
        assert bool((fused.first_below == -1).all())
    if steps == 0:
        assert torch.equal(fused.final_w, SAM_W0.to(fused.final_w).expand_as(fused.final_w))


def test_sam_reference_is_simulate_sam():
    """sam_sweep's torch path = simulate_sam's iterates reduced by hand (same update, same rounding)."""
    dt, steps, thr = torch.float64, 25, -1e-2
    lr = torch.logspace(-3, 0, 4)[:, None, None]
    for normalized, mom in ((True, 0.0), (False, SAM_MOM["mixed"])):
        sw = sam_dyn.sam_sweep(SAM_W0, lr, SAM_RHO, steps, normalized=normalized, momentum=mom, threshold=thr,
                               tail=4, dtype=dt, device="cpu")
        tr = sam_dyn.simulate_sam(sam_dyn.saddle_quadratic_grad((2.0, -2.0)), SAM_W0, lr, SAM_RHO, steps,
                                  normalized=normalized, momentum=mom, dtype=dt, device="cpu")
        loss = sam_dyn.saddle_quadratic(tr.w, (2.0, -2.0))  # (steps+1, *cells)
        below = (loss[1:] <= thr).to(torch.int64)
        first = torch.where(below.any(0), below.argmax(0) + 1, -1)
        assert torch.equal(sw.final_w, tr.final) and torch.equal(sw.final_loss, loss[-1])
        assert torch.equal(sw.min_loss, loss.min(0).values) and torch.equal(sw.tail_max, loss[-4:].max(0).values)
        assert torch.equal(sw.first_below, first)
        assert torch.equal(sw.final_distance, tr.distance((0.0, 0.0))[-1])


def test_sam_dispatch_selection():
    assert callable(kernels.sam_sweep_kernel())
    assert sam_dyn._fused_sam(torch.device("cpu"), 2) is None  # small CPU sweep → torch reference
    assert sam_dyn._fused_sam(torch.device("cuda"), 3) is None  # d ≠ 2 → torch reference
    assert sam_dyn._fused_sam(torch.device("cuda"), 2) is kernels.sam_sweep_kernel()


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(steps=-1), "steps"), (dict(tail=-1), "tail"), (dict(lam=(1.0, 2.0, 3.0)), "lam"),
    (dict(lam=(1.0, float("nan"))), "lam"), (dict(threshold=float("nan")), "threshold"), (dict(lr=0.0), "lr"),
    (dict(rho=-0.1), "rho"), (dict(momentum=1.0), "momentum"), (dict(w0=[[0.0, float("inf")]]), "w0"),
])
def test_sam_sweep_validation(kwargs, match):
    args = dict(w0=SAM_W0, lr=0.1, rho=0.1, steps=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sam_dyn.sam_sweep(**args)


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(steps=-1), "steps"), (dict(tail=-2), "tail"), (dict(w0=torch.zeros(3, 3)), "w0"),
    (dict(lam=(1.0,)), "lam"), (dict(w0=torch.zeros(3, 2, dtype=torch.float16)), "dtype"),
])
def test_sam_fused_validation(kwargs, match):
    z = torch.zeros(3, dtype=torch.float64)
    args = dict(w0=torch.zeros(3, 2, dtype=torch.float64), rho=z, lr=z + 0.1, momentum=None, steps=3,
                lam=(2.0, -2.0), normalized=True)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sam_kernel.sam_quadratic_fused(**args)


_SAM_PTX_SCRIPT = """
import torch
from theorybook.kernels.sam import compile_ptx
for dt in (torch.float64, torch.float32):
    ptx = compile_ptx(dt, normalized=True, momentum=True)
    assert ".entry" in ptx and "approx" not in ptx, dt
    assert "sqrt.rn" in ptx and "div.rn" in ptx, dt
    assert ptx.count("fma.rn") == 2, (dt, ptx.count("fma.rn"))  # the two norms' fma only: nothing contracted
print("ok")
"""


@pytest.mark.slow
def test_sam_compiles_for_cuda_without_a_gpu():
    """PTX for sm_90 of the SAM kernel: IEEE sqrt/div, and no fma besides the two explicit ones."""
    _compile_in_subprocess(_SAM_PTX_SCRIPT)


@pytest.mark.parametrize(("w0", "lr", "rho", "mom"), [
    ([0.3, -1e-3], torch.logspace(-2, 4, 5)[:, None], torch.tensor([0.0, 0.2, 1.0]), 0.9),  # one start
    (torch.tensor([[0.1, 0.1]]), 0.05, 0.3, 0.0),  # a single cell
    (SAM_W0[:, None, :], torch.tensor([1e-2, 1e3]), torch.tensor([0.1, 2.0]), torch.tensor([0.0, 0.5])),
])
def test_sam_broadcast_shapes(w0, lr, rho, mom, monkeypatch):
    """Scalar / 1-cell / fully broadcast arguments reach the kernel as the reference broadcasts them."""
    kw = dict(normalized=False, momentum=mom, threshold=0.0, tail=2, dtype=torch.float64, device=DEVICE)
    monkeypatch.setattr(sam_dyn, "_fused_sam", lambda *_a: None)  # the torch reference, also on CUDA
    ref = sam_dyn.sam_sweep(w0, lr, rho, 30, **kw)
    fn = kernels.sam_sweep_kernel()
    s = sam_dyn._setup(w0, lr, rho, mom, None, None, torch.float64, DEVICE, False)
    fused = fn(s.w0.expand(*s.cells, 2), s.rho[..., 0], s.lr[..., 0],
               None if s.momentum is None else s.momentum[..., 0], 30, lam=(2.0, -2.0), normalized=False,
               threshold=0.0, tail=2)
    assert fused.final_w.shape == (*ref.final_loss.shape, 2)
    if DEVICE == "cpu":
        _sam_same(ref, fused)
    else:  # pragma: no cover - GPU runs only
        _sam_amplified(ref, fused)
