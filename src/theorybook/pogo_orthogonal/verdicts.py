r"""Every row the POGO chapter shows, built here so that the chapter, the seed-robustness test and the ledger read
the same builders.

:func:`seeded_verdicts` builds every row that depends on a random draw (the Procrustes problems and their
random starts) for one seed; :func:`deterministic_verdicts` builds the rows without randomness (operation
counts, sympy). The chapter shows both in one table (:func:`chapter_verdicts`, ``seed = CHAPTER_SEEDS[0]``).
Every tolerance is fixed below with its provenance (``basis``); no row involves wall-clock time.

The experiment (:data:`PROCRUSTES`): ``b`` float32 orthogonal Procrustes problems of size ``p × p``, POGO-SGD and
Landing at :math:`\eta = 1/L`, POGO-VectorAdam and Riemannian Adam at :math:`\eta = 0.2` (:data:`VADAM_TUNING`),
``steps`` steps each.
"""

from __future__ import annotations

import math

import torch

from .. import validate
from ..check import Control, PaperClaim, Planted, Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import loglog_slope
from .dynamics import (
    POGO,
    Trace,
    infeasibility,
    one_step_infeasibility,
    procrustes_problem,
    product_count,
    relative_gradient,
    run_method,
)
from .theory import derive_correction_error, derive_quartic_coefficients, derive_tangent_gram, infeasibility_order

__all__ = ["CHAPTER_SEEDS", "MATCHED", "PAPER_CLAIMS", "PROCRUSTES", "chapter_verdicts", "deterministic_verdicts",
           "VADAM_TUNING", "eta4_law", "matched_gap_infeasibility", "vadam_recorrected",
           "first_step", "procrustes_runs", "seeded_verdicts", "step1_prediction", "GAP_BOUND", "LANDING_GRID",
           "LANDING_TUNED", "score", "sgd_recorrected"]

#: The seed(s) the chapter itself uses (the seed-robustness test draws unseen ones).
CHAPTER_SEEDS = (0,)
#: The Procrustes experiment behind the seeded rows and the chapter's first figure.
#: VectorAdam's η (``lr_vadam``) is fixed by a rule stated before the row was run (the review's fix, issue 57): the
#: smallest η on the doubling grid :data:`VADAM_TUNING` whose 150-step relative gap is ≤ 1e-2 on every pilot seed
#: 9001–9005 — the step at which VectorAdam actually optimises in the budget. Pilot gaps (median over the five
#: seeds): η = 0.05 → 0.138, 0.1 → 0.035, 0.2 → 0.0069 (all ≤ 0.0093), 0.4 → 0.0013; so η = 0.2. ``lr_lemma`` = 0.05
#: is the round value under the lemma's bound ¾η⁴ ≤ 1e-5 (η ≤ 0.06), kept for the consistency row on the lemma.
PROCRUSTES = {"b": 32, "p": 16, "steps": 150, "lr_vadam": 0.2, "lr_lemma": 0.05}
#: The tuning rule of VectorAdam's η (and of geoopt's Riemannian Adam, tuned by the same rule: also 0.2).
VADAM_TUNING = {"grid": (0.025, 0.05, 0.1, 0.2, 0.4, 0.8), "gap": 1e-2, "pilot_seeds": (9001, 9002, 9003, 9004, 9005)}
#: Landing vs POGO at a matched optimality gap: the gap level, the step cap of Landing's run and how often it is
#: recorded (its gap and feasibility, every third step: the matched step is the first recorded one).
MATCHED = {"gap": 1e-3, "cap": 400, "every": 3}
#: float32 feasibility level: ≈ 10·p·ε₃₂ for p = 16 (the round-off of forming XXᵀ, with a 10× margin).
F32_LEVEL = 1e-5
#: The λ of the ablation control: a correction that leaves the linear term (1 − 2λ)E of the infeasibility.
LAM_CONTROL = 0.25
#: The progress bound of the 'hyperparameters' row (pilot seeds 9001–9010: POGO-SGD's largest gap at step 150 was
#: 1.8e-3; the bound is 5.7× above) — the same bound as the progress consistency row.
GAP_BOUND = 1e-2
#: The most corrections per step of the 'feasible' row's plant (:func:`sgd_recorrected`).
PLANT_MAX_CORRECTIONS = 10
#: Landing's tuning grid for the 'hyperparameters' row (issue 57): its λ_L and its step, on pilot seeds, at POGO's
#: 150-step budget, scored by :func:`score` (bench/pogo_landing_tuning.py; rule fixed before the run).
LANDING_GRID = {"lam": (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0), "eta_L": (0.5, 1.0, 2.0, 4.0),
                "pilot_seeds": (9001, 9002, 9003, 9004, 9005)}
#: The tuned cell (bench/results/pogo_landing_tuning.json, the smallest median score over the pilot seeds: 20.9,
#: against POGO-SGD's 0.06–0.18 on the same seeds; ties at η·L = 2 and 4 — the safe step 1/(2λ_L) caps the step
#: — resolved to the first on the grid).
LANDING_TUNED = {"lam": 3.0, "eta_L": 1.0}


def score(gap: float, infeas: float) -> float:
    """The 'hyperparameters' row's statistic: max(gap / :data:`GAP_BOUND`, ‖XXᵀ − I‖_F / :data:`F32_LEVEL`) at the
    end of the budget; ≤ 1 means optimised and on the manifold."""
    gap = validate.number("gap", gap, 0.0, math.inf)
    infeas = validate.number("infeas", infeas, 0.0, math.inf)
    return max(gap / GAP_BOUND, infeas / F32_LEVEL)

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("feasible", "POGO effectively meets the orthogonality constraints and, in practice, keeps "
               "orthogonality at all times.", headline=True),
    PaperClaim("adaptive", "POGO lets modern adaptive optimizers be used on orthogonal matrices."),
    PaperClaim("landing", "Landing (Ablin et al., 2024), which POGO revisits, relaxes orthogonality temporarily: "
               "its iterate is only attracted to the manifold."),
    PaperClaim("five_products", "A POGO step costs 5 matrix products and is GPU-friendly.", quoted_only=True,
               why="both counting conventions fit our step: six full products as written (the flop counter), or "
                   "five product-equivalents if the two symmetric Gram products count half (syrk); a count "
                   "cannot tell which convention the paper uses", reason_class="paper text unread"),
    PaperClaim("cheap", "POGO costs little or nothing extra per step.", quoted_only=True,
               why="a wall-clock claim about GPU training; step times and times to target come from bench/pogo.py "
                   "(CPU) and are shown, not tested (no wall-clock time in a verdict)", reason_class="paper-scale GPU"),
    PaperClaim("hyperparameters", "POGO reduces the number of hyperparameters (Landing's λ and safe-step ε go): "
               "with only its step to set, it needs no tuning that Landing needs."),
    PaperClaim("scale", "POGO optimises thousands of orthogonal matrices in minutes where alternatives take hours.",
               quoted_only=True, why="GPU wall-clock at the paper's scale; not measurable on this CPU",
               reason_class="paper-scale GPU"),
)


def procrustes_runs(seed: int, methods: tuple[str, ...] = ("pogo-sgd", "pogo-vadam"),
                    device=None) -> tuple[dict[str, Trace], float]:
    """The runs of :data:`PROCRUSTES` for ``seed``: ``({method: Trace}, η = 1/L)``. SGD-type methods use
    η = 1/L; POGO-VectorAdam and geoopt's Riemannian Adam η = ``PROCRUSTES["lr_vadam"]`` (:data:`VADAM_TUNING`)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, dtype=torch.float32,
                              device=resolve_device(device))
    lr = 1.0 / prob.lipschitz
    special = {"pogo-vadam": PROCRUSTES["lr_vadam"], "radam-geoopt": PROCRUSTES["lr_vadam"]}
    return {m: run_method(prob, m, special.get(m, lr), PROCRUSTES["steps"]) for m in methods}, lr


def eta4_law(seed: int, n_eta: int = 9, device=None, lam: float = 0.5) -> dict[str, object]:
    r"""One POGO-SGD step (the optimiser itself, float64) from the start :math:`X_0` of the seed's Procrustes
    problems along their actual gradient, for η with :math:`\eta\max_i\lVert\Psi_i\rVert_2` from 3e-3 to 1e-1.

    Returns ``etas``, ``measured`` (max_i ‖X⁺X⁺ᵀ − I‖_F), ``leading`` (the lemma's leading term
    :math:`\tfrac34\eta^4\max_i\lVert(\Psi_i\Psi_i^\top)^2\rVert_F`), ``identity`` (max over η of
    |measured − ‖(I+E)(I−E/2)²−I‖_F| on the first matrix, E = MMᵀ − I: an algebraic identity), the fitted log-log
    ``slope``
    and its ``stderr``, and ``bound``: the rigorous relative gap between measured and leading,
    :math:`(\eta_{\max}\lVert\Psi\rVert_2)^2/3` (from :math:`\lVert\tfrac14E^3\rVert\le\tfrac13\lVert E\rVert_2
    \lVert\tfrac34E^2\rVert`). ``lam`` ≠ ½ (the ablation control) makes the same measurement with the
    correction :math:`X^+ = M + \lambda(M - MM^\top M)`, whose infeasibility keeps the term :math:`(1-2\lambda)E`.
    """
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    n_eta = validate.integer("n_eta", n_eta, 3, 200)
    lam = validate.number("lam", lam, 0.0, 1.0, low_open=True, high_open=True)
    device = resolve_device(device)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, device=device)
    X0, G0 = prob.X0, prob.grad(prob.X0)
    Psi = relative_gradient(X0, G0)
    psi2 = float(torch.linalg.matrix_norm(Psi, ord=2).max())
    etas = torch.logspace(math.log10(3e-3), -1.0, n_eta, dtype=torch.float64) / psi2
    measured = []
    for eta in etas.tolist():
        param = torch.nn.Parameter(X0.clone())
        param.grad = G0.clone()
        POGO([param], eta, lam=lam).step()
        measured.append(float(infeasibility(param.detach()).max()))
    meas1, ident1 = one_step_infeasibility(X0[0], Psi[0], etas.to(device))
    identity = float((meas1 - ident1).abs().max())
    PP = Psi @ Psi.mT
    lead_c = 0.75 * float(torch.linalg.matrix_norm(PP @ PP).max())
    eta_np = to_numpy(etas)
    leading = [lead_c * e**4 for e in eta_np.tolist()]
    fit = loglog_slope(eta_np, measured)
    return {"etas": eta_np, "measured": measured, "leading": leading, "identity": identity,
            "slope": fit.slope, "stderr": fit.stderr, "bound": (float(etas[-1]) * psi2) ** 2 / 3,
            "max_rel_dev": max(abs(m / lv - 1) for m, lv in zip(measured, leading, strict=True))}


def first_step(seed: int, lr: float, device=None) -> dict[str, float]:
    r"""POGO-SGD's first step on the seed's Procrustes problems (float64, at :math:`X_0`): ``eta_psi`` =
    :math:`\eta\max_i\lVert\Psi_i\rVert_2` (the step-size regime) and ``prediction`` = the lemma's infeasibility
    :math:`\max_i\lVert-\tfrac34E_i^2+\tfrac14E_i^3\rVert_F` with :math:`E_i=\eta^2\Psi_i\Psi_i^\top`."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    lr = validate.number("lr", lr, 0.0, 1e6, low_open=True)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, device=resolve_device(device))
    Psi0 = relative_gradient(prob.X0, prob.grad(prob.X0))
    E0 = lr**2 * Psi0 @ Psi0.mT
    return {"eta_psi": lr * float(torch.linalg.matrix_norm(Psi0, ord=2).max()),
            "prediction": float(torch.linalg.matrix_norm(-0.75 * E0 @ E0 + 0.25 * E0 @ E0 @ E0).max())}


def step1_prediction(seed: int, lr: float, device=None) -> float:
    r"""The lemma's infeasibility after POGO-SGD's first step (``first_step(seed, lr)["prediction"]``)."""
    return first_step(seed, lr, device)["prediction"]


def matched_gap_infeasibility(trace: Trace, gap: float) -> float:
    """max ‖XXᵀ − I‖_F at the first recorded step with relative gap ≤ ``gap`` (inf if never reached)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"Invalid trace: {type(trace).__name__} (must be a Trace, e.g. run_method(...))")
    gap = validate.number("gap", gap, 0.0, math.inf, low_open=True)
    return next((i for g, i in zip(trace.gap, trace.infeas, strict=True) if g <= gap), math.inf)


def _recorrected(seed: int, lr: float, steps: int, base: str, repeats: int, tol: float | None,
                 device=None) -> float:
    """POGO's own run on the chapter's Procrustes problems with the λ = ½ correction applied again after every
    step, up to ``repeats`` times (stopping early once max_i ‖XXᵀ − I‖_F ≤ ``tol``, when given); max_i ‖XXᵀ − I‖_F
    over all steps."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    lr = validate.number("lr", lr, 0.0, 1e6, low_open=True)
    steps = validate.integer("steps", steps, 1, 100_000)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, dtype=torch.float32,
                              device=resolve_device(device))
    param = torch.nn.Parameter(prob.X0.clone())
    opt = POGO([param], lr, base=base)
    worst = float(infeasibility(param.detach()).max())
    for _ in range(steps):
        param.grad = prob.grad(param.detach())
        opt.step()
        with torch.no_grad():
            for _ in range(repeats):
                if tol is not None and float(infeasibility(param.detach()).max()) <= tol:
                    break
                X = param.detach()
                param.copy_(X + 0.5 * (X - X @ X.mT @ X))
        worst = max(worst, float(infeasibility(param.detach()).max()))
    return worst


def vadam_recorrected(seed: int, lr: float, steps: int, device=None) -> float:
    r"""The plant of the VectorAdam row: POGO-VectorAdam's own run (the same problems, start, η, betas and
    steps) with the λ = ½ correction :math:`X \leftarrow X + \tfrac12(X - XX^\top X)` applied a second time after
    every step, which takes each step's ¾e² error to round-off. Returns max_i ‖XXᵀ − I‖_F over all steps: the
    paper's effect ("keeps orthogonality at all times") at the paper's size, in the method's own arm."""
    return _recorrected(seed, lr, steps, "vadam", 1, None, device)


def sgd_recorrected(seed: int, lr: float, steps: int, device=None) -> float:
    r"""The plant of the 'feasible at all times' row: POGO-SGD's own run (the same problems, start, η and steps)
    with the λ = ½ correction :math:`X \leftarrow X + \tfrac12(X - XX^\top X)` repeated after every step until
    max_i ‖XXᵀ − I‖_F ≤ 1e-6 (float32 round-off; at most :data:`PLANT_MAX_CORRECTIONS` repeats), so the iterate is
    at round-off after every step. Returns max_i ‖XXᵀ − I‖_F over all steps: the paper's effect ("keeps
    orthogonality at all times", round-off in its prototype) at the paper's size, in the method's own arm."""
    return _recorrected(seed, lr, steps, "sgd", PLANT_MAX_CORRECTIONS, 1e-6, device)


def deterministic_verdicts() -> Verdicts:
    """Rows without randomness: product counts of our code (flop counter) and the sympy derivations."""
    v = Verdicts("POGO: counts and algebra", display=False)
    n_pogo, n_landing = product_count("pogo", 4, 16, 16), product_count("landing", 4, 16, 16)
    v.equal("matrix products per POGO step of our code (flop counter, λ = ½)", round(n_pogo, 6), 6.0,
            kind="consistency", source="derived",
            note="XXᵀ, (XXᵀ)G̃, XG̃ᵀ, (XG̃ᵀ)X, MMᵀ, (MMᵀ)M, as in the authors' code. The paper's '5' fits too if "
                 "the two Gram products count half (syrk), so this is not a difference; it checks that our step "
                 "makes no hidden product")
    v.equal("matrix products per Landing step of our code (flop counter)", round(n_landing, 6), 5.0,
            kind="consistency", source="derived", note="the same four products for Ψ, plus (XXᵀ − I)X")
    corr, gram = derive_correction_error(), derive_tangent_gram()
    v.true("X⁺X⁺ᵀ − I = −¾E² + ¼E³ at λ = ½ (sympy)", corr["holds"], kind="consistency", source="derived",
           measured=str(corr["half"]), note="the lemma behind the η⁴ rows")
    v.true("MMᵀ = I + η²ΨΨᵀ for orthonormal X and tangent Ψ (non-commutative sympy)", gram["holds"],
           kind="consistency", source="derived", note="why E = η²ΨΨᵀ in the lemma")
    v.equal("leading power of η in the one-step infeasibility (sympy)", infeasibility_order(), 4,
            kind="consistency", source="derived")
    v.true("quartic q(λ) coefficients = the code's formulas (generic symbolic 2×2)",
           derive_quartic_coefficients(2, 2)["holds"], kind="consistency", source="paper",
           note="the coefficient formulas are the authors' (code); checked by expansion, since our optional "
                "quartic λ uses them")
    return v


def _seeded(seed: int, device=None) -> Verdicts:
    """The rows of :func:`seeded_verdicts` (about 0.6 s on one CPU core)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    v = Verdicts(f"POGO: seeded rows (seed {seed})", display=False)
    law = eta4_law(seed, device=device)
    ctl = eta4_law(seed, device=device, lam=LAM_CONTROL)
    v.close("η⁴ law: log-log slope of one-step infeasibility (POGO step from X₀ along the actual gradient)",
            law["slope"], 4.0, atol=0.05, kind="consistency", source="derived",
            basis=f"model: the E³ term biases the slope by ≤ {law['bound']:.1e} and float64 round-off by < 1e-4 "
                  f"(fit stderr {law['stderr']:.1e}); 0.05 is ≥ 10× both",
            control=Control(f"the same step with λ = {LAM_CONTROL} (linear term (1 − 2λ)E survives)",
                            ctl["slope"], why="the ablation: a correction without the exact λ = ½",
                            tuned="none needed: the same nine step sizes and start"),
            note="checks our lemma on the optimiser itself: 9 step sizes, η‖Ψ‖₂ ∈ [3e-3, 0.1], float64")
    v.less("one-step infeasibility ÷ leading term ¾η⁴‖(ΨΨᵀ)²‖_F: max |ratio − 1|", law["max_rel_dev"],
           law["bound"] + 1e-6, kind="consistency", source="derived",
           basis="model: ‖¼E³‖_F ≤ ⅓‖E‖₂‖¾E²‖_F gives the bound (η_max‖Ψ‖₂)²/3, + 1e-6 for float64 round-off",
           control=Control(f"the same ratio with λ = {LAM_CONTROL}", ctl["max_rel_dev"],
                           why="the ablation: a correction without the exact λ = ½",
                           tuned="none needed: the same nine step sizes and start"))
    v.less("one-step infeasibility = ‖(I+E)(I−E/2)² − I‖_F with E = MMᵀ − I: max absolute difference",
           law["identity"], 1e-13, kind="consistency", source="derived",
           basis="model: float64 round-off ≈ p²·ε₆₄ ≈ 6e-14 at p = 16",
           note="an identity for any M (code vs algebra), not a test of the η⁴ law")
    runs, lr = procrustes_runs(seed, methods=("pogo-vadam",), device=device)
    vadam = runs["pogo-vadam"]
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, dtype=torch.float32,
                              device=resolve_device(device))
    steps = PROCRUSTES["steps"]
    # POGO-SGD past step `steps` until the matched gap (the rows at step `steps` read index `steps`)
    sgd_run = run_method(prob, "pogo-sgd", lr, MATCHED["cap"], target=MATCHED["gap"], min_steps=steps)
    sgd = Trace("pogo-sgd", *(x[: steps + 1] for x in (sgd_run.step, sgd_run.time, sgd_run.gap, sgd_run.infeas)),
                sgd_run.diverged)
    landing = run_method(prob, "landing", lr, MATCHED["cap"], target=MATCHED["gap"], record_every=MATCHED["every"])
    sgd_ablated = run_method(prob, "pogo-sgd", lr, steps, lam=LAM_CONTROL)
    vadam_lemma = run_method(prob, "pogo-vadam", PROCRUSTES["lr_lemma"], steps)
    vadam_ctl = run_method(prob, "pogo-vadam", PROCRUSTES["lr_lemma"], steps, lam=LAM_CONTROL)
    first = first_step(seed, lr, device=device)
    at_gap = matched_gap_infeasibility(sgd_run, MATCHED["gap"])
    land_at_gap = matched_gap_infeasibility(landing, MATCHED["gap"])
    f32 = ("model: ≈ 10·p·ε₃₂ for p = 16, the round-off of forming XXᵀ with a 10× margin (pilot seeds "
           "9001–9010: POGO's largest value 1.7e-6, Landing's smallest final value 2.6e-4)")
    same_eta = "none needed: the same η = 1/L, start and gradients as POGO-SGD (no free parameter)"
    v.close("POGO-SGD with a large first step (η = 1/L from a random start): max ‖XXᵀ − I‖_F over all "
            f"{steps} steps = the lemma's step-1 prediction", sgd.max_infeas, first["prediction"], rtol=1e-3,
            kind="consistency", source="derived",
            basis="model: float32 round-off of the run (≈ 1e-6) against a float64 prediction ≥ 1e-2: 1e-3 "
                  "relative",
            note=f"step-size regime η·max‖Ψ₀‖₂ = {first['eta_psi']:.2f}: the peak is step 1's η⁴ transient, as our "
                 "lemma predicts. It checks the lemma on the run, not the paper: 'feasible at all times' is the "
                 "next row (the same maximum against round-off), the end of the run the 'hyperparameters' row")
    plant_sgd = sgd_recorrected(seed, lr, steps, device=device)
    v.greater(f"POGO-SGD at η = 1/L: max ‖XXᵀ − I‖_F over every one of its {steps} steps is above float32 "
              "round-off (not orthogonal at all times)", sgd.max_infeas, F32_LEVEL, kind="differs", source="paper",
              tests="feasible", paper=0.0,
              paper_shown="round-off at every step ('in practice keeps orthogonality at all times'; the paper "
                          "digest's CPU prototype: max 1.1e-6 along the run)",
              basis=f32 + "; the threshold is the one this row used at step 150 before issue 57",
              planted=Planted("POGO-SGD's own run with the λ = ½ correction repeated after every step until the "
                              "iterate is at round-off (≤ 1e-6)", plant_sgd,
                              effect="the paper's feasibility at every step (round-off), put into the method's own "
                                     "arm at the same η, start and steps"),
              note=f"the peak is step 1's η⁴ transient (η·max‖Ψ₀‖₂ = {first['eta_psi']:.2f} from a random start; the "
                   "consistency row above checks it against our lemma), which then contracts quadratically: at "
                   f"step {steps} the iterate is back at {sgd.infeas[-1]:.1e}. Until issue 57 this row read only "
                   "the end of the run. Sceptic review (independent numpy, float32, own draws, 20 unseen seeds incl. "
                   "9000, 9006, 9099, 9100, 9201, 9202): max over all steps 0.098–0.18, but not only step 1 — max over "
                   "steps ≥ 10 is 1.5e-3–3.2e-3 and the run first reaches 1e-5 at step 43–74, so a reading of 'at all "
                   "times' that forgives the first step (or the first ten) differs too; plant 8.8e-7–1.0e-6 on all "
                   "20. At the authors' own example, its size and step (PCA 2000 × 1500, κ = 1000, lr 0.25, momentum "
                   "0.3, random orthonormal start assumed; η‖Ψ₀‖₂ = 0.53), step 1 leaves 0.285 and step 3 7.8e-3: "
                   "the transient is at the paper's step, not only at ours. "
                   "Pilot scan of the step (seeds 9001–9003, max over 150 steps / gap at step "
                   "150): η·L = 1/16 → 2.4–3.5e-6 / 0.10–0.11, 1/8 → 3.6–5.6e-5 / 0.031–0.034, 1/4 → 5.6–8.9e-4 / "
                   "0.0075–0.011, 1/2 → 0.0087–0.014 / 0.0018–0.0030, 1 → 0.13–0.20 / 5.6e-4–9.8e-4: POGO-SGD stays "
                   "at round-off at every step only at steps that leave a 10 % gap after 150 steps")
    land_tuned = run_method(prob, "landing", LANDING_TUNED["eta_L"] * lr, steps, landing_lam=LANDING_TUNED["lam"])
    landing150 = run_method(prob, "landing", lr, steps)
    land_ns = run_method(prob, "landing", lr, steps, landing_lam=prob.lipschitz / 2)
    hp_score = score(sgd.gap[-1], sgd.infeas[-1])
    v.less(f"POGO-SGD untuned (η = 1/L, its only hyperparameter): after {steps} steps optimised (gap ≤ "
           f"{GAP_BOUND:g}) and on the manifold (‖XXᵀ − I‖_F ≤ {F32_LEVEL:g}): max(gap/{GAP_BOUND:g}, "
           f"‖XXᵀ − I‖_F/{F32_LEVEL:g})", hp_score, 1.0, kind="reproduces", source="paper",
           tests="hyperparameters",
           basis=f"{f32}; gap bound {GAP_BOUND:g} from pilot seeds 9001–9010 (POGO-SGD's largest gap at step 150 "
                 "1.8e-3)",
           control=[Control(f"Landing at its best (λ_L, η) on a grid (λ_L = {LANDING_TUNED['lam']:g}, "
                            f"η = {LANDING_TUNED['eta_L']:g}/L)", score(land_tuned.gap[-1], land_tuned.infeas[-1]),
                            shown=f"{score(land_tuned.gap[-1], land_tuned.infeas[-1]):.3g} (gap "
                                  f"{land_tuned.gap[-1]:.1e}, ‖XXᵀ − I‖_F {land_tuned.infeas[-1]:.1e})",
                            why="Landing is the method whose λ and safe step POGO removes: does tuning them buy "
                                "what POGO gets untuned?",
                            tuned="λ_L ∈ {0.1, 0.3, 1, 3, 10, 30, 100} × η·L ∈ {0.5, 1, 2, 4} (safe step ε = ½, its "
                                  "authors'), POGO's 150-step budget, the row's own score, median over pilot seeds "
                                  "9001–9005 (bench/pogo_landing_tuning.py; best 20.9, POGO 0.06–0.18)"),
                    Control("Landing at its authors' defaults (λ_L = 1, ε = ½, η = 1/L)",
                            score(landing150.gap[-1], landing150.infeas[-1]),
                            shown=f"{score(landing150.gap[-1], landing150.infeas[-1]):.3g} (gap "
                                  f"{landing150.gap[-1]:.1e}, ‖XXᵀ − I‖_F {landing150.infeas[-1]:.1e})",
                            why="Landing untuned, as POGO is", tuned=same_eta),
                    Control(f"POGO-SGD with λ = {LAM_CONTROL} (the ablated correction)",
                            score(sgd_ablated.gap[-1], sgd_ablated.infeas[-1]),
                            why="the ablation of exactly the credited mechanism: the same tangent step and a normal "
                                "correction without the exact λ = ½ (errors contract only by |1 − 2λ| per step)",
                            tuned=same_eta + "; the same start and steps"),
                    Control("Landing with its normal step made Newton–Schulz's (λ_L = L/2, so λ_L·η = ½ at η = 1/L)",
                            score(land_ns.gap[-1], land_ns.infeas[-1]),
                            shown=f"{score(land_ns.gap[-1], land_ns.infeas[-1]):.3g} (gap {land_ns.gap[-1]:.1e}, "
                                  f"‖XXᵀ − I‖_F {land_ns.infeas[-1]:.1e})",
                            why="sceptic review: at λ_L·η = ½ Landing's normal term is POGO's correction "
                                "X − ½(XXᵀ − I)X, applied with the tangent step instead of after it — a λ_L read off "
                                "the data, not tuned: is the sequential correction what buys round-off?",
                            tuned="none: λ_L from L (the same L that sets η = 1/L), safe step ε = ½, the same start "
                                  "and steps")],
           note=f"POGO-SGD: gap {sgd.gap[-1]:.1e}, ‖XXᵀ − I‖_F {sgd.infeas[-1]:.1e} at step {steps}. Landing's grid "
                "trades one for the other: small λ_L optimises but stays off the manifold (λ_L = 1, η·L = 2: "
                "gap ≤ 9.8e-4, ‖XXᵀ − I‖_F ≥ 1.7e-4), large λ_L nears it and stops optimising (λ_L = 100: gap "
                "≈ 0.52, 0.9–1.3e-4); the safe step 1/(2λ_L) caps the step, so η matters only for λ_L ≤ 1. "
                "Beyond the budget Landing does reach both (λ_L = 30: gap 1e-3 at ~2,400–2,800 steps, 1.4–3.6e-6; "
                "the 'landing' row's note): the claim holds at POGO's budget, not at any budget. Sceptic review "
                "(independent numpy, own draws, float32): POGO 5.2–6.4e-7 at step 150 on 20 unseen seeds, λ = ¼ "
                "1.2e-4–6.3e-4, Landing (λ_L = 1) 1.8e-4–9.3e-4. The QR retraction is at round-off by "
                "construction, so it is shown in the figures, not registered as a control. "
                "Sceptic review, a finer grid with the safe step tuned too (independent numpy, own draws, pilot "
                "seeds 9001–9005, λ_L ∈ {0.5, 1, "
                "1.5, 2, 3, 5} × η·L ∈ {0.5, 1, 1.5, 2, 4} × ε ∈ {½, 1}): best median score 19.2 (λ_L = 1.5, ε = 1; "
                "gap 2.8e-4–1.3e-3, ‖XXᵀ − I‖_F 1.1e-4–4.1e-4), Landing at λ_L = L/2 16.7–50.2; POGO-SGD passes "
                "at η·L = ½, 1 and 2 alike (0.25–0.38, 0.06–0.11, 0.06), so its one step needs no tuning either")
    eta_va, eta_lemma = PROCRUSTES["lr_vadam"], PROCRUSTES["lr_lemma"]
    radam = run_method(prob, "radam-geoopt", eta_va, steps)
    plant = vadam_recorrected(seed, eta_va, steps, device=device)
    v.greater(f"POGO-VectorAdam at the η that optimises (η = {eta_va}: the smallest on a doubling grid reaching gap "
              f"≤ {VADAM_TUNING['gap']:g} in {steps} steps on pilot seeds): max ‖XXᵀ − I‖_F over all {steps} steps "
              "is above float32 round-off", vadam.max_infeas, F32_LEVEL, kind="differs", source="paper",
              tests="adaptive", paper=0.0,
              paper_shown="round-off at every step ('in practice keeps orthogonality at all times'; no number given)",
              basis=f32 + "; η fixed before this row by the tuning rule of VADAM_TUNING (pilot seeds 9001–9005: "
                          "median gap 0.138 at η = 0.05, 0.0069 at 0.2)",
              control=Control(f"geoopt's Riemannian Adam (QR retraction), η = {eta_va}", radam.max_infeas,
                              why="the adaptive optimiser on the manifold a sceptic compares with: is an adaptive "
                                  "step at this η necessarily off the manifold?",
                              tuned=f"the same rule, grid and pilot seeds as POGO-VectorAdam (it also gives "
                                    f"η = {eta_va}), same start and steps; its gap at step {steps}: "
                                    f"{radam.gap[-1]:.1e}"),
              planted=Planted("POGO-VectorAdam's own run with the λ = ½ correction applied twice per step", plant,
                              effect="the paper's feasibility at every step (round-off), put into the method's own "
                                     "arm at the same η, start, betas and steps"),
              note=f"POGO-VectorAdam's gap at step {steps}: {vadam.gap[-1]:.1e}. VectorAdam's direction has "
                   "‖Ψ̃‖_F ≤ 1 per matrix, so one step's error is ≤ ¾η⁴ (≈ 1.2e-3 at η = 0.2): the correction "
                   "leaves ~1e-4 at every step while VectorAdam makes progress. Until issue 57 this row ran at "
                   "η = 0.05 (lowered from 0.1 until it passed; 86 % of the gap removed in 150 steps). Sceptic "
                   "review (independent numpy, float32, own draws): peak 1.0–1.5e-4 and plant 6.3–6.9e-7 on seeds "
                   "7101–7115, 9000, 9006, 9010, 9011, 9201 (differs on all 20). η scan (seeds 0, 9001): η = 0.05 "
                   "→ 7.8–8.5e-7 (gap 0.13–0.14), 0.1 → 7.8–9.1e-6 (gap 0.033–0.038, under 1e-5 on all 20 unseen "
                   "seeds: 6.6–9.5e-6), 0.2 → 1.2–1.5e-4 (gap 0.005–0.010), 0.4 → 2.0–2.3e-3 (gap 0.001–0.002): "
                   "the verdict depends on the gap the tuning rule asks for. The test examines 'orthogonal at all "
                   "times' with an adaptive base, not whether VectorAdam is usable: it optimises and stays within "
                   "~1e-4")
    v.less(f"POGO-VectorAdam under the lemma's bound (η = {eta_lemma}, ¾η⁴ ≤ 1e-5): max ‖XXᵀ − I‖_F over all "
           f"{steps} steps", vadam_lemma.max_infeas, F32_LEVEL, kind="consistency", source="derived", basis=f32,
           control=Control(f"POGO-VectorAdam with λ = {LAM_CONTROL} (the ablated correction)",
                           vadam_ctl.max_infeas,
                           why="the ablation: is it the normalised step or the exact λ = ½ correction that keeps "
                               "the iterate feasible?",
                           tuned=f"none needed: the same η = {eta_lemma}, betas, start and steps"),
           note="checks our lemma's bound on VectorAdam's normalised step (‖Ψ̃‖_F ≤ 1 per matrix: one step's error "
                f"≤ ¾η⁴ ≤ 1e-5 for η ≤ 0.06), not that an adaptive optimiser can be used: at η = {eta_lemma} it "
                f"removes {1 - vadam_lemma.gap[-1]:.0%} of the gap in {steps} steps")
    v.greater(f"Landing (η = 1/L): ‖XXᵀ − I‖_F at the first step with gap ≤ {MATCHED['gap']:g} (off the manifold "
              "at a matched gap)", land_at_gap, F32_LEVEL, kind="reproduces", source="paper", tests="landing",
              basis=f32 + f"; gap level {MATCHED['gap']:g} fixed on pilot seeds 9001–9005 (POGO-SGD at round-off "
                          "there, ≤ 8e-7; Landing ≥ 3.3e-4)",
              control=Control(f"POGO-SGD at its first step with gap ≤ {MATCHED['gap']:g}", at_gap,
                              why="the paper's alternative to Landing, compared where both have optimised "
                                  "equally far (not at equal step counts: Landing keeps converging to the "
                                  "manifold over hundreds of steps)",
                              tuned=same_eta),
              note="Landing only attracts the iterate to the manifold: at equal progress it is still off it "
                   "(at its authors' λ_L = 1). Sceptic review (independent numpy, own draws, seeds 0 and 9001): "
                   "with a larger λ_L Landing reaches gap 1e-3 later and closer to the manifold — λ_L = 3: "
                   "273/242 steps, 3.3e-4/1.7e-4; 10: 990/805 steps, 5.1e-5/1.5e-5; 30: 2,817/2,413 steps, "
                   "3.6e-6/1.8e-6 (below 1e-5, ~20× POGO's 137/129 steps, beyond this row's 400-step cap). "
                   "'Only attracted' holds at a matched gap within POGO's budget, not at any budget. On 20 unseen "
                   "seeds (7101–7115, 9000, 9006, 9010, 9011, 9201) Landing at λ_L = 1 is at 2.2e-4–6.5e-3 at "
                   "the matched gap, POGO at 5.5e-7–3.0e-6. "
                   f"Run until the gap ≤ {MATCHED['gap']:g} (≤ {MATCHED['cap']} steps); the chapter plots "
                   "feasibility against gap over the whole run")
    v.less(f"POGO-SGD relative optimality gap after {steps} steps", sgd.gap[-1], 1e-2, kind="consistency",
           source="derived",
           basis="pilot: seeds 9001–9010, the largest final gap of POGO-SGD was 1.8e-3; the bound is 5.7× above",
           control=Control("do nothing (stay at X₀)", sgd.gap[0], why="staying at X₀ is feasible too",
                           tuned="none needed: no parameter", weak="fails by construction (gap 1 at X₀)"),
           note="the feasibility rows mean something only if POGO also optimises: staying at X₀ is feasible too")
    return v


def seeded_verdicts(seed: int, device=None) -> Verdicts:
    """Every row of the chapter that depends on a random draw, for one ``seed``, computed with one intra-op
    thread on the CPU (small matrices: a second thread only adds hand-off cost, and on a loaded machine
    OpenMP threads waiting for each other slow small ops down by orders of magnitude)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    device = resolve_device(device)
    with one_thread(device):
        return _seeded(seed, device)


def chapter_verdicts(seed: int, device=None) -> Verdicts:
    """The chapter's table: the deterministic rows and the seeded rows of ``seed``, with :data:`PAPER_CLAIMS`."""
    v = Verdicts("POGO: feasibility, η⁴ law, cost", claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed, device))
    return v
