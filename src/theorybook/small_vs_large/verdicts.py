"""Every verdict row of the small-vs-large chapter (Liu, Liu, Edelman & Goel, ICML 2026), each reproduction with
its control.

:func:`deterministic_verdicts` — the sympy rows (consistency: our algebra of the toy). :func:`seeded_verdicts` —
the stochastic rows, built from one seed at the chapter's scale:

* the Θ(N^{-1/2}) fluctuation of ``q̂ = wᵀM̂w`` — a consistency row (the generic CLT rate of any empirical mean,
  so a check of our sampler, not of the paper);
* two-phase training against population GD in the toy (Theorem 1, Corollary 2) — control: population GD itself
  (Phase 1 on the population moment, i.e. N = ∞);
* the layer-wise schedule in the MLP race at (16, 4)-parity (:func:`~.experiment.race_study`): a larger second
  layer speeds fresh training, and the repeated set grows ‖a‖/‖W‖_F early — controls: a second, independent stream
  of fresh samples; a global learning rate ×:data:`LR_RIVAL` (init row: it passes, 'holds, not specific'); batch
  reuse ×:data:`REUSE` (ratio row).

:func:`scan_verdicts` — the regime rows from the committed ``bench/results/small_vs_large.json``: the race over
(parity dimension d, repeated-set size N), the repeated set's paired speed-up against a second fresh stream and the
×4-init ablation; the ×4 init's removal of the advantage where it appears; full-batch GD against N (a ``differs``
row with the paper's factor planted on our own runs). :func:`dilution_null` is the plain-dilution reading of the
ratio shrink (why that shrink is no longer a row).

Tolerances are fixed in each row's ``basis`` from an error model or from pilot seeds of
``theorybook.check.PILOT_SEEDS`` (9001–9010, the chapter's scale; numbers in :data:`PILOT`).
"""

from __future__ import annotations

import math
from typing import Any

import sympy as sp
import torch

from ..check import Control, PaperClaim, Scan, Verdicts, z_threshold
from ..validate import integer
from . import theory
from .dynamics import single_threaded
from .experiment import (
    CHAPTER_SEEDS,
    FULL_BATCH,
    Q_D,
    Q_DRAWS,
    RACE,
    RACE_RATIO_STEP,
    RESULTS,
    V_CAP,
    V_D,
    V_ETA,
    V_SEEDS,
    _median_censored,
    _ols_weights,
    fresh_phase1,
    load_results,
    q_study,
    race_study,
    race_summary,
    toy_headline,
    toy_summary,
)
from .race import REGIMES, RaceRun, mlp_race
from .scan import paired_stats

__all__ = ["LR_RIVAL", "LR_RIVAL_PILOT", "REUSE",
           "FULL_BATCH_BOUND", "PAPER_CLAIMS", "PILOT", "deterministic_verdicts", "dilution_null",
           "full_batch_medians", "load_lr_results", "scan_verdicts",
           "seeded_verdicts"]

#: The init row's rival: a global learning rate ×LR_RIVAL at init ×1. History: the first attack (issue 57) ran ×2
#: and ×4 at the chapter's seed (1.56 and 1.27), then chose ×2 by the best of {×2, ×4} on pilot seed 9001 (a tie,
#: 1.75/1.75, to the smaller). The second sceptic's rule, fixed before its pilot runs: the grid {×1.5, ×2, ×3, ×4},
#: the largest mean of the row's statistic over pilot seeds 9001–9010, ties to the smaller — gives ×3
#: (:data:`LR_RIVAL_PILOT`); ×3 lies between the old grid's points, so the old grid missed the strongest step.
LR_RIVAL = 3.0
#: The rival's statistic (steps at lr ×1 / at lr ×c, medians over the race's seeds) on pilot seeds 9001–9010, per c:
#: (min, mean, max).
LR_RIVAL_PILOT: dict[float, tuple[float, float, float]] = {
    1.5: (1.27, 1.36, 1.44), 2.0: (1.50, 1.61, 1.75), 3.0: (1.71, 1.96, 2.29), 4.0: (1.33, 1.57, 1.88)}
#: The ratio row's batch-reuse rival: each fresh mini-batch used for REUSE consecutive steps (two passes, the
#: published batch-reuse scheme the paper rules out as the explanation; not tuned: a larger reuse is a small repeated
#: set for that many steps, the paper's own mechanism). Pilot seeds 9001–9010 (fresh stream over the race's fresh
#: stream at the ratio step): min 1.14, mean 1.25, max 1.38 (sd 0.07); reuse 4 for comparison: 1.52–1.74.
REUSE = 2
#: The full-batch row's bound on steps(N = 2¹⁵)/steps(N = 2¹¹), fixed before the bench ran: pilot seed 9001 (two
#: runs, (24, 4)-parity) measured 0.97; the paper's ~100× over 2¹⁴ → 2²⁰, interpolated as a power law to our 2¹¹ →
#: 2¹⁵ (a factor 16 in N against 64), is 100^(4/6) ≈ 21.5.
FULL_BATCH_BOUND = 2.0

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("faster", "At a fixed compute budget, many epochs on a small data set can train faster than fresh "
               "samples from a large one", where="abstract", source="paper", headline=True,
               regime="parity dimension d and repeated-set size N"),
    PaperClaim("bias", "The empirical moment M̂ = (1/N)Σ y xxᵀ has sampling-bias fluctuations of order N^(−1/2), far "
               "above the Θ(1/d) population signal", where="abstract", source="paper", quoted_only=True,
               reason_class="no measurable consequence",
               why="CLT arithmetic, derived in the chapter: sd(q̂) = √((3 − 2Σw⁴ − 4w₁²w₂²)/N) (the sampler's "
                   "consistency row checks it), so at w = (1, …, 1)/√d, E|q̂ − 2/d|/(2/d) ≈ √(2/π)·√(3/N)·d/2 = "
                   "0.69·√(d²/N): ≥ 3 exactly when N ≤ 0.053·d². A Monte-Carlo row of that ratio re-reads the "
                   "consistency row's number (dropped as true by construction); what the bias *does* is tested by "
                   "the toy rows (Theorem 1, Corollary 2) against fresh samples"),
    PaperClaim("layerwise", "The sampling bias makes the second-layer norm grow early — an implicit layer-wise "
               "learning-rate schedule (observable ‖a‖/‖W‖_F)", where="abstract", source="paper"),
    PaperClaim("thm1", "Two-phase training (N samples until |a| ≥ a⋆, then population GD) reaches alignment in "
               "O((Nd)^(1/4) log(d/ε)) steps, far fewer than population training", where="Theorem 1",
               source="secondary"),
    PaperClaim("cor2", "Random ±1 labels in Phase 1 grow |a| just as early", where="Corollary 2",
               source="secondary"),
    PaperClaim("interventions", "A larger second-layer initialisation (or second-layer learning rate) shrinks or "
               "removes the advantage of the small data set", where="interventions", source="secondary"),
    PaperClaim("100x", "(20, 6)-sparse parity, 2-layer MLP, full-batch GD: N = 2¹⁴ needs ~100× less compute than "
               "N = 2²⁰", where="experiments", source="secondary", regime="data-set size N"),
)

#: Pilot seeds 9001–9010 at the chapter's scale (min, mean, sd, max) of each row's measurement.
PILOT: dict[str, tuple[float, float, float, float]] = {
    "slope": (-0.5056, -0.4933, 0.0096, -0.476),
    "rt": (0.3358, 0.3961, 0.033, 0.4539),
    "rr": (0.3659, 0.431, 0.036, 0.4728),
    "t1": (0.454, 0.4912, 0.019, 0.5184),
    # the race (RACE, 12 seeds per pilot seed)
    "speedup_control": (0.9231, 1.016, 0.06, 1.083),
    "init_speedup": (1.857, 2.05, 0.18, 2.333),
    "ratio_gain": (1.731, 1.86, 0.1, 2.087),
    "ratio_gain_control": (0.918, 0.9932, 0.047, 1.087),
}


def _stats(key: str) -> str:
    if key not in PILOT:
        return "pilot not recorded"
    lo, mu, sd, hi = PILOT[key]
    return f"min {lo:.3g}, mean {mu:.3g}, sd {sd:.2g}, max {hi:.3g}"


@single_threaded
def deterministic_verdicts(d: int = 4) -> Verdicts:
    """The sympy rows: the toy's gradients, the moment, the variance of q̂, Phase 2 and the a⋆ trade-off."""
    dd = integer("d", d, 3, 6)
    grads = theory.derive_gradients(dd)
    sb = theory.derive_sampling_bias(dd)
    p2 = theory.derive_phase2(dd)
    tr = theory.derive_tradeoff()
    v = Verdicts("Small vs large data sets — derivations", display=False)
    v.equal(f"E[∂ℓ/∂a] = −½·wᵀMw and E[∇_w ℓ] = −a·Mw (moment rule, d = {dd})",
            (grads.mean_da_residual, list(grads.mean_dw_residual)), (0, [0] * dd), kind="consistency",
            source="derived", note="sympy: expand, then the Rademacher moment rule")
    v.true(f"E[y xxᵀ] = e₁e₂ᵀ + e₂e₁ᵀ for y = x₁x₂: moment rule = enumeration of {{±1}}^{dd}",
           sb.M == sb.M_expected and sb.M_by_enumeration == sb.M_expected, kind="consistency", source="derived",
           measured=f"M = {sb.M.tolist()}", note="the moment rule against brute force over all sign vectors")
    v.equal("N·Var q̂ = 3‖w‖⁴ − 2Σw⁴ − 4w₁²w₂² (true labels), 3‖w‖⁴ − 2Σw⁴ (random labels): residuals",
            (sb.var_residual, sb.var_random_residual, sb.fourth_moment_enum_residual), (0, 0, 0),
            kind="consistency", source="derived", note="third entry: E z⁴ by the moment rule − by enumeration; "
            "this variance is the closed form the Monte-Carlo row below checks")
    eta_, ast_ = sp.symbols("eta a_star", positive=True)
    v.equal(f"Phase 2: eigenvalues of I + ηa⋆M are 1 ± ηa⋆ (once each) and 1 (d − 2 times), d = {dd}",
            p2.eigenvalues, {1 + eta_ * ast_: 1, 1 - eta_ * ast_: 1, sp.Integer(1): dd - 2}, kind="consistency",
            source="secondary", note="the power iteration of Theorem 1's Phase 2 (our algebra)")
    v.equal("min over a⋆ of T₁ + T₂ ∝ a⋆√N/η + 2log(d/ε)/(ηa⋆) grows as N^(1/4)", tr.exponent_N,
            sp.Rational(1, 4), kind="consistency", source="secondary",
            note=f"optimum 2√(AB) (second derivative {sp.simplify(tr.second_derivative)} > 0); the d^(1/4) is not "
                 "checked")
    return v


@single_threaded
def seeded_verdicts(seed: int = CHAPTER_SEEDS[0], *, device: Any = None, race: RaceRun | None = None) -> Verdicts:
    """Every stochastic row of the chapter, built from ``seed`` (the chapter calls it with ``CHAPTER_SEEDS[0]``;
    ``tests/test_seed_robustness.py`` with 20 unseen seeds). ``race``: the chapter's ``race_study(seed)``, when it
    has already run it (it must be that run: the rows say it is). ``display=False``; carries :data:`PAPER_CLAIMS`."""
    s = integer("seed", seed, 0, 2**62)
    if race is not None and not isinstance(race, RaceRun):
        raise TypeError(f"Invalid race: {type(race).__name__} (must be None or race_study(seed)'s RaceRun)")
    v = Verdicts(f"Small vs large data sets — headline claims (seed {s})", display=False, claims=PAPER_CLAIMS)
    # -- fluctuation of q̂ -----------------------------------------------------------------------------------
    qs = q_study(s, device=device)
    m = len(qs.ns)
    zmax = z_threshold(1e-3, m)
    v.less(f"sd of q̂ = wᵀM̂w matches √((3 − 2Σw⁴ − 4w₁²w₂²)/N) at N = {qs.ns[0]}…{qs.ns[-1]} (d = {Q_D}, max |z|)",
           float(qs.z.abs().max()), zmax, kind="consistency", source="derived",
           basis=f"model: CLT for the sample sd, SE = sd·√((κ−1)/4R) (κ the sample kurtosis, R = {Q_DRAWS}); "
                 f"Bonferroni threshold z_threshold(1e-3, {m}), valid under the nesting's correlation",
           note="checks our sampler and the derived variance — the quantity the slope row is about")
    bias = abs(qs.slope_folded + 0.5)
    nt = torch.tensor([float(n) for n in qs.ns], dtype=torch.float64)
    signal = (2 * qs.w[0] * qs.w[1]).abs().cpu().to(torch.float64).expand_as(nt)
    slope_signal = float((_ols_weights(nt.log()) * signal.log()).sum())
    v.close(f"E|q̂| ∝ N^(−1/2) (the generic CLT rate): log–log slope over N = {qs.ns[0]}…{qs.ns[-1]} (d = {Q_D}, "
            "fixed w)", qs.slope, -0.5, atol=0.05, kind="consistency", source="paper",
            control=Control("the population signal |wᵀMw| = 2|w₁w₂| (N = ∞), same slope fit", slope_signal,
                            why="the Θ(1/d) signal the bias is compared with", tuned="none needed: same w, same fit"),
            basis=f"model: MC slope SE {qs.slope_se:.4f} (delta method over the draws) → 3.29·SE = "
                  f"{3.29 * qs.slope_se:.3f}, plus the deterministic bend that E q̂ = 2w₁w₂ causes (folded-normal "
                  f"slope {qs.slope_folded:.3f}, |bias| {bias:.3f}); sum ≤ 0.05. Pilot seeds 9001–9010: "
                  + _stats("slope"),
            note=f"{Q_DRAWS} nested data sets per N: a check of our sampler (any empirical mean has this rate), not "
                 "a test of the paper")
    # -- the toy: two-phase vs population -------------------------------------------------------------------
    g = toy_headline(s, device=device)
    t = toy_summary(g)
    pop_ratio = t["population"] / t["population"]
    note_pop = (f"medians over {V_SEEDS} seeds (paired: same w₀), N = d = {V_D}, η = {V_ETA}; censored at "
                f"{V_CAP} steps ({int(t['censored'])} population runs censored; the median is exact below half)")
    ctrl = Control("population GD (Phase 1 on the population moment, N = ∞)", pop_ratio,
                   why="the training Theorem 1 compares with: unlimited fresh data, i.e. the exact moment M",
                   tuned="the method's η, a₀, a⋆, ε and w₀ per seed (paired), the same step cap; its steps are "
                         "measured and the ratio normalises them to 1")
    fresh_true = _median_censored(fresh_phase1(g, s, labels="true", device=device)) / t["population"]
    fresh_random_steps = fresh_phase1(g, s, labels="random", device=device)
    fresh_random = _median_censored(fresh_random_steps) / t["population"]
    fresh_tuned = ("the method's η, a₀, a⋆, ε, N = d, step cap and w₀ per seed (paired), the same compute per step "
                   "(N = d samples); only the repetition differs: a new data set every Phase-1 step")
    ctrl_fresh = Control("Phase 1 on N = d fresh samples every step (no repeated set), then population GD",
                         fresh_true,
                         why="the large-data arm at the same compute: does the speed-up need the *repeated* set's "
                             "fixed bias, or does any N = d estimate of the moment do it? (sceptic's review)",
                         tuned=fresh_tuned)
    ctrl_fresh_random = Control("Phase 1 on fresh random ±1 labels every step (no repeated set), then population GD",
                                fresh_random,
                                why="Corollary 2 credits the *repeated* set's bias, not the label noise: with labels "
                                    "drawn fresh each step the bias changes sign every step and |a| only "
                                    "random-walks (sceptic's review)",
                                tuned=fresh_tuned)
    v.less("two-phase (N = d, true labels) / population GD: median steps to alignment",
           t["steps_true"] / t["population"], 0.6, kind="reproduces", source="secondary", tests="thm1",
           control=[ctrl, ctrl_fresh],
           basis="pilot: seeds 9001–9010 at this scale: " + _stats("rt") + "; 0.6 is the digest's planned "
                 "threshold, ≥ 4 pilot sd above the pilot mean",
           note=note_pop + ". The fresh-samples control (a row control since issue 57) needs "
                f"{fresh_true:.2f} of the population steps; the sceptic review's independent numpy gave 0.97 and "
                "0.78 (seed sets 24 and 9005) for it and 0.78/0.79 for Phase 1 on N = d² (bias ≈ signal); a second "
                "sceptic's independent numpy over 20 further seed sets of 32: fresh 0.78–1.03 (mean 0.91), two-phase "
                "0.33–0.49; this control on robustness seeds 7001–7006: 0.67–1.03 (all 20 fail 0.6): the row "
                "tells the repeated small set from fresh samples")
    v.less("two-phase with random ±1 labels in Phase 1 / population GD (Corollary 2)",
           t["steps_random"] / t["population"], 0.8, kind="reproduces", source="secondary", tests="cor2",
           control=[ctrl, ctrl_fresh_random],
           basis="pilot: seeds 9001–9010: " + _stats("rr") + "; 0.8 is the digest's planned threshold",
           note=note_pop + ". Fresh random labels (a row control since issue 57): "
                f"{int((fresh_random_steps < 0).sum())} of {V_SEEDS} runs miss alignment within the cap (the "
                "sceptic review's independent numpy: 29 of 32 in seed sets 24 and 9005; repeated random labels "
                "0.46 and 0.33 of the population steps)")
    v.less("median T₁ / (2a⋆/(η·E|q̂|)) ≤ 1, true and random labels (max of the two)",
           max(t["t1_ratio_true"], t["t1_ratio_random"]), 1.0, kind="consistency", source="reconstruction",
           basis="exact: the bound itself (ratio 1) — T₁ if q̂ kept its initial typical size; the w-feedback only "
                 "shortens Phase 1. Pilot seeds 9001–9010: " + _stats("t1"),
           note="E|q̂| = √(2/π)·sd(w₀, N) per seed; the constant of this bound is our reconstruction of T₁ ≲ a⋆√N/η")
    # -- the MLP race: repeated small set vs fresh samples at equal compute ------------------------------------
    race = race_study(s, device=device) if race is None else race
    r = race_summary(race)
    cfg = (f"({RACE['d']}, {RACE['k']})-parity, width {RACE['width']}, batch {RACE['batch']}, lr {RACE['lr']}, "
           f"{RACE['seeds']} seeds (paired: same W₀, a₀), N = {RACE['n_small']:,} repeated vs fresh, target "
           f"{RACE['target']:.0%} test accuracy, evaluated every {RACE['eval_every']} steps")
    rival = mlp_race(**{**RACE, "scales": (1.0,), "lr": RACE["lr"] * LR_RIVAL}, seed=s, device=device)
    lr_rival = r["steps_fresh"] / _median_censored(rival.steps_to_target[0, REGIMES.index("fresh")])
    v.greater("a larger second layer speeds fresh training (layer-wise schedule): steps at init ×1 / at init ×4",
              r["init_speedup"], 1.3, kind="not_specific", source="paper", tests="layerwise",
              control=[Control("the same quotient with init ×1 in both (the second fresh stream)",
                               r["speedup_control"],
                               why="chance alone: two fresh streams at the same init differ only by their draws",
                               tuned="none needed: the same race, seeds, steps and evaluation grid as the method"),
                       Control(f"a ×{LR_RIVAL:g} global learning rate at init ×1 (both layers; the second layer "
                               "untouched): steps at lr ×1 / at lr ×" + f"{LR_RIVAL:g}", lr_rival,
                               why="the simplest change that needs no second layer: does a larger second layer do "
                                   "more than any larger step would? (sceptic's attack, issue 57)",
                               tuned=f"the ×{LR_RIVAL:g} is the best of the grid {{×1.5, ×2, ×3, ×4}} by the mean of "
                                     "this statistic over pilot seeds 9001–9010 (" + ", ".join(
                                         f"×{c:g}: {lo:.2f}–{hi:.2f}, mean {mu:.2f}"
                                         for c, (lo, mu, hi) in LR_RIVAL_PILOT.items())
                                     + "; rule fixed before those runs, ties to the smaller step; an earlier grid "
                                       "{×2, ×4} on seed 9001 alone chose ×2); the race's seeds, steps, evaluation "
                                       "grid and target")],
              basis="pilot: seeds 9001–9010: " + _stats("init_speedup") + "; control " + _stats("speedup_control")
                    + "; 1.3 is ≥ 4 pilot sd from both means",
              note=f"{cfg}; medians {r['steps_fresh']:.0f} (×1) and {r['steps_fresh_x4']:.0f} (×4): a larger "
                   "second layer multiplies the first layer's gradient. Holds, not specific: a larger global step "
                   "speeds fresh training too, so the row shows that the first layer's effective step gates the "
                   "speed — which the layer-wise-schedule reading needs — not that the second layer is special")
    e_r = int((race.eval_steps == RACE_RATIO_STEP).nonzero()[0, 0])
    reuse_run = mlp_race(**{**RACE, "scales": (1.0,), "steps": RACE_RATIO_STEP, "reuse": REUSE}, seed=s, device=device)
    fi = REGIMES.index("fresh")
    reuse_gain = float(reuse_run.ratio[0, fi, :, -1].double().mean() / race.ratio[0, fi, :, e_r].double().mean())
    v.greater(f"‖a‖/‖W‖_F at step {RACE_RATIO_STEP}: repeated N = {RACE['n_small']:,} over fresh (mean over seeds)",
              r["ratio_gain"], 1.4, kind="reproduces", source="paper", tests="layerwise",
              control=[Control("a second, independent fresh stream over fresh samples", r["ratio_gain_control"],
                               why="chance alone: what the quotient is when the data are not repeated",
                               tuned="none needed: the same race, seeds and step as the method"),
                       Control(f"batch reuse: fresh samples, each mini-batch used for {REUSE} consecutive steps, "
                               "over fresh", reuse_gain,
                               why="the rival explanation the paper rules out (batch reuse): does any short-term "
                                   "reuse of samples grow ‖a‖ as much, or does it take a small repeated set? "
                                   "(second sceptic's review)",
                               tuned=f"not tuned: {REUSE} passes per batch is the published scheme; a larger reuse "
                                     "is a small repeated set for that many steps, the paper's own mechanism (reuse "
                                     "4 on pilot seeds 9001–9010: 1.52–1.74, it passes). The race's seeds, W₀, a₀, "
                                     "batch, lr and step")],
              basis="pilot: seeds 9001–9010: " + _stats("ratio_gain") + "; control " + _stats("ratio_gain_control")
                    + "; 1.4 is ≥ 4.6 pilot sd from both means",
              note=f"{cfg}: the sampling bias grows the second layer early, the observable of the abstract. Batch "
                   f"reuse ×{REUSE} grows it {reuse_gain:.2f}× (pilot 1.14–1.38, sd 0.07: about 2 sd below 1.4, so "
                   "the margin over this rival is narrower than over chance); every arm is still near chance "
                   "accuracy at this step, so the quotient is not progress")
    return v


def dilution_null(run: RaceRun, ratio_step: int = RACE_RATIO_STEP) -> dict[str, float]:
    """The plain-dilution null for the ratio-shrink reading: if the repeated set added the same *absolute* excess
    to ‖a‖/‖W‖_F at init ×1 and ×4, the gain at ×4 would be ``1 + (gain₁ − 1)·r₁/r₄`` (r the fresh ratio), so the
    shrink ``gain₄/gain₁`` would follow from the larger baseline alone. Returns the measured and the null shrink."""
    r = race_summary(run, ratio_step)
    e = int((run.eval_steps == ratio_step).nonzero()[0, 0])
    fresh = run.ratio[:, 1, :, e].double().mean(1).cpu()
    g4_null = 1 + (r["ratio_gain"] - 1) * float(fresh[0] / fresh[1])
    return {"measured": r["ratio_shrink"], "null": g4_null / r["ratio_gain"]}


def _scan_stats(points: list[dict], key: str) -> list[dict[str, float]]:
    return [paired_stats(p[key]) for p in points]


def _diff(points: list[dict], a: str, b: str) -> list[dict[str, float]]:
    return [paired_stats([x - y for x, y in zip(p[a], p[b], strict=False)]) for p in points]


def load_lr_results() -> dict[str, Any]:
    """The committed results of ``bench/small_vs_large_lr.py`` (the second-layer learning-rate intervention)."""
    import json

    path = RESULTS.parent / "small_vs_large_lr.json"
    if not path.is_file():
        raise ValueError(f"Invalid path: {str(path)!r} (no such results file; run bench/small_vs_large_lr.py)")
    return json.loads(path.read_text())


def scan_verdicts(results: dict[str, Any] | None = None, *, rerun: dict[str, Any] | None = None,
                  lr_results: dict[str, Any] | None = None) -> Verdicts:
    """The regime rows from the committed bench results (:func:`~.experiment.load_results`): the race over
    (d, N) — the repeated set's paired speed-up against a second fresh stream and the ×4-init ablation; the ×4
    init's removal of the advantage; full-batch GD against N. ``rerun``: :func:`~.scan.race_point` of the
    chapter's re-run (one seed set of one point), checked against the committed numbers. ``display=False``."""
    res = load_results() if results is None else results
    if not isinstance(res, dict) or "scan" not in res or "full_batch" not in res:
        raise TypeError("Invalid results: must be the dict of bench/results/small_vs_large.json")
    sc, fb = res["scan"], res["full_batch"]
    pts = sc["points"]
    m = len(pts)
    thr = z_threshold(1e-3, m)
    labels = tuple(f"d = {p['d']}, N = {p['n']:,}" for p in pts)
    rep, ctl, x4 = _scan_stats(pts, "rep"), _scan_stats(pts, "ctrl"), _scan_stats(pts, "rep_x4")
    zr, zc, z4 = (max(s["z"] for s in x) for x in (rep, ctl, x4))
    seeds = rep[0]["n"]
    cfg = (f"(d, {sc['race']['k']})-parity, width {sc['race']['width']}, batch {sc['race']['batch']}, lr "
           f"{sc['race']['lr']}, ≤ {sc['race']['steps']} steps, target {sc['race']['target']:.0%}; {seeds} paired "
           f"seeds per point ({len(sc['seed_sets'])} independent sets of {sc['seeds']})")
    where = ", ".join(f"{lab}: {s['speedup']:.2f}×" for lab, s in zip(labels, rep, strict=False))
    mach = res.get("machine", {})
    v = Verdicts("Small vs large data sets — the regime scan (bench/small_vs_large.py)", display=False,
                 claims=PAPER_CLAIMS)
    basis = (f"model: CLT over independent paired seeds, z = mean/SE of the per-seed log speed-up; max over the "
             f"{m} scan points against z_threshold(1e-3, {m}) = {thr:.2f} (Bonferroni: false alarm ≤ 1e-3 for the "
             "maximum)")
    v.greater(f"repeated beats fresh at equal compute somewhere in the scan: largest z of the paired log speed-up "
              f"over {m} (d, N) points", zr, thr, kind="reproduces", source="paper", tests="faster",
              control=[Control("a second, independent fresh stream in place of the repeated set", zc,
                               why="chance alone: two fresh streams differ only by their draws, so any 'win' of "
                                   "this size is noise",
                               tuned="none needed: the same race, points, seeds, budget and evaluation grid"),
                       Control("the repeated set at second-layer init ×4 (the mechanism's ablation)", z4,
                               why="the paper's mechanism: a second layer that starts large leaves the bias's "
                                   "schedule nothing to add, so the win must vanish",
                               tuned="the same race, points and seeds; only a₀ scaled by 4")],
              basis=basis, scan=Scan("(d, N)", labels, tuple(s["speedup"] for s in rep),
                                     tuple(s["z"] >= thr for s in rep)),
              note=f"{cfg}. Speed-up e^mean per point: {where}. Committed on {mach.get('cpu', '?')}. Sceptic "
                   "review: the scan's z re-derived from the committed per-seed log speed-ups with independent code "
                   "(7.73 at d = 24, N = 4,096; control 2.18, ablation −0.12: match); with both arms at a second-layer "
                   "learning rate ×4 (the η_a row's bench) the repeated set still wins at every winning point, so the "
                   "win is not an artefact of fresh training's second-layer step alone. The scan's lr 0.5 is below "
                   "fresh training's best global step (×3 is best on the init row's pilots, halving fresh steps); a "
                   "second sceptic's probe at d = 24, N = 4,096, seed sets 101–102 (24 seeds), both arms at lr ×3: "
                   "repeated over fresh 1.13× (z 2.6; control 1.07×, z 1.5) against 1.26× (z 5.8) at lr ×1 on the "
                   "same seeds — the win shrinks and is not resolved at a tuned step on 24 seeds; the full scan at "
                   "a tuned step was not run (CPU budget)")
    dr, dc = _diff(pts, "rep", "rep_x4"), _diff(pts, "ctrl", "ctrl_x4")
    eff = [i for i, st in enumerate(rep) if st["z"] >= thr]
    z1 = z_threshold(1e-3, 1)
    zmin = min((dr[i]["z"] for i in eff), default=math.nan)
    zmin_c = min((dc[i]["z"] for i in eff), default=math.nan)
    v.greater(f"a second layer initialised ×4 shrinks the repeated set's advantage: smallest z of the paired "
              f"difference of log speed-ups (×1 − ×4) over the {len(eff)} point(s) where the repeated set wins",
              zmin, z1, kind="reproduces", source="secondary", tests="interventions",
              control=Control("the same difference for the second fresh stream, at the same points", zmin_c,
                              why="chance alone: the fresh stream has no advantage for the init to remove",
                              tuned="none needed: the same race, points and seeds"),
              basis=f"model: CLT over independent paired seeds; an intersection–union test (every point must show "
                    f"it), so the unadjusted one-sided z_threshold(1e-3) = {z1:.2f} keeps the false alarm ≤ 1e-3",
              note="×1 − ×4 in mean log speed-up at those points: " + ", ".join(
                  f"{labels[i]}: {dr[i]['mean']:+.2f} (×4 speed-up {x4[i]['speedup']:.2f})" for i in eff)
                   + ". Where the repeated set does not win (N = 1,024), the ×4 init makes it slower than fresh")
    lr = load_lr_results() if lr_results is None else lr_results
    if not isinstance(lr, dict) or not isinstance(lr.get("points"), list) or not lr["points"]:
        raise TypeError("Invalid lr_results: must be the dict of bench/results/small_vs_large_lr.json")
    lp = lr["points"]
    llab = tuple(f"d = {p['d']}, N = {p['n']:,}" for p in lp)
    dl, dlc = _diff(lp, "rep", "rep_lr4"), _diff(lp, "ctrl", "ctrl_lr4")
    srl = _scan_stats(lp, "rep_lr4")
    removed = min(paired_stats(p["rep"])["z"] for p in lp)
    v.less(f"a second-layer learning rate ×4 (η_a = 4η_w) does not measurably shrink the repeated set's advantage: "
           f"smallest z of the paired difference of log speed-ups (×1 − η_a ×4) over the {len(lp)} point(s) where "
           f"the repeated set wins, below the one-sided z_threshold(1e-3) = {z1:.2f}", min(s_["z"] for s_ in dl), z1,
           kind="inconclusive", source="secondary", tests="interventions", paper=removed,
           paper_shown=f"'shrinks or removes': a removal would make the difference the ×1 win itself, smallest z "
                       f"{removed:.2f}",
           untestable="the claim gives no size for the shrink ('shrinks or removes'): any shrink, however small, is "
                      "the claim, so no plant at the paper's size exists — a shrink as small as the one measured "
                      "cannot be told from none at false alarm 1e-3 with 48 seeds",
           basis=f"model: the init row's intersection–union test (one-sided z_threshold(1e-3) = {z1:.2f}), fixed in "
                 "bench/small_vs_large_lr.py before it ran; its pre-registered reading if the claim's test failed",
           note="bench/small_vs_large_lr.py: the scan's race, points, seed sets and seeds, init ×1 with η_a ×1 and "
                "×4. Per point, ×1 − η_a ×4 in mean log speed-up (z) and the η_a ×4 speed-up (z): " + ", ".join(
                    f"{lab}: {a['mean']:+.3f} (z {a['z']:.2f}), {b['speedup']:.2f}× (z {b['z']:.2f})"
                    for lab, a, b in zip(llab, dl, srl, strict=True))
                + "; the second fresh stream's difference, largest z "
                + f"{max(c['z'] for c in dlc):.2f}. The win survives η_a ×4 at every point: this intervention at "
                  "most shrinks it")
    if rerun is not None:
        if not (isinstance(rerun, dict) and {"d", "n", "rep"} <= set(rerun) and isinstance(rerun["rep"], list)
                and len(rerun["rep"]) >= 2):
            raise TypeError("Invalid rerun: must be race_point(...)'s dict with its 'd' and 'n' added")
        key = (rerun["d"], rerun["n"])
        p = next((q for q in pts if (q["d"], q["n"]) == key), None)
        if p is None or len(rerun["rep"]) > len(p["rep"]):
            raise ValueError(f"Invalid rerun: point {key!r} with {len(rerun['rep'])} seeds is not in the scan")
        k = len(rerun["rep"])
        sd = max(float(torch.tensor(p["rep"][:k]).std()), 1e-9)
        tol = 4 * math.sqrt(2) * sd / math.sqrt(k)
        v.close(f"the chapter's re-run of the bench's first seed set at d = {key[0]}, N = {key[1]:,} reproduces "
                "its mean paired log speed-up", float(torch.tensor(rerun["rep"]).mean()),
                float(torch.tensor(p["rep"][:k]).mean()), atol=tol, kind="consistency", source="reconstruction",
                basis=f"model: same seeds and code give the same steps; if another CPU's float32 rounding "
                      f"decorrelated every run, two means of {k} would differ by sd·√(2/{k}): the band is 4 of that",
                note="a check that the committed results come from this code")
    ns = fb["ns"]
    meds = full_batch_medians(fb)
    i_lo, i_hi = ns.index(2048), ns.index(32768)
    ratio = meds[i_hi] / meds[i_lo]
    paper = 100.0 ** (4 / 6)
    v.less(f"full-batch GD: steps to {fb['target']:.0%} at N = 2¹⁵ over N = 2¹¹ (median of {fb['seeds']} seeds, "
           f"({fb['d']}, {fb['k']})-parity)", ratio, FULL_BATCH_BOUND, kind="inconclusive", source="secondary",
           tests="100x", paper=paper,
           paper_shown=f"~100× from 2¹⁴ to 2²⁰, i.e. {paper:.1f}× over our factor 16 in N (power law)",
           untestable="no plateau at bench scale: at this parity both N train in a few hundred steps, so there is "
                      "no long plateau for a small set's bias to shorten, and the paper's effect — a shortened "
                      "plateau — cannot arise here; multiplying our own runs by the paper's factor would be caught, "
                      "but that is not the effect where it could appear. A CPU pilot at (16, 5)-parity (N = 2¹¹ and "
                      "2¹⁵, 4,000 steps) stayed at chance, and the paper's (20, 6)-parity is beyond the bench",
           basis="pilot: seed 9001, two runs at (24, 4)-parity measured 0.97; the bound 2 was fixed before the "
                 "bench ran",
           scan=Scan("N", tuple(ns), meds),
           note="median steps per N (lower median over seeds): " + ", ".join(
               f"{n:,}: {mm:.0f}" for n, mm in zip(ns, meds, strict=False))
                + f" (inf: under half reached the target within {FULL_BATCH['steps']} steps)")
    return v


def full_batch_medians(fb: dict[str, Any]) -> tuple[float, ...]:
    """Median steps per N of the full-batch trend (the lower median over seeds, torch's; a run that missed the
    target counts as ∞) — the numbers the full-batch row and the chapter's prose both use."""
    if not isinstance(fb, dict) or "steps" not in fb:
        raise TypeError("Invalid fb: must be the 'full_batch' dict of bench/results/small_vs_large.json")
    out = []
    for x in fb["steps"]:
        y = torch.tensor([float(t) if t >= 0 else math.inf for t in x])
        out.append(float(y.median()))
    return tuple(out)
