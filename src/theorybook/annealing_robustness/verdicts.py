"""Every verdict row the annealing chapter shows (Attia & Koren, arXiv 2503.09411), each paper-claim row with its
controls.

:func:`worst_case_verdicts` turns one seed's :func:`~theorybook.annealing_robustness.worst_case.worst_case_experiment`
into the stochastic rows (``seeded_verdicts(seed)`` runs it; ``tests/test_seed_robustness.py`` re-runs it for 20
unseen seeds); :func:`headline` adds the deterministic consistency rows of the chapter (sympy, the discrete bound,
the Riemann brackets, the units) from the chapter's results.

The non-smooth family's rows (:func:`abs_verdicts`, issue 57) have their own pilot, :data:`ABS_PILOT`
(seeds 9101–9112), and the same band rule.

Tolerances of the stochastic rows come from a pilot on seeds 9001–9012 of :data:`theorybook.check.PILOT_SEEDS`
(16384 paths, the chapter's scale), recorded in :data:`PILOT`: the mean fitted exponent of every schedule and its
seed-to-seed SD (≤ 0.0070 for every envelope and one-problem fit). Each band is |pilot mean − prediction| (the
finite-window bias at T = 1024) plus 3.29 × 0.0070 = 0.023 (a false-alarm probability ≤ 1e-3 per row), rounded
up to 0.005.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .. import validate
from ..check import Control, PaperClaim, Verdicts
from .dynamics import AVERAGED, GridRun, coarse_grid_experiment
from .theory import fit_exponent
from .worst_case import (
    ABS_FLOOR,
    ABS_SCHEDULES,
    EXPERIMENT_SCHEDULES,
    WINDOW_ANNEALED,
    WINDOW_LINEAR,
    FamilyRun,
    abs_family_experiment,
    fixed_model_exponent,
    worst_case_experiment,
)

__all__ = ["PAPER_CLAIMS", "PILOT", "ABS_PILOT", "ABS_LABELS", "GRID_PILOT", "HEADLINE_KEYS", "band",
           "worst_case_verdicts", "abs_verdicts", "grid_verdicts", "seeded_verdicts", "headline"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("fixed-linear", "With a fixed or an inverse-square-root stepsize, a base stepsize misspecified by a "
               "factor ρ costs O(ρ/√T): linear in ρ", where="abstract", source="paper"),
    PaperClaim("poly", "Stepsizes annealed to zero polynomially with degree p cost only O(ρ^(1/(2p+1))/√T): a "
               "coarse grid search is safe", where="abstract", source="paper", headline=True),
    PaperClaim("cosine", "Cosine annealing costs ρ^(1/5)", where="Corollary (TL;DR)", source="secondary"),
    PaperClaim("experiments-synthetic", "On synthetic logistic regression annealed SGD is more robust to a coarse "
               "grid of base stepsizes than fixed-step SGD", where="Experiments", source="secondary"),
    PaperClaim("experiments-cifar", "On CIFAR-10 (Wide ResNet) annealed SGD is more robust to a coarse grid than "
               "fixed-step SGD", where="Experiments", source="secondary", quoted_only=True,
               why="a Wide ResNet trained on CIFAR-10 for every grid point and schedule is GPU-hours, and the "
                   "paper's settings (depth/width, epochs, grid factor) are not recovered",
               reason_class="paper-scale GPU"),
)

#: The pilot (seeds 9001–9012, 16384 paths, T = 1024): mean fitted exponent per schedule label, of the envelope
#: over δ and of the single problem δ = 1, and the largest seed-to-seed SD over all of them.
PILOT = {
    "seeds": "9001–9012",
    "envelope": {"fixed": 1.1633, "inverse-sqrt": 1.1622, "linear": 0.3393, "quadratic": 0.1988, "cubic": 0.1370,
                 "cosine": 0.2204},
    "single": {"linear": 0.5018, "quadratic": 0.3362, "cubic": 0.2507, "cosine": 0.3397},
    "fixed_minus_isq": 0.00107,  # SD 9e-6: the two schedules' last steps coincide at the worst δ = 1
    "sd_max": 0.0070,
}
_Z = 3.29  # z_threshold(1e-3)


def band(pilot_mean: float, predicted: float) -> float:
    """|pilot mean − prediction| + 3.29 × the pilot's largest SD, rounded up to 0.005."""
    m = validate.number("pilot_mean", pilot_mean, -10.0, 10.0)
    q = validate.number("predicted", predicted, -10.0, 10.0)
    raw = abs(m - q) + _Z * PILOT["sd_max"]
    return math.ceil(raw / 0.005 - 1e-9) * 0.005


def _p_end(h) -> float:
    return 2.0 if h.name == "cosine" else float(h.p)


def worst_case_verdicts(run: FamilyRun) -> Verdicts:
    """The chapter's stochastic rows, built from :func:`worst_case_experiment` (tolerances: :data:`PILOT`)."""
    if not isinstance(run, FamilyRun) or run.family != "quadratic" or len(run.schedules) != len(
            EXPERIMENT_SCHEDULES) or run.averaged is None:
        raise ValueError("Invalid run: must come from worst_case_experiment(seed)")
    v = Verdicts("Annealing: worst case over a problem family (seeded)", display=False)
    pilot = f"pilot: seeds {PILOT['seeds']} (16384 paths)"
    env, single = {}, {}
    for i, h in enumerate(run.schedules):
        lo, hi = WINDOW_LINEAR if h.name in ("fixed", "inverse_sqrt") else WINDOW_ANNEALED
        env[h.label] = fit_exponent(run.rho, run.envelope[i], rho_min=lo, rho_max=hi).slope
        single[h.label] = fit_exponent(run.rho, run.mean[i, :, -1], rho_min=lo, rho_max=hi).slope
    lo, hi = WINDOW_ANNEALED
    env_avg = fit_exponent(run.rho, run.averaged_envelope, rho_min=lo, rho_max=hi).slope

    # ---- fixed stepsize: linear in ρ (the discrete recursion's exponent at the worst δ = 1)
    model = fixed_model_exponent(WINDOW_LINEAR, run.T)
    tol = band(PILOT["envelope"]["fixed"], model)
    v.close("fixed: worst-case error linear in ρ (exponent 1, + discrete-time correction)", env["fixed"], model,
            atol=tol, kind="reproduces", source="paper", tests="fixed-linear",
            control=Control("linear decay, same family and fit: envelope exponent", env["linear"],
                            why="the annealed schedule the paper sets against the fixed one: a sceptic checks that "
                                "the fit can tell a linear worst case from the sublinear one annealing claims",
                            tuned="none needed: the same η* = D/(G√T), family, ρ grid and fit window as the method"),
            basis=f"{pilot}: mean {PILOT['envelope']['fixed']:.4f}, SD ≤ {PILOT['sd_max']}; band = |bias| + 3.29 SD",
            note=f"Fit on ρ ∈ [{WINDOW_LINEAR[0]:g}, {WINDOW_LINEAR[1]:g}] at T = {run.T}. Predicted: the slope of "
                 f"the discrete recursion's stationary excess η/(2(2 − η)) at the worst δ = 1 [derived] — 1 plus "
                 f"{model - 1:.3f} because ρη* reaches 1/2. The control is annealed: it must not be linear.")
    v.close("inverse-sqrt: worst-case exponent = the fixed stepsize's", env["inverse-sqrt"], env["fixed"],
            atol=0.002, kind="consistency", source="derived",
            basis=f"{pilot}: fixed − inverse-sqrt = {PILOT['fixed_minus_isq']} with SD 9e-6",
            note="At the worst δ = 1 only the last ~√T/ρ steps matter, where η/√t ≈ η/√T: one measurement, not a "
                 "second one — the paper's inverse-sqrt claim rests on the fixed row above.")

    # ---- annealed schedules: the paper's upper bound, our family's attainment, and one problem
    annealed = [h for h in run.schedules if h.name not in ("fixed", "inverse_sqrt")]
    for h in annealed:
        p = _p_end(h)
        pred = 1.0 / (2 * p + 1)
        tol = band(PILOT["envelope"][h.label], pred)
        # the next-slower-decaying schedule: p − 1 (p = 1: the fixed stepsize); cosine ≈ p = 2, so linear
        lower = {"linear": "fixed", "quadratic": "linear", "cubic": "quadratic", "cosine": "linear"}[h.label]
        same = "none needed: the same η* = D/(G√T), family, ρ grid and fit window as the method"
        ctrl = [Control(f"{lower}: same envelope fit", env[lower], tuned=same,
                        why="the next-slower-decaying schedule: a sceptic asks whether any schedule would pass "
                            "this bound, so the nearest one the paper ranks worse must break it")]
        if lower != "fixed":
            ctrl.append(Control("fixed: same envelope fit", env["fixed"], tuned=same,
                                why="the practitioner's default, the schedule the paper says is linear in ρ"))
        ctrl.append(Control("fixed stepsize with iterate averaging (uniform average of x_2..x_{T+1}): same envelope "
                            "fit", env_avg,
                            why="the simplest remedy for a misspecified constant step with no annealing at all "
                                "(Polyak–Ruppert averaging): the sceptic's ablation of the schedule's decay",
                            tuned="the fixed stepsize's η* = D/(G√T), the same family, δ grid, ρ grid, fit window, "
                                  "T and noise paths as the method; its output is the averaged iterate"))
        claim_id, src = ("cosine", "secondary") if h.name == "cosine" else ("poly", "paper")
        fam = (f"Upper envelope over δ ∈ [T^(−1/2), 1] of f = δx²/2 at the fixed η* = D/(G√T), fit on ρ ∈ "
               f"[{WINDOW_ANNEALED[0]:g}, {WINDOW_ANNEALED[1]:g}], T = {run.T}.")
        v.less(f"{h.label}: worst case over the family grows no faster than ρ^(1/(2p+1)), p = {p:g}", env[h.label],
               pred + tol, kind="not_specific", source=src, tests=claim_id, control=ctrl,
               basis=f"{pilot}: mean {PILOT['envelope'][h.label]:.4f} vs 1/(2p+1) = {pred:.4f}; band ±{tol:.3f} = "
                     "|bias| + 3.29 SD",
               note=fam + " The guarantee is an upper bound over all problems: a family can refute it, not prove "
                          "it; the slower-decaying schedules break it. Holds, not specific: the fixed stepsize with "
                          "iterate averaging passes too (on this smooth quadratic family averaging makes the error "
                          "nearly independent of ρ; independent numpy, seed 0, 4096 paths: exponent −0.35, envelope "
                          "0.004–0.011 DG/√T). The family cannot tell annealing from averaging; the non-smooth "
                          "family f = δ|x + 1| does (its rows below: averaging's exponent ≈ 0.66 there; the sceptic's "
                          "numpy, 2048 paths, ρ ∈ [4, 64]: averaging 0.66, linear 0.32, quadratic 0.18).")
        # neighbouring degrees (cosine's finite-window bias, +0.02, leaves too little room against p = 3)
        neigh = {"linear": ["quadratic"], "quadratic": ["linear", "cubic"], "cubic": ["quadratic"],
                 "cosine": ["linear"]}[h.label]
        v.close(f"{h.label}: our family attains the exponent 1/(2p+1) = {pred:.3f}", env[h.label], pred, atol=tol,
                kind="consistency", source="reconstruction",
                control=[Control(f"{lab}: same envelope fit", env[lab]) for lab in neigh],
                basis=f"{pilot}: band ±{tol:.3f} = |bias| + 3.29 SD",
                note="The worst case of our own family [reconstruction] is tight; the controls (neighbouring "
                     "degrees) show the band tells p from p ± 1.")
        ps = 1.0 / (p + 1)
        tol_s = band(PILOT["single"][h.label], ps)
        v.close(f"{h.label}: one problem (δ = 1), exponent of ρ ≈ 1/(p+1) = {ps:.3f}", single[h.label], ps,
                atol=tol_s, kind="consistency", source="reconstruction",
                control=Control("the envelope over δ of the same schedule", env[h.label]),
                basis=f"{pilot}: mean {PILOT['single'][h.label]:.4f}; band ±{tol_s:.3f} = |bias| + 3.29 SD",
                note="The freeze-out heuristic of the chapter [reconstruction]: one problem is steeper than the "
                     "worst case (the control) without contradicting the bound.")
    return v


#: The non-smooth family's pilot (issue 57; seeds 9101–9112 of the reserved pilot seeds, disjoint from the quadratic
#: pilot's 9001–9012; 16384 paths, T = 1024, fit on ρ ∈ [4, 64]; ``bench/annealing_robustness_abs_pilot.py``,
#: output in ``bench/results/annealing_robustness_abs_pilot.txt``): mean envelope exponent per arm and the largest
#: seed-to-seed SD of any arm. Recorded, and the bands fixed from it, before the chapter's seed ran on this family.
ABS_PILOT = {
    "seeds": "9101–9112",
    "envelope": {"fixed": 0.7193, "linear": 0.3264, "quadratic": 0.1877, "averaged": 0.6603},
    "sd_max": 0.0043,
}


def abs_band(pilot_mean: float, predicted: float) -> float:
    """The non-smooth rows' band: |pilot mean − prediction| + 3.29 × :data:`ABS_PILOT`'s largest SD, rounded up to
    0.005 (the rule of :func:`band`)."""
    m = validate.number("pilot_mean", pilot_mean, -10.0, 10.0)
    q = validate.number("predicted", predicted, -10.0, 10.0)
    raw = abs(m - q) + _Z * ABS_PILOT["sd_max"]
    return math.ceil(raw / 0.005 - 1e-9) * 0.005


#: The arms of :data:`~theorybook.annealing_robustness.worst_case.ABS_SCHEDULES`, in order.
ABS_LABELS = ("fixed", "linear", "quadratic", "linear_floor", "quadratic_floor")


def abs_exponents(run: FamilyRun) -> dict[str, float]:
    """Envelope exponents over ρ ∈ :data:`WINDOW_ANNEALED` of every arm of :func:`abs_family_experiment`'s run:
    ``fixed``, ``linear``, ``quadratic``, ``linear_floor`` and ``quadratic_floor`` (the decays stopped at
    :data:`~theorybook.annealing_robustness.worst_case.ABS_FLOOR` of the peak) and ``averaged`` (the fixed
    stepsize's iterate average)."""
    if not isinstance(run, FamilyRun) or run.family != "abs" or len(run.schedules) != len(ABS_SCHEDULES) or \
            run.averaged is None:
        raise ValueError("Invalid run: must come from abs_family_experiment(seed)")
    lo, hi = WINDOW_ANNEALED
    out = {lab: fit_exponent(run.rho, run.envelope[i], rho_min=lo, rho_max=hi).slope
           for i, lab in enumerate(ABS_LABELS)}
    out["averaged"] = fit_exponent(run.rho, run.averaged_envelope, rho_min=lo, rho_max=hi).slope
    return out


def abs_verdicts(run: FamilyRun) -> Verdicts:
    """The non-smooth rows (issue 57): on f_δ = δ|x + 1|, linear and quadratic decay's worst case over δ grows no
    faster than ρ^(1/(2p+1)), against the fixed stepsize with iterate averaging, the fixed stepsize and (for p = 2)
    linear decay on the same family, noise paths, ρ grid and fit window (tolerances: :data:`ABS_PILOT`)."""
    env = abs_exponents(run)
    v = Verdicts("Annealing: worst case over the non-smooth family δ|x + 1| (seeded)", display=False)
    pilot = f"pilot: seeds {ABS_PILOT['seeds']} (16384 paths, this family)"
    same = ("none needed: the same η* = D/(G√T), family δ|x + 1|, δ grid, ρ grid, fit window ρ ∈ [4, 64], T and "
            "noise paths as the method")
    for lab, p in (("linear", 1), ("quadratic", 2)):
        pred = 1.0 / (2 * p + 1)
        tol = abs_band(ABS_PILOT["envelope"][lab], pred)
        ctrl = [Control("fixed stepsize with iterate averaging (uniform average of x_2..x_{T+1}): same envelope fit",
                        env["averaged"],
                        why="the simplest remedy for a misspecified constant step with no annealing (Polyak–"
                            "Ruppert averaging), which passes the smooth family's rows: the sceptic's ablation of "
                            "the schedule's decay",
                        tuned="the fixed stepsize's η* = D/(G√T) (the classical step for averaged SGD, the grid's "
                              "centre for every arm), the same δ grid, ρ grid, fit window, T, noise paths and pilot "
                              "seeds as the method; its output is the averaged iterate"),
                Control("fixed stepsize (last iterate): same envelope fit", env["fixed"], tuned=same,
                        why="the practitioner's default, the schedule the paper says is linear in ρ")]
        if lab == "quadratic":
            ctrl.insert(1, Control("linear decay: same envelope fit", env["linear"], tuned=same,
                                   why="the next-slower-decaying schedule: the nearest one the paper ranks worse"))
        ctrl.append(Control(f"{lab} decay stopped at {ABS_FLOOR:.0%} of the peak, h = {ABS_FLOOR:g} + "
                            f"{1 - ABS_FLOOR:g}(1 − u)^{p}: same envelope fit", env[f"{lab}_floor"],
                            why="the ablation of exactly what the abstract credits — decay *to zero* — with the "
                                "floor at which practical decays conventionally stop (sceptic's review, fixed before "
                                "any floored run)",
                            tuned=same.replace("none needed: the same", "none needed: the same peak")))
        v.less(f"{lab} decay on the non-smooth family δ|x + 1|: worst case over δ grows no faster than "
               f"ρ^(1/(2p+1)), p = {p}", env[lab], pred + tol, kind="reproduces", source="paper", tests="poly",
               control=ctrl,
               basis=f"{pilot}: mean {ABS_PILOT['envelope'][lab]:.4f} vs 1/(2p+1) = {pred:.4f}; band ±{tol:.3f} = "
                     f"|bias| + 3.29 × SD {ABS_PILOT['sd_max']} (false alarm ≤ 1e-3), fixed before the chapter's "
                     "seed ran on this family",
               note=f"Upper envelope over δ ∈ [T^(−1/2), 1] of f = δ|x + 1| (non-smooth, G-Lipschitz: the paper's main "
                    f"setting [secondary]) on [−1, 1] from x₁ = 1, at η = ρ·η*_h, fit on ρ ∈ [4, 64], T = {run.T}. "
                    "Without curvature the average of a constant step's iterates cannot cancel the noise, and its "
                    f"worst case grows like ρ^{env['averaged']:.2f} here: this family tells annealing from averaging, "
                    "which the smooth family cannot. An upper bound over all problems: a family can refute it, not "
                    f"prove it. The decay stopped at {ABS_FLOOR:.0%} of the peak grows like "
                    f"ρ^{env[f'{lab}_floor']:.2f}: the row tells decay to zero from decay to a 10 % floor. Sceptic's "
                    "review (independent numpy, 16384 paths, seeds 777/778): linear 0.328/0.323, quadratic "
                    "0.185/0.191, averaged 0.660, fixed 0.720, floored 0.52/0.55 (20 unseen seeds incl. 9099, 9100, "
                    "9113, 9114: linear ≤ 0.335, quadratic ≤ 0.196, floored ≥ 0.517); unchanged on a 25-point δ grid "
                    "(0.325, 0.183) and at T = 4096 (0.327, 0.217). Limits of the window ρ ≤ 64: a 1 % floor "
                    "(last step ≤ 0.64 η*, never above the ideal) passes (0.335), and so do step decay (× 0.1 at "
                    "½T and ¾T, 0.06) and exponential decay e^(−5u) (−0.01) — annealing schedules the abstract does "
                    "not rate; the row separates polynomial decay to zero from no decay, averaging and a 10 % "
                    "floor, not from every schedule that ends below 1/64 of its peak")
    return v


def seeded_verdicts(seed: int) -> Verdicts:
    """The chapter's stochastic verdict rows for ``seed`` (same experiment, scale and tolerances)."""
    seed = validate.integer("seed", seed, 0)
    v = worst_case_verdicts(worst_case_experiment(seed))
    v.extend(abs_verdicts(abs_family_experiment(seed)))
    v.extend(grid_verdicts(coarse_grid_experiment(seed)))
    return v


#: The coarse-grid pilot (problem seeds 9001–9020, 10 paths each, T = 1000, each schedule's grid η_h·2^j,
#: j = −4..5, centred on its own ideal η_h): worst excess over the grid ÷ the tuned fixed stepsize's excess, per
#: schedule — (min, max, mean of ln, SD of ln).
GRID_PILOT = {"seeds": "9001–9020", "linear": (4.09, 8.21, 1.707, 0.190), "fixed": (30.1, 57.5, 3.720, 0.147),
              "inverse_sqrt": (25.2, 48.1, 3.479, 0.164)}
#: The row's threshold, fixed from :data:`GRID_PILOT` before the chapter's seeds were run.
GRID_THRESHOLD = 15.0


def grid_verdicts(run: GridRun) -> Verdicts:
    """The synthetic-experiment row: linear decay's worst excess over a coarse grid (factor ρ = 2, 10 points,
    centred on its ideal stepsize), relative to the tuned fixed stepsize, against the same ratio for the fixed and
    the inverse-square-root stepsizes on their own grids (the controls)."""
    if not isinstance(run, GridRun):
        raise ValueError("Invalid run: must come from coarse_grid_experiment(seed)")
    v = Verdicts("Annealing: coarse stepsize grid on synthetic logistic regression (seeded)", display=False)
    p = GRID_PILOT
    zs = {h: abs(math.log(GRID_THRESHOLD) - p[h][2]) / p[h][3] for h in ("linear", "fixed", "inverse_sqrt")}
    tuned = ("its own 10-point grid centred on its ideal base stepsize (the same rule as linear decay's), the same "
             "T = 1000 and the same 10 example sequences")
    v.less("linear decay: worst excess over a coarse grid η·2^j (j = −4..5) ÷ the tuned fixed stepsize's excess",
           run.ratio_annealed, GRID_THRESHOLD, kind="not_specific", source="secondary", tests="experiments-synthetic",
           control=[Control("fixed stepsize: the same worst-over-grid ratio", run.ratio["fixed"],
                            why="the competitor the paper beats: plain SGD with a constant stepsize",
                            tuned=tuned + "; its best point is the ratio's denominator"),
                    Control("inverse-square-root stepsize η/√t: the same ratio", run.ratio["inverse_sqrt"],
                            why="the other schedule the paper says a misspecified stepsize hurts, and the classic "
                                "anytime choice: decaying, but not to zero at T",
                            tuned=tuned),
                    Control("fixed stepsize with iterate averaging (uniform average of the iterates): the same ratio",
                            run.ratio[AVERAGED],
                            why="the classic remedy for a misspecified constant step (Polyak–Ruppert averaging), "
                                "with no annealing at all — robust on this smooth problem, though not in the worst "
                                "case (it breaks the non-smooth family δ|x + 1|'s upper-bound rows)",
                            tuned="the fixed stepsize's own 10-point grid centred on its ideal base stepsize, the same "
                                  "T = 1000 and the same 10 example sequences; the denominator stays the tuned "
                                  "(last-iterate) fixed stepsize's excess")],
           basis=f"pilot: problem seeds {p['seeds']} (10 paths each), ratio range and mean ± SD of its ln: linear "
                 f"{p['linear'][0]}–{p['linear'][1]} ({p['linear'][2]} ± {p['linear'][3]}), fixed "
                 f"{p['fixed'][0]}–{p['fixed'][1]} ({p['fixed'][2]} ± {p['fixed'][3]}), inverse-sqrt "
                 f"{p['inverse_sqrt'][0]}–{p['inverse_sqrt'][1]} ({p['inverse_sqrt'][2]} ± {p['inverse_sqrt'][3]}); "
                 f"ln 15 lies {zs['linear']:.1f}, {zs['fixed']:.1f} and {zs['inverse_sqrt']:.1f} SD of ln from the "
                 "three pilot means (one-sided false alarm < 1e-3 each way: z > 3.09)",
           note=f"logistic regression n = 1000, d = 20, T = 1000; tuned fixed excess {run.fixed_best:.2e}; the "
                "paper's grid factor and sizes are not recovered, ρ = 2 here. Holds, not specific: averaging the "
                "fixed-step iterates passes too, so this row is no evidence for the ρ^(1/(2p+1)) mechanism (nor are "
                "the worst-case rows on the smooth family, which averaging passes too). Independent numpy "
                "re-derivation (sceptic review; its own problem instances and example draws, seeds 1–3, f* by "
                "BFGS): linear 4.1–5.2, fixed 35–43, inverse-sqrt 30–34, averaged 2.9–5.1 (match the pilot ranges)")
    return v


#: What :func:`headline` reads from the chapter's results.
HEADLINE_KEYS = ("balance", "cosine_lead", "fixed_limit", "fixed_err", "bound_slopes", "predicted", "labels",
                 "riemann", "units_b")


def headline(r: Mapping[str, Any], wc_rows: Verdicts, *, display: bool = True) -> Verdicts:
    """The chapter's table: the deterministic consistency rows from ``r`` (keys :data:`HEADLINE_KEYS`), then the
    seeded rows ``wc_rows`` (:func:`worst_case_verdicts` of the chapter's run)."""
    import sympy as sp

    if not isinstance(r, Mapping):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a mapping of the chapter's results)")
    missing = [k for k in HEADLINE_KEYS if k not in r]
    if missing:
        raise ValueError(f"Invalid r: missing keys {missing}")
    if not isinstance(wc_rows, Verdicts):
        raise TypeError(f"Invalid wc_rows: {type(wc_rows).__name__} (must be worst_case_verdicts(run))")
    v = Verdicts("Annealing and tuning robustness", display=display, claims=PAPER_CLAIMS)
    v.extend(wc_rows)
    for p, d in r["balance"].items():
        v.equal(f"sympy: balanced bound's exponent for (1−u)^{p}", sp.simplify(d.exponent - sp.Rational(1, 2 * p + 1)),
                0, kind="consistency", source="reconstruction",
                note="Exact: d ln bound(s*)/d ln ρ at the interior critical point s*.")
    v.equal("sympy: cosine = (π²/4)(1−u)² + O((1−u)⁴) at the end ⇒ the p = 2 balance",
            sp.simplify(r["cosine_lead"] - sp.pi**2 / 4), 0, kind="consistency", source="derived")
    v.equal("sympy: fixed bound's log-slope in ρ → 1", r["fixed_limit"], 1, kind="consistency",
            source="reconstruction")
    v.less("discrete bound (min over all τ, T = 10⁴) vs closed form (ρ+1/ρ)/2, fixed, max rel. error",
           r["fixed_err"], 1e-9, kind="consistency", source="reconstruction",
           basis="model: float64 cumulative sums of 10⁴ terms and a log/exp round trip, ≲ 10⁴·2.2e-16 ≈ 2e-12 "
                 "relative; a wrong formula or units err by O(1)",
           note="Two computations: a log-space minimum over 10⁴ restart steps vs sympy's closed form.")
    for key, slope in r["bound_slopes"].items():
        v.close(f"discrete bound's exponent (T = 1e5, ρ ≥ 100), {r['labels'][key]}", slope, r["predicted"][key],
                atol=0.03, kind="consistency", source="reconstruction",
                basis="model: the balancing argument is asymptotic in ρ; its O(ρ^(−1/(2p+1))) corrections move the "
                      "slope on ρ ∈ [100, 1000] by ≤ 0.03",
                note="Numeric minimum over τ vs the balancing argument's asymptote.")
    for name, p, T_r, power, closed, low, high in r["riemann"]:
        lab = r["labels"].get((name, p), name)
        v.between(f"sympy ∫₀¹h^{power} vs left Riemann sum of the stepsizes, {lab}, T = {T_r}", closed, low, high,
                  kind="consistency", source="derived",
                  basis="exact: non-increasing h: sum − (h(0)^k − h(1)^k)/T ≤ ∫ ≤ sum",
                  note="The closed forms describe the stepsizes SGD actually uses.")
    ub = [float(x) for x in r["units_b"]]
    v.true("units: e*_h·D/G (D = 2R) minimises the bound in a problem's units (linear, T = 500)",
           bool(ub[1] <= ub[0] and ub[1] <= ub[2]), kind="consistency", source="derived",
           measured=f"{ub[0]:.5f}, {ub[1]:.5f}, {ub[2]:.5f}", predicted="middle value smallest",
           note="Bound at η*/1.05, η*, 1.05η*; with the old R/G units η* was half the ideal and this fails.")
    return v

