"""Adam on x^k/k (Bai et al. 2026): closed forms vs numerics, reference numbers, validation, parity."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from theorybook.adam_degenerate import (
    adam_reference,
    existence_boundary,
    fixed_point,
    flip_boundary,
    gradient_flow_hitting_time,
    linear_rate,
    log_loss_slope,
    measured_rate,
    phase_diagram,
    regime,
    rmsprop_threshold,
    simulate_adam,
    stability_boundary,
    steps_to_reach,
    theory,
)
from theorybook.adam_degenerate.widgets import render, summarize

# ---------------------------------------------------------------- known answers (one table)
KNOWN = [
    # (function, args, expected, rel tol)
    (linear_rate, (4, 0.93), 0.982021, 1e-6),
    (linear_rate, (4, 0.9), 0.974004, 1e-6),
    (linear_rate, (4, 0.99), 0.997491, 1e-6),
    (linear_rate, (4, 0.999), 0.999750, 1e-6),
    (log_loss_slope, (4, 0.93), -0.072571, 1e-5),
    (log_loss_slope, (6, 0.93), -0.054428, 1e-5),
    (rmsprop_threshold, (4,), 0.0625, 1e-15),
    (rmsprop_threshold, (6,), (4 / 6) ** 8, 1e-15),
    (stability_boundary, (4, 0.5), 0.5, 1e-15),  # k = 4: beta1 < beta2
    (stability_boundary, (6, 0.5), 0.5**0.75, 1e-15),
    (existence_boundary, (4, 0.25), 0.25**0.75, 1e-15),
    (theory.adam_steps_per_decade, (4, 0.93), 55.119, 1e-4),  # the digest's "27.56" is half this
]


@pytest.mark.parametrize("fn,args,expected,rtol", KNOWN, ids=lambda a: getattr(a, "__name__", None))
def test_known_values(fn, args, expected, rtol):
    assert fn(*args) == pytest.approx(expected, rel=rtol)


# Fixed point: digest's [derived] table, eta = 1e-3
FIXED = [
    ((4, 0.9, 0.93), dict(r=0.982021, omega=2.01381, lam=8.9279, trace=1.96592, det=0.96774,
                          spectral_radius=0.98374)),
    ((4, 0.9, 0.91), dict(r=0.976698, omega=2.93817, lam=7.9308, trace=1.98739, det=0.98901,
                          spectral_radius=0.99449)),
    ((4, 0.0, 0.93), dict(r=0.982021, omega=1.0, lam=17.979, trace=0.96338, det=0.0, spectral_radius=0.96338)),
]


@pytest.mark.parametrize("args,expected", FIXED)
def test_fixed_point_table(args, expected):
    fp = fixed_point(*args, 1e-3)
    for name, value in expected.items():
        assert getattr(fp, name) == pytest.approx(value, rel=2e-5, abs=1e-12), name


def test_fixed_point_matches_simulation():
    """The simulated (omega_t, lambda_t) settle at the closed-form fixed point."""
    tr = simulate_adam(4, 0.9, 0.93, 1e-3, 3000)
    x, m, v = tr.x[-1].item(), tr.m[-1].item(), tr.v[-1].item()
    fp = fixed_point(4, 0.9, 0.93, 1e-3)
    assert m / x**3 == pytest.approx(fp.omega, rel=1e-6)
    assert x**2 / math.sqrt(v) == pytest.approx(fp.lam, rel=1e-6)


@pytest.mark.parametrize("k", [4, 6, 8])
def test_sympy_reduced_map(k):
    d = theory.derive_reduced_map(k)
    assert d.fixed_point_residual == (0, 0)
    assert d.det_minus_claim == 0
    assert d.eta_derivatives == (0, 0)
    r, b1 = sp.symbols("r beta_1", positive=True)
    # the +1 crossing is the existence boundary beta1 = r^(k-1)
    assert sp.simplify(d.one_minus_tr_plus_det.subs(b1, r ** (k - 1))) == 0
    # sympy's flip boundary equals the closed form used numerically
    for b2 in (0.01, 0.03):
        rv = b2 ** (1 / (2 * (k - 2)))
        assert float(d.flip_beta1.subs(r, rv)) == pytest.approx(
            rv ** (k - 1) * (k - 2 - k * rv) / (k - (k - 2) * rv), rel=1e-12)


@pytest.mark.parametrize("k", [4, 6, 8, 10])
def test_sympy_rmsprop_threshold(k):
    _, _, thr = theory.derive_rmsprop_threshold(k)
    assert float(thr) == pytest.approx(rmsprop_threshold(k), rel=1e-14)


def test_sympy_gradient_flow_and_lemma55():
    xt, hit = theory.derive_gradient_flow(4)
    t, x0, eps = sp.symbols("t x_0 varepsilon", positive=True)
    assert float(hit.subs({x0: 1, eps: 1e-3})) == pytest.approx(gradient_flow_hitting_time(4, 1e-3), rel=1e-12)
    assert sp.simplify(xt.diff(t) + xt**3) == 0
    lim = theory.derive_exponential_schedule(6)
    assert sp.simplify(lim + sp.Symbol("alpha", positive=True) / 4) == 0


# ---------------------------------------------------------------- reference numbers
@pytest.mark.parametrize("k,expected", [(4, 3384), (6, 5818)])
def test_hitting_steps(k, expected):
    assert steps_to_reach(k, 0.9, 0.93, 1e-3, 1e-20) == expected


def test_hitting_steps_match_batched_simulation():
    tr = simulate_adam(torch.tensor([4.0, 6.0]), 0.9, 0.93, 1e-3, 6000)
    for j, k in enumerate((4, 6)):
        first = int(torch.nonzero(tr.x[1:, j].abs() <= 1e-20)[0]) + 1
        assert first == steps_to_reach(k, 0.9, 0.93, 1e-3, 1e-20)


@pytest.mark.parametrize("k", [4, 6])
def test_steps_per_unit_log_eps(k):
    """Remark 5.8: hitting times grow by 2(k-2)/(-ln beta2) steps per unit of ln(1/eps)."""
    t1 = steps_to_reach(k, 0.9, 0.93, 1e-3, 1e-8)
    t2 = steps_to_reach(k, 0.9, 0.93, 1e-3, 1e-28)
    assert (t2 - t1) / math.log(1e20) == pytest.approx(theory.adam_steps_per_decade(k, 0.93), rel=2e-3)


@pytest.mark.parametrize("k", [4, 6, 8])
def test_measured_rate_matches_eq10(k):
    tr = simulate_adam(k, 0.9, 0.93, 1e-3, 12_000)
    ratio, slope = measured_rate(tr.x, k)
    assert ratio == pytest.approx(linear_rate(k, 0.93), rel=1e-6)
    assert slope == pytest.approx(log_loss_slope(k, 0.93), rel=1e-4)


def test_rate_for_parameters_the_chapter_does_not_use():
    # k = 10, beta2 = 0.97, lr = 3e-3, beta1 = 0.5: stable, rate beta2^(1/16)
    assert regime(10, 0.5, 0.97) == "stable"
    tr = simulate_adam(10, 0.5, 0.97, 3e-3, 40_000)
    ratio, _ = measured_rate(tr.x, 10, start=10_000)
    assert ratio == pytest.approx(0.97 ** (1 / 16), rel=1e-6)


# ---------------------------------------------------------------- regimes
@pytest.mark.parametrize("beta2,name", [(0.91, "stable"), (0.895, "spike"), (0.8, "oscillation")])
def test_regime_labels(beta2, name):
    assert regime(4, 0.9, beta2) == name


def test_regime_boundaries_are_ordered():
    b2 = torch.linspace(0.01, 0.99, 99, dtype=torch.float64)
    for k in (4, 6, 8):
        assert bool((flip_boundary(k, b2) <= stability_boundary(k, b2)).all())
        assert bool((stability_boundary(k, b2) < existence_boundary(k, b2)).all())
    assert float(flip_boundary(4, torch.tensor(0.0625 + 1e-9, dtype=torch.float64))) == 0.0


def test_small_phase_diagram_agrees_off_boundary():
    pd = phase_diagram(4, n=12, steps=20_000)
    assert pd.agreement == 1.0
    assert pd.agreement_all <= 1.0


# ---------------------------------------------------------------- parity: batched vs single vs scalar reference
def test_batched_equals_single():
    b1 = torch.tensor([0.9, 0.5, 0.0], dtype=torch.float64)
    b2 = torch.tensor([0.93, 0.8, 0.99], dtype=torch.float64)
    batched = simulate_adam(4, b1, b2, 1e-3, 2000)
    for j in range(3):
        single = simulate_adam(4, float(b1[j]), float(b2[j]), 1e-3, 2000)
        assert torch.equal(batched.x[:, j], single.x)
        assert torch.equal(batched.v[:, j], single.v)


@pytest.mark.parametrize("k,b1,b2", [(4, 0.9, 0.93), (6, 0.9, 0.93), (4, 0.0, 0.99), (8, 0.5, 0.95)])
def test_scalar_reference_matches_torch(k, b1, b2):
    """Stable runs: the Python-float reference and the torch path agree to rounding (1e-12 relative)."""
    tr = simulate_adam(k, b1, b2, 1e-3, 3000)
    ref = adam_reference(k, b1, b2, 1e-3, 3000)
    np.testing.assert_allclose(tr.x.numpy(), ref, rtol=1e-12, atol=0)


def test_float32_runs_and_floors_earlier():
    tr = simulate_adam(4, 0.9, 0.93, 1e-3, 3000, dtype=torch.float32)
    assert tr.x.dtype == torch.float32
    assert torch.isfinite(tr.x).all()
    assert tr.x[-1].abs().item() > 1e-20  # float32's floor stops it well above float64's


# ---------------------------------------------------------------- validation
BAD = [
    (stability_boundary, (3, 0.9), "k"),
    (stability_boundary, (2, 0.9), "k"),
    (stability_boundary, (4, 1.0), "beta2"),
    (regime, (4, -0.1, 0.9), "beta1"),
    (regime, (4, 0.9, 1.2), "beta2"),
    (linear_rate, (5, 0.9), "k"),
    (rmsprop_threshold, (4.5,), "k"),
    (steps_to_reach, (4, 0.9, 0.93, 0.0, 1e-20), "lr"),
    (steps_to_reach, (4, 0.9, 0.93, 1e-3, 0.0), "eps"),
    (steps_to_reach, (4, 0.9, 0.93, 1e-3, 1e-80), "eps"),
    (simulate_adam, (4, 0.9, 0.93, -1e-3, 10), "lr"),
    (simulate_adam, (3, 0.9, 0.93, 1e-3, 10), "k"),
    (simulate_adam, (4, 0.9, 0.93, 1e-3, -1), "steps"),
    (fixed_point, (4, 0.95, 0.9, 1e-3), "beta1"),
]


@pytest.mark.parametrize("fn,args,name", BAD)
def test_bad_input_raises(fn, args, name):
    with pytest.raises(ValueError, match=f"Invalid {name}"):
        fn(*args)


@settings(max_examples=60, deadline=None)
@given(beta2=st.floats(allow_nan=True, allow_infinity=True).filter(lambda b: not (0 <= b < 1)))
def test_beta2_outside_unit_interval_rejected(beta2):
    with pytest.raises(ValueError, match=r"Invalid beta2: .* \(must be in \[0, 1\)\)"):
        stability_boundary(4, beta2)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(min_value=-10, max_value=40))
def test_k_validation_property(k):
    if k >= 4 and k % 2 == 0:
        assert 0 < rmsprop_threshold(k) < 1
    else:
        with pytest.raises(ValueError, match="Invalid k"):
            rmsprop_threshold(k)


# ---------------------------------------------------------------- widget: never raises at any slider position
@pytest.mark.parametrize("k", [2, 4, 10])
@pytest.mark.parametrize("b1,b2,lr", [(0.0, 0.0, 1e-5), (0.99, 0.0, 1.0), (0.0, 0.999, 1.0), (0.99, 0.999, 1e-5),
                                      (0.9, 0.895, 1e-3)])
def test_widget_never_raises(k, b1, b2, lr):
    _, s = summarize(k, b1, b2, lr, 500)
    assert s.label


def test_widget_render_and_panel():
    import matplotlib

    matplotlib.use("Agg")
    fig, s = render()
    assert s.regime == "stable" and not s.diverged
    from theorybook.adam_degenerate.widgets import explorer

    panel = explorer()
    assert panel.children
