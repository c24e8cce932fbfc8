"""Every row the Grasp chapter shows, with its control: ``PAPER_CLAIMS``, ``seeded_verdicts(seed)`` (the headline
experiment), ``deterministic_verdicts()`` (sympy, the problems' smoothness, the convex study, DoG parity) and
``chapter_verdicts(run)``, the one table the chapter shows (it carries the paper claims into the ledger).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..check import Control, PaperClaim, Planted, Verdicts
from ..device import one_thread
from ..validate import integer
from .convex import BASES
from .experiment import (
    CONVEX_SLOPE_GAP,
    POOL_SEED,
    SEEDS,
    SIGMAS,
    SMALL_FACTOR,
    SMALL_T,
    T_VERDICT,
    TUNING_GAIN,
    WIDE_GRID,
    XSCALES,
    BudgetCurve,
    HeadlineRun,
    budget_curve,
    chapter_convex,
    chapter_problem,
    chapter_run,
    dog_parity,
    per_problem,
    smoothness_bound,
)
from .methods import exact_anchor
from .theory import derive_self_bounding, derive_sgd_tuning, derive_ustat_bias

__all__ = ["PAPER_CLAIMS", "chapter_verdicts", "deterministic_verdicts", "headline_numbers", "seeded_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("C1", "Grasp is fully parameter-free for smooth non-convex stochastic optimisation and attains the "
                     "near-optimal rate up to logarithmic factors (that of tuned SGD)", headline=True),
    PaperClaim("C2", "for convex problems the framework yields parameter-free methods competitive with acceleration "
                     "and universality"),
    PaperClaim("C3", "a sharper guarantee for the final model-ensemble step under an 'interpolated variance' "
                     "characterisation", quoted_only=True,
               why="only the abstract could be read: the interpolated-variance condition, the ensemble/selection "
                   "rule and the sharper bound's form (constants, rate in the validation sample size) are not "
                   "stated there; the digest's σ*² = E‖∇f(x*; ξ)‖² is offered only as an example, so neither the "
                   "sharp bound nor its non-sharp rival can be computed", reason_class="paper text unread"),
    PaperClaim("C4", "a self-bounding analysis determines the grid's search ranges from observable quantities"),
    PaperClaim("D1", "fully parameter-free: the inputs need satisfy no unverifiable condition on the true "
                     "parameters (partially parameter-free methods need bounds on them)", where="definitions",
               quoted_only=True, why="a definition, not a testable statement",
               reason_class="no measurable consequence"),
)

_PILOT = ("pilot: seeds 9001–9010 (T = 2¹², 8 seeds each) gave largest oracle ratios from 3.8·10⁻³ to "
          "5.9·10⁻³ (σ = 0.01); the threshold 10⁻² is the design requirement (two orders of magnitude), "
          "stated before the pilot")


def _rel_dev_over_s(norm: torch.Tensor) -> float:
    """Largest relative deviation across the x-scale axis of per-seed normalised norms (P = σ-major × s)."""
    x = norm.reshape(len(SIGMAS), len(XSCALES), -1)
    return float(((x - x[:, :1]).abs() / x[:, :1]).max())


def headline_numbers(run: HeadlineRun) -> dict[str, Any]:
    """Per-problem ratios to oracle-tuned SGD (mean over seeds of ‖∇F‖/‖∇F(x₀)‖, divided by the oracle's), shape (P,),
    for every method, plus the tuned steps relative to the exact anchor."""
    if not isinstance(run, HeadlineRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a HeadlineRun)")
    o = per_problem(run.oracle_norm)
    prob = chapter_problem()
    eb = exact_anchor(prob)
    ratios = {
        "Grasp-style (U-statistic)": per_problem(run.grasp_norm) / o,
        "Grasp-style (naive score)": per_problem(run.naive_norm) / o,
        "returns x₀": per_problem(run.x0_norm) / o,
        "wide log grid": per_problem(run.wide_norm) / o,
        "log grid from η = 1": per_problem(run.top1_norm) / o,
        "DoG": per_problem(run.dog_norm) / o,
        "AdaGrad-norm (η = 1)": per_problem(run.adagrad_norm) / o,
        "one run at η̄/√T": per_problem(run.anchored_norm) / o,
    }
    return {"oracle": o, "ratios": ratios, "log2T": math.log2(run.T),
            "tuned_rel": torch.log2(run.tuned_eta / eb), "eta_bar": eb}


def seeded_verdicts(seed: int, run: HeadlineRun | None = None, curve: BudgetCurve | None = None, *,
                    T: int = T_VERDICT, seeds: int = SEEDS) -> Verdicts:
    """The headline experiment's rows (display=False) from ``chapter_run(seed)`` and ``budget_curve(seed)`` (or the
    given ones)."""
    sd = integer("seed", seed, 0, 2**62)
    if run is not None and not isinstance(run, HeadlineRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be None or a HeadlineRun)")
    if curve is not None and not isinstance(curve, BudgetCurve):
        raise TypeError(f"Invalid curve: {type(curve).__name__} (must be None or a BudgetCurve)")
    r = chapter_run(sd, T, seeds=seeds) if run is None else run
    bc = budget_curve(sd, (SMALL_T,), seeds=seeds) if curve is None else curve
    h = headline_numbers(r)
    logT, rat, o = h["log2T"], h["ratios"], h["oracle"]
    P = int(o.numel())
    v = Verdicts(f"Grasp-style grid — headline experiment (seed {sd})", display=False)
    wide_lo = math.log2(WIDE_GRID["top"]) - WIDE_GRID["spacing"] * (WIDE_GRID["points"] - 1)
    budget = "same total budget T, same split (half running, half scoring) and U-statistic score as Grasp-style"
    v.less(f"near-optimal up to log factors: Grasp-style E‖∇F(x̂)‖ ≤ log₂T × oracle-tuned SGD's on every one of the "
           f"{P} problems (σ × x-scale s over 2⁻⁶…2⁶), T = 2^{int(logT)}; largest ratio",
           float(rat["Grasp-style (U-statistic)"].max()), logT, kind="not_specific", source="paper", tests="C1",
           control=[Control("one SGD run at Grasp-style's own anchor, η̄/√T (no grid search)",
                            float(rat["one run at η̄/√T"].max()),
                            why="the sceptic's rival: the anchor without the search — does the grid do the work, or "
                                "the observable anchor alone?",
                            tuned="the same 16-sample probe and anchor η̄ as Grasp-style (same seed), then all "
                                  "T − 16 remaining samples in one run at η̄·2^(−½log₂T), the geometric middle of "
                                  "Grasp-style's own grid; no setting the method does not share, none tuned on the "
                                  "chapter's seeds"),
                    Control("DoG (dog-optimizer defaults)", float(rat["DoG"].max()),
                            why="the partially parameter-free competitor the paper sets 'fully parameter-free' "
                                "against: it needs a distance scale r_ε, but only through a logarithm",
                            tuned="none needed: the claim is about methods run without tuning; r_ε = 10⁻⁶(1 + ‖x₀‖), "
                                  "its package default, T samples"),
                    Control(f"a practitioner's wide log grid 2^{math.log2(WIDE_GRID['top']):g} … 2^{wide_lo:g}, "
                            f"every {WIDE_GRID['spacing']:g} octaves", float(rat["wide log grid"].max()),
                            why="what a practitioner runs without the self-bounding anchor: a log grid wide enough "
                                "for every problem of the family, at the same total budget",
                            tuned=f"{budget}; its span covers every tuned step and its spacing is the best of 1, 2, 3 "
                                  "and 4 octaves on pilot seeds 9001–9003"),
                    Control("the same grid from η = 1 down (the anchor ablated)",
                            float(rat["log grid from η = 1"].max()),
                            why="the ablation: is it the anchor or the grid search that does the work?",
                            tuned=f"{budget}; K = ⌈log₂T⌉ + 1 points one octave apart, top η = 1, a common default"),
                    Control("AdaGrad-norm (η = 1)", float(rat["AdaGrad-norm (η = 1)"].max()),
                            why="the adaptive method a practitioner runs untuned; it needs a distance scale η",
                            tuned="none needed: the claim is about methods run without tuning; η = 1, its default, "
                                  "T samples"),
                    Control("returns x₀", float(rat["returns x₀"].max()), why="the do-nothing method",
                            tuned="none needed: no parameter",
                            weak="fails by the design requirement that tuning improves x₀ by ≥ 100×")],
           basis="paper: the abstract's 'near-optimal rate up to logarithmic factors', read as one factor log₂T "
                 "against tuned SGD, fixed before the run; the budget T = 2¹² was set on pilot seeds 9001–9010, "
                 "where T = 2¹⁰ fails (the differs row below)",
           note=f"algorithm: our reconstruction; E over {r.grasp_norm.shape[-1]} seeds per problem (Grasp-style's "
                "ratio is the same at every x-scale, so it takes one value per σ); oracle = the constant step, one "
                "per problem, with the least mean final ‖∇F‖ (T steps). Holds, not specific: one SGD run at the "
                f"anchor's η̄/√T passes too (every problem's tuned step sits {-float(h['tuned_rel'].max()):.2f}–"
                f"{-float(h['tuned_rel'].min()):.2f} octaves under the anchor, inside the single run's window of "
                "good steps), and so does DoG (its r_ε enters only logarithmically); "
                "the row tells the anchor from grids and adaptive methods that need a scale, not the grid search "
                "from one anchored run. That is this pool's: on fresh draws of the same design (pool seeds 1–10, "
                "bench/grasp_pool_scan.py) the tuned step sits deeper under the anchor, the single run fails on "
                "half of them while Grasp-style passes, and DoG passes on all — with the scan's one run seed; over "
                "six further run seeds (bench/grasp_pool_seeds.py) Grasp-style and DoG each fail a few (seed, pool) "
                "pairs, near the bound, and the single run about half (the book glues the numbers)")
    v.less("tuning matters (design check): oracle-tuned SGD's E‖∇F‖/‖∇F(x₀)‖, largest over the family",
           float(o.max()), TUNING_GAIN, kind="consistency", source="reconstruction", basis=_PILOT,
           note="the family is only a test of tuning if the tuned step improves x₀ by orders of magnitude")
    if SMALL_T in bc.Ts:
        i = bc.Ts.index(SMALL_T)
        small = float(bc.grasp[i] / bc.oracle[i])
        full = float(bc.full_grid[i] / bc.oracle[i])
        v.greater(f"small budget: at T = 2^{int(math.log2(SMALL_T))} ({bc.steps[i]} SGD steps per candidate), "
                  f"σ = {bc.sigma:g}, s = 1, Grasp-style E‖∇F(x̂)‖ over oracle-tuned SGD's is at least "
                  f"{SMALL_FACTOR:g} log₂T", small, SMALL_FACTOR * math.log2(SMALL_T), kind="differs", source="paper",
                  tests="C1",
                  paper=math.log2(SMALL_T), paper_shown=f"≤ log₂T = {math.log2(SMALL_T):g} (near-optimal up to logs)",
                  planted=Planted("the grid's octaves of the exact anchor, each run for all T steps (no split)", full,
                                  effect="a grid search within the log factor of tuned SGD by construction: the "
                                         "split's cost removed, the best octave chosen in hindsight"),
                  basis=f"pilot: 1000 seeds 9101–10100 (disjoint from the chapter's and the robustness seeds) "
                        f"gave min 14.5, 0.1 % and 1 % quantiles 14.5 and 19.3, median 40.0 against log₂T = "
                        f"{math.log2(SMALL_T):g}; the bound {SMALL_FACTOR:g} log₂T lies below all 1000. History, "
                        "disclosed: the bound was first 2 log₂T after a three-seed pilot (27, 31, 43), lowered to "
                        "1.5 log₂T after robustness seed 7014 gave 18.4, and is now set from the 1000-seed pilot "
                        "(where 1.5 log₂T would fail 2 seeds in 1000)",
                  note="from our instance and our per-problem reading, not against the paper's theorem (a worst-"
                       "case rate): tuned SGD goes through its fast initial phase within its T steps, while each "
                       "candidate has only its share of the budget. At T = 2¹² (the headline) the ratio is back inside")
    v.less("scale-free (our reconstruction): Grasp-style ‖∇F(x̂)‖/‖∇F(x₀)‖ per seed identical across the x-scale s "
           "(largest relative deviation)", _rel_dev_over_s(r.grasp_norm), 1e-9, kind="consistency",
           source="derived", basis="model: SGD with η on f(x/s) is SGD with η/s² on f and η̄ ∝ s²; s a power of two "
                                   "scales exactly in float64, 1e-9 leaves room for a device's reduction order",
           note="why the family's s axis cannot hurt Grasp-style: nothing in it depends on s")
    rel = h["tuned_rel"]
    eb_seed = r.grasp.eta_bar  # (P, S): the probe's anchor per seed
    K = r.grasp.etas.shape[1]
    in_range = ((r.tuned_eta[:, None] <= eb_seed) & (r.tuned_eta[:, None] >= eb_seed * 2.0 ** -(K - 1)))
    top1_in = ((r.tuned_eta <= 1.0) & (r.tuned_eta >= 2.0 ** -(K - 1)))
    Lhat = smoothness_bound(chapter_problem())  # (P,): each problem's global smoothness bound
    lhat_in = ((r.tuned_eta <= 1.0 / Lhat) & (r.tuned_eta >= 2.0 ** -(K - 1) / Lhat))
    lrel = torch.log2(r.tuned_eta * Lhat)
    v.true("self-bounding range: every problem's tuned step lies in [η̄·2^−(K−1), η̄] for every seed's probe anchor "
           "η̄ = 2F̂(x₀)/‖ĝ(x₀)‖²", bool(in_range.all()), kind="not_specific", source="paper", tests="C4",
           predicted="all inside",
           measured=f"{int(in_range.all(1).sum())} of {P} problems; log₂(η*/η̄*) from {float(rel.min()):.2f} to "
                    f"{float(rel.max()):.2f}",
           control=[Control("the same-width range at the textbook step 1/L̂, [2^−(K−1)/L̂, 1/L̂]",
                            bool(lhat_in.all()),
                            shown=f"{int(lhat_in.sum())} of {P} problems inside; log₂(η*·L̂) from "
                                  f"{float(lrel.min()):.2f} to {float(lrel.max()):.2f}",
                            why="the range a partially parameter-free analysis sets from the smoothness L — the "
                                "parameter 'fully parameter-free' avoids: does the test tell observables from L?",
                            tuned="none needed: the same number of octaves K as the self-bounding range; L̂ = "
                                  "c(λ_max(AᵀA/N) + λ/s²) is each problem's global smoothness bound, from the "
                                  "whole pool"),
                    Control("a practitioner's range of the same width, [2^−(K−1), 1]", bool(top1_in.all()),
                            shown=f"{int(top1_in.sum())} of {P} problems inside",
                            why="a range fixed without looking at the problem (top η = 1, a common default)",
                            tuned="none needed: the same number of octaves K as the self-bounding range")],
           note="the range is our reconstruction of the paper's self-bounding analysis (16 probe samples, log₂T "
                "octaves); tuned step = the oracle's, one per problem. Holds, not specific: the range anchored at "
                "1/L̂ holds every tuned step too — on this family the observable anchor is a fixed multiple of "
                "1/L̂, so the test cannot tell observables from knowing L")
    return v


def deterministic_verdicts() -> Verdicts:
    """Sympy identities, the descent-lemma bound on the chapter's problems, the convex study and DoG parity."""
    with one_thread():
        return _deterministic_verdicts()


def _deterministic_verdicts() -> Verdicts:
    import sympy as sp

    v = Verdicts("Grasp-style grid — exact rows", display=False)
    F, L, g, T = sp.symbols("F L g T", positive=True)
    sb = derive_self_bounding()
    v.equal("descent lemma: 0 ≤ F(x − ∇F/L) ≤ F − ‖∇F‖²/(2L) ⇒ ‖∇F‖² ≤ 2LF (sympy, bound − 2LF)",
            sp.simplify(sb.grad_sq_bound - 2 * L * F), 0, kind="consistency", source="derived")
    v.equal("η̄ − 1/L = (2LF − ‖∇F‖²)/(L‖∇F‖²) ≥ 0 (sympy residual)", sb.anchor_gap_residual, 0,
            kind="consistency", source="derived")
    v.equal("1/L < η̄/T ⇔ ‖∇F(x₀)‖² < 2LF(x₀)/T: the grid's bottom is self-bounding (sympy, boundary − 2LF/T)",
            sp.simplify(sb.small_end - 2 * L * F / T), 0, kind="consistency", source="derived")
    D, s = sp.symbols("Delta sigma", positive=True)
    st = derive_sgd_tuning()
    v.equal("argmin_η 2Δ/(ηT) + Lησ² = √(2Δ/(LTσ²)) (sympy)",
            sp.simplify(st.eta_star - sp.sqrt(2 * D / (L * T * s**2))), 0, kind="consistency", source="derived")
    v.true("…a minimum (B'' > 0) with value 2√(2LΔσ²/T)", bool(st.second_derivative.is_positive) and
           sp.simplify(st.value_at_star - 2 * sp.sqrt(2 * L * D * s**2 / T)) == 0, kind="consistency",
           source="derived", measured=f"B''(η*) = {st.second_derivative}")
    m, mu, sv = sp.symbols("m mu s", positive=True)
    ub = derive_ustat_bias()
    v.equal("scoring: E[U-statistic] − ‖μ‖² (sympy)", sp.simplify(ub.ustat_mean - mu**2), 0, kind="consistency",
            source="derived")
    v.equal("scoring: E‖ĝ‖² − ‖μ‖² − trΣ/m (sympy; the naive score's bias)",
            sp.simplify(ub.naive_mean - mu**2 - sv**2 / m), 0, kind="consistency", source="derived")
    # the assumption behind the anchor, on the family: L̂ (an eigenvalue bound) is a smoothness bound, F ≥ 0
    prob = chapter_problem()
    Lhat = smoothness_bound(prob)
    gen = torch.Generator().manual_seed(POOL_SEED + 1)
    scales = torch.logspace(-2, 2, 9, dtype=torch.float64)
    x = torch.randn(prob.P, 9, 40, prob.d, generator=gen, dtype=torch.float64) * scales[None, :, None, None]
    x = x.to(prob.device)
    gx = (prob.gradient(x) ** 2).sum(-1)
    worst = float((gx / (2 * Lhat[:, None, None] * prob.loss(x))).max())
    v.less(f"the family meets the anchor's assumption: max ‖∇F(x)‖²/(2L̂F(x)) over {x[..., 0].numel():,} random "
           "points (‖x‖ from 0.02 to 220)", worst, 1.0, kind="consistency", source="derived",
           basis="exact: ‖∇F‖² ≤ 2LF is a theorem for F ≥ 0 L-smooth (sympy above) and L̂ ≥ L; float64 round-off "
                 "is ~10⁻¹⁵ relative",
           note="exact ∇F, F over the pool vs L̂ = c(λ_max(AᵀA/N) + λ) from an eigenvalue solver: a violation would "
                "mean L̂ is not a smoothness bound, or a bug in ∇F")
    eb = exact_anchor(prob)
    v.greater("…hence the grid's top is above 1/L: min over the family of η̄*·L̂", float((eb * Lhat).min()), 1.0,
              kind="consistency", source="derived", basis="exact: follows from the row above at x₀",
              note="η̄* = 2F(x₀)/‖∇F(x₀)‖², exact over the pool")
    _convex_rows(v)
    v.less("DoG (ours) = dog-optimizer's DoG (eps = 0): max |Δx| / max |x| after 50 exact-gradient steps",
           dog_parity(), 1e-10, kind="consistency", source="derived",
           basis="model: float64 round-off over 50 steps (~10⁻¹⁴)", note="same r_ε = 10⁻⁶(1 + ‖x₀‖)")
    return v


def _convex_rows(v: Verdicts) -> None:
    """Rows of the convex experiment (exact gradients: deterministic)."""
    import sympy as sp

    # the chain's closed forms at d = 7, exactly: DᵀD = tridiag(−1, 2, −1), x* = A⁻¹e₁, F* = L/(8(d+1))
    d7, Ls = 7, sp.Symbol("L", positive=True)
    D = sp.zeros(d7 + 1, d7)
    D[0, 0] = 1
    for i in range(1, d7):
        D[i, i], D[i, i - 1] = 1, -1
    D[d7, d7 - 1] = -1
    A = D.T * D
    e1 = sp.Matrix([1] + [0] * d7)
    xs = A.solve(sp.Matrix([1] + [0] * (d7 - 1)))
    Fstar = sp.simplify(Ls / 8 * ((D * xs - e1).T * (D * xs - e1))[0])
    ok = (A == sp.Matrix(d7, d7, lambda i, j: 2 if i == j else (-1 if abs(i - j) == 1 else 0))
          and all(xs[i] == 1 - sp.Rational(i + 1, d7 + 1) for i in range(d7)) and sp.simplify(Fstar - Ls / 64) == 0)
    v.true("chain quadratic (sympy, d = 7): DᵀD = tridiag(−1, 2, −1), x*_i = 1 − i/(d+1), F* = L/(8(d+1))", ok,
           kind="consistency", source="derived", predicted="all three exact", measured=f"F* = {Fstar}")
    cs = chapter_convex()
    floor_ok = min(r.gap - cs.problem.krylov_floor(r.steps) for b in BASES for r in cs.grasp[b])
    floor_ok = min(floor_ok, min(r.gap - cs.problem.krylov_floor(t) for b in BASES for r, t in
                                 zip(cs.oracle[b], cs.Ts, strict=True)))
    v.greater("every run's F − F* ≥ the Krylov floor (L/8)(1/(t+1) − 1/(d+1)) at its step count t (min excess)",
              floor_ok, -1e-12, kind="consistency", source="derived", basis="model: float64 round-off only",
              note="a first-order method from x₀ = 0 touches one new coordinate per gradient")
    eb = cs.grasp["sgd"][0].eta_bar
    inside = [(eb / t <= r.best_eta <= eb) for b in BASES for r, t in zip(cs.oracle[b], cs.Ts, strict=True)]
    v.true("convex, our reconstructed range: the oracle's tuned step lies in [η̄/T, η̄] for GD and AC-SA at every T",
           all(inside), kind="consistency", source="reconstruction", predicted="10 of 10",
           measured=f"{sum(inside)} of {len(inside)}",
           note="η̄ = 4/L here; the oracle scans η̄·2^{−j/4} well beyond the grid on both sides, so it can fall outside")
    bound = cs.oracle_slopes["sgd"] - CONVEX_SLOPE_GAP
    v.less(f"competitive with acceleration: Grasp-style AC-SA's log–log slope of F − F* vs T (T = {cs.Ts[0]}…"
           f"{cs.Ts[-1]}) ≤ oracle-tuned GD's slope − {CONVEX_SLOPE_GAP}", cs.slopes["acsa"], bound,
           kind="not_specific", source="paper", tests="C2",
           control=[Control("one AC-SA run at the anchor's η̄/√T (no grid search)", cs.anchored_slopes["acsa"],
                            why="the sceptic's rival, as in the headline row: the anchor and acceleration without "
                                "the search — does the grid do the work, or the observable anchor alone?",
                            tuned="none: the same exact anchor η̄ as Grasp-style AC-SA, all T gradient calls in one "
                                  "run at η̄·2^(−½log₂T), the geometric middle of Grasp-style's own grid (the "
                                  "headline row's control, defined before this run)"),
                    Control("Grasp-style GD (the same grid, no acceleration)", cs.slopes["sgd"],
                            why="the same search without acceleration: does the grid keep the accelerated rate?",
                            tuned="none needed: the same grid, anchor and budget split as Grasp-style AC-SA")],
           basis="model: on the chain with d ≫ T, GD's gap falls like T^−1/2 and an accelerated method's like T^−1 "
                 "(Krylov); the budget split over K = ⌈log₂T⌉+1 runs costs ≈ 1/ln T ≈ 0.15 of slope; margin 0.25 "
                 "fixed before measuring (exact gradients: deterministic)",
           note=f"the algorithm is our reconstruction; universality (Hölder smoothness) is not tested. A fragile pass: "
                f"the measured slope is below the bound by {bound - cs.slopes['acsa']:.3f}. Holds, not specific: one "
                f"AC-SA run at η̄/√T passes too (slope {cs.anchored_slopes['acsa']:.3f}), with a gap "
                f"{max(a / g.gap for a, g in zip(cs.anchored['acsa'], cs.grasp['acsa'], strict=True)):.2f}× "
                "Grasp-style AC-SA's or less at every T — the row tells acceleration from GD, not the grid search "
                "from one anchored accelerated run; one GD run at η̄/√T fails "
                f"(slope {cs.anchored_slopes['sgd']:.3f})")


def chapter_verdicts(run: HeadlineRun, curve: BudgetCurve, seed: int) -> Verdicts:
    """The chapter's one table: the exact rows and the headline rows for ``run`` and ``curve`` (of ``seed``), with
    the paper's claims (``claims=PAPER_CLAIMS``) for the ledger."""
    if not isinstance(run, HeadlineRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a HeadlineRun)")
    if not isinstance(curve, BudgetCurve):
        raise TypeError(f"Invalid curve: {type(curve).__name__} (must be a BudgetCurve)")
    v = Verdicts("Grasp-style grid search (our reconstruction): parameter-free SGD", claims=PAPER_CLAIMS)
    v.extend(seeded_verdicts(seed, run, curve))
    v.extend(deterministic_verdicts())
    return v


FUZZ_BASE = {
    "seeded_verdicts": {"seed": 1, "T": 64, "seeds": 2},
    "deterministic_verdicts": {},
}
