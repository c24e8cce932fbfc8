"""SAM at saddles (Kim et al. 2026): closed forms vs numerics, reference numbers, validation, batching, widget."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from theorybook.sam_saddle import (
    BEALE_MINIMUM,
    BEALE_SADDLE,
    ascent_flip_share,
    attractor_threshold,
    beale,
    beale_grad,
    beale_sam,
    corollary1_gap,
    discrete_variance,
    escape_step_prediction,
    escape_steps,
    growth_factor,
    monte_carlo_msd,
    saddle_quadratic,
    saddle_quadratic_grad,
    sam_update,
    sam_variance,
    seeded_verdicts,
    simulate_sam,
    theory,
)
from theorybook.sam_saddle import experiments as ex
from theorybook.sam_saddle.dynamics import SAMState
from theorybook.sam_saddle.widgets import explore_compute, linear_growth

f64 = torch.float64
QUAD = saddle_quadratic_grad((2.0, -2.0))

# ---------------------------------------------------------------- known answers (one table)
KNOWN = [
    # (function, args, kwargs, expected, rel tol)
    (attractor_threshold, (-2.0,), {}, 0.5, 0.0),
    (attractor_threshold, (-27.75,), {}, 4 / 111, 1e-15),
    (growth_factor, (-2.0, 0.5, 0.01), {}, 1.0, 0.0),  # exactly at the threshold: neutral
    (growth_factor, (-2.0, 0.0, 0.01), {}, 1.02, 1e-15),
    (growth_factor, (-2.0, 1.0, 0.01), {}, 0.98, 1e-15),
    (growth_factor, (-2.0, 1.0, 0.01), {"drift": "full"}, 1 + 0.02, 1e-15),  # (1 − 2)² = 1
    (sam_variance, (1e9, 2.0, 0.0, 0.1, 4.0), {}, 0.1 * 2 / (2 * 4 * 2), 1e-12),  # stationary η|λ|/(2Ba)
    (sam_variance, (0.5, -1.0, 1.0, 0.1, 2.0), {}, 0.1 * 1 / 2 * 0.5, 1e-15),  # a = 0: D t
    (corollary1_gap, (0.1, -2.0, 0.3, 0.01, 8.0), {}, 2 * 0.01 * 0.01 * 8 * 0.3 / 8, 1e-12),
    (corollary1_gap, (0.1, -2.0, 0.3, 0.01, 8.0), {"drift": "linear"}, 0.01 * 0.01 * 8 * 0.3 / 8, 1e-12),
]


@pytest.mark.parametrize("fn, args, kwargs, expected, rtol", KNOWN)
def test_known_values(fn, args, kwargs, expected, rtol):
    assert float(fn(*args, **kwargs)) == pytest.approx(expected, rel=rtol, abs=1e-300)


def test_beale_reference_numbers():
    w = torch.tensor([[3.0, 0.5], [0.0, 1.0], [1.0, 2.0]], dtype=f64)
    f = beale(w)
    assert f[0] == 0.0 and f[1] == 909 / 64
    assert f[2] == pytest.approx((1.5 - 1 + 2) ** 2 + (2.25 - 1 + 4) ** 2 + (2.625 - 1 + 8) ** 2, rel=1e-15)
    assert torch.equal(beale_grad(w[:2]), torch.zeros(2, 2, dtype=f64))


def test_beale_grad_matches_autograd():
    w = (torch.randn(7, 3, 2, dtype=f64, generator=torch.Generator().manual_seed(0)) * 1.5).requires_grad_()
    (g,) = torch.autograd.grad(beale(w).sum(), w)
    torch.testing.assert_close(beale_grad(w.detach()), g, rtol=1e-12, atol=1e-10)


def test_beale_critical_points():
    crit = theory.beale_critical_points()
    kinds = sorted(c.kind for c in crit)
    assert kinds == ["minimum", "saddle", "saddle"]
    saddle = next(c for c in crit if abs(c.x) < 1e-12)
    assert saddle.y == pytest.approx(1.0) and saddle.eigenvalues == pytest.approx((-27.75, 27.75), rel=1e-12)
    minimum = next(c for c in crit if c.kind == "minimum")
    assert (minimum.x, minimum.y) == pytest.approx((3.0, 0.5)) and minimum.eigenvalues[0] == pytest.approx(
        0.30146, rel=1e-4)


def test_derivations():
    lin = theory.derive_linearised_map()
    lam, rho, eta = sp.symbols("lambda rho eta", real=True)
    assert sp.simplify(lin.factor_linear - (1 - eta * lam * (1 + rho * lam))) == 0
    assert sp.simplify(lin.threshold + 1 / lam) == 0 and lin.attracts_above
    assert theory.derive_ou_variance().matches_theorem2_full
    full, linear = theory.derive_corollary1("full"), theory.derive_corollary1("linear")
    assert sp.expand(full.ratio - (2 + full.rho * full.lam)) == 0 and linear.ratio == 1
    assert theory.derive_theorem3_reduction()


# ---------------------------------------------------------------- dynamics vs closed forms
@pytest.mark.parametrize("rho", [0.0, 0.3, 0.49, 0.51, 0.7])
def test_unnormalised_quadratic_is_the_linear_map(rho):
    tr = simulate_sam(QUAD, torch.tensor([-3.0, -0.01], dtype=f64), 0.01, rho, 50, normalized=False)
    k = torch.arange(51, dtype=f64)
    ly, lx = growth_factor(-2.0, rho, 0.01), growth_factor(2.0, rho, 0.01)
    torch.testing.assert_close(tr.w[:, 1], -0.01 * ly**k, rtol=1e-12, atol=0)
    torch.testing.assert_close(tr.w[:, 0], -3.0 * lx**k, rtol=1e-12, atol=0)


def test_normalised_demo_reference():
    tr = simulate_sam(QUAD, torch.tensor([-3.0, -0.01], dtype=f64), 0.01, torch.tensor([0.0, 0.5]), 500)
    assert float(tr.final[0, 1]) == pytest.approx(-0.01 * 1.02**500, rel=1e-12)
    assert float(tr.final[1].norm()) < 1e-2  # captured (digest: (−5.1e−3, −6.7e−11))
    assert float(tr.final[1, 0]) == pytest.approx(-5.05e-3, rel=1e-2)


def test_beale_capture_short_run():
    tr = simulate_sam(beale_grad, torch.tensor([1.0, 2.0], dtype=f64), 1.25e-5,
                      torch.tensor([0.0, 0.5, 1.0], dtype=f64), 3000, every=100)
    d = tr.distance(BEALE_SADDLE)[-1]
    assert float(d[1:].max()) < 1e-3 and float(d[0]) > 0.5


def test_batched_equals_single():
    w0 = torch.tensor([[-3.0, -0.01], [1.0, 0.5]], dtype=f64).reshape(2, 1, 2)
    rhos = torch.tensor([0.0, 0.4, 0.8], dtype=f64)
    mom = torch.tensor([0.0, 0.5, 0.9], dtype=f64)
    batch = simulate_sam(QUAD, w0, 0.02, rhos, 40, momentum=mom)
    assert batch.w.shape == (41, 2, 3, 2)
    for i in range(2):
        for j in range(3):
            one = simulate_sam(QUAD, w0[i, 0], 0.02, float(rhos[j]), 40, momentum=float(mom[j]))
            torch.testing.assert_close(batch.w[:, i, j], one.w, rtol=0, atol=0)
            torch.testing.assert_close(batch.cos[:, i, j], one.cos, rtol=0, atol=0)


def test_momentum_matches_heavy_ball_reference():
    """Heavy ball in torch.optim.SGD's convention (b ← γb + g, w ← w − ηb), plain-float SAM reference."""
    gamma, lr, rho = 0.9, 1e-3, 0.05
    ours = simulate_sam(beale_grad, torch.tensor([0.7, -0.2], dtype=f64), lr, rho, 20, momentum=gamma)
    w, b = [0.7, -0.2], [0.0, 0.0]
    for t in range(20):
        g = beale_grad(torch.tensor(w, dtype=f64)).tolist()
        n = math.hypot(*g) + 1e-16
        gp = beale_grad(torch.tensor([w[0] + rho * g[0] / n, w[1] + rho * g[1] / n], dtype=f64)).tolist()
        b = [gamma * b[i] + gp[i] for i in range(2)]
        w = [w[i] - lr * b[i] for i in range(2)]
        torch.testing.assert_close(ours.w[t + 1], torch.tensor(w, dtype=f64), rtol=1e-13, atol=1e-13)


def test_sam_update_normalised_at_exact_saddle_is_defined():
    w = torch.zeros(1, 2, dtype=f64)
    s = sam_update(SAMState(w, w, w, torch.ones(1, dtype=f64)), QUAD, 0.1, 0.5, None, normalized=True)
    assert torch.equal(s.w, w) and bool(torch.isfinite(s.cos).all())


def test_seeded_noise_is_deterministic_and_shared():
    w0 = torch.zeros(4, 1, 2, dtype=f64)
    a = simulate_sam(QUAD, w0, 0.01, torch.tensor([0.0, 0.3]), 30, normalized=False, noise=0.5, seed=3)
    b = simulate_sam(QUAD, w0, 0.01, torch.tensor([0.0, 0.3]), 30, normalized=False, noise=0.5, seed=3)
    assert torch.equal(a.w, b.w)
    assert not torch.equal(a.w[:, 0], a.w[:, 1])  # paths differ
    # common random numbers: the first step is −η σ ξ₀ for every ρ (w₀ = 0)
    torch.testing.assert_close(a.w[1, :, 0], a.w[1, :, 1], rtol=0, atol=0)


def test_monte_carlo_variance_matches_linear_drift():
    mc = monte_carlo_msd((1.0, -1.0), [0.0, 0.5], 0.01, [1.0], 100, 600, seed=2, every=100)
    for i, rho in enumerate((0.0, 0.5)):
        for j, lam in enumerate((1.0, -1.0)):
            pred = float(sam_variance(1.0, lam, rho, 0.01, 1.0))
            z = (float(mc.msd[-1, i, 0, j]) - pred) / float(mc.se[-1, i, 0, j])
            assert abs(z) < 4.0, (rho, lam, z)


def test_discrete_variance_approaches_sde():
    for lr in (1e-2, 1e-3):
        k = round(1.0 / lr)
        rel = float(discrete_variance(k, -1.0, 0.5, lr, 1.0) / sam_variance(1.0, -1.0, 0.5, lr, 1.0)) - 1
        assert abs(rel) < 2 * lr


def test_escape_steps_and_prediction():
    g = saddle_quadratic_grad((1.0, -1.0))
    k = escape_steps(g, torch.zeros(128, 1, 2, dtype=f64), 0.02, 0.5, 1000, 1.0,
                     momentum=torch.tensor([0.0, 0.5], dtype=f64), noise=1.0, seed=0)
    assert bool((k > 0).all())
    med = k.to(f64).median(0).values
    pred = escape_step_prediction(-1.0, 0.5, 0.02, 1.0, torch.tensor([0.0, 0.5], dtype=f64), 1.0, 1000)
    assert float(med[1]) < float(med[0])
    assert torch.allclose(med, pred, rtol=0.1)
    # past the threshold the saddle attracts: no exponential escape is predicted
    assert float(escape_step_prediction(-1.0, 1.5, 0.02, 1.0, 0.0, 1.0, 500)) == -1.0


def test_saddle_quadratic_values():
    w = torch.tensor([[1.0, 2.0], [3.0, 0.0]], dtype=f64)
    torch.testing.assert_close(saddle_quadratic(w), torch.tensor([-3.0, 9.0], dtype=f64))
    torch.testing.assert_close(QUAD(w), torch.tensor([[2.0, -4.0], [6.0, 0.0]], dtype=f64))


# ---------------------------------------------------------------- validation
BAD = [
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, -0.1, 5), "rho"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.0, 0.1, 5), "lr"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, 5, momentum=1.0), "momentum"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, -1), "steps"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, 5, every=2), "every"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, 5, noise=-1.0), "noise"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, 5, seed=-2), "seed"),
    (lambda: simulate_sam("grad", [1.0, 1.0], 0.1, 0.1, 5), "grad_fn"),
    (lambda: simulate_sam(QUAD, [[1.0, 1.0]] * 3, 0.1, [0.1, 0.2], 5), "shapes"),
    (lambda: attractor_threshold(0.0), "lambda_min"),
    (lambda: attractor_threshold(2.0), "lambda_min"),
    (lambda: sam_variance(1.0, -1.0, -0.5, 0.1, 1), "rho"),
    (lambda: sam_variance(1.0, -1.0, 0.5, 0.0, 1), "lr"),
    (lambda: sam_variance(1.0, -1.0, 0.5, 0.1, 0), "batch"),
    (lambda: sam_variance(-1.0, -1.0, 0.5, 0.1, 1), "t"),
    (lambda: sam_variance(1.0, -1.0, 0.5, 0.1, 1, drift="square"), "drift"),
    (lambda: beale(torch.zeros(3)), "w"),
    (lambda: saddle_quadratic(torch.zeros(2, 3)), "lam"),
    (lambda: escape_steps(QUAD, [0.0, 0.0], 0.1, 0.1, 5, 0.0), "radius"),
    (lambda: simulate_sam(QUAD, [float("nan"), 1.0], 0.1, 0.1, 5), "w0"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], True, 0.1, 5), "lr"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, 5, normalized=1), "normalized"),
    (lambda: simulate_sam(QUAD, [1.0, 1.0], 0.1, 0.1, 10**9), "steps"),
    (lambda: beale([float("inf"), 1.0]), "w"),
    (lambda: beale("1, 2"), "w"),
    (lambda: beale_grad([True, False]), "w"),
    (lambda: saddle_quadratic([1.0, float("nan")]), "w"),
    (lambda: saddle_quadratic_grad([1.0, float("nan")]), "lam"),
    (lambda: beale_sam([1.0, 2.0], float("nan"), 0.1, 10), "lr"),
    (lambda: beale_sam([1.0, 2.0], 1e-3, [0.1, -0.1], 10), "rho"),
    (lambda: beale_sam([1.0, 2.0], 1e-3, 0.1, 10, momentum=1.0), "momentum"),
    (lambda: monte_carlo_msd((1.0, -1.0), [0.0], 0.01, [0.0], 10, 10), "batch"),
    (lambda: monte_carlo_msd((1.0, -1.0), [0.0], 0.01, [1.0], 10, 1), "n_paths"),
    (lambda: sam_variance(1e4, -1.0, 0.0, 0.1, 1.0), "arguments"),  # exp(2·10⁴) overflows: refused
    (lambda: attractor_threshold(-1e-320), "lambda_min"),
    (lambda: escape_step_prediction(-1.0, 0.5, 0.01, 1.0, 0.0, 1.0, 10**9), "steps"),
    (lambda: ascent_flip_share("traj"), "traj"),
    (lambda: explore_compute(steps=0), "steps"),
    (lambda: seeded_verdicts(-1), "seed"),
]


@pytest.mark.parametrize("call, name", BAD)
def test_bad_arguments_raise(call, name):
    with pytest.raises((ValueError, TypeError), match=f"Invalid {name}"):
        call()


@settings(max_examples=25, deadline=None)
@given(lam=st.floats(-1e3, -1e-3), rho=st.floats(0, 10))
def test_threshold_separates_escape_and_capture(lam, rho):
    """The escape-direction drift λ(1+ρλ) is negative (escape) iff ρ < −1/λ."""
    a = float(theory.drift_rate(lam, rho))
    rs = attractor_threshold(lam)
    if abs(rho - rs) > 1e-9 * max(1.0, rs):
        assert (a < 0) == (rho < rs)


@settings(max_examples=25, deadline=None)
@given(t=st.floats(0, 50), lam=st.floats(-5, 5), rho=st.floats(0, 3), b=st.integers(1, 512))
def test_variance_is_finite_and_nonnegative(t, lam, rho, b):
    v = float(sam_variance(t, lam, rho, 0.01, b))
    assert math.isfinite(v) or (lam * (1 + rho * lam) < 0 and t > 0)
    assert not v < 0


# ---------------------------------------------------------------- widget
@pytest.mark.parametrize("kw", [
    {},
    {"rho": 0.0, "lr": 1.0, "normalized": False, "momentum": 0.95, "x0": 4.0, "y0": 1.0},
    {"rho": 2.0, "lr": 1.0, "normalized": False, "momentum": 0.95, "x0": -4.0, "y0": -1.0},
    {"rho": 2.0, "lr": 1e-3, "normalized": True, "momentum": 0.0, "x0": 0.0, "y0": 0.0},
    {"rho": 0.0, "lr": 1e-3, "normalized": True, "momentum": 0.0, "x0": 0.0, "y0": 0.0},
    {"rho": 0.6, "lr": 0.01, "normalized": False},
])
def test_widget_compute_never_raises(kw):
    res = explore_compute(**kw)
    assert isinstance(res.status, str) and res.path.ndim == 2 and np.isfinite(res.path).all()


def test_widget_default_is_captured_and_extreme_diverges():
    assert explore_compute().measured == "captured"
    assert explore_compute(rho=0.0, lr=1.0, normalized=False, momentum=0.95, x0=4.0, y0=1.0).measured == "diverged"


@pytest.mark.parametrize("rho", [0.1, 0.28, 0.35, 0.45, 0.49])
def test_widget_unnormalised_below_threshold_is_escaping(rho):
    """Below ρ* = 0.5 |y| grows even where ‖w‖ shrinks (x contracts faster): the label follows |y|."""
    res = explore_compute(rho=rho, normalized=False, steps=500)
    assert res.measured == res.predicted == "escaping", res.status
    assert "agrees" in res.status
    assert res.abs_y[-1] > res.abs_y[250]


@pytest.mark.parametrize("rho", [0.55, 0.8, 1.5])
def test_widget_unnormalised_above_threshold_is_captured(rho):
    res = explore_compute(rho=rho, normalized=False, steps=500)
    assert res.measured == res.predicted == "captured", res.status
    np.testing.assert_allclose(res.abs_y, res.theory_y, rtol=1e-10)  # the overlay is exact on a quadratic


@pytest.mark.parametrize("name, lo, hi", [("rho", 0.0, 2.0), ("lr", 1e-3, 1.0), ("momentum", 0.0, 0.95),
                                          ("x0", -4.0, 4.0), ("y0", -1.0, 1.0), ("steps", 100, 2000),
                                          ("normalized", False, True)])
def test_widget_every_slider_extreme(name, lo, hi):
    for value in (lo, hi):
        for normalized in (False, True):
            kw = {"normalized": normalized, name: value}
            res = explore_compute(**kw)
            assert res.measured in ("escaping", "captured", "neutral", "diverged") and res.status


def test_widget_panel_builds():
    pytest.importorskip("ipywidgets")
    from theorybook.sam_saddle.widgets import explorer

    box = explorer()
    assert box.children


def test_linear_growth_matches_growth_factor_without_momentum():
    for rho in (0.0, 0.3, 0.7):
        assert linear_growth(-2.0, rho, 0.01, 0.0) == pytest.approx(abs(float(growth_factor(-2.0, rho, 0.01))))


# ---------------------------------------------------------------- validation policy (issue 14)
def test_beale_promotes_integer_input():
    assert float(beale(torch.tensor([0, 1]))) == 909 / 64  # int tensor: not truncated to 9
    assert float(beale(np.array([0, 1]))) == 909 / 64
    assert float(beale([1, 2])) == pytest.approx((1.5 - 1 + 2) ** 2 + (2.25 - 1 + 4) ** 2 + (2.625 - 1 + 8) ** 2)
    torch.testing.assert_close(beale_grad(torch.tensor([0, 1])), torch.zeros(2, dtype=f64))


def test_saddle_quadratic_accepts_lists():
    assert float(saddle_quadratic([1.0, 2.0])) == -3.0
    assert float(saddle_quadratic([[1, 2]], lam=[2, -2])[0]) == -3.0


def test_memory_guard(monkeypatch):
    with pytest.raises(ValueError, match="lower"):
        simulate_sam(QUAD, torch.zeros(10**6, 2, dtype=f64), 0.1, 0.1, 1000)
    monkeypatch.setenv("THEORYBOOK_MAX_BYTES", "1000")
    with pytest.raises(ValueError, match="lower"):
        monte_carlo_msd((1.0, -1.0), [0.0], 0.01, [1.0], 100, 100)
    with pytest.raises(ValueError, match="lower"):
        beale_sam([1.0, 2.0], 1e-3, 0.1, 1000)


def test_numpy_and_tensor_scalars_are_numbers():
    a = simulate_sam(QUAD, [-3.0, -0.01], np.float64(0.01), torch.tensor(0.3, dtype=f64), np.int64(20))
    b = simulate_sam(QUAD, [-3.0, -0.01], 0.01, 0.3, 20)
    assert torch.equal(a.w, b.w)


# ---------------------------------------------------------------- fast paths vs the reference
def test_beale_fast_path_matches_torch_reference():
    rho = [0.0, 0.1, 0.5, 1.0]
    ref = simulate_sam(beale_grad, torch.tensor([1.0, 2.0], dtype=f64), 1.25e-5, torch.tensor(rho, dtype=f64), 400)
    fast = beale_sam([1.0, 2.0], 1.25e-5, rho, 400)
    torch.testing.assert_close(fast.w, ref.w, rtol=0, atol=1e-12)
    torch.testing.assert_close(fast.wp, ref.wp, rtol=0, atol=1e-12)
    torch.testing.assert_close(fast.cos, ref.cos, rtol=0, atol=1e-12)
    mom = beale_sam([0.7, -0.2], 1e-3, 0.05, 20, momentum=0.9)
    ref_m = simulate_sam(beale_grad, torch.tensor([0.7, -0.2], dtype=f64), 1e-3, 0.05, 20, momentum=0.9)
    torch.testing.assert_close(mom.w, ref_m.w, rtol=0, atol=1e-12)
    sparse = beale_sam([1.0, 2.0], 1.25e-5, rho, 400, every=100)
    torch.testing.assert_close(sparse.w, fast.w[::100], rtol=0, atol=0)
    torch.testing.assert_close(sparse.cos, fast.cos[::100], rtol=0, atol=0)


def test_monte_carlo_is_simulate_sam_with_independent_batch_noise():
    lam, rho, batch = (1.0, -1.0), torch.tensor([0.0, 0.5], dtype=f64), torch.tensor([1.0, 8.0], dtype=f64)
    mc = monte_carlo_msd(lam, rho, 0.01, batch, 20, 16, seed=4)
    noise = torch.sqrt(torch.tensor([1.0, 1.0], dtype=f64) / batch.reshape(-1, 1))
    tr = simulate_sam(saddle_quadratic_grad(lam), torch.zeros(16, 1, 2, 2, dtype=f64), 0.01, rho.reshape(-1, 1),
                      20, normalized=False, noise=noise, seed=4)
    torch.testing.assert_close(mc.w, tr.w, rtol=0, atol=0)
    # independent noise across B: the B = 8 paths are not the B = 1 paths divided by √8
    ratio = mc.w[-1, :, 0, 1] / mc.w[-1, :, 0, 0]
    assert float((ratio - 1 / math.sqrt(8)).abs().max()) > 0.1


def test_ascent_flips_robust_to_tiny_start_changes():
    """The flip share of a trapped run is chaotic (a 1e-15 change moves it by a few %); the chapter's verdict
    threshold ½ is far from that spread, and an escaping run never flips."""
    for eps in (0.0, 1e-15, -1e-15):
        tr = beale_sam([1.0 + eps, 2.0], 1.25e-5, [0.1, 0.5, 1.0], 30_000)
        share = ascent_flip_share(tr, 15_000)
        assert float(share[0]) < 0.01 and float(share[1:].min()) > 0.8, (eps, share)


def test_beale_threshold_scan_brackets_theorem1():
    scan = ex.beale_threshold_scan()
    assert abs(scan.measured - 4 / 111) <= scan.spacing
    assert bool(scan.escaped[0]) and not bool(scan.escaped[-1])


def test_stochastic_rows_hold_for_the_chapter_seed():
    v = seeded_verdicts(ex.CHAPTER_SEEDS[0])
    assert v.passed, [r.claim for r in v.failures]
    kinds = {r.kind for r in v.rows}
    assert kinds == {"reproduces", "not_specific", "differs", "consistency"}
    assert all(r.controls and not any(c["passes"] for c in r.controls) for r in v.rows if r.kind == "reproduces")
    # Theorem 3's excess-shrinking row: the slower SGD passes too (holds, not specific); the SGD-vs-SGD null fails
    (thm3,) = [r for r in v.rows if r.kind == "not_specific"]
    assert [c["passes"] for c in thm3.controls] == [True, False]


def test_theorem2_excess_separates_the_drifts():
    """The Theorem-2 statistic depends on the prediction: the algorithm's drift passes, the printed one fails."""
    from theorybook.check import z_threshold
    from theorybook.sam_saddle import stochastic_run, theorem2_excess

    run = stochastic_run(ex.CHAPTER_SEEDS[0])
    z = z_threshold(1e-3, run.mc.msd[1:].numel())
    assert theorem2_excess(run, run.pred) < z < theorem2_excess(run, run.pred_full)
    with pytest.raises(TypeError, match="run"):
        theorem2_excess("run", run.pred)
    with pytest.raises(ValueError, match="pred"):
        theorem2_excess(run, run.pred[:3])


def test_threshold_scan_control_moves_with_lambda():
    """2·Beale halves λ₁'s threshold: the scan follows Theorem 1's dependence on the curvature."""
    scan = ex.beale_threshold_scan(scale=2.0)
    assert abs(scan.measured - 2 / 111) <= scan.spacing
    assert abs(scan.measured - 4 / 111) > ex.beale_threshold_scan().spacing
    with pytest.raises(ValueError, match="scale"):
        ex.beale_threshold_scan(scale=0.0)


# ---------------------------------------------------------------- the digits proxy of the CIFAR claim (quoted)
def test_digits_data_split_and_standardisation():
    from theorybook.sam_saddle.proxy import DIGITS_TRAIN, digits_data

    d = digits_data()
    assert d.x_train.shape == (DIGITS_TRAIN, 64) and d.x_test.shape == (1797 - DIGITS_TRAIN, 64)
    assert d.y_train.shape == (DIGITS_TRAIN,) and set(d.y_train.tolist()) == set(range(10))
    assert d.x_train.dtype == torch.float32
    assert float(d.x_train.mean(0).abs().max()) < 1e-5  # standardised with the training set's statistics
    torch.testing.assert_close(digits_data().x_test, d.x_test, rtol=0, atol=0)  # a fixed split
    with pytest.raises(ValueError, match="dtype"):
        digits_data(dtype=torch.int64)


def test_train_digits_mlp_shapes_pairing_and_validation():
    from theorybook.sam_saddle.proxy import train_digits_mlp

    r = train_digits_mlp([0.1, 0.3], [[0.0], [0.9]], 0.0, batch=64, seed=3, steps=5, hidden=8)
    assert r.train_loss.shape == r.train_acc.shape == r.test_acc.shape == r.lr.shape == (4,)
    assert r.lr.tolist() == pytest.approx([0.1, 0.3, 0.1, 0.3])
    assert r.momentum.tolist() == pytest.approx([0.0, 0.0, 0.9, 0.9])
    assert bool(((r.train_acc >= 0) & (r.train_acc <= 1)).all())
    again = train_digits_mlp([0.1, 0.3], [[0.0], [0.9]], 0.0, batch=64, seed=3, steps=5, hidden=8)
    torch.testing.assert_close(again.train_loss, r.train_loss, rtol=0, atol=0)  # seeded
    one = train_digits_mlp(0.3, 0.9, 0.0, batch=64, seed=3, steps=5, hidden=8)  # same init and batches per config
    torch.testing.assert_close(one.train_loss[0], r.train_loss[3], rtol=1e-5, atol=1e-6)
    start = train_digits_mlp(0.1, 0.0, 0.0, batch=10_000, seed=3, steps=0, hidden=8)
    assert start.batch == 1200 and float(start.train_loss) == pytest.approx(math.log(10), abs=0.1)
    trained = train_digits_mlp(1.0, 0.0, 0.1, batch=10_000, seed=3, steps=30, hidden=8)
    assert float(trained.train_loss) < 0.5 * float(start.train_loss)
    assert float(train_digits_mlp(1e3, 0.9, 0.0, batch=64, seed=3, steps=20, hidden=8).train_loss) == math.inf
    for kw, match in (({"lr": 0.0}, "lr"), ({"momentum": 1.0}, "momentum"), ({"rho": -0.1}, "rho"),
                      ({"batch": 0}, "batch"), ({"seed": True}, "seed"), ({"init_scale": 0.0}, "init_scale"),
                      ({"lr": [0.1, 0.2], "momentum": [0.0, 0.5, 0.9]}, "broadcast")):
        args = {"lr": 0.1, "momentum": 0.0, "rho": 0.0, "batch": 64, "seed": 0, "steps": 1, "hidden": 4} | kw
        with pytest.raises((ValueError, TypeError), match=match):
            train_digits_mlp(args.pop("lr"), args.pop("momentum"), args.pop("rho"), **args)


def test_tune_lr_picks_the_grid_point_of_least_median_loss():
    from theorybook.sam_saddle.proxy import tune_lr

    best, losses = tune_lr(0.0, 0.1, batch=10_000, seeds=[9001, 9002], grid=[0.01, 1.0], steps=20)
    assert losses.shape == (2, 2) and best == 1.0 and bool((losses[:, 1] < losses[:, 0]).all())
    with pytest.raises(ValueError, match="seeds"):
        tune_lr(0.0, 0.1, batch=64, seeds=[])
    with pytest.raises(ValueError, match="grid"):
        tune_lr(0.0, 0.1, batch=64, seeds=[9001], grid=[0.1, -1.0])


def test_pilot_tuned_lr_of_the_chapter_proxy_arm():
    """The chapter's "SAM, γ = 0, its tuned η" arm (full batch, ρ = 0.1, weights × 0.01): the grid point the pilot
    picked, re-found on one pilot seed over the top of the grid (the smaller steps stall or lag)."""
    from theorybook.sam_saddle.proxy import DIGITS_TRAIN, PILOT_LR_SAM0_SADDLE_START, tune_lr

    best, losses = tune_lr(0.0, 0.1, batch=DIGITS_TRAIN, seeds=[9001], grid=[0.3, 1.0, 3.0, 10.0], init_scale=0.01)
    assert best == PILOT_LR_SAM0_SADDLE_START == 3.0
    assert float(losses[0, 0]) > 2.0 and float(losses[0, 3]) == math.inf  # η = 0.3 stalls at ln 10; η = 10 diverges


def test_expanded_objective_scan_is_captured_on_the_grid():
    """The threshold row's control: GD on f + ρ‖∇f‖² (threshold 2/111) is captured at every ρ of the 4/111 grid,
    so it shows no switch there and fails the row's test."""
    s = ex.beale_expanded_threshold_scan()
    assert s.rho.shape == (25,) and not bool(s.escaped.any()) and s.measured == math.inf


def test_slow_sgd_arm_shares_noise_and_is_slower():
    """The Theorem 3 row's slower-SGD control: SGD at η/ESC_SLOW_SGD on the same noise escapes later than SGD
    and, at γ = 0, about as late as SAM (the pilot's matching rule)."""
    run = ex.stochastic_run(9001)
    assert run.esc_sgd_slow.shape == run.esc.shape
    med_slow, med_sgd = run.esc_sgd_slow.median(0).values, run.esc_sgd.median(0).values
    assert bool((med_slow > med_sgd).all())
    assert abs(float(torch.log(run.esc_median[0] / med_slow[0]).mean())) < 0.1


def test_random_ascent_ablation_fails_the_comparative_rows():
    """The sceptic's ablation (SAM's ascent along a random direction of the same length ρ‖∇ℓ‖) escapes like SGD and
    keeps SGD's variance: it fails the escape and Corollary-1 gap rows, which stay 'reproduces' at the chapter seed."""
    run = ex.random_ascent_run(3)
    assert run.esc.shape == (ex.ESC_PATHS, len(ex.ESC_GAMMA), len(ex.ESC_BATCH))
    assert run.w2.shape == (ex.MC_PATHS, len(ex.MC_RHO) - 1, len(ex.MC_BATCH))
    assert bool((run.esc <= ex.ESC_STEPS + 1).all()) and bool((run.w2 >= 0).all())
    v = seeded_verdicts(ex.CHAPTER_SEEDS[0])
    rows = [r for r in v.rows if r.kind == "reproduces"]
    abl = [c for r in rows for c in r.controls if c["label"].startswith("SAM with its ascent along a random")]
    assert len(abl) == 2 and not any(c["passes"] for c in abl)
    assert all(float(c["measured"]) < 3.0 for c in abl)


def test_case3_control_near_the_minimum_fails_both_case3_tests():
    """The Case III control (SAM with the stuck runs' ρ = 0.5, 1, official step and 10⁵ steps, started within the
    official stop radius of the minimum): its cosine does not swing below −0.9 and above 0.9, and its ascent flips
    on fewer than half the steps of the second half — both Case III rows' tests fail on it."""
    start = ex.BEALE_NEAR_MIN_START
    assert math.isclose(math.dist(start, BEALE_MINIMUM), ex.BEALE_STOP_RADIUS, rel_tol=1e-12)
    ray = [(a - m) / (s - m) for a, m, s in zip(start, BEALE_MINIMUM, ex.BEALE_START, strict=True)]
    assert math.isclose(ray[0], ray[1], rel_tol=1e-12) and ray[0] > 0  # on the ray to the official start
    tr = ex.beale_near_minimum_run()
    half = tr.cos.shape[0] // 2
    late = tr.cos[half:]
    assert tr.cos.shape == (ex.BEALE_STEPS, 2)
    swing = (late.min(0).values < -0.9) & (late.max(0).values > 0.9)
    assert not bool(swing.any()), (late.min(0).values, late.max(0).values)
    assert float(ascent_flip_share(tr, half).max()) < 0.5
    assert float(tr.distance(BEALE_MINIMUM)[-1].max()) < ex.BEALE_STOP_RADIUS  # it stays by the minimum


def test_case3_control_does_not_depend_on_its_start():
    """Sceptic review: the near-minimum control is not chosen to fail by its start. Started 10⁻³ from the minimum on
    the same ray (the stuck runs sit within 10⁻³ of the saddle), SAM with ρ = 0.5, 1 has the same second half as
    from the stop radius: the cosine stays positive and the ascent never flips."""
    d = math.dist(ex.BEALE_START, BEALE_MINIMUM)
    start = tuple(m + 1e-3 * (s - m) / d for s, m in zip(ex.BEALE_START, BEALE_MINIMUM, strict=True))
    tr = beale_sam(start, ex.BEALE_LR, ex.BEALE_RHOS[2:], ex.BEALE_STEPS)
    half = tr.cos.shape[0] // 2
    far = ex.beale_near_minimum_run()
    torch.testing.assert_close(tr.cos[half:].min(0).values, far.cos[half:].min(0).values, rtol=0, atol=1e-3)
    assert float(tr.cos[half:].min()) > 0.0 and float(ascent_flip_share(tr, half).max()) == 0.0
