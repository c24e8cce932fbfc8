"""Tests for theorybook.pogo_orthogonal: closed forms vs numerics, reference numbers, validation, widget."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from theorybook import pogo_orthogonal as po
from theorybook.pogo_orthogonal import theory as th
from theorybook.pogo_orthogonal.widgets import B_RANGE, LR_RANGE, P_RANGE, explore

F64 = torch.float64


def _stack(b=3, p=4, n=6, seed=0):
    gen = torch.Generator().manual_seed(seed)
    X = po.random_orthonormal(b, p, n, generator=gen, dtype=F64, device="cpu")
    G = torch.randn(b, p, n, generator=gen, dtype=F64)
    return X, G


# ------------------------------------------------------------------ sympy derivations
@pytest.mark.parametrize("derive", [th.derive_tangent_gram, th.derive_tangency, th.derive_correction_error,
                                    th.derive_optimal_lambda, th.derive_quartic_coefficients])
def test_derivations_hold(derive):
    assert derive()["holds"] is True


def test_derivation_values():
    E = th.sp.Symbol("E")
    assert th.sp.expand(th.derive_correction_error()["half"] - (-th.sp.Rational(3, 4) * E**2 + E**3 / 4)) == 0
    assert th.infeasibility_order() == 4
    e = th.sp.Symbol("e", positive=True)
    assert th.derive_optimal_lambda()["series"].coeff(e, 1) == -th.sp.Rational(3, 8)


# ------------------------------------------------------------------ geometry, closed forms vs numerics
@pytest.mark.parametrize("shape", [(3, 4, 6), (2, 5, 5), (1, 1, 7)])
def test_relative_gradient_is_tangent(shape):
    X, G = _stack(*shape)
    Psi = po.relative_gradient(X, G)
    S = Psi @ X.mT
    torch.testing.assert_close(S, -S.mT, atol=1e-12, rtol=0)


def test_tangent_gram_and_correction_identity():
    X, G = _stack(2, 4, 7)
    Psi = po.relative_gradient(X, G)
    eta = 0.3
    M = X - eta * Psi
    eye = torch.eye(4, dtype=F64)
    torch.testing.assert_close(M @ M.mT, eye + eta**2 * Psi @ Psi.mT, atol=1e-12, rtol=0)
    E = M @ M.mT - eye
    Xp = po.normal_correction(M)
    torch.testing.assert_close(Xp @ Xp.mT - eye, -0.75 * E @ E + 0.25 * E @ E @ E, atol=1e-12, rtol=0)


def test_eta4_slope():
    X, G = _stack(1, 6, 10)
    Psi = po.relative_gradient(X, G)[0]
    Psi = Psi / torch.linalg.matrix_norm(Psi, ord=2)
    etas = torch.logspace(-2, -1, 6, dtype=F64)
    meas, pred = po.one_step_infeasibility(X[0], Psi, etas)
    torch.testing.assert_close(meas, pred, rtol=1e-6, atol=0)
    slope = float(torch.diff(meas.log()).mean() / torch.diff(etas.log()).mean())
    assert abs(slope - 4) < 0.05


@pytest.mark.parametrize("lam, factor", [(0.5, 0.0), (0.25, 0.5), (0.75, 0.5)])
def test_contraction_factor(lam, factor):
    X, _ = _stack(1, 4, 6)
    gen = torch.Generator().manual_seed(3)
    M = X + 1e-5 * torch.randn(1, 4, 6, generator=gen, dtype=F64)
    ratio = float(po.infeasibility(po.normal_correction(M, lam)) / po.infeasibility(M))
    assert abs(ratio - factor) < 1e-3


def test_quartic_lambda_never_worse_than_half():
    X, G = _stack(8, 5, 9)
    M = X - 0.8 * po.relative_gradient(X, G)
    lam = po.quartic_lambda(M)
    assert lam.shape == (8, 1, 1)
    better = po.infeasibility(po.normal_correction(M, lam))
    half = po.infeasibility(po.normal_correction(M, 0.5))
    assert bool((better <= half * (1 + 1e-9)).all())
    assert bool((better < half).any())
    # near the manifold λ* → ½ − 3e/8
    assert abs(float(po.quartic_lambda(X - 1e-4 * po.relative_gradient(X, G)).mean()) - 0.5) < 1e-3


def test_product_counts():
    assert po.product_count("pogo", 2, 8, 8) == 6.0
    assert po.product_count("landing", 2, 8, 8) == 5.0
    assert po.product_count("pogo-quartic", 2, 8, 8) == 9.0


# ------------------------------------------------------------------ methods: orientation, batching, feasibility
STEPS = {
    "landing": lambda X, G: po.landing_step(X, G, 0.1),
    "qr": lambda X, G: po.qr_retraction(X, G, 0.1),
    "cayley": lambda X, G: po.cayley_step(X, G, 0.1),
}


@pytest.mark.parametrize("name", list(STEPS))
@pytest.mark.parametrize("shape", [(3, 4, 4), (3, 3, 8), (2, 2, 9)])
def test_steps_batched_equals_single_and_transpose(name, shape):
    X, G = _stack(*shape)
    f = STEPS[name]
    out = f(X, G)
    for i in range(shape[0]):
        torch.testing.assert_close(out[i], f(X[i], G[i]), atol=1e-12, rtol=1e-10)
    if shape[1] != shape[2]:  # a tall stack is the column form of the same problem (square: both are rows)
        torch.testing.assert_close(f(X.mT, G.mT), out.mT, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("name", ["qr", "cayley"])
def test_retractions_are_feasible_and_first_order(name):
    X, G = _stack(2, 3, 8)
    f = {"qr": po.qr_retraction, "cayley": po.cayley_step}[name]
    assert float(po.infeasibility(f(X, G, 0.2)).max()) < 1e-12
    eta = 1e-4
    direction = (f(X, G, eta) - X) / eta
    torch.testing.assert_close(direction, -po.relative_gradient(X, G), atol=1e-3, rtol=0)


def test_cayley_low_rank_matches_full():
    X, G = _stack(2, 2, 9)  # 2p < n → low-rank path
    Y = po.cayley_step(X, G, 0.3)
    W = 0.5 * (G.mT @ X - X.mT @ G)  # n × n generator in column form
    eye = torch.eye(9, dtype=F64)
    full = torch.linalg.solve(eye + 0.15 * W, (eye - 0.15 * W) @ X.mT).mT
    torch.testing.assert_close(Y, full, atol=1e-12, rtol=0)


def test_landing_safe_step_keeps_distance_below_eps():
    X, G = _stack(4, 5, 5)
    for _ in range(50):
        X = po.landing_step(X, 50 * G, 1.0)
        assert float(po.infeasibility(X).max()) <= 0.5 + 1e-9


@pytest.mark.parametrize("base, kw", [("sgd", {}), ("sgd", {"momentum": 0.9}), ("vadam", {}),
                                      ("sgd", {"lambda_every": 2})])
def test_pogo_batched_equals_single(base, kw):
    X, G = _stack(3, 4, 6)
    big = torch.nn.Parameter(X.clone())
    opt = po.POGO([big], 0.1, base=base, **kw)
    singles = [torch.nn.Parameter(X[i].clone()) for i in range(3)]
    opts = [po.POGO([s], 0.1, base=base, **kw) for s in singles]
    for k in range(4):
        big.grad = G * (k + 1)
        opt.step()
        for i in range(3):
            singles[i].grad = G[i] * (k + 1)
            opts[i].step()
    for i in range(3):
        torch.testing.assert_close(big.detach()[i], singles[i].detach(), atol=1e-12, rtol=1e-10)


def test_pogo_reference_step_and_columns():
    X, G = _stack(2, 3, 7)
    p = torch.nn.Parameter(X.clone())
    p.grad = G.clone()
    po.POGO([p], 0.2).step()
    M = X - 0.2 * 0.5 * (X @ X.mT @ G - X @ G.mT @ X)
    torch.testing.assert_close(p.detach(), 1.5 * M - 0.5 * M @ M.mT @ M, atol=1e-13, rtol=0)
    q = torch.nn.Parameter(X.mT.clone())  # column-orthonormal (7 × 3)
    q.grad = G.mT.clone()
    po.POGO([q], 0.2).step()
    torch.testing.assert_close(q.detach(), p.detach().mT, atol=1e-13, rtol=0)


def test_vadam_direction_reference():
    X, G = _stack(1, 3, 5)
    p = torch.nn.Parameter(X.clone())
    p.grad = G.clone()
    po.POGO([p], 0.1, base="vadam", betas=(0.9, 0.99)).step()
    S = G @ X.mT
    T = G - 0.5 * (S + S.mT) @ X  # the tangent projection P_X(G) enters the buffers
    Gt = T / (T.norm() + 1e-8)  # first step: m̂ = P_X(G), v̂ = ‖P_X(G)‖²
    M = X - 0.1 * po.relative_gradient(X, Gt)
    torch.testing.assert_close(p.detach(), po.normal_correction(M), atol=1e-12, rtol=0)


# ------------------------------------------------------------------ problems: known answers
def test_procrustes_optimum_is_optimal_and_in_component():
    pr = po.procrustes_problem(20, 5, 1)
    assert float(po.infeasibility(pr.X_star).max()) < 1e-12
    torch.testing.assert_close(torch.linalg.det(pr.X_star), torch.linalg.det(pr.X0))
    Psi = po.relative_gradient(pr.X_star, pr.grad(pr.X_star))
    assert float(Psi.abs().max()) < 1e-10
    assert pr.gap(pr.X0) == pytest.approx(1.0) and abs(pr.gap(pr.X_star)) < 1e-12


def test_pca_optimum():
    pc = po.pca_problem(30, 7, 1000.0, 0)
    evals, evecs = torch.linalg.eigh(pc.A)
    top = evecs[:, -7:].unsqueeze(0)
    assert abs(pc.gap(top)) < 1e-12
    assert pc.gap(pc.X0) > 0.1
    assert float(evals.max() / evals.min()) == pytest.approx(1000.0, rel=1e-8)


# (method, lr (× 1/L for SGD-type), final infeasibility bound in float64): POGO's is the η⁴ term, not round-off
RUNS = [("pogo-sgd", 1.0, 1e-8), ("pogo-vadam", 0.3, 1e-4), ("landing", 1.0, 0.5), ("qr", 1.0, 1e-12),
        ("cayley", 1.0, 1e-12), ("radam-geoopt", 0.3, 1e-12)]


@pytest.mark.parametrize("method, lr, infeas_bound", RUNS)
def test_run_method_converges(method, lr, infeas_bound):
    pr = po.procrustes_problem(8, 6, 0)
    scaled = lr / pr.lipschitz if method in ("pogo-sgd", "landing", "qr", "cayley") else lr
    tr = po.run_method(pr, method, scaled, 100, record_every=10)
    assert not tr.diverged and tr.gap[-1] < 0.05 * tr.gap[0]
    assert tr.infeas[-1] < infeas_bound


def test_run_method_pca_and_target():
    pc = po.pca_problem(40, 10, 100.0, 0)
    tr = po.run_method(pc, "pogo-sgd", 0.25, 300, momentum=0.3, target=1e-3)
    s, t = po.time_to_target(tr, 1e-3)
    assert s == tr.step[-1] and t >= 0 and tr.infeas[-1] < 1e-5  # float64: the η⁴ term
    geo = po.run_method(pc, "radam-geoopt", 0.01, 20)
    assert not geo.diverged and geo.gap[-1] < geo.gap[0]


# ------------------------------------------------------------------ validation
def test_validation_errors():
    X, G = _stack()
    bad = torch.nn.Parameter(X + 0.1)
    with pytest.raises(ValueError, match="orthonormal"):
        po.POGO([bad], 0.1)
    with pytest.raises(ValueError, match="Invalid base"):
        po.POGO([torch.nn.Parameter(X.clone())], 0.1, base="muon")
    with pytest.raises(ValueError, match="Invalid lam"):
        po.POGO([torch.nn.Parameter(X.clone())], 0.1, lam=1.0)
    with pytest.raises(ValueError, match="Invalid p"):
        po.pca_problem(5, 6, 10.0, 0)
    with pytest.raises(ValueError, match="Invalid G"):
        po.landing_step(X, G[:, :2], 0.1)
    with pytest.raises(ValueError, match="Invalid method"):
        po.run_method(po.procrustes_problem(2, 3, 0), "sgd", 0.1, 3)


@settings(max_examples=10, deadline=None)
@given(lr=st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
def test_nonpositive_lr_rejected(lr):
    X, G = _stack()
    for f in (lambda: po.POGO([torch.nn.Parameter(X.clone())], lr), lambda: po.qr_retraction(X, G, lr),
              lambda: po.cayley_step(X, G, lr), lambda: po.landing_step(X, G, lr)):
        with pytest.raises(ValueError, match="Invalid lr"):
            f()


@settings(max_examples=15, deadline=None)
@given(momentum=st.floats(allow_nan=True), beta=st.floats(allow_nan=True))
def test_hyperparameter_ranges(momentum, beta):
    X, _ = _stack()
    ok = 0 <= momentum < 1 and 0 <= beta < 1
    if ok:
        po.POGO([torch.nn.Parameter(X.clone())], 0.1, momentum=momentum, betas=(beta, beta))
    else:
        with pytest.raises(ValueError):
            po.POGO([torch.nn.Parameter(X.clone())], 0.1, momentum=momentum, betas=(beta, beta))


# ------------------------------------------------------------------ widget
@pytest.mark.parametrize("method", po.METHODS)
@pytest.mark.parametrize("lr, b, p", [(LR_RANGE[0], B_RANGE[0], P_RANGE[0]), (LR_RANGE[1], 2, P_RANGE[1]),
                                      (LR_RANGE[1], B_RANGE[0], P_RANGE[0])])
def test_widget_extremes_never_raise(method, lr, b, p):
    tr = explore(method, lr, b, p, steps=5)
    assert len(tr.step) >= 1
    assert tr.diverged or all(math.isfinite(g) for g in tr.gap)


@pytest.mark.parametrize("lr", LR_RANGE)
def test_render_returns_figure_and_status(lr):
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.pogo_orthogonal.widgets import render

    fig, trace = render("pogo-sgd", lr, B_RANGE[1], P_RANGE[0])
    assert fig is not None and isinstance(trace.label, str)
    assert ("diverged" in trace.label) == trace.diverged
    matplotlib.pyplot.close(fig)


def test_widget_builds():
    pytest.importorskip("ipywidgets")
    from theorybook.pogo_orthogonal.widgets import explorer

    assert explorer() is not None


def test_plot_runs_draws_three_panels():
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.pogo_orthogonal.widgets import plot_runs

    pr = po.procrustes_problem(2, 3, 0)
    fig, ax = plot_runs({"pogo-sgd": po.run_method(pr, "pogo-sgd", 0.2, 3)}, "t")
    assert len(ax) == 3 and all(a.get_xlabel() for a in ax)
    matplotlib.pyplot.close(fig)


# ------------------------------------------------------------------ validation policy (issue 14) and verdicts
def test_bools_nan_and_numpy_integers():
    import numpy as np

    X, G = _stack()
    with pytest.raises(TypeError, match="bool"):
        po.POGO([torch.nn.Parameter(X.clone())], True)
    with pytest.raises(ValueError, match="Invalid lr"):
        po.qr_retraction(X, G, 1e12)  # beyond MAX_LR: only overflow lies there
    with pytest.raises(ValueError, match="NaN"):
        po.relative_gradient(X, torch.full_like(G, math.nan))
    with pytest.raises(ValueError, match="NaN"):
        po.infeasibility(torch.full_like(X, math.inf))
    with pytest.raises(TypeError, match="problem"):
        po.run_method(0.5, "pogo-sgd", 0.1, 3)
    with pytest.raises(TypeError, match="trace"):
        po.time_to_target(0.5, 1e-3)
    with pytest.raises(ValueError, match="Refusing to allocate"):
        po.procrustes_problem(10**9, 64, 0)
    prob = po.procrustes_problem(np.int64(2), np.int64(3), np.int64(0))  # numpy integers are integers
    assert po.run_method(prob, "pogo-sgd", np.float64(0.1), np.int64(2)).step[-1] == 2


def test_add_param_group_checks_orthonormality():
    X, _ = _stack()
    opt = po.POGO([torch.nn.Parameter(X.clone())], 0.1)
    with pytest.raises(ValueError, match="orthonormal"):
        opt.add_param_group({"params": [torch.nn.Parameter(X + 0.1)]})


def test_diverged_run_reports_inf_not_nan():
    prob = po.procrustes_problem(2, 3, 0)
    tr = po.run_method(prob, "pogo-sgd", 1e5, 5)
    assert tr.diverged and not any(math.isnan(x) for x in tr.gap + tr.infeas)


def test_eta4_law_on_actual_steps():
    from theorybook.pogo_orthogonal.verdicts import eta4_law

    law = eta4_law(0)
    assert law["slope"] == pytest.approx(4.0, abs=0.05)
    assert law["max_rel_dev"] <= law["bound"] + 1e-6
    assert law["identity"] < 1e-13


def test_eta4_control_has_slope_two():
    """The ablation control of the η⁴ rows: λ = 1/4 leaves the linear term (1 − 2λ)E, so the slope is 2 and the
    row's test (|slope − 4| ≤ 0.05) fails on it."""
    from theorybook.pogo_orthogonal.verdicts import LAM_CONTROL, eta4_law

    ctl = eta4_law(0, lam=LAM_CONTROL)
    assert ctl["slope"] == pytest.approx(2.0, abs=0.05)
    assert ctl["max_rel_dev"] > 1.0
    with pytest.raises(ValueError):
        eta4_law(0, lam=1.5)


def test_vadam_feasibility_control_fails():
    """POGO-VectorAdam with the ablated λ = 1/4 leaves the manifold (well above the float32 level)."""
    from theorybook.pogo_orthogonal.verdicts import F32_LEVEL, LAM_CONTROL, PROCRUSTES

    prob = po.procrustes_problem(8, 8, 1, dtype=torch.float32)
    tr = po.run_method(prob, "pogo-vadam", PROCRUSTES["lr_lemma"], 60, lam=LAM_CONTROL)
    ok = po.run_method(prob, "pogo-vadam", PROCRUSTES["lr_lemma"], 60)
    assert tr.max_infeas > 10 * F32_LEVEL > ok.max_infeas


def test_vadam_eta_rule_and_adaptive_row_differs():
    """Issue 57: VectorAdam's η is the smallest grid value reaching the gap on the pilot seeds (0.2); there the row
    differs (infeasibility ≈ 1e-4), Riemannian Adam at the same η stays at round-off (fails the row's test), and
    the plant — the method's own run with the correction applied twice — is caught."""
    from theorybook.pogo_orthogonal import verdicts as vd

    grid = vd.VADAM_TUNING["grid"]
    assert vd.PROCRUSTES["lr_vadam"] in grid and grid.index(vd.PROCRUSTES["lr_vadam"]) > grid.index(0.05)
    assert set(vd.VADAM_TUNING["pilot_seeds"]) <= set(range(9001, 9201))
    assert vd.vadam_recorrected(0, vd.PROCRUSTES["lr_vadam"], 40) < vd.F32_LEVEL
    with pytest.raises(ValueError):
        vd.vadam_recorrected(0, -1.0, 10)
    v = vd.seeded_verdicts(0)
    row = next(r for r in v.rows if r.tests == "adaptive")
    assert row.kind == "differs" and row.outcome == "differs" and float(row.measured) > 10 * vd.F32_LEVEL
    assert float(row.controls[0]["measured"]) < vd.F32_LEVEL and not row.controls[0]["passes"]
    assert not row.planted["passes"] and float(row.planted["measured"]) < vd.F32_LEVEL
    assert next(c for c in vd.PAPER_CLAIMS if c.headline).id == "feasible"


def test_feasible_row_takes_the_maximum_over_every_step_and_differs():
    """Issue 57 (a): the headline 'at all times' is tested on max ‖XXᵀ − I‖_F over every step of POGO-SGD's run
    (float32 level 1e-5, fixed before); step 1's transient puts it far above, the plant (the run with the correction
    repeated to round-off after every step) is caught."""
    from theorybook.pogo_orthogonal import verdicts as vd

    v = vd.seeded_verdicts(0)
    row = next(r for r in v.rows if r.tests == "feasible")
    runs, _ = vd.procrustes_runs(0, methods=("pogo-sgd",))
    assert float(row.measured) == pytest.approx(runs["pogo-sgd"].max_infeas, rel=1e-5)
    assert row.kind == "differs" and row.outcome == "differs" and float(row.measured) > 1e3 * vd.F32_LEVEL
    assert not row.planted["passes"] and float(row.planted["measured"]) < vd.F32_LEVEL
    assert next(c for c in vd.PAPER_CLAIMS if c.headline).id == "feasible"


def test_hyperparameters_row_against_tuned_landing():
    """Issue 57 (b): untuned POGO-SGD ends 150 steps optimised and on the manifold (score ≤ 1); Landing at its best
    (λ_L, η) of the grid (tuned on pilot seeds with POGO's budget), Landing at its defaults, the λ = ¼ ablation and
    (sceptic review) Landing whose normal step is Newton–Schulz's (λ_L = L/2 at η = 1/L) all fail the same test."""
    from theorybook.pogo_orthogonal import verdicts as vd

    v = vd.seeded_verdicts(0)
    row = next(r for r in v.rows if r.tests == "hyperparameters")
    assert row.kind == "reproduces" and row.outcome == "reproduces" and float(row.measured) <= 1.0
    assert len(row.controls) == 4 and not any(c["passes"] for c in row.controls)
    ns = row.controls[3]  # the sceptic's Landing with λ_L·η = ½ (its normal step = POGO's correction)
    assert "λ_L = L/2" in ns["label"] and float(ns["measured"].split()[0]) > 1.0
    tuned = row.controls[0]
    assert f"λ_L = {vd.LANDING_TUNED['lam']:g}" in tuned["label"] and float(tuned["measured"].split()[0]) > 1.0
    assert vd.score(5e-3, 5e-6) == pytest.approx(0.5) and vd.score(1e-3, 2e-5) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        vd.score(-1.0, 0.0)


def test_landing_tuning_is_the_benchmarks_best_cell():
    """LANDING_TUNED is the cell bench/pogo_landing_tuning.py picked (smallest median pilot score), on the grid."""
    import json
    from pathlib import Path

    from theorybook.pogo_orthogonal import verdicts as vd

    res = json.loads((Path(__file__).resolve().parents[1] / "bench/results/pogo_landing_tuning.json").read_text())
    assert res["best"]["lam"] == vd.LANDING_TUNED["lam"] and res["best"]["eta_L"] == vd.LANDING_TUNED["eta_L"]
    assert res["grid"]["pilot_seeds"] == list(vd.LANDING_GRID["pilot_seeds"])
    assert all(set(x) <= set(range(9001, 9201)) for x in [res["grid"]["pilot_seeds"]])
    assert min(c["median_score"] for c in res["cells"]) == res["best"]["median_score"] > 1.0
    assert max(res["pogo_sgd"]["scores"]) <= 1.0


def test_landing_lam_reaches_run_method():
    prob = po.procrustes_problem(4, 6, 0, dtype=F64)
    a = po.run_method(prob, "landing", 0.1, 5)
    b = po.run_method(prob, "landing", 0.1, 5, landing_lam=10.0)
    assert a.infeas != b.infeas
    with pytest.raises(ValueError):
        po.run_method(prob, "landing", 0.1, 5, landing_lam=0.0)


def test_first_step_regime_and_prediction():
    from theorybook.pogo_orthogonal.verdicts import first_step, step1_prediction

    f = first_step(0, 0.5)
    assert f["prediction"] == step1_prediction(0, 0.5)
    assert first_step(0, 0.25)["eta_psi"] == pytest.approx(f["eta_psi"] / 2)
    # the η⁴ law in the prediction: halving η divides it by ≈ 16 while η‖Ψ‖ is small
    small = first_step(0, 0.01)["prediction"] / first_step(0, 0.005)["prediction"]
    assert small == pytest.approx(16.0, rel=0.01)


def test_deterministic_verdicts_hold_and_count_six_products():
    v = po.deterministic_verdicts()
    assert v.passed and any(r.kind == "consistency" and r.measured == "6" for r in v.rows)
    assert not any(r.kind in ("reproduces", "differs") for r in v.rows)


def test_paper_claims_and_chapter_table():
    from theorybook.pogo_orthogonal import verdicts as vd

    tested = {c.id for c in vd.PAPER_CLAIMS if not c.quoted_only}
    assert tested == {"feasible", "adaptive", "landing", "hyperparameters"}
    v = vd.chapter_verdicts(po.CHAPTER_SEEDS[0])
    assert v.passed and {r.tests for r in v.rows if r.tests} == tested
    assert all(r.controls for r in v.rows if r.kind == "reproduces")


def test_seeded_verdicts_for_chapter_seed():
    v = po.seeded_verdicts(po.CHAPTER_SEEDS[0])
    assert v.passed, [r.claim for r in v.failures]
    assert {r.kind for r in v.rows} == {"reproduces", "differs", "consistency"}  # the lemma row is ours


# ------------------------------------------------------------------ the optimizer as people use it
def _mixed(seed=0, base="vadam"):
    """An orthonormal stack, a tall (column-orthonormal) matrix, and two Euclidean parameters."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.nn.Parameter(po.random_orthonormal(3, 4, 6, generator=gen, dtype=F64, device="cpu"))
    Y = torch.nn.Parameter(po.random_orthonormal(1, 2, 5, generator=gen, dtype=F64, device="cpu")[0].mT.clone())
    w = torch.nn.Parameter(torch.randn(5, 3, generator=gen, dtype=F64))
    b = torch.nn.Parameter(torch.randn(3, generator=gen, dtype=F64))
    targets = [torch.randn(t.shape, generator=gen, dtype=F64) for t in (X, Y, w, b)]
    params = [X, Y, w, b]
    opt = po.POGO([{"params": [X, Y]}, {"params": [w, b], "orthogonal": False, "lr": 0.05}], 0.02,
                  base=base, momentum=0.5)
    return params, targets, opt


def _train(params, targets, opt, steps):
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = sum(((p - t) ** 2).sum() for p, t in zip(params, targets, strict=True))
            loss.backward()
            return loss
        opt.step(closure)


@pytest.mark.parametrize("base", ["sgd", "vadam"])
def test_euclidean_groups_take_plain_steps_and_orthogonal_groups_stay_feasible(base):
    params, targets, opt = _mixed(base=base)
    X, Y, w, b = params
    ref = [w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()]
    torch_opt = (torch.optim.SGD(ref, lr=0.05, momentum=0.5) if base == "sgd"
                 else torch.optim.Adam(ref, lr=0.05, betas=(0.9, 0.999), eps=1e-8))
    for _ in range(5):
        _train(params, targets, opt, 1)
        torch_opt.zero_grad()
        sum(((p - t) ** 2).sum() for p, t in zip(ref, targets[2:], strict=True)).backward()
        torch_opt.step()
    assert torch.allclose(w, ref[0], rtol=1e-12, atol=1e-14) and torch.allclose(b, ref[1], rtol=1e-12, atol=1e-14)
    assert float(po.infeasibility(X.detach()).max()) < 1e-3 and float(po.infeasibility(Y.detach()).max()) < 1e-3


def test_add_param_group_checks_orthonormality_and_says_how_to_split():
    X, _ = _stack()
    opt = po.POGO([torch.nn.Parameter(X.clone())], 0.1)
    bias = torch.nn.Parameter(torch.zeros(4, dtype=F64))
    with pytest.raises(ValueError, match="orthogonal': False"):
        opt.add_param_group({"params": [bias]})
    with pytest.raises(ValueError, match="orthonormal"):
        opt.add_param_group({"params": [torch.nn.Parameter(X + 0.1)]})
    with pytest.raises(ValueError, match="Invalid lr"):
        opt.add_param_group({"params": [torch.nn.Parameter(X.clone())], "lr": -1.0})
    with pytest.raises(TypeError, match="orthogonal"):
        opt.add_param_group({"params": [bias], "orthogonal": 1})
    with pytest.raises(ValueError, match="Invalid feasibility_tol"):
        opt.add_param_group({"params": [torch.nn.Parameter(X.clone())], "feasibility_tol": 2.0})
    opt.add_param_group({"params": [torch.nn.Parameter(X + 1e-4)], "feasibility_tol": 1e-2})  # a drifted resume
    del opt.param_groups[-1]
    assert len(opt.param_groups) == 1  # rejected groups are not kept
    opt.add_param_group({"params": [bias], "orthogonal": False})
    assert len(opt.param_groups) == 2


@pytest.mark.parametrize("base", ["sgd", "vadam"])
def test_pogo_state_dict_roundtrip_resumes_bit_identically(base, tmp_path):
    params, targets, opt = _mixed(base=base)
    _train(params, targets, opt, 3)
    sd = opt.state_dict()
    for st_ in sd["state"].values():
        assert all(isinstance(k, str) for k in st_) and all(torch.is_tensor(v) or type(v) is int
                                                           for v in st_.values())
    torch.save(sd, tmp_path / "pogo.pt")
    loaded = torch.load(tmp_path / "pogo.pt")  # defaults: weights_only=True
    params2 = [torch.nn.Parameter(p.detach().clone()) for p in params]
    opt2 = po.POGO([{"params": params2[:2]}, {"params": params2[2:], "orthogonal": False, "lr": 0.05}], 0.02,
                   base=base, momentum=0.5, feasibility_tol=1e-2)  # resumed iterates are feasible to O(η⁴)
    opt2.load_state_dict(loaded)
    _train(params, targets, opt, 4)
    _train(params2, targets, opt2, 4)
    for a, c in zip(params, params2, strict=True):
        assert torch.equal(a, c)


# ------------------------------------------------------------------ issue 46: what an adopter hit
def _equal_on_manifold_losses():
    """St(100, 16): ½‖AX − B‖² with A orthogonal and −tr XᵀC, C = AᵀB, agree on the manifold up to a constant,
    but the first's Euclidean gradient has the normal part X."""
    gen = torch.Generator().manual_seed(0)
    A = po.random_orthonormal(1, 100, 100, generator=gen, dtype=torch.float64, device="cpu")[0]
    B = torch.randn(100, 16, generator=gen, dtype=torch.float64)
    C = A.T @ B
    X0 = po.random_orthonormal(1, 16, 100, generator=gen, dtype=torch.float64, device="cpu")[0].T.contiguous()
    f_star = -float(torch.linalg.svdvals(C).sum())

    def gap(X):
        return (-float((X * C).sum()) - f_star) / (-float((X0 * C).sum()) - f_star)

    return X0, gap, (lambda X: A.T @ (A @ X - B)), (lambda X: -C)


def _steps_to_gap(X0, gap, grad, lr, target=1e-3, steps=400, **kw):
    P = torch.nn.Parameter(X0.clone())
    opt = po.POGO([P], lr, **kw)
    for t in range(1, steps + 1):
        P.grad = grad(P.detach())
        opt.step()
        if gap(P.detach()) <= target:
            return t, gap(P.detach())
    return None, gap(P.detach())


@pytest.mark.parametrize("lr, kw", [(0.03, {"base": "sgd"}), (0.03, {"base": "sgd", "momentum": 0.9}),
                                    (0.3, {"base": "vadam"})])
def test_every_base_runs_the_same_on_two_losses_equal_on_the_manifold(lr, kw):
    """Buffers fed the raw Euclidean gradient kept its normal part: momentum 0.9 and VectorAdam stalled on
    ½‖AX − B‖² (final gap 0.37–0.44) while −tr XᵀC converged. Tolerance: the same step count, and the gap at it
    within 1 % relative: the tangent projection removes the normal part X exactly only on the manifold (it leaves
    (I − XXᵀ)X, of the size of POGO's own drift ‖XXᵀ − I‖ ≲ 1e-3 here), a relative perturbation of that order."""
    X0, gap, g_quad, g_lin = _equal_on_manifold_losses()
    s_quad, gap_quad = _steps_to_gap(X0, gap, g_quad, lr, **kw)
    s_lin, gap_lin = _steps_to_gap(X0, gap, g_lin, lr, **kw)
    assert s_quad is not None and s_quad == s_lin, (s_quad, s_lin)
    assert abs(gap_quad - gap_lin) <= 1e-2 * gap_lin


def test_float16_vadam_keeps_float32_statistics_and_is_finite():
    gen = torch.Generator().manual_seed(0)
    X = po.random_orthonormal(2, 4, 8, generator=gen, device="cpu").to(torch.float16)
    P = torch.nn.Parameter(X.clone())
    opt = po.POGO([P], 0.1, base="vadam")
    G = torch.zeros(2, 4, 8, dtype=torch.float16)
    G[0, 0, 0] = 1e-4  # a zero and a tiny entry: the 1e-8 epsilon underflowed in float16 before
    P.grad = G
    opt.step()
    assert torch.isfinite(P.float()).all()
    assert opt.state[P]["exp_avg"].dtype == torch.float32 and opt.state[P]["exp_avg_sq"].dtype == torch.float32


def test_sparse_refusal_is_atomic():
    gen = torch.Generator().manual_seed(0)
    X = torch.nn.Parameter(po.random_orthonormal(1, 3, 5, generator=gen, device="cpu")[0])
    emb = torch.nn.Embedding(4, 2, sparse=True)
    opt = po.POGO([{"params": [X]}, {"params": list(emb.parameters()), "orthogonal": False}], 0.1)
    X.grad = torch.ones_like(X)
    emb(torch.tensor([1])).sum().backward()
    before = X.detach().clone()
    with pytest.raises(RuntimeError, match="sparse"):
        opt.step()
    assert torch.equal(X.detach(), before) and not opt.state[X]


@pytest.mark.parametrize("shape", [(), (5,), (0, 3)])
def test_orthogonal_group_refuses_non_matrices_clearly(shape):
    with pytest.raises(ValueError, match=r"orthogonal group \(must be a matrix or a stack"):
        po.POGO([torch.nn.Parameter(torch.ones(shape))], 0.1)


def test_start_tolerance_is_resume_tol():
    from theorybook.pogo_orthogonal.optimizer import RESUME_TOL

    gen = torch.Generator().manual_seed(0)
    Q = po.random_orthonormal(1, 4, 4, generator=gen, device="cpu")[0]
    po.POGO([torch.nn.Parameter(1.02 * Q)], 0.1)  # ‖XXᵀ − I‖_F = 0.081 ≤ 0.1
    bad = 1.05 * Q  # 0.205
    assert float(po.infeasibility(bad)) > RESUME_TOL
    with pytest.raises(ValueError, match="must be ≤ 0.1"):
        po.POGO([torch.nn.Parameter(bad)], 0.1)


def test_feasibility_guard_warns_once_counts_and_names_a_safe_lr():
    from theorybook.pogo_orthogonal.optimizer import FEASIBILITY_BOUND

    pr = po.procrustes_problem(4, 8, 0, device="cpu")
    P = torch.nn.Parameter(pr.X0.clone())
    opt = po.POGO([P], 3.0, momentum=0.9)
    with pytest.warns(RuntimeWarning, match=r"lr ≤ [0-9.e-]+ \(η·max‖Ψ‖_F ≤ 0.8\)") as rec:
        for _ in range(10):
            P.grad = pr.grad(P.detach())
            opt.step()
    assert len([w for w in rec if "POGO" in str(w.message)]) == 1
    assert opt.infeasible_steps >= 1
    safe = POGO_safe_lr = float(str(rec[0].message).split("lr ≤ ")[1].split(" ")[0])
    P2 = torch.nn.Parameter(pr.X0.clone())
    opt2 = po.POGO([P2], POGO_safe_lr)
    import warnings as _w

    with _w.catch_warnings():
        _w.simplefilter("error", RuntimeWarning)
        for _ in range(10):
            P2.grad = pr.grad(P2.detach())
            opt2.step()
    assert opt2.infeasible_steps == 0 and float(po.infeasibility(P2.detach()).max()) < FEASIBILITY_BOUND
    assert safe > 0


def test_optimizer_module_split_keeps_public_names():
    from theorybook.optim import POGO
    from theorybook.pogo_orthogonal import dynamics, optimizer

    assert POGO is po.POGO is dynamics.POGO is optimizer.POGO
