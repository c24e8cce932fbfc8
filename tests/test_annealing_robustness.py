"""Annealing robustness (Attia & Koren, arXiv 2503.09411): schedules, the [reconstruction] suffix bound,
sympy exponents, batched projected SGD, validation and the widget at extreme slider values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from theorybook.annealing_robustness import (
    CHAPTER_SEEDS,
    classical_eta,
    default_deltas,
    derive_balance,
    derive_cosine_endpoint,
    derive_fixed,
    family_run,
    fit_exponent,
    ideal_eta,
    make_problem,
    misspecification_curve,
    predicted_exponent,
    problem_bound,
    run_sgd,
    schedule,
    schedule_integrals,
    stepsizes,
    suffix_bound,
)
from theorybook.annealing_robustness.verdicts import worst_case_verdicts
from theorybook.annealing_robustness.widgets import explore, explorer
from theorybook.device import to_numpy


@pytest.fixture(scope="module")
def logistic():
    return make_problem("logistic", n=200, d=5, seed=1)


@pytest.fixture(scope="module")
def lad():
    return make_problem("lad", n=200, d=5, seed=1)


# ---------------------------------------------------------------- schedules: known values (one table)
SCHEDULE_VALUES = [
    # (name, p, u, T, h(u))
    ("fixed", None, 0.7, None, 1.0),
    ("linear", None, 0.25, None, 0.75),
    ("polynomial", 2, 0.5, None, 0.25),
    ("polynomial", 3, 0.5, None, 0.125),
    ("polynomial", 1.5, 0.75, None, 0.125),
    ("cosine", None, 0.0, None, 1.0),
    ("cosine", None, 0.5, None, 0.5),
    ("cosine", None, 1.0, None, 0.0),
    ("inverse_sqrt", None, 0.0, 100, 1.0),
    ("inverse_sqrt", None, 0.03, 100, 0.5),  # t = uT + 1 = 4
]


@pytest.mark.parametrize("name,p,u,T,expected", SCHEDULE_VALUES)
def test_schedule_values(name, p, u, T, expected):
    assert schedule(name, p)(u, T) == pytest.approx(expected, abs=1e-15)


def test_stepsizes_shape_and_first_last():
    lr = stepsizes(torch.tensor([0.1, 0.2]), "linear", 10)
    assert lr.shape == (2, 10)
    assert lr[:, 0].tolist() == pytest.approx([0.1, 0.2])
    assert lr[1, -1].item() == pytest.approx(0.2 * 0.1)  # h((T−1)/T) = 1/T
    isq = stepsizes(1.0, "inverse_sqrt", 16)
    assert isq.tolist() == pytest.approx([1 / math.sqrt(t) for t in range(1, 17)])


# ---------------------------------------------------------------- sympy derivations [reconstruction]
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_balance_exponent_is_one_over_2p_plus_1(p):
    d = derive_balance(p)
    assert sp.simplify(d.exponent - sp.Rational(1, 2 * p + 1)) == 0
    rho = sp.Symbol("rho", positive=True)
    # the critical point is a minimum and the value matches a direct numeric minimisation over s
    f = sp.lambdify(sp.Symbol("s", positive=True), d.bound.subs(rho, 50))
    s_grid = np.linspace(1e-3, 1, 200_001)
    assert float(d.value.subs(rho, 50)) == pytest.approx(f(s_grid).min(), rel=1e-8)


def test_cosine_endpoint_and_fixed():
    series, lead = derive_cosine_endpoint()
    assert sp.simplify(lead - sp.pi**2 / 4) == 0
    bound, dbound, value = derive_fixed()
    rho = sp.Symbol("rho", positive=True)
    assert sp.simplify(value - (rho + 1 / rho) / 2) == 0
    assert sp.limit(rho * sp.diff(value, rho) / value, rho, sp.oo) == 1


INTEGRALS = [("fixed", None, 1.0, 1.0), ("polynomial", 2, 1 / 3, 1 / 5), ("polynomial", 3, 1 / 4, 1 / 7),
             ("cosine", None, 0.5, 0.375)]


@pytest.fixture(scope="module")
def integral_forms():
    return schedule_integrals()


@pytest.mark.parametrize("name,p,i1,i2", INTEGRALS)
def test_schedule_integrals_match_riemann_sums(name, p, i1, i2, integral_forms):
    forms = integral_forms
    e1, e2 = forms[name]
    if name == "polynomial":
        sym = {str(x): x for x in e1.free_symbols | e2.free_symbols}["p"]
        e1, e2 = e1.subs(sym, p), e2.subs(sym, p)
    assert float(e1) == pytest.approx(i1, rel=1e-12)
    assert float(e2) == pytest.approx(i2, rel=1e-12)
    h = schedule(name, p)(torch.linspace(0, 1, 200_001, dtype=torch.float64))
    assert float(torch.trapezoid(h, dx=1 / 200_000)) == pytest.approx(i1, abs=1e-8)
    assert float(torch.trapezoid(h * h, dx=1 / 200_000)) == pytest.approx(i2, abs=1e-8)


# ---------------------------------------------------------------- the numeric bound
def test_fixed_bound_is_closed_form():
    rho = torch.tensor([1.0, 2.0, 10.0, 1000.0], dtype=torch.float64)
    b = suffix_bound(rho, "fixed", 10_000)
    assert torch.allclose(b, (rho + 1 / rho) / 2, rtol=1e-12)
    assert ideal_eta("fixed", 10_000) == pytest.approx(1e-2, rel=1e-12)


@pytest.mark.parametrize("name,p", [("fixed", None), ("linear", None), ("polynomial", 2), ("polynomial", 3),
                                    ("cosine", None), ("inverse_sqrt", None)])
def test_bound_exponents(name, p):
    rho = torch.logspace(2, 3, 6, dtype=torch.float64)
    slope = fit_exponent(rho, suffix_bound(rho, name, 100_000, p=p)).slope
    assert slope == pytest.approx(predicted_exponent(name, p), abs=0.03)


def test_bound_minimum_at_rho_one():
    for name in ("linear", "cosine"):
        b = suffix_bound(torch.tensor([1.0, 1.1, 1.5]), name, 5000)
        assert b[0] <= b[1] <= b[2]


# ---------------------------------------------------------------- SGD: batched == single, exact f*
def test_f_star_is_the_minimum(logistic, lad):
    for prob in (logistic, lad):
        g = torch.Generator().manual_seed(0)
        near = prob.x_star + 1e-3 * torch.randn(50, prob.x_star.numel(), generator=g, dtype=torch.float64)
        assert float(prob.loss(near).min()) >= prob.f_star - 1e-12
        assert float(prob.x_star.norm()) < prob.radius


@pytest.mark.parametrize("kind", ["logistic", "lad"])
def test_batched_equals_single(kind, logistic, lad):
    prob = logistic if kind == "logistic" else lad
    etas = torch.tensor([0.01, 0.1, 1.0], dtype=torch.float64)
    both = run_sgd(prob, etas, "cosine", 300, seeds=[3, 7], device="cpu")
    for i, e in enumerate(etas.tolist()):
        for j, s in enumerate([3, 7]):
            one = run_sgd(prob, e, "cosine", 300, seeds=[s], device="cpu")
            assert torch.allclose(both.x[i, j], one.x[0, 0], rtol=0, atol=1e-13)
            assert both.final_excess[i, j].item() == pytest.approx(one.final_excess[0, 0].item(), abs=1e-13)


def test_sgd_reference_loop(logistic):
    """A plain-Python projected SGD on one cell reproduces the batched path."""
    prob, T, eta, seed = logistic, 50, 0.3, 5
    idx = torch.randint(prob.features.shape[0], (T,), generator=torch.Generator().manual_seed(seed))
    x = np.zeros(prob.features.shape[1])
    A, y = to_numpy(prob.features), to_numpy(prob.labels)
    for t in range(T):
        a, yi = A[idx[t]], y[idx[t]]
        g = -yi / (1 + math.exp(yi * a @ x)) * a
        x = x - eta * (1 - t / T) * g
        x = x * min(1.0, prob.radius / np.linalg.norm(x))
    run = run_sgd(prob, eta, "linear", T, seeds=[seed], device="cpu")
    assert np.allclose(to_numpy(run.x[0, 0]), x, atol=1e-12)


def test_projection_keeps_iterates_in_ball(logistic):
    run = run_sgd(logistic, torch.tensor([1e3]), "fixed", 100, seeds=4, device="cpu")
    assert float(run.x.norm(dim=-1).max()) <= logistic.radius * (1 + 1e-12)


def test_record_every(logistic):
    run = run_sgd(logistic, 0.1, "linear", 25, seeds=2, record_every=10, device="cpu")
    assert run.steps.tolist() == [0, 10, 20, 25]
    assert torch.allclose(run.excess[-1], run.final_excess)
    start = logistic.loss(torch.zeros(5, dtype=torch.float64)) - logistic.f_star
    assert run.excess[0].sub(start).abs().max() < 1e-15


def test_misspecification_curve_reads_the_grid(logistic):
    c = misspecification_curve(logistic, "linear", 200, seeds=4, rho_max=4, per_octave=1, margin_octaves=3)
    k = int(torch.argmin(c.mean_excess))
    assert c.eta_star == pytest.approx(float(c.etas[k]))
    assert c.rho.tolist() == [1.0, 2.0, 4.0]
    assert c.over.tolist() == c.mean_excess[k:k + 3].tolist()
    assert c.under.tolist() == c.mean_excess[k - 2:k + 1].flip(0).tolist()
    assert torch.all(c.worst >= torch.maximum(c.over, c.under))
    assert c.over[0] == c.under[0] == c.worst[0] == c.mean_excess.min()


def test_problem_bound_fixed_closed_form(logistic):
    """Fixed h, restart at τ = 1: (D² + η²G²T)/(2ηT) in the problem's units."""
    D, G, T = logistic.diameter, logistic.lipschitz, 400
    eta = torch.tensor([0.01, 0.1], dtype=torch.float64)
    expected = (D**2 + eta**2 * G**2 * T) / (2 * eta * T)
    assert torch.allclose(problem_bound(logistic, eta, "fixed", T), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="Invalid eta"):
        problem_bound(logistic, 0.0, "fixed", T)


# ---------------------------------------------------------------- validation (ValueError names the parameter)
BAD = [
    (lambda: schedule("step"), "schedule"),
    (lambda: schedule("polynomial"), "p"),
    (lambda: schedule("polynomial", 0.5), "p"),
    (lambda: stepsizes(0.1, "fixed", 0), "T"),
    (lambda: stepsizes(-0.1, "fixed", 10), "eta"),
    (lambda: suffix_bound(0.5, "fixed", 100), "rho"),
    (lambda: suffix_bound(2.0, "fixed", 0), "T"),
    (lambda: suffix_bound(2.0, "cosine", 100, eta_star=0.0), "eta_star"),
    (lambda: ideal_eta("linear", 1.5), "T"),
    (lambda: fit_exponent([0.5, 1, 2], [1, 2, 3]), "rhos"),
    (lambda: fit_exponent([1, 2, 4], [1, -2, 3]), "values"),
    (lambda: fit_exponent([1, 2, 4, 8], [1, 2, 3]), "values"),
    (lambda: fit_exponent([1, 2, 4], [1, 2, 3], rho_min=3), "rho_min"),
    (lambda: make_problem("hinge"), "kind"),
    (lambda: make_problem("logistic", radius_factor=1.0), "radius_factor"),
    (lambda: schedule("inverse_sqrt")(0.5), "T"),
]


@pytest.mark.parametrize("call,name", BAD)
def test_bad_input_raises(call, name):
    with pytest.raises(ValueError, match=f"Invalid {name}"):
        call()


def test_run_sgd_validation(logistic):
    for kwargs, name in [(dict(eta=0.0), "eta"), (dict(T=0), "T"), (dict(seeds=[]), "seeds"),
                         (dict(seeds=[-1]), "seeds"), (dict(sched="warmup"), "schedule")]:
        args = dict(problem=logistic, eta=0.1, sched="linear", T=5, seeds=1) | kwargs
        with pytest.raises(ValueError, match=f"Invalid {name}"):
            run_sgd(args["problem"], args["eta"], args["sched"], args["T"], args["seeds"])
    with pytest.raises(ValueError, match="Invalid problem"):
        run_sgd("logistic", 0.1, "linear", 5)
    with pytest.raises(ValueError, match="Invalid rho_max"):
        misspecification_curve(logistic, "linear", 10, rho_max=1.5)


@settings(max_examples=25, deadline=None)
@given(rho=st.floats(1.0, 1e4), p=st.floats(1.0, 6.0))
def test_bound_never_below_tuned(rho, p):
    """Property: over-estimating never beats the bound's own ideal stepsize, and values are finite."""
    b = suffix_bound(torch.tensor([1.0, rho], dtype=torch.float64), "polynomial", 500, p=p)
    assert torch.isfinite(b).all() and b[1] >= b[0] * (1 - 1e-12)


@settings(max_examples=25, deadline=None)
@given(rho=st.floats(-10.0, 1.0, exclude_max=True))
def test_bad_rho_property(rho):
    with pytest.raises(ValueError, match="Invalid rho"):
        suffix_bound(rho, "linear", 100)


# ---------------------------------------------------------------- widget compute at extreme slider values
EXTREMES = [(name, p, rho, T) for name in ("fixed", "inverse_sqrt", "polynomial", "cosine")
            for p in (1.0, 4.0) for rho in (1.0, 1000.0) for T in (100, 1000)
            if not (name != "polynomial" and p == 4.0)]


@pytest.mark.parametrize("name,p,rho,T", EXTREMES[::2] + EXTREMES[-1:])
def test_widget_extremes_never_raise(name, p, rho, T):
    ex = explore(name, p, rho, T)
    assert not ex.diverged
    assert np.isfinite(ex.bound).all() and ex.rho == rho
    assert np.isfinite(ex.measured).all() and (ex.measured_sem >= 0).all()
    assert ex.label


def test_explorer_sliders_at_extremes():
    """The panel itself: every slider at its min and max, every schedule; the status line never reports an error."""
    panel = explorer()
    controls = {c.description: c for box in panel.children[:2] for c in box.children}
    status = panel.children[2]
    for name in controls["schedule"].options:
        controls["schedule"].value = name
        assert status.value and "cannot run" not in status.value
    for desc in ("p (poly)", "ρ", "T"):
        c = controls[desc]
        for value in (c.max, c.min):
            c.value = value
            assert status.value and "cannot run" not in status.value, (desc, value, status.value)


# ---------------------------------------------------------------- units (issue 13): ideal_eta is in D/G, D = 2R
def test_widget_eta_star_is_the_bound_ideal_in_problem_units():
    ex = explore("polynomial", 1.0, 4.0, 500)
    prob = make_problem("logistic", n=400, d=10, seed=0)
    expected = ideal_eta("linear", 500) * 2 * prob.radius / prob.lipschitz
    assert ex.eta_star == pytest.approx(expected, rel=1e-12)
    b = problem_bound(prob, torch.tensor([ex.eta_star / 1.05, ex.eta_star, ex.eta_star * 1.05]), "linear", 500)
    assert b[1] < b[0] and b[1] < b[2]  # with the old R/G units η* was half the ideal: b[1] > b[2]


def test_misspecification_grid_is_centred_on_the_ideal(logistic):
    c = misspecification_curve(logistic, "linear", 200, seeds=2, rho_max=4, per_octave=1, margin_octaves=3)
    centre = ideal_eta("linear", 200) * logistic.diameter / logistic.lipschitz
    assert float(c.etas[len(c.etas) // 2]) == pytest.approx(centre, rel=1e-12)


def test_inverse_sqrt_ideal_eta_is_a_constant():
    """e* = 1/√ln(1/c*), c* = argmin √ln(1/c)/(1 − √c) ≈ 0.081 — not ≈ 1/√(ln T)."""
    from scipy.optimize import minimize_scalar

    c = minimize_scalar(lambda c: math.sqrt(math.log(1 / c)) / (1 - math.sqrt(c)), bounds=(1e-9, 0.999),
                        method="bounded", options={"xatol": 1e-12}).x
    e_inf = 1 / math.sqrt(math.log(1 / c))
    assert c == pytest.approx(0.081, abs=1e-3)
    for T in (10**4, 10**5):
        assert ideal_eta("inverse_sqrt", T) == pytest.approx(e_inf, rel=2e-3)
    assert ideal_eta("linear", 10**4) == pytest.approx(math.sqrt(3) / 100, rel=1e-3)
    assert ideal_eta("cosine", 10**4) == pytest.approx(math.sqrt(8 / 3) / 100, rel=1e-3)


def test_classical_eta():
    assert classical_eta("fixed", 400) == pytest.approx(0.05)
    assert classical_eta("cosine", 400) == pytest.approx(0.05)
    assert classical_eta("inverse_sqrt", 400) == 1.0  # η_t = D/(G√t): last step D/(G√T)


@pytest.mark.parametrize("T", [100, 10_000])
def test_inverse_sqrt_integrals_sympy_vs_sums(T, integral_forms):
    """∫₀¹(1+uT)^(−1/2) = 2(√(T+1) − 1)/T and ∫₀¹(1+uT)^(−1) = ln(T+1)/T, against the left Riemann sums of the
    stepsizes 1/√t (non-increasing h: the sum exceeds the integral by at most (h(0) − h(1))/T)."""
    i1, i2 = integral_forms["inverse_sqrt"]
    T_sym = next(iter(i1.free_symbols))
    assert sp.simplify(i1 - 2 * (sp.sqrt(T_sym + 1) - 1) / T_sym) == 0
    assert sp.simplify(i2 - sp.log(T_sym + 1) / T_sym) == 0
    h = stepsizes(1.0, "inverse_sqrt", T, device="cpu")
    h1 = 1 / math.sqrt(1 + T)
    for k, form in ((1, i1), (2, i2)):
        closed, left = float(form.subs(T_sym, T)), float((h**k).mean())
        assert left - (1 - h1**k) / T <= closed <= left


# ---------------------------------------------------------------- the worst-case family
def test_family_run_matches_a_plain_loop():
    T, rho, deltas = 64, torch.tensor([2.0, 8.0], dtype=torch.float64), torch.tensor([0.1, 1.0], dtype=torch.float64)
    for family in ("quadratic", "abs"):
        fr = family_run([("polynomial", 2), "fixed"], rho, T, family=family, deltas=deltas, n_paths=3, seed=4,
                        device="cpu")
        assert fr.mean.shape == (2, 2, 2) and fr.sem.shape == (2, 2, 2)
        g = torch.Generator().manual_seed(4)
        xi = (2.0 * torch.randint(0, 2, (T, 3), generator=g) - 1.0).tolist()
        for hi, (name, p) in enumerate([("polynomial", 2), ("fixed", None)]):
            h = schedule(name, p)
            for ri, r in enumerate(rho.tolist()):
                for di, d in enumerate(deltas.tolist()):
                    ex = []
                    for s in range(3):
                        x = 1.0
                        for t in range(T):
                            eta = r / math.sqrt(T) * h(t / T)
                            grad = (d * x if family == "quadratic" else d) + xi[t][s]
                            x = min(1.0, max(-1.0, x - eta * grad))
                        ex.append((d * x * x / 2 if family == "quadratic" else d * (x + 1)) * math.sqrt(T) / 4)
                    assert fr.mean[hi, ri, di].item() == pytest.approx(sum(ex) / 3, abs=1e-12)


def test_family_run_averaged_arm_is_the_fixed_iterate_average():
    """The averaged arm (the annealed rows' averaging control) is the uniform mean of x_2..x_{T+1} of the fixed
    stepsize on the same noise, checked against a plain loop."""
    T, rho, deltas = 40, torch.tensor([2.0, 8.0], dtype=torch.float64), torch.tensor([0.2, 1.0], dtype=torch.float64)
    for family in ("quadratic", "abs"):
        fr = family_run("linear", rho, T, family=family, deltas=deltas, n_paths=3, seed=6, averaged=True,
                        device="cpu")
        assert fr.averaged.shape == (2, 2)
        assert torch.equal(fr.averaged_envelope, fr.averaged.max(-1).values)
        g = torch.Generator().manual_seed(6)
        xi = (2.0 * torch.randint(0, 2, (T, 3), generator=g) - 1.0).tolist()
        for ri, r in enumerate(rho.tolist()):
            for di, d in enumerate(deltas.tolist()):
                ex = []
                for s in range(3):
                    x, xs = 1.0, 0.0
                    for t in range(T):
                        grad = (d * x if family == "quadratic" else d) + xi[t][s]
                        x = min(1.0, max(-1.0, x - r / math.sqrt(T) * grad))
                        xs += x
                    xb = xs / T
                    ex.append((d * xb * xb / 2 if family == "quadratic" else d * (xb + 1)) * math.sqrt(T) / 4)
                assert fr.averaged[ri, di].item() == pytest.approx(sum(ex) / 3, abs=1e-12)
    assert family_run("linear", rho, T, n_paths=2).averaged is None
    with pytest.raises(ValueError, match="no averaged arm"):
        _ = family_run("linear", rho, T, n_paths=2).averaged_envelope
    with pytest.raises(TypeError, match="averaged"):
        family_run("linear", rho, T, n_paths=2, averaged=1)


def _numpy_envelope(seed: int, step, loss):
    """The sceptics' independent numpy harness (not theorybook; own ±1 noise stream of ``seed``, 1024 paths, T = 1024,
    7 δ on [T^(−1/2), 1], ρ ∈ [4, 64]): ``envelope(h, average)`` runs x ← clip(step(x, η_t, δ, ξ_t), −1, 1) with
    η_t = ρ·h_t/√T and returns the slope of ln max_δ E[loss(δ, z)]·√T/4 against ln ρ, z the last iterate or the
    average; also the schedule's time grid u = t/T."""
    T, K, S = 1024, 7, 1024
    rho = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    deltas = np.logspace(-0.5 * np.log10(T), 0, K)
    xi = np.random.default_rng(seed).choice([-1.0, 1.0], size=(T, S))

    def envelope(h, average):
        out = []
        for r in rho:
            lr = r / np.sqrt(T) * h
            x, xs = np.ones((K, S)), np.zeros((K, S))
            for t in range(T):
                x = np.clip(step(x, lr[t], deltas[:, None], xi[t]), -1, 1)
                xs += x
            z = xs / T if average else x
            out.append(loss(deltas[:, None], z).mean(1).max() * np.sqrt(T) / 4)
        return np.polyfit(np.log(rho), np.log(out), 1)[0]

    return envelope, np.arange(T) / T


def test_averaging_control_rederived_in_numpy():
    """Sceptic's re-derivation (independent numpy, own noise stream, 1024 paths): on the quadratic family the fixed
    stepsize's iterate average has a worst case over δ that does not grow with ρ (exponent < 0 on ρ ∈ [4, 64]),
    while linear decay's last iterate grows like ρ^(1/3) — the averaging control passes the annealed rows."""
    envelope, u = _numpy_envelope(12345, lambda x, lr, d, xi: (1 - lr * d) * x - lr * xi,
                                  lambda d, z: 0.5 * d * z * z)
    avg, lin = envelope(np.ones_like(u), True), envelope(1 - u, False)
    assert avg < 0.0 < 0.2 < lin < 0.47

    fr = family_run("linear", torch.tensor([1.0, 4.0]), 100, n_paths=8, device="cpu")
    assert torch.allclose(fr.delta, default_deltas(100))
    assert fr.delta[0].item() == pytest.approx(0.1) and fr.delta[-1].item() == pytest.approx(1.0)
    assert torch.equal(fr.envelope, fr.mean.max(-1).values)
    assert torch.equal(fr.worst_delta, fr.delta[fr.worst_index])
    assert (fr.envelope_sem >= 0).all() and torch.isfinite(fr.mean).all()
    # inverse-sqrt runs at its classical base D/G: η_t = ρ·D/(G√t)
    a = family_run("inverse_sqrt", torch.tensor([1.0]), 100, deltas=torch.tensor([1.0]), n_paths=4, device="cpu")
    assert torch.isfinite(a.mean).all()


def test_worst_case_verdicts_validation():
    with pytest.raises(ValueError, match="Invalid run"):
        worst_case_verdicts("not a run")
    assert CHAPTER_SEEDS == (0,)


# ---------------------------------------------------------------- validation policy (issue 14)
TYPE_BAD = [
    lambda: schedule("polynomial", True),
    lambda: schedule(True),
    lambda: stepsizes(True, "fixed", 10),
    lambda: stepsizes(0.1, "fixed", True),
    lambda: suffix_bound(True, "fixed", 10),
    lambda: suffix_bound(2.0, "fixed", 10, eta_star="0.1"),
    lambda: family_run("linear", [2.0], 10, n_paths=True),
    lambda: explore("cosine", 1.0, True, 100),
]


@pytest.mark.parametrize("call", TYPE_BAD)
def test_bools_and_strings_are_not_numbers(call):
    with pytest.raises(TypeError):
        call()


VALUE_BAD = [
    (lambda: schedule("linear", 5), "p"),
    (lambda: schedule("fixed", 2), "p"),
    (lambda: schedule("polynomial", float("nan")), "p"),
    (lambda: schedule("polynomial", float("inf")), "p"),
    (lambda: schedule("polynomial", 1e6), "p"),
    (lambda: stepsizes(float("nan"), "fixed", 10), "eta"),
    (lambda: stepsizes(float("inf"), "fixed", 10), "eta"),
    (lambda: suffix_bound(float("nan"), "fixed", 10), "rho"),
    (lambda: suffix_bound(1e13, "fixed", 10), "rho"),
    (lambda: suffix_bound(2.0, "fixed", 10, eta_star=float("inf")), "eta_star"),
    (lambda: family_run("linear", [0.5], 10), "rho"),
    (lambda: family_run("linear", [2.0], 10, deltas=[0.0]), "deltas"),
    (lambda: family_run("linear", [2.0], 10, family="hinge"), "family"),
    (lambda: fit_exponent([1, 2, 4, 8], [1, 2, 3, 4], rho_min=2, rho_max=3), "rho_min"),
    (lambda: fit_exponent([2, 2, 2], [1, 2, 3]), "rhos"),
    (lambda: default_deltas(100, 1), "n"),
    (lambda: misspecification_curve(make_problem("logistic", n=50, d=3), "linear", 10, seeds=2, rho_max=2,
                                    margin_octaves=0), "margin_octaves"),
]


@pytest.mark.parametrize("call,name", VALUE_BAD)
def test_bad_values_raise(call, name):
    with pytest.raises(ValueError, match=f"Invalid {name}"):
        call()


def test_linear_accepts_p_one_and_numpy_scalars():
    assert schedule("linear", 1) == schedule("polynomial", 1)
    assert schedule("polynomial", np.int64(2)) == schedule("polynomial", 2)
    assert stepsizes(1.0, "fixed", np.int64(5)).shape == (5,)
    assert suffix_bound(torch.tensor(2.0), "linear", torch.tensor(100)).shape == ()


def test_memory_guard_refuses_huge_T():
    with pytest.raises(ValueError, match="Refusing to allocate"):
        suffix_bound(2.0, "linear", 1e9)
    with pytest.raises(ValueError, match="Refusing to allocate"):
        ideal_eta("linear", 10**9)
    with pytest.raises(ValueError, match="Refusing to allocate"):
        family_run("linear", [2.0], 10**7, n_paths=10**6)


def test_bound_in_log_space_never_overflows():
    b = suffix_bound(torch.tensor([1.0, 1e6, 1e12], dtype=torch.float64), "fixed", 100, eta_star=1e12)
    assert torch.isfinite(b).all()
    assert b[-1].item() == pytest.approx(1e24 * 10 / 2, rel=1e-9)  # (1 + e²T)/(2eT)·√T ≈ e√T/2, e = 10²⁴


# ---------------------------------------------------------------- verdicts (issue 33): bands and controls
def test_pilot_bands_tell_neighbouring_degrees_apart():
    """Each band is |pilot bias| + 3.29·SD rounded up to 0.005, and narrower than the gap between 1/5 and 1/7."""
    from theorybook.annealing_robustness.verdicts import PILOT, band

    assert band(0.2, 0.2) == pytest.approx(0.025)
    assert band(PILOT["envelope"]["quadratic"], 0.2) < 1 / 5 - 1 / 7
    assert band(PILOT["envelope"]["cubic"], 1 / 7) < 1 / 5 - 1 / 7


def test_seeded_rows_controls_fail():
    from theorybook.annealing_robustness import seeded_verdicts

    v = seeded_verdicts(0)
    assert v.passed
    rep = [r for r in v.rows if r.kind == "reproduces"]
    assert len(rep) == 3 and all(r.controls and not any(c["passes"] for c in r.controls) for r in rep)
    # the non-smooth family's rows (issue 57) reproduce: averaging, the fixed stepsize (and linear decay for p = 2)
    # break the upper bound there
    ns = [r for r in v.rows if "δ|x + 1|" in r.claim]
    assert len(ns) == 2 and all(r.tests == "poly" and r.outcome == "reproduces" for r in ns)
    assert all(any("averaging" in c["label"] for c in r.controls) for r in ns)
    assert [len(r.controls) for r in ns] == [3, 4]
    # the sceptic's ablation of "to zero": the same decay stopped at 10 % of its peak fails the bound
    assert all(any("10%" in c["label"] and not c["passes"] for c in r.controls) for r in ns)
    # the annealed worst-case rows on the smooth family hold, not specific: the fixed stepsize's iterate average
    # passes them too, while the slower-decaying schedules fail them
    ann = [r for r in v.rows if r.tests in ("poly", "cosine") and r not in ns]
    assert len(ann) == 4 and all(r.kind == r.outcome == "not_specific" for r in ann)
    for r in ann:
        passing = [c["label"] for c in r.controls if c["passes"]]
        assert len(passing) == 1 and "averaging" in passing[0]
    assert all(r.source in ("derived", "reconstruction") for r in v.rows if r.kind == "consistency")
    # the synthetic grid row holds, not specific: iterate averaging passes it, fixed and inverse-sqrt fail it
    syn = [r for r in v.rows if r.tests == "experiments-synthetic"]
    assert len(syn) == 1 and syn[0].kind == syn[0].outcome == "not_specific"
    passing = [c["label"] for c in syn[0].controls if c["passes"]]
    assert len(passing) == 1 and "averaging" in passing[0]


def test_coarse_grid_experiment_shapes_and_validation():
    from theorybook.annealing_robustness.dynamics import coarse_grid_experiment
    from theorybook.annealing_robustness.verdicts import grid_verdicts

    run = coarse_grid_experiment(3, T=200, n=200, d=5, n_paths=2)
    assert set(run.etas) == set(run.excess) == set(run.ratio) == {"linear", "fixed", "inverse_sqrt", "fixed_averaged"}
    assert torch.equal(run.etas["fixed_averaged"], run.etas["fixed"])  # the fixed stepsize's own grid
    assert all(run.etas[h].shape == run.excess[h].shape == (10,) for h in run.etas)
    assert run.fixed_best == pytest.approx(float(run.excess["fixed"].min()))
    assert run.ratio["fixed"] >= 1.0 and run.ratio_annealed == run.ratio["linear"] > 0
    for h in run.etas:
        assert torch.allclose(run.etas[h][1:] / run.etas[h][:-1], torch.full((9,), 2.0, dtype=torch.float64))
    assert float(run.etas["inverse_sqrt"][0]) > float(run.etas["fixed"][0])  # each grid centred on its own ideal
    with pytest.raises(ValueError, match="Invalid lo/hi"):
        coarse_grid_experiment(0, lo=-1, hi=1)
    with pytest.raises(TypeError):
        coarse_grid_experiment(True)
    with pytest.raises(ValueError, match="Invalid run"):
        grid_verdicts("not a run")


def test_headline_validates():
    from theorybook.annealing_robustness import headline

    with pytest.raises(TypeError, match="mapping"):
        headline([], None)
    with pytest.raises(ValueError, match="missing keys"):
        headline({}, None)


def test_run_sgd_average_is_the_mean_of_the_iterates():
    from theorybook.annealing_robustness.dynamics import make_problem, run_sgd

    prob = make_problem("logistic", n=50, d=3, seed=1)
    runs = run_sgd(prob, 0.3, "fixed", 20, (0,), record_every=1)
    avg = run_sgd(prob, 0.3, "fixed", 20, (0,), average=True)
    xs = []
    for T in range(1, 21):  # the iterate after step T: a run of length T (same example sequence prefix)
        xs.append(run_sgd(prob, 0.3, "fixed", T, (0,)).x)
    assert torch.allclose(avg.x, torch.stack(xs).mean(0), atol=1e-10)
    assert runs.final_excess.shape == avg.final_excess.shape
    with pytest.raises(TypeError):
        run_sgd(prob, 0.3, "fixed", 20, (0,), average=1)


def test_abs_family_rows_rederived_in_numpy():
    """Independent numpy (own noise stream, 1024 paths) on f = δ|x + 1|: the fixed stepsize's iterate average has a
    worst case over δ growing like ρ^(≈2/3) on ρ ∈ [4, 64], linear decay's last iterate like ρ^(≈1/3) — the
    averaging control fails the non-smooth rows' bound (1/3 + band), linear decay passes it."""
    from theorybook.annealing_robustness.verdicts import ABS_PILOT, abs_band

    envelope, u = _numpy_envelope(54321, lambda x, lr, d, xi: x - lr * (d + xi), lambda d, z: d * (z + 1))
    bound = 1 / 3 + abs_band(ABS_PILOT["envelope"]["linear"], 1 / 3)
    avg, lin = envelope(np.ones_like(u), True), envelope(1 - u, False)
    assert 0.55 < avg and bound < avg
    assert 0.25 < lin < bound
    # the sceptic's ablation: linear decay stopped at 10 % of the peak breaks the bound (≈ 0.52)
    assert bound < envelope(0.1 + 0.9 * (1 - u), False) < 0.65


def test_floor_schedule():
    from theorybook.annealing_robustness.theory import schedule
    from theorybook.annealing_robustness.worst_case import ABS_FLOOR, ABS_SCHEDULES

    h = schedule("polynomial", 2, 0.1)
    u = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
    assert torch.allclose(h(u), 0.1 + 0.9 * (1 - u) ** 2)
    assert h.label == "quadratic to 10%" and schedule("linear", floor=0.1).label == "linear to 10%"
    assert schedule("polynomial", 2) == schedule("polynomial", 2, 0.0)  # no floor: the paper's schedule
    assert ABS_FLOOR == 0.1 and ("polynomial", 1, ABS_FLOOR) in ABS_SCHEDULES
    for bad in (1.0, -0.1, True):
        with pytest.raises((ValueError, TypeError)):
            schedule("polynomial", 1, bad)
    with pytest.raises(ValueError, match="floor"):
        schedule("fixed", floor=0.1)


def test_abs_verdicts_validation_and_band():
    from theorybook.annealing_robustness import abs_verdicts
    from theorybook.annealing_robustness.verdicts import ABS_PILOT, abs_band

    with pytest.raises(ValueError, match="Invalid run"):
        abs_verdicts("not a run")
    with pytest.raises(ValueError, match="Invalid run"):  # a quadratic-family run is refused
        abs_verdicts(family_run(("fixed", ("polynomial", 1), ("polynomial", 2)), torch.tensor([4.0, 8.0]), 16,
                                n_paths=2, averaged=True))
    assert abs_band(ABS_PILOT["envelope"]["linear"], 1 / 3) == pytest.approx(0.025)
    assert abs_band(ABS_PILOT["envelope"]["quadratic"], 1 / 5) == pytest.approx(0.030)
    with pytest.raises(TypeError):
        abs_band(True, 0.2)
