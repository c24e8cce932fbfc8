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
    adam_path,
    adam_reference,
    adam_steps_per_efold,
    casoratian_det,
    existence_boundary,
    fixed_point,
    fixed_point_start,
    flip_boundary,
    gradient_flow_hitting_time,
    gradient_flow_x,
    linear_rate,
    linear_window,
    log_loss_slope,
    measured_rate,
    oscillation_period,
    phase_diagram,
    regime,
    rmsprop_threshold,
    rmsprop_two_cycle,
    signgd_loss_level,
    simulate_adam,
    stability_boundary,
    steps_to_reach,
    theory,
)
from theorybook.adam_degenerate.widgets import render, summarize
from theorybook.device import to_numpy

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
    (adam_steps_per_efold, (4, 0.93), 55.119, 1e-4),  # steps per unit of ln(1/eps); × ln 10 per decade
]


@pytest.mark.parametrize("fn,args,expected,rtol", KNOWN, ids=lambda a: getattr(a, "__name__", None))
def test_known_values(fn, args, expected, rtol):
    assert fn(*args) == pytest.approx(expected, rel=rtol)


# Fixed point: reference table (closed forms, confirmed by float64 simulation), eta = 1e-3
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
    assert (t2 - t1) / math.log(1e20) == pytest.approx(adam_steps_per_efold(k, 0.93), rel=2e-3)


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
    np.testing.assert_allclose(to_numpy(tr.x), ref, rtol=1e-12, atol=0)


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


# ---------------------------------------------------------------- linearised dynamics, measured (issue 13)
def test_period_and_casoratian_on_an_exact_spiral():
    """d_t = A rho^t cos(theta t + phi): the crossing spacing is 2 pi/theta, the Casoratian ratio rho^2."""
    t = np.arange(3000)
    rho, theta = 0.999, 2 * math.pi / 123.4
    d = 1e-3 * rho**t * np.cos(theta * t + 0.3)
    period, turns = oscillation_period(d)
    assert period == pytest.approx(123.4, rel=1e-4) and turns >= 20
    assert casoratian_det(d, 0, 3000) == pytest.approx(rho**2, rel=1e-10)


@pytest.mark.parametrize("k,b1,b2", [(8, 0.9, 0.85), (4, 0.85, 0.84)])
def test_regime_two_spiral_matches_jacobian(k, b1, b2):
    """Settings the chapter does not use: started at the unstable fixed point, the measured period and det J
    match the closed-form Jacobian."""
    assert regime(k, b1, b2) == "spike"
    fp = fixed_point(k, b1, b2, 1e-3)
    x0, m0, v0 = fixed_point_start(k, b1, b2, 1e-3)
    path = adam_path(k, b1, b2, 1e-3, 5000, x0, m0=m0, v0=v0)
    d = path.omega - fp.omega
    a, b = linear_window(d, fp.omega)
    a = max(a, int(np.argmax((1 - b2) * path.x**2 * path.lam**2 < 1e-10)))
    assert oscillation_period(d, a, b)[0] == pytest.approx(fp.period, rel=1e-3)
    assert casoratian_det(d, a, b) == pytest.approx(fp.det, rel=1e-4)
    assert fp.det > 1 and not fp.stable


@pytest.mark.parametrize("k,b2", [(4, 0.05), (6, 0.03)])
def test_rmsprop_two_cycle_matches_simulation(k, b2):
    a, b = rmsprop_two_cycle(k, b2)
    assert a * b == pytest.approx(b2 ** (1 / (k - 2)), rel=1e-12)
    path = adam_path(k, 0.0, b2, 1e-3, 4000)
    stop = path.floor_step - 2
    tail = path.ratio[stop - 10:stop]
    assert tail.min() == pytest.approx(a, rel=1e-9) and tail.max() == pytest.approx(b, rel=1e-9)
    with pytest.raises(ValueError, match="Invalid beta2"):
        rmsprop_two_cycle(k, 0.5)


def test_flip_point_is_unstable_although_eq8_says_stable():
    assert regime(4, 0.004, 0.03) == "period-2" and not fixed_point(4, 0.004, 0.03, 1e-3).stable
    path = adam_path(4, 0.004, 0.03, 1e-3, 3000)
    tail = path.ratio[path.floor_step - 22:path.floor_step - 2]
    assert tail.max() - tail.min() > 0.1
    assert float(np.median(tail[1:] * tail[:-1])) == pytest.approx(0.03**0.5, rel=1e-9)


def test_lemma_5_4_second_moment_ratio():
    path = adam_path(4, 0.0, 0.93, 1e-3, 6000)
    q = path.v[3001:path.floor_step] / path.v[3000:path.floor_step - 1]
    assert np.max(np.abs(q - 0.93)) < 1e-12


def test_adam_path_matches_batched_state():
    tr = simulate_adam(4, 0.9, 0.93, 1e-3, 2000, device="cpu")
    path = adam_path(4, 0.9, 0.93, 1e-3, 2000)
    np.testing.assert_allclose(to_numpy(tr.m), path.m, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(tr.v), path.v, rtol=1e-12)


# ---------------------------------------------------------------- validation policy (issue 14)
def test_bools_rejected_numpy_ints_accepted():
    with pytest.raises(TypeError):
        simulate_adam(4, 0.9, 0.93, True, 10)
    with pytest.raises(TypeError):
        steps_to_reach(True, 0.9, 0.93, 1e-3, 1e-3)
    with pytest.raises(TypeError):
        adam_path(4, 0.9, 0.93, 1e-3, True)
    assert steps_to_reach(np.int64(4), 0.9, 0.93, 1e-3, 1e-3, max_steps=np.int64(10_000)) > 0
    assert simulate_adam(np.int64(4), 0.9, 0.93, 1e-3, np.int64(5)).x.shape == (6,)
    assert rmsprop_threshold(np.int32(4)) == 0.0625
    assert rmsprop_threshold(torch.tensor(4)) == 0.0625


@pytest.mark.parametrize("x0", [float("nan"), float("inf"), -float("inf"), 1e300])
def test_bad_x0_rejected(x0):
    with pytest.raises(ValueError, match="Invalid x0"):
        simulate_adam(4, 0.9, 0.93, 1e-3, 10, x0)
    with pytest.raises(ValueError, match="Invalid x0"):
        adam_path(4, 0.9, 0.93, 1e-3, 10, x0)
    with pytest.raises(ValueError, match="Invalid x0"):
        steps_to_reach(4, 0.9, 0.93, 1e-3, 1e-3, x0=x0)


@pytest.mark.parametrize("call", [
    lambda: simulate_adam(4, 0.9, 0.93, 1e-3, 1e9),
    lambda: simulate_adam(4, torch.full((10**5,), 0.9, dtype=torch.float64), 0.93, 1e-3, 10**4),
    lambda: adam_path(4, 0.9, 0.93, 1e-3, 10**9),
    lambda: steps_to_reach(4, 0.9, 0.93, 1e-3, 1e-3, max_steps=10**12),
    lambda: phase_diagram(4, n=10**6, steps=10),
    lambda: phase_diagram(4, n=4, steps=10**12),
])
def test_huge_sizes_refused_before_allocating(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("call", [
    lambda: regime(4, torch.tensor([0.9, 0.5]), 0.93),
    lambda: fixed_point(4, 0.9, np.array([0.93, 0.95]), 1e-3),
    lambda: fixed_point(4, 0.9, 0.93, torch.tensor([1e-3, 1e-2])),
    lambda: log_loss_slope(4, torch.tensor([0.9, 0.93])),
    lambda: steps_to_reach(4, torch.tensor([0.9, 0.5]), 0.93, 1e-3, 1e-3),
])
def test_scalar_functions_refuse_batches(call):
    with pytest.raises(TypeError, match="scalar"):
        call()


def test_float32_hyperparameters_refused_for_float64_runs():
    with pytest.raises(TypeError, match="Invalid beta2"):
        simulate_adam(4, 0.0, torch.tensor([0.07, 0.05]), 1e-3, 10)


def test_divergence_is_an_error_not_a_nan():
    with pytest.raises(ValueError, match="diverged"):
        adam_path(4, 0.5, 0.5, 1.0, 50, m0=1e200, v0=1e-200)  # first step of size 1e300: g = x³ overflows
    from theorybook.adam_degenerate.dynamics import _path

    assert not np.isfinite(_path(4, 0.5, 0.5, 1.0, 50, 1.0, 1e200, 1e-200).x).all()  # what the widget would show


def test_overflow_safe_closed_forms():
    assert gradient_flow_x(4, 1e300, 1e-300) > 0
    assert np.isfinite(gradient_flow_x(100, np.array([0.0, 1.0, 1e308]), 1e100)).all()
    assert gradient_flow_x(4, torch.tensor([0.0, 1.0]), 1.0).tolist() == pytest.approx([1.0, 1 / math.sqrt(3)])
    assert gradient_flow_hitting_time(4, 2.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="Invalid eps"):
        gradient_flow_hitting_time(100, 1e-300)
    with pytest.raises(ValueError, match="Invalid lr"):
        signgd_loss_level(100, 1e300)
    assert signgd_loss_level(100, 1e-300) == 0.0
    with pytest.raises(ValueError):
        fixed_point(4, 0.5, 1e-310, 1e-300)


def test_boundaries_broadcast_over_arrays_and_tensors():
    b2 = np.linspace(0.01, 0.99, 7)
    assert flip_boundary(4, b2).shape == (7,)
    assert stability_boundary(4, torch.tensor(b2)).shape == (7,)
    assert isinstance(linear_rate(4, 0.93), float)


def test_widget_explorer_extremes():
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.adam_degenerate.widgets import explorer

    panel = explorer()
    for name, control in panel.controls.items():
        options = getattr(control, "options", None)
        values = (options[0], options[-1]) if options else (control.min, control.max)
        for value in values:
            control.value = value
            assert panel.status.value and "cannot run" not in panel.status.value, (name, value)
        control.value = values[0]


def test_widget_theory_line_stays_above_the_floor():
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.adam_degenerate.widgets import floor_loss

    fig, s = render(4, 0.4, 0.5, 1e-3, 30_000)  # reaches the floor within a few thousand steps, before T/3
    lines = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("rate")]
    assert s.regime == "stable" and lines
    y = lines[0].get_ydata()
    assert y.min() >= floor_loss(4) and y[0] > 1e20 * floor_loss(4)


def test_experiment_functions_validate():
    from theorybook.adam_degenerate import spiral_experiment, spiral_rows

    with pytest.raises(TypeError, match="start_at_fixed_point"):
        spiral_experiment(4, 0.9, 0.91, start_at_fixed_point=1)
    with pytest.raises(TypeError, match="spirals"):
        spiral_rows("2")
    with pytest.raises(ValueError, match="Invalid beta1"):
        spiral_experiment(4, 0.9, 0.8)  # regime III: no fixed point
    s = spiral_experiment(np.int64(4), 0.9, 0.91)
    assert s.window[0] < s.window[1] < s.floor_step and spiral_rows([s]).passed


# ---------------------------------------------------------------- verdicts (issue 33): controls must fail
def test_wrong_exponents_fail_the_phase_diagram_threshold():
    """The phase-diagram row's controls: Eq. 8's exponent passes 0.99, the exponents 1/2 and 3/4 do not."""
    from theorybook.adam_degenerate import boundary_agreement

    pd = phase_diagram(4, n=16, steps=20_000)
    assert boundary_agreement(pd, 1.0) == pytest.approx(pd.agreement)  # k = 4: k/(2(k−2)) = 1
    assert pd.agreement >= 0.99
    assert boundary_agreement(pd, 0.5) < 0.99 and boundary_agreement(pd, 0.75) < 0.99
    with pytest.raises(TypeError, match="pd"):
        boundary_agreement("pd", 0.5)
    with pytest.raises(ValueError, match="exponent"):
        boundary_agreement(pd, -1.0)


def test_regime_names_the_flip_sliver():
    assert regime(4, 0.0, 0.05) == "period-2"  # RMSProp below Theorem 5.7's threshold
    assert regime(4, 0.0, 0.07) == "stable"
    assert regime(4, 0.02, 0.03) == "stable"  # above the flip curve (≈ 0.008 at β₂ = 0.03), below Eq. 8


def test_deterministic_rows_are_consistency_checks():
    from theorybook.adam_degenerate import deterministic_verdicts

    v = deterministic_verdicts()
    assert v.passed and {r.kind for r in v.rows} == {"consistency"}


def test_headline_validates_its_results():
    from theorybook.adam_degenerate import headline

    with pytest.raises(TypeError, match="mapping"):
        headline([1, 2])
    with pytest.raises(ValueError, match="missing keys"):
        headline({"L": 1})


# ---------------------------------------------------------------- Remark 5.8: the two step counts
def test_gd_hitting_steps_follow_gradient_flow_and_validate():
    from theorybook.adam_degenerate import gd_steps_to_reach
    from theorybook.adam_degenerate.theory import gradient_flow_hitting_time

    hits = gd_steps_to_reach(4, 0.1, [0.01, 0.1, 0.03])
    assert hits[1] < hits[2] < hits[0]  # any order of thresholds, one run
    flow = gradient_flow_hitting_time(4, 0.01) / 0.1
    assert abs(hits[0] - flow) / flow < 0.02
    with pytest.raises(ValueError, match="lr"):
        gd_steps_to_reach(4, 0.7, [0.1])  # unstable from x0 = 1: 2/((k−1)x0^(k−2)) = 2/3
    with pytest.raises(ValueError, match="max_steps"):
        gd_steps_to_reach(4, 0.1, [1e-4], max_steps=1000)
    with pytest.raises(TypeError, match="eps"):
        gd_steps_to_reach(4, 0.1, 0.1)
    with pytest.raises(ValueError, match="eps"):
        gd_steps_to_reach(4, 0.1, [1.5])


def test_complexity_separation_laws():
    from theorybook.adam_degenerate.experiments import complexity_separation

    s = complexity_separation()
    assert abs(s.gd_exponent - 2) < 0.05 and s.adam_exponent < 0.2
    assert abs(s.adam_efold_ratio - 1) < 5e-3 and abs(s.gd_efold_ratio - 0.01) < 2e-3


# ---------------------------------------------------------------- issue 57: momentum's late tail, both buffer starts
@pytest.fixture(scope="module")
def momentum():
    from theorybook.adam_degenerate import momentum_tail

    return {(k, s): momentum_tail(k, s) for k, s in ((4, "g0"), (4, "zero"), (6, "g0"), (6, "zero"), (8, "zero"))}


def test_momentum_tail_exponents_and_error_model(momentum):
    for (k, _), mt in momentum.items():
        assert abs(mt.exponent + 1 / (k - 2)) < 0.02
        # the error model: gradient flow restarted at step 1000 from the run's own x explains the window's bias
        assert abs(mt.exponent - mt.flow_exponent) < 1e-3
    for k in (4, 6):  # the rows' controls: the next degree's exponent lies outside the 0.02 band
        assert abs(momentum[k + 2, "zero"].exponent + 1 / (k - 2)) > 0.05


def test_momentum_early_window_depends_on_the_start():
    """Why the rows use steps 1e5–1e6: on 2000–20000 the k = 4 exponent from m₀ = 0 misses −1/2 by > 0.02 (issue 57)."""
    from theorybook.adam_degenerate import momentum_tail

    early = momentum_tail(4, "zero", window=(2000, 20_000))
    assert abs(early.exponent + 0.5) > 0.02
    assert early.window == (2000, 20_000) and early.x_at[2000] > 0


def test_momentum_rows_reproduce_and_can_fail(momentum):
    from theorybook.adam_degenerate import momentum_rows

    v = momentum_rows(momentum)
    assert v.passed and len(v.rows) == 4 and {r.outcome for r in v.rows} == {"reproduces"}
    assert all(not c["passes"] for r in v.rows for c in r.controls)
    stale = dict(momentum)
    stale[6, "g0"] = momentum[6, "g0"]._replace(exponent=-0.12)  # the early window's k = 6 value
    assert not momentum_rows(stale).passed
    with pytest.raises(TypeError, match="momentum"):
        momentum_rows({(4, "g0"): momentum[4, "g0"]})


def test_momentum_tail_validates():
    from theorybook.adam_degenerate import momentum_tail

    with pytest.raises(ValueError, match="start"):
        momentum_tail(4, "m0")
    with pytest.raises(ValueError, match="Invalid k"):
        momentum_tail(5)
    with pytest.raises(TypeError, match="window"):
        momentum_tail(4, window=[2000, 3000])
    with pytest.raises(ValueError, match="window"):
        momentum_tail(4, window=(100, 3000))
    with pytest.raises(ValueError, match="beta"):
        momentum_tail(4, beta=1.0)


# ---------------------------------------------------------------- issue 57: Sec. 7's recovered mixed loss
@pytest.fixture(scope="module")
def race():
    from theorybook.adam_degenerate import mixed_race

    return mixed_race()


def test_mixed_race_protocol(race):
    from theorybook.adam_degenerate.experiments import MIXED_BUDGETS, MIXED_ETAS

    assert race.budgets == MIXED_BUDGETS and race.etas == MIXED_ETAS
    assert race.etas[0] == pytest.approx(1e-4) and race.etas[-1] == pytest.approx(1e2) and len(race.etas) == 13
    for name in ("gd", "heavy_ball", "adam", "normalized_gd"):
        assert race.interior[name].all(), name  # tuned: the best step is not at the grid's edge
    assert not np.isfinite(race.table["gd"][-1, -1])  # GD at η = 100 diverges (edge of stability 2): inf, not NaN
    lead = race.lead("adam")
    assert (lead > 1).all() and (lead < 10).all()  # beats both, by less than a decade
    assert race.lead("normalized_gd").min() >= 10


def test_mixed_gd_follows_the_degenerate_recursion():
    """Independent check: under GD the sum s = x + y obeys s ← s − η s³/2 exactly (the quadratic part cancels)."""
    from theorybook.adam_degenerate import mixed_loss, mixed_race

    r = mixed_race({"gd": (0.0, None)}, etas=(0.1, 0.3, 1.0), budgets=(100, 1000))
    s = 1.3
    for _ in range(1000):
        s -= s**3 / 2
    assert r.table["gd"][1, 2] == pytest.approx(abs(s), rel=1e-9)
    assert mixed_loss(1.0, 0.3) == pytest.approx(0.25 * 0.49 + 1.3**4 / 16)


def test_mixed_rows_hold_not_specific(race):
    """The paper's 'beats' (a lead > 1 at every budget) holds; normalized GD passes too, the coupled ablation not."""
    from theorybook.adam_degenerate import mixed_rows

    v = mixed_rows(race)
    (row,) = v.rows
    assert v.passed and row.outcome == "not_specific" and row.tests == "mixed"
    assert [c["passes"] for c in row.controls] == [True, False]  # normalized GD leads; β₂ = 0 trails at T = 2000
    assert len(row.scan["values"]) == 3
    worse = dict(race.best)
    worse["adam"] = race.best["adam"] * 100  # Adam trailing GD and heavy ball: the row no longer holds
    assert not mixed_rows(race._replace(best=worse)).passed
    with pytest.raises(TypeError, match="race"):
        mixed_rows("race")


def test_mixed_race_validates():
    from theorybook.adam_degenerate import mixed_race

    with pytest.raises(ValueError, match="etas"):
        mixed_race(etas=(1.0, 0.1, 0.01))
    with pytest.raises(ValueError, match="budgets"):
        mixed_race(budgets=(100, 10))
    with pytest.raises(TypeError, match="methods"):
        mixed_race({"adam": 0.9})
    with pytest.raises(ValueError, match="beta2"):
        mixed_race({"adam": (0.9, 1.5)})
    with pytest.raises(TypeError, match="start"):
        mixed_race(start=1.0)


# ---------------------------------------------------------------- issue 57: regime III's plant in its own run; claims
def test_regime_three_plant_in_its_own_run_is_caught():
    tail = adam_path(4, 0.9, 0.8, 1e-3, 30_000).x[-6000:]
    j = math.log2(1e-3 / np.abs(tail).max())
    assert 1.5 <= j <= 2.5  # nearest level L(η/4)
    planted = math.log2(1e-3 / np.abs(tail * 5e-4 / np.abs(tail).max()).max())
    assert planted == pytest.approx(1.0, abs=1e-12) and not 1.5 <= planted <= 2.5


def test_paper_claims_headline_and_split_mixed_claim():
    from theorybook.adam_degenerate import PAPER_CLAIMS

    assert [c.id for c in PAPER_CLAIMS if c.headline] == ["linear"]
    by_id = {c.id: c for c in PAPER_CLAIMS}
    assert not by_id["mixed"].quoted_only and by_id["mixed"].regime
    for cid in ("mixed_other", "arch"):
        assert by_id[cid].quoted_only and by_id[cid].reason_class == "paper text unread"


# ---------------------------------------------------------------- the sceptic's review: alternatives and scans
def test_polyak_step_is_linear_at_another_rate():
    """GD with Polyak's step (L* = 0) contracts by exactly 1 − 1/k: linear, but not at Eq. 10's rate."""
    for k in (4, 8):
        x = [1.0]
        while abs(x[-1]) ** (2 * k - 2) > 1e-300:
            x.append(x[-1] - (x[-1] ** k / k) / x[-1] ** (k - 1))
        ratio = measured_rate(np.array(x), k, start=0)[0]
        assert ratio == pytest.approx(1 - 1 / k, rel=1e-12)
        assert abs(ratio / linear_rate(k, 0.93) - 1) > 0.1


def test_rmsprop_far_below_threshold_recouples_into_signgd_cycle():
    """β₂ = 0.01: RMSProp never converges — x_t = ±η/2, ratio −1 — so the spread test reads it as settled."""
    x = adam_path(4, 0.0, 0.01, 1e-3, 30_000).x
    assert np.abs(x[-100:]) == pytest.approx(5e-4, rel=1e-9)
    ratios = x[-21:] / x[-22:-1]
    assert np.ptp(ratios) <= 1e-6 and ratios[0] == pytest.approx(-1.0)


def test_regime_three_level_varies_across_the_regime():
    """The level index j = log2(η / max|x|) is not one value over regime III (independent scalar runs)."""
    j = {p: math.log2(1e-3 / np.abs(adam_path(4, *p, 1e-3, 30_000).x[-6000:]).max())
         for p in ((0.9, 0.8), (0.5, 0.3), (0.9, 0.5))}
    assert 1.5 <= j[0.9, 0.8] <= 2.5  # the row's setting: nearest L(η/4)
    assert abs(j[0.5, 0.3] - 1) <= 0.5  # here the notes' L(η/2) is nearest
    assert j[0.9, 0.5] < 0.5  # and here L(η)


def test_regime_two_spike_depth_depends_on_the_setting():
    """Along β₁ = 0.9 the loss rises ≥ 10 decades in regime II, but its minimum reaches 1e-100 only at 0.895."""
    for b2, deep in ((0.895, True), (0.885, False)):
        loss = adam_path(4, 0.9, b2, 1e-3, 30_000).loss
        loss = loss[np.isfinite(loss)]
        assert bool(loss.min() <= 1e-100) == deep
        assert loss[-1] >= 1e10 * loss.min()


def test_decoupling_is_not_implied_by_x_to_zero():
    """The same EMA of g² along GD's sublinear run stays coupled: v_t/v_(t−1) − β₂ → 1 − β₂, not 0."""
    x = np.empty(20_001)
    x[0] = 1.0
    for t in range(20_000):
        x[t + 1] = x[t] - 0.1 * x[t] ** 3
    g2, v = x**6, np.empty(20_001)
    v[0] = g2[0]
    for t in range(1, v.size):
        v[t] = 0.93 * v[t - 1] + 0.07 * g2[t]
    assert np.max(np.abs(v[3001:] / v[3000:-1] - 0.93)) > 0.06


def test_phase_diagram_k6_tells_eq8_from_the_k_free_law():
    """At k = 6 Eq. 8 (β₁ < β₂^(3/4)) and β₁ < β₂ part; a coarse grid already prefers Eq. 8."""
    from theorybook.adam_degenerate import boundary_agreement

    pd = phase_diagram(k=6, n=12, steps=30_000)
    assert pd.agreement > boundary_agreement(pd, 1.0) + 0.03
    assert pd.agreement == pytest.approx(boundary_agreement(pd, 0.75))


def test_regime_two_spike_row_scans_the_regime_and_catches_its_plant():
    """The spike row counts the signature over β₂ = 0.875, 0.885, 0.895 (1 of 3 here: a difference); the paper's
    depth planted in each run's own descent is counted at all three (caught)."""
    from theorybook.adam_degenerate.verdicts import spike_count, spike_plant

    scan = {}
    for b2 in (0.875, 0.885, 0.895):
        loss = adam_path(4, 0.9, b2, 1e-3, 30_000).loss
        loss = loss[np.isfinite(loss)]
        scan[b2] = (float(loss.min()), float(loss[-1]))
    assert spike_count(scan) == 1  # only at the paper's setting
    planted = spike_plant(scan, 0.25)
    assert spike_count(planted) == 3
    assert planted[0.895] == pytest.approx(scan[0.895])  # the paper's own point is left as measured
    for b2 in (0.875, 0.885):
        assert planted[b2][0] == pytest.approx(scan[0.895][0], rel=1e-9)
    with pytest.raises(ValueError):
        spike_plant({0.875: scan[0.875]}, 0.25)
    with pytest.raises(ValueError):
        spike_count({})


def test_regime_two_spike_count_at_the_paper_horizon():
    """Sceptic's review: over 100k steps (the notes' Fig. 3 length) later convergence-then-spike episodes at
    β₂ = 0.875 and 0.885 go far deeper than regime III ever gets; the row's count stays ≤ 2 of 3 (a difference),
    though these late minima are chaotic (adam_path's 0.885 passes 1e-100, other codings' do not)."""
    from theorybook.adam_degenerate.verdicts import spike_count

    scan, mins = {}, {}
    for b2 in (0.875, 0.885, 0.895, 0.8):
        loss = adam_path(4, 0.9, b2, 1e-3, 100_000).loss
        loss = loss[np.isfinite(loss)]
        mins[b2] = float(loss.min())
        if b2 != 0.8:
            scan[b2] = (mins[b2], float(loss[-1]))
    assert 1 <= spike_count(scan) <= 2
    assert mins[0.885] < 1e-80 and mins[0.875] < 1e-50 and mins[0.8] > 1e-40
