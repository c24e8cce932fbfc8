"""Every verdict row the Adam chapter shows (Bai et al., ICML 2026), each reproduction with its control.

The chapter runs its experiments and hands the results to :func:`headline` (one dict, the keys listed in
:data:`HEADLINE_KEYS`); :func:`deterministic_verdicts` rebuilds the fixed-point and spiral rows on its own (no
randomness: run twice, the numbers are identical). Tolerances are fixed here, before measuring, from the error
model in each row's ``basis``: float64 rounding (≈ 1e-16 per operation), the transient |eig J|^t left at the
start of a window, nonlinearity inside the linear band, and integer step quantisation.

Controls (the same measurement on something that must not satisfy the claim): gradient descent's and momentum's
ratio and log-loss slope for Adam's linear rate, with GD at Polyak's step (linear at another rate) and the coupled
ablation β₂ = 0; GD/momentum on a problem of another degree for the sublinear exponents (momentum on steps
1e5–1e6 from both buffer starts, :func:`momentum_rows`); Adam's count for GD's power law; the neighbouring β₂'s
run for RMSProp's rate; Eq. (8) with the exponents 1/2, the existence exponent and the k-free 1 for the phase
diagrams (k = 4, 6); the coupled regime-III run and the same EMA along GD's run for the decoupling lemma; the
other regimes' runs for regimes I and III; RMSProp below its threshold (β₂ = 0.05, 0.01) for Theorem 5.7's
stability; k = 4 for the k = 2 spike; normalized GD and the coupled ablation for Sec. 7's race (:func:`mixed_rows`).
The differs rows plant the paper's effect in the method's own measurement (regime III's tail rescaled to η/2; Eq. 8's
stable side at β₂ = 0.07; regime II's spike, scanned over β₂ = 0.875, 0.885, 0.895, with each run's own descent
stretched to the depth at the paper's β₂ = 0.895, :func:`spike_plant`). The sceptic's review (2026-12) added the
Polyak, coupled, k-free, GD-EMA and β₂ = 0.01 controls, the k = 6 diagram and the regime scans; three rows became
'holds, not specific'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from ..check import Control, PaperClaim, Planted, Scan, Verdicts
from .dynamics import adam_path
from .experiments import MIXED_START, SPIRAL_SETTINGS, MixedRace, MomentumTail, Spiral, spiral_experiment
from .theory import (
    fixed_point,
    gradient_flow_hitting_time,
    linear_rate,
    log_loss_slope,
    regime,
    rmsprop_threshold,
)

__all__ = ["PAPER_CLAIMS", "HEADLINE_KEYS", "spiral_rows", "fixed_point_rows", "deterministic_verdicts",
           "momentum_rows", "mixed_rows", "headline", "spike_count", "spike_plant"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("linear", "Adam with a constant step converges linearly on the highly degenerate polynomials "
               "xᵏ/k (k ≥ 4 even), where gradient descent and momentum converge only sublinearly",
               where="abstract", source="paper", headline=True),
    PaperClaim("fig2a", "The slope of ln L per step is ≈ −0.0726 for k = 4 and ≈ −0.0544 for k = 6 "
               "(k ln β₂ / (2(k−2)))", where="Fig. 2(a)", source="secondary"),
    PaperClaim("eq8", "The fixed point is locally asymptotically stable iff β₁ < β₂^(k/(2(k−2))) (Eq. 8)",
               where="Theorem 4.1", source="secondary"),
    PaperClaim("thm5.1", "GD, gradient flow and heavy-ball momentum converge as xₜ = Θ(t^(−1/(k−2)))",
               where="Theorems 5.1, 5.3", source="secondary"),
    PaperClaim("lemma5.4", "Decoupling: once xₜ → 0, vₜ/v_(t−1) → β₂ (vₜ ~ β₂ᵗ)", where="Lemma 5.4",
               source="secondary"),
    PaperClaim("thm5.7", "RMSProp (β₁ = 0) converges linearly at β₂^(1/(2(k−2))); its fixed point is stable iff "
               "β₂ > ((k−2)/k)^(2(k−2))", where="Theorem 5.7", source="secondary"),
    PaperClaim("thm6.1", "Three regimes in (β₁, β₂): I stable linear convergence; II fast convergence then loss "
               "spikes; III vₜ tracks gₜ² (coupling ratio ≈ 1) and Adam oscillates like SignGD at ≈ L(η/2)",
               where="Theorem 6.1", source="secondary"),
    PaperClaim("fig1", "On the strongly convex x²/2 the effective curvature λₜ grows past 2/η (Adam spikes); "
               "on x⁴/4 it settles", where="Fig. 1", source="secondary"),
    PaperClaim("remark5.8", "Complexity separation: GD needs ε^(−(k−2)) steps, Adam (k−2) ln(1/ε)",
               where="Remark 5.8", source="secondary"),
    PaperClaim("mixed", "On the recovered 2-D mixed-degeneracy loss ¼(x−y)² + (x+y)⁴/16, Adam beats GD and "
               "momentum along the degenerate direction x + y", where="Sec. 7, Fig. 8", source="secondary",
               regime="step budget"),
    PaperClaim("mixed_other", "Adam beats GD and momentum along the degenerate direction of the paper's three other "
               "2-D mixed-degeneracy losses", where="Sec. 7, Fig. 8", source="secondary", quoted_only=True,
               why="the secondary notes give one of the four losses; the other three (and Fig. 8's step sizes and "
                   "β's) could not be read", reason_class="paper text unread"),
    PaperClaim("arch", "Across architectures (ReLU vs softmax MLPs, Transformer vs CNN), Hessian spectra more "
               "concentrated at 0 go with a larger Adam advantage", where="Sec. 7", source="secondary",
               quoted_only=True, why="the architectures' sizes, data and training settings could not be recovered "
                                     "from the notes, so no run here could claim to be the paper's",
               reason_class="paper text unread"),
)

#: What :func:`headline` reads from the chapter's results (see the chapter for how each is measured).
HEADLINE_KEYS = (
    "derivations", "rms", "hits", "hits_batched", "per_unit", "steps_per_efold", "rates", "gd_rates", "tails",
    "flow_bias", "spirals", "L", "lnR_slope", "R_early", "lemma54", "lemma54_coupled", "rms_rates",
    "mult07", "mult07_theory", "spread07", "spread05", "tr05", "cyc", "two_step", "two_step_pred", "spread_flip",
    "spread_planted", "amp3", "amp_signgd", "pd_agreement", "pd_controls", "crossing", "crossing_k4", "lam_T",
    "lam_star", "beta2", "separation", "hb_rates", "momentum", "amp_planted", "mixed",
    # the sceptic's review (2026-12): alternatives, neighbours and scans
    "polyak_rate8", "coupled_rate8", "lemma54_gd", "spread01", "pd6_agreement", "pd6_controls", "amp3_scan",
    "R3_scan", "spike_scan",
)


def spiral_rows(spirals: Iterable[Spiral], title: str = "Adam — spiral around the fixed point") -> Verdicts:
    """Two consistency rows per experiment: the measured period vs 2π/arg(eig J), and the Casoratian det vs
    β₁β₂^{−k/(2(k−2))} — the [derived] Jacobian checked against trajectories it never saw.

    Tolerances (fixed before measuring): period rtol 1e-3 — nonlinearity ≤ 1e-2 at the band's edge shifts the
    period by O(1e-4) and crossing interpolation errs by ≤ 1e-3 step per turn; det rtol 1e-4 — nonlinear terms
    perturb ln Q_t by O(1e-2) over a rise of ≥ 5 across the window.
    """
    v = Verdicts(title, display=False)
    if isinstance(spirals, (str, bytes)) or not isinstance(spirals, Iterable):
        raise TypeError(f"Invalid spirals: {spirals!r} (must be an iterable of Spiral results)")
    for s in spirals:
        if not isinstance(s, Spiral):
            raise TypeError(f"Invalid spirals: contains {type(s).__name__} (each must be a Spiral result)")
        reg = "I" if regime(*s.setting) == "stable" else "II"
        v.close(f"regime {reg} {s.setting}: oscillation period (zero crossings) = 2π/arg(eig J)", s.period,
                s.fp.period, rtol=1e-3, kind="consistency", source="derived",
                basis="model: nonlinearity ≤ 1e-2 at the band's edge shifts the period by O(1e-4); crossing "
                      "interpolation ≤ 1e-3 step per turn",
                note=f"{s.turns} turns in window {s.window}: the derived Jacobian's angle, read off a trajectory")
        v.close(f"regime {reg} {s.setting}: det J from the Casoratian of ωₜ − ω* = β₁β₂^(−k/(2(k−2)))", s.det,
                s.fp.det, rtol=1e-4, kind="consistency", source="derived",
                basis="model: nonlinear terms move ln Qₜ by O(1e-2) over a rise of ≥ 5 across the window",
                note="slope of ln Qₜ, Qₜ = d_(t+1)² − dₜd_(t+2): det J < 1 is exactly Eq. 8")
    return v


def fixed_point_rows(lr: float = 1e-3, steps: int = 3000) -> Verdicts:
    """ωₜ → ω* and λₜ → λ* at the paper's setting (4, 0.9, 0.93), read at t = ``steps``."""
    fp = fixed_point(4, 0.9, 0.93, lr)
    path = adam_path(4, 0.9, 0.93, lr, steps)
    v = Verdicts("Adam — fixed point", display=False)
    basis = "model: |eig J|³⁰⁰⁰ < 1e-21; rounding of m/x³ ~ 1e-15; the (1−β₂)x² correction < 1e-40"
    v.close(f"ωₜ → ω* at (4, 0.9, 0.93), t = {steps}", path.omega[-1], fp.omega, rtol=1e-9, kind="consistency",
            source="derived", basis=basis, note="the derived fixed point is the one the recurrence settles at")
    v.close(f"λₜ → λ* at (4, 0.9, 0.93), t = {steps}", path.lam[-1], fp.lam, rtol=1e-9, kind="consistency",
            source="derived", basis=basis, note="as above")
    return v


def deterministic_verdicts() -> Verdicts:
    """The chapter's fixed-point and spiral rows (cheap: four scalar runs, well under a second)."""
    v = Verdicts("Adam on xᵏ/k — fixed point and spiral (deterministic)", display=False)
    v.extend(fixed_point_rows())
    v.extend(spiral_rows(spiral_experiment(*key, start_at_fixed_point=at_fp) for key, at_fp in SPIRAL_SETTINGS))
    return v



def momentum_rows(momentum: Mapping[tuple[int, str], MomentumTail]) -> Verdicts:
    """Theorem 5.3 for EMA heavy ball on the late window: one row per (k, buffer start) for k = 4, 6 and both
    starts, each against the same fit one degree up from m₀ = 0 (``momentum`` maps (k, start) to
    :func:`~.experiments.momentum_tail`; it needs (4|6, "g0"|"zero") and (6|8, "zero"))."""
    need = [(4, "g0"), (4, "zero"), (6, "g0"), (6, "zero"), (8, "zero")]
    if not isinstance(momentum, Mapping) or any(not isinstance(momentum.get(key), MomentumTail) for key in need):
        raise TypeError(f"Invalid momentum: must map each of {need} to a MomentumTail (experiments.momentum_tail)")
    v = Verdicts("Heavy-ball momentum — late tail", display=False)
    for k, start in ((4, "g0"), (4, "zero"), (6, "g0"), (6, "zero")):
        mt, rival = momentum[k, start], momentum[k + 2, "zero"]
        m0 = "m₀ = g₀" if start == "g0" else "m₀ = 0"
        bias = mt.flow_exponent + 1 / (k - 2)
        v.close(f"heavy-ball tail exponent, k={k}, {m0} (Theorem 5.3: −1/(k−2)), steps 1e5–1e6", mt.exponent,
                -1 / (k - 2), atol=0.02, kind="reproduces", source="secondary", tests="thm5.1",
                control=Control(f"heavy ball on x^({k + 2}) (m₀ = 0): same fit, same window", rival.exponent,
                                why="the rival exponent −1/k of the next degree, from a run that is asymptotic on the "
                                    "window (from m₀ = g₀ the x⁸ run overshoots and is still far from its tail at "
                                    "10⁶ steps)",
                                tuned="none needed: the same method, lr 0.1, β = 0.9, start x₀ = 1 and window; only "
                                      "the degree differs"),
                basis=f"model: gradient flow restarted at step 1000 from this run's own x has exponent "
                      f"{mt.flow_exponent:.4f} on the window (bias {bias:.1e}, the offset left by the early "
                      "overshoot); atol 0.02, the GD rows' tolerance, is above that bias and below half the gap "
                      f"2/(k(k−2)) = {2 / (k * (k - 2)):.3f} to the rival exponent",
                note=f"log–log slope of |xₜ| over steps {mt.window[0]:,}–{mt.window[1]:,}; EMA momentum (lr 0.1, "
                     "β = 0.9). On steps 2000–20000 the exponent still depends on the buffer's start and on k "
                     "(the transient the early overshoot leaves), so both starts are tested here")
    return v


def mixed_rows(race: MixedRace) -> Verdicts:
    """Sec. 7's claim on the recovered mixed loss, from :func:`~.experiments.mixed_race` (the default methods)."""
    if not isinstance(race, MixedRace) or not {"gd", "heavy_ball", "adam", "sign_momentum",
                                               "normalized_gd"} <= set(race.best):
        raise TypeError("Invalid race: must be experiments.mixed_race()'s MixedRace with its default methods")
    v = Verdicts("Sec. 7 — the mixed-degeneracy loss", display=False)
    # ---- holds, not specific: Sec. 7's "Adam beats GD and momentum" on the recovered loss, read as the notes word
    # it (a lead > 1 at every budget); issue 57's first reading, a decade, is reported in the note, not tested
    mx = race
    lead = mx.lead("adam")
    worst = float(lead.min())
    ngd = float(mx.lead("normalized_gd").min())
    sgn = mx.lead("sign_momentum")
    etas = ", ".join(f"{n} {'/'.join(f'{e:g}' for e in mx.best_eta[n])}" for n in ("gd", "heavy_ball", "adam"))
    inside = all(bool(mx.interior[n].all()) for n in ("gd", "heavy_ball", "adam", "normalized_gd"))
    tuned = "the same half-decade η grid (1e-4…1e2), budgets and start as every method; best η per budget"
    v.greater(f"Sec. 7, mixed loss ¼(x−y)² + (x+y)⁴/16 from {MIXED_START}: Adam beats tuned GD and heavy ball along "
              f"x + y — its lead (best |x_(T) + y_(T)| of either ÷ Adam's), worst of T = "
              f"{', '.join(map(str, mx.budgets))}, is above 1", worst, 1.0, kind="not_specific", source="secondary",
              tests="mixed",
              control=[Control("normalized GD (η g/‖g‖): the same lead", ngd,
                               why="the simplest scale-free step, no moments: the sceptic's 'any normalised step "
                                   "beats GD here'", tuned=tuned),
                       Control("Adam with β₂ = 0 (vₜ = gₜ², the paper's coupled ablation): the same lead",
                               float(sgn.min()), why="the ablation that removes exactly the decoupling the paper "
                               "credits", tuned=tuned)],
              scan=Scan("step budget T", mx.budgets, tuple(float(x) for x in lead)),
              basis="paper: Sec. 7 says Adam 'beats' GD and momentum (Fig. 8's size unread); protocol fixed before "
                    "the run (issue 57: start, grid 1e-4…1e2 in half-decades, budgets 2k/5k/10k, final |x+y|)",
              note=f"Adam (the chapter's: ε = 0, m₀ = g₀, v₀ = g₀², β = (0.9, 0.93)) leads by "
                   f"{', '.join(f'{x:.1f}×' for x in lead)} at T = {', '.join(map(str, mx.budgets))}: it beats both, "
                   f"but by less than the decade issue 57 first read 'beats' as (a reading of ours, not the paper's: "
                   f"the earlier 'differs' row; a lead just over 1, the smallest the paper's word implies, would "
                   f"have passed it unseen). Not specific: normalized GD leads by ≥ {ngd:.0f}×; the coupled ablation "
                   f"leads by {', '.join(f'{x:.2g}×' for x in sgn)} — it trails at the first budget only. Best η per "
                   f"budget: {etas} — {'every one inside the grid' if inside else 'NOT all inside the grid'}. One "
                   "recovered loss, at the chapter's β's (Fig. 8's are unread)")
    return v


def _spikes(mn: float, fin: float) -> bool:
    return bool(mn <= 1e-100 and fin >= 1e10 * mn)


def spike_count(scan: Mapping[float, tuple[float, float]]) -> int:
    """How many regime-II runs show the spike signature: min L ≤ 1e−100, then final L ≥ 1e10 · min L.

    ``scan`` maps β₂ to the run's (min L, final L)."""
    if not isinstance(scan, Mapping) or not scan:
        raise ValueError(f"Invalid scan: {scan!r} (must be a non-empty mapping β₂ → (min L, final L))")
    return sum(_spikes(float(mn), float(fin)) for mn, fin in scan.values())


def spike_plant(scan: Mapping[float, tuple[float, float]], loss0: float, paper_beta2: float = 0.895
                ) -> dict[float, tuple[float, float]]:
    """The paper's regime-II spike planted in each scanned run: the run's log-loss below ``loss0`` stretched by
    s = ln(min_paper/L₀)/ln(min/L₀) so that its minimum equals the run at ``paper_beta2``'s (the paper's setting).

    Returns β₂ → (planted min L, planted final L); the stretch also multiplies the run's rise (in decades) by s."""
    if not isinstance(scan, Mapping) or paper_beta2 not in scan:
        raise ValueError(f"Invalid scan: {scan!r} (must map β₂ → (min L, final L) and contain {paper_beta2})")
    l0 = float(loss0)
    if not (math.isfinite(l0) and l0 > 0):
        raise ValueError(f"Invalid loss0: {loss0!r} (must be finite and > 0)")
    target = math.log(float(scan[paper_beta2][0]) / l0)
    out = {}
    for b2, (mn, fin) in scan.items():
        s = max(1.0, target / math.log(float(mn) / l0))
        out[b2] = (l0 * math.exp(s * math.log(float(mn) / l0)), l0 * math.exp(s * math.log(float(fin) / l0)))
    return out


def headline(r: Mapping[str, Any], *, display: bool = True) -> Verdicts:
    """The chapter's verdict table from its results ``r`` (a mapping with the keys of :data:`HEADLINE_KEYS`)."""
    if not isinstance(r, Mapping):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a mapping of the chapter's results)")
    missing = [k for k in HEADLINE_KEYS if k not in r]
    if missing:
        raise ValueError(f"Invalid r: missing keys {missing}")
    v = Verdicts("Adam on xᵏ/k — headline claims", display=display, claims=PAPER_CLAIMS)
    b2 = float(r["beta2"])
    L = np.asarray(r["L"])

    gd_why = "the method the paper beats: a constant step without adaptive scaling, sublinear on xᵏ/k"
    gd_tuned = ("the third-party reproduction's lr 0.1 (the stable step from x₀ = 1 for every k here); same start, "
                "same window")
    # ---- reproduces: linear rate (abstract; Eq. 10) at k = 8, against gradient descent on the same problem
    ratio8 = r["rates"][8][0]
    v.close("rate x_(t+1)/xₜ, k=8 (Eq. 10: β₂^(1/(2(k−2))))", ratio8, linear_rate(8, b2), rtol=1e-9,
            kind="reproduces", source="secondary", tests="linear",
            control=[Control("GD (lr 0.1), k=8: median ratio over steps 2000–20000", r["gd_rates"][8][0],
                             why=gd_why, tuned=gd_tuned),
                     Control("heavy ball (lr 0.1, β = 0.9), k=8: median ratio over steps 2000–20000",
                             r["hb_rates"][8][0], why="the other method the abstract names: momentum without "
                             "adaptive scaling, sublinear on xᵏ/k (Theorem 5.3)",
                             tuned="the third-party reproduction's lr 0.1 and β = 0.9; same start, same window"),
                     Control("GD with Polyak's step (L − L* over ‖g‖², L* = 0), k=8: median ratio before the floor",
                             r["polyak_rate8"], why="the simplest method without Adam's moments that also converges "
                             "linearly here (x ← (1 − 1/k)x): a test of 'linear' alone would pass it",
                             tuned="none needed: the step is data-derived, no free parameter; same start x₀ = 1; "
                                   "its own run reaches the floor in < 400 steps, so its whole run is the window"),
                     Control("Adam with β₂ = 0 (vₜ = gₜ², the paper's coupled ablation), k=8: median ratio over "
                             "steps 2000–20000", r["coupled_rate8"], why="the ablation that removes exactly the "
                             "decoupling of vₜ from gₜ² that the paper credits",
                             tuned="none needed: the chapter's β₁ = 0.9, η = 1e-3, start and window; only β₂ = 0")],
            basis="model: median over [2000, floor): transient ≤ |eig|²⁰⁰⁰ < 1e-13, rounding 1e-16",
            note="linear convergence at Eq. 10's rate; GD's and momentum's ratios creep towards 1 (sublinear), and "
                 "so does the coupled ablation's. Linear convergence itself is not Adam's alone: Polyak's step "
                 f"contracts by {r['polyak_rate8']:.4f} per step, faster; the row tests Adam's rate, which no control "
                 "shares. k = 4 and 6 are read as ln-loss slopes below (one measurement per row)")
    # ---- reproduces: Fig. 2(a)'s slopes (k = 4, 6), the same runs' ln-loss slope; the paper's rounded values shown
    for k, paper in ((4, -0.0726), (6, -0.0544)):
        v.close(f"ln-loss slope per step, k={k} (Fig. 2(a): k ln β₂/(2(k−2)))", r["rates"][k][1],
                log_loss_slope(k, b2), rtol=1e-6, kind="reproduces", source="secondary", paper=paper, tests="fig2a",
                control=Control(f"GD (lr 0.1), k={k}: ln-loss slope over steps 2000–20000", r["gd_rates"][k][1],
                                why=gd_why, tuned=gd_tuned),
                basis="model: least squares of ln L on t over [2000, floor); transient < 1e-13, rounding 1e-16",
                note="the paper's rounded values are 4 digits of the same k ln β₂/(2(k−2)); this row also carries "
                     "the linear-rate claim at this k")
    # ---- reproduces: GD and momentum are sublinear with exponent −1/(k−2); control: the same fit at degree k+2
    for k in (4, 6):
        v.close(f"GD tail exponent, k={k} (Theorem 5.1: −1/(k−2))", r["tails"]["gd", k], -1 / (k - 2),
                atol=0.02, kind="reproduces", source="secondary", tests="thm5.1",
                control=Control(f"GD on x^({k + 2}): same fit", r["tails"]["gd", k + 2],
                                why="the rival exponent −1/k of the next degree: a fit that cannot tell k from k + 2 "
                                    "does not measure the theorem's exponent",
                                tuned="none needed: the same method, lr, start and window as the row's run"),
                basis=f"model: gradient flow's own finite-window bias of the exponent is {r['flow_bias'][k]:.0e}; "
                      "GD's discretisation moves it by ≲ 0.01",
                note="log–log slope of |xₜ| over steps 2000–20000; the control shows the fit resolves the degree")
    v.extend(momentum_rows(r["momentum"]))

    # ---- reproduces: Remark 5.8's separation, each count's law against the other method's counts
    sep = r["separation"]
    k_s = sep.k
    le = np.log(1 / np.asarray(sep.eps_gd))
    t_flow = np.array([gradient_flow_hitting_time(k_s, e) / sep.gd_lr for e in sep.eps_gd])
    b_flow = float(np.polyfit(le, np.log(t_flow), 1)[0])
    b_off = max(abs(float(np.polyfit(le, np.log(t_flow + c), 1)[0]) - (k_s - 2)) for c in (-10.0, 10.0))
    v.close(f"Remark 5.8, GD: exponent b of steps ∝ ε^(−b) to |x| ≤ ε, ε = 1e−1 … 1e−3 (9 points), k={k_s}, "
            f"lr {sep.gd_lr:g}", sep.gd_exponent, k_s - 2, atol=0.05, kind="reproduces", source="secondary",
            tests="remark5.8",
            control=Control("Adam (the chapter's β₁, β₂, η): the same fit on its steps to the same ε",
                            sep.adam_exponent, why="the method the remark contrasts with GD: a count that is not a "
                            "power of 1/ε must not pass", tuned="none needed: the paper's setting, the chapter's "
                                                                 "runs, the same grid"),
            basis=f"model: gradient flow's count (ε^(−(k−2)) − 1)/(η(k−2)) has exponent {b_flow:.4f} on this grid; "
                  f"a constant discrete offset of ±10 steps (the first steps' transient) moves it by ≤ {b_off:.3f}; "
                  "atol 0.05 covers both",
            note=f"GD steps {sep.gd[0]} … {sep.gd[-1]}, Adam's {sep.adam[0]} … {sep.adam[-1]}; a third decade of ε "
                 "would cost GD 10⁸ steps. Adam's log law is its linear rate (the k = 4 ln-loss slope row) and its "
                 "exact count the 'steps per e-fold' consistency row")

    # ---- reproduces: Eq. 8 on the phase diagram, against boundaries with wrong exponents
    def pd_control(lab: str, val: float, k: int) -> Control:
        if lab == "1":
            return Control("k-free boundary β₁ < β₂ (Eq. 8's k = 4 form, used at every k)", val,
                           why="the rival law that drops Eq. 8's k-dependence (Remark 4.2: the stable region grows "
                               "with k); at k = 4 it is Eq. 8 itself",
                           tuned="none needed: the same cells and runs scored against the rival boundary")
        why = ("the existence boundary Eq. 9 (exponent (k−1)/(2(k−2))) read as the stability boundary"
               if Fraction(lab) == Fraction(k - 1, 2 * (k - 2)) else
               "a rival stability law with as many free parameters (one exponent of β₂)")
        return Control(f"boundary β₁ < β₂^({lab})", val, why=why,
                       tuned="none needed: the same cells and runs scored against the rival exponent")

    v.greater("phase diagram, k=4: convergence agrees with Eq. 8 off the boundary", r["pd_agreement"], 0.99,
              kind="not_specific", source="secondary", tests="eq8",
              control=[pd_control(lab, val, 4) for lab, val in r["pd_controls"].items()],
              basis="paper: a secondary reproduction reports 99.96 % (50×50, 100k steps); threshold 0.99 fixed "
                    "below it before this run",
              note="40×40 grid, 30k steps; controls: the same cells scored against a wrong exponent. At k = 4 "
                   "Eq. 8 reads β₁ < β₂, so the k-free law passes by identity: the k = 6 row below tells them apart")
    v.greater("phase diagram, k=6: convergence agrees with Eq. 8 (β₁ < β₂^(3/4)) off the boundary",
              r["pd6_agreement"], 0.99, kind="reproduces", source="secondary", tests="eq8",
              control=[pd_control(lab, val, 6) for lab, val in r["pd6_controls"].items()],
              basis="paper: a secondary reproduction reports 99.64 % at k = 6 (50×50, 100k steps); the k = 4 row's "
                    "threshold 0.99, unchanged",
              note="the same 40×40 grid and 30k steps at k = 6 (added by the sceptic's review): the k-free law and "
                   "the existence boundary, which pass or nearly pass at k = 4, fail here")

    # ---- reproduces: the three regimes (Theorem 6.1), each against the other regimes' runs
    same = "none needed: the same batched run (k = 4, η = 1e-3, x₀ = 1, 30k steps), only (β₁, β₂) differs"
    v.less("regime I (β₂ = 0.91) reaches the float64 floor (final L)", L[-1, 0], 1e-100, kind="reproduces",
           source="secondary", tests="thm6.1",
           control=[Control("regime II run: final L", L[-1, 1], why="the neighbouring regime across Eq. 8's "
                            "boundary: fast early convergence but an unstable fixed point", tuned=same),
                    Control("regime III run: final L", L[-1, 2], why="no fixed point: the SignGD-like regime",
                            tuned=same)],
           basis="model: the float64 floor for k=4 is ~1e-202 and the SignGD level L(η/2) is 1.6e-14; 1e-100 "
                 "lies ~90 decades from both",
           note="stable linear convergence down to the floor")

    # ---- differs: regime II's spike, scanned over the regime (the sceptic's review fixed the three β₂ first)
    sc = {float(b): (float(mn), float(fin)) for b, (mn, fin, *_) in r["spike_scan"].items()}
    n_spike = spike_count(sc)
    planted_scan = spike_plant(sc, L[0, 1])
    v.less("regime II along β₁ = 0.9 (β₂ = 0.875, 0.885, 0.895): number of points with the paper's-setting spike "
           "signature (fast convergence as deep as at β₂ = 0.895: min L ≤ 1e−100, then final L ≥ 1e10 · min L)",
           n_spike, len(sc) - 1, kind="differs",
           source="secondary", tests="thm6.1", paper=len(sc),
           paper_shown=f"{len(sc)} of {len(sc)} (Theorem 6.1: every regime-II point converges fast, then spikes)",
           shown=f"{n_spike} of {len(sc)}",
           planted=Planted("the method's own regime-II runs, each with its log-loss descent below L₀ stretched so "
                           "that its minimum is the paper's-setting depth (β₂ = 0.895's)", spike_count(planted_scan),
                           shown=f"{spike_count(planted_scan)} of {len(sc)}",
                           effect="the paper's regime-II effect at its size — fast convergence as deep as at the "
                                  "paper's own regime-II setting β₂ = 0.895, then the run's own rise (stretched "
                                  "alike) — in each scanned run of the method"),
           basis="paper: the notes' regime-II signature at β₂ = 0.895 ('first drives the loss extremely low, then "
                 "spikes; many orders of magnitude above the minimum'); the thresholds 1e-100 and 10 decades were "
                 "fixed by issue 44 at that point (~90 decades from the float floor 1e-202 and from L(η/2) = "
                 "1.6e-14), and the three β₂ by the sceptic's review before the rows read them",
           scan=Scan("β₂ at β₁ = 0.9 (regime II: 0.869 < β₂ < 0.9)", tuple(sc),
                     tuple(f"{mn:.1e} → {fin:.1e}" for mn, fin in sc.values()),
                     effect=tuple(_spikes(mn, fin) for mn, fin in sc.values())),
           note="the rise of ≥ 10 decades follows at every regime-II point, but the fast convergence before it "
                f"reaches 1e-100 only next to Eq. 8's boundary (β₂ = 0.895, min {sc[0.895][0]:.0e}); at 0.885 and "
                f"0.875 the minimum is {sc[0.885][0]:.0e} and {sc[0.875][0]:.0e}, no deeper than regime III's "
                f"({L[:, 2].min():.0e}). The regime I and III runs have no spike by the same test "
                f"({L[:, 0].min():.0e} → {L[-1, 0]:.0e}; {L[:, 2].min():.0e} → {L[-1, 2]:.0e}). What the count "
                "measures is depth, which the notes state only at β₂ = 0.895. Sceptic's review (independent numpy "
                "recurrence, same start): over 30k steps the minimum deepens continuously across regime II "
                "(2e-47 at 0.870, 8e-91 at 0.894, 5e-134 at 0.896; from 0.898 the run reaches the float floor "
                "before any spike), crossing 1e-100 near 0.8945, so the count is the number of scan points above "
                "that crossing. After the first spike the dynamics is chaotic: three float64 codings of the same "
                "recurrence (numpy, adam_path, simulate_adam) give 0.885's 30k-step minimum as 6e-52, 1e-81 and "
                "1e-66 (0.895's 1.0e-112 in all three, before any spike), so the count at 30k is 1 of 3 in each. "
                "Over 100k steps (the notes' Fig. 3 length) 0.875 and 0.885 show later convergence-then-spike "
                "episodes (numpy, 0.885: a sustained descent from 1e-24 to 3e-89 near step 44k, then back to "
                "1e-18) that regime III (0.8) never shows (its 100k-step minimum 2e-39 to 8e-38 across codings): "
                "the count is then 1, 2 and 1 of 3 "
                "(adam_path's 0.885 reaches 2e-103; simulate_adam's 0.875 5e-97), still ≤ 2 but no longer "
                "robust. So the difference is about the first descent within the chapter's 30k steps: the "
                "pattern recurs across the regime, the paper-setting depth of the early convergence does not. "
                "The plant also stretches each run's final loss, so it tests the count, not the tail level; it "
                "is caught whenever β₂ = 0.895's own run spikes")
    amp = r["amp3"]
    v.between("regime III (β₂ = 0.8): SignGD level index j = log₂(η / max |xₜ|) over the last 6k steps (L(η/2ʲ))",
              amp, 1.5, 2.5, kind="differs", source="secondary", tests="thm6.1", paper=1.0,
              paper_shown="j = 1 (L(η/2), the notes' level)",
              planted=Planted("regime III's own tail, rescaled so that its largest |xₜ| is η/2", r["amp_planted"],
                              effect="the paper's level L(η/2) at its size, in the method's own run: the same 6k "
                                     "steps of Adam at β₂ = 0.8, amplitude set to η/2"),
              control=Control("SignGD's own 2-cycle x = ±η/2 (β₁ = β₂ = 0: Adam without memory), same measurement",
                              r["amp_signgd"], why="the dynamics that sits at the notes' level L(η/2) by "
                              "construction: the measurement must tell it from regime III",
                              tuned="none needed: no free parameter (η = 1e-3, start x₀ = η/2)"),
              basis="model: the rival levels L(η/2ʲ) differ by 2^(4) = 16 in loss; the amplitude is assigned to "
                    "the nearest j on a log scale (half-integers the boundaries), a rule fixed once issue 44 named "
                    "the rivals L(η/4), L(η/8) — the amplitude 0.29η was then already known",
              scan=Scan("(β₁, β₂) in regime III", tuple(str(p) for p in r["amp3_scan"]),
                        tuple(float(j) for j in r["amp3_scan"].values())),
              note="at the paper's regime-III setting the tail's largest |x| is nearer η/4 than η/2: SignGD-like "
                   "(coupled, see the Rₜ row) but at L(η/4), 16× below the notes' L(η/2). Across regime III the "
                   f"level is no single L(η/2ʲ): j runs from {min(r['amp3_scan'].values()):.1f} to "
                   f"{max(r['amp3_scan'].values()):.1f} over the scan, nearest the notes' j = 1 at "
                   f"{sum(abs(j - 1) <= 0.5 for j in r['amp3_scan'].values())} of {len(r['amp3_scan'])} points")
    R = r["R_early"]
    v.less("regime III: vₜ tracks gₜ² — median coupling ratio Rₜ = vₜ/gₜ² over steps 1000–3000", R[2], 100.0,
           kind="reproduces", source="secondary", tests="thm6.1",
           control=[Control("regime I run: same median", R[0], why="the decoupled regime the theorem contrasts",
                            tuned=same),
                    Control("regime II run: same median", R[1], why="the run nearest in β₂ to regime III's, decoupled "
                            "only once its fixed point is approached", tuned=same)],
           basis="model: a decoupled run has Rₜ ≥ e^(t(−ln β₂)/(k−2)) ≥ e⁵⁰ by step 1000; 100 = within two "
                 "decades of 1",
           scan=Scan("(β₁, β₂) in regime III", tuple(str(p) for p in r["R3_scan"]),
                     tuple(float(x) for x in r["R3_scan"].values())),
           note="the notes say R ≈ 1; measured it is O(10), coupled, far from the decoupled runs — at every point "
                f"of the regime-III scan (largest median {max(r['R3_scan'].values()):.0f})")

    # ---- reproduces: decoupling (Lemma 5.4) against the coupled regime-III run
    for j, label in ((4, "RMSProp β₂=0.93"), (0, "Adam β₂=0.91 (regime I)")):
        v.less(f"Lemma 5.4, {label}: max |vₜ/v_(t−1) − β₂| from step 3000 to the floor", r["lemma54"][j], 1e-12,
               kind="reproduces", source="secondary", tests="lemma5.4",
               control=[Control("coupled regime-III run (β₂ = 0.8): same measurement", r["lemma54_coupled"],
                                why="a run where xₜ does not go to 0 on the window: the lemma's premise absent",
                                tuned=same),
                        Control(f"the same EMA of gₜ² (β₂ = {0.93 if j == 4 else 0.91}) along GD's sublinear run "
                                "(lr 0.1, k = 4): same measurement", r["lemma54_gd"][j],
                                why="xₜ → 0 there too, but polynomially: decoupling is not implied by xₜ → 0 alone",
                                tuned="none needed: the GD run of the rate rows' controls, same steps from 3000")],
               basis="model: remainder (1−β₂)gₜ²/v_(t−1) ~ e^(−0.03·3000); rounding ≤ 4 ulp ≈ 1e-15",
               note="vₜ decays like β₂ᵗ once decoupled")

    # ---- reproduces: RMSProp (Theorem 5.7): rate, and stability on either side of its threshold
    rr = r["rms_rates"]
    keys = list(rr)
    for i, b in enumerate(keys):
        nb = keys[(i + 1) % len(keys)]
        v.close(f"RMSProp rate, β₂={b}", rr[b], linear_rate(4, b), rtol=1e-7, kind="reproduces",
                source="secondary", tests="thm5.7",
                control=[Control("GD (lr 0.1), k=4: median ratio over steps 2000–20000", r["gd_rates"][4][0],
                                 why=gd_why, tuned=gd_tuned),
                         Control(f"RMSProp run at β₂={nb}: measured rate", rr[nb],
                                 why="the rate of another β₂: a test that accepts it does not resolve β₂",
                                 tuned=same)],
                basis="model: median ratio; transient × u* ≤ 1e-8 at the slowest (β₂ = 0.999)",
                note="the controls show the test tells linear from sublinear, and resolves β₂")
    v.less("RMSProp β₂=0.07 (above the threshold 0.0625): spread of the last 20 per-step ratios", r["spread07"],
           1e-6, kind="not_specific", source="secondary", tests="thm5.7",
           control=[Control("RMSProp β₂=0.05 (below): same spread", r["spread05"],
                            why="the other side of the claimed threshold, 0.02 away in β₂", tuned=same),
                    Control("RMSProp β₂=0.01 (below, a decade under the threshold): same spread", r["spread01"],
                            why="deeper below the threshold: the run never converges but falls into SignGD's 2-cycle "
                                "xₜ = ±η/2, whose per-step ratio is a constant −1", tuned=same)],
           basis="model: above the threshold the ratio's O(1) deviation shrinks by |f'(u*)| ≈ 0.89 per step, to "
                 "≤ 0.89¹⁵⁰ ≈ 3e-8 by the tail window (the run reaches the floor after ~170 steps at rate 0.51); "
                 "below it a period-2 orbit keeps an O(0.1) spread",
           note="stable above the threshold, flipped (period 2) just below it; a decade below (β₂ = 0.01) RMSProp does "
                "not converge at all (SignGD's 2-cycle ±η/2), and its constant ratio −1 passes the spread test: the "
                "test reads a settled ratio, not convergence")

    # ---- differs: Eq. 8 as a sufficient condition, at tiny β₂
    v.greater("Theorem 4.1 'stable iff Eq. 8' at (β₁, β₂) = (0.004, 0.03): spread of the tail ratio",
              r["spread_flip"], 0.01, kind="differs", source="secondary", paper=0.0, tests="eq8",
              paper_shown="0 (a stable fixed point: the ratio settles)",
              planted=Planted("Adam at (0.004, 0.07), stable by Eq. 8 and above the flip boundary: same spread",
                              r["spread_planted"], effect="a setting where the fixed point is stable, as Eq. 8 "
                              "promises at (0.004, 0.03): the ratio settles"),
              basis="model: a stable fixed point leaves a spread ≪ 1e-6 near the floor (as at β₂ = 0.07 above); "
                    "0.01 is four decades above that",
              note="contradicts Eq. 8 read as sufficient (as the notes state it): the derived flip boundary "
                   "predicts a period-2 orbit there; whether the paper's own statement carries it is unknown")

    # ---- reproduces: the strongly convex contrast (Fig. 1)
    v.true("k=2: λₜ crosses 2/η (strongly convex case spikes)", r["crossing"] > 0, kind="reproduces",
           source="secondary", tests="fig1", measured=f"step {r['crossing']}",
           control=Control("k=4 run: λₜ crosses 2/η", r["crossing_k4"] > 0,
                           f"{'step ' + str(r['crossing_k4']) if r['crossing_k4'] > 0 else 'never'}",
                           why="the degenerate case the paper contrasts: curvature vanishing at the minimum",
                           tuned="none needed: the same β₁, β₂, η, start and horizon"),
           note="λₜ = x^(k−2)/√vₜ grows without bound only when the curvature does not vanish")

    v.extend(mixed_rows(r["mixed"]))

    # ---- consistency: our algebra, our code, our derived forms
    for k, d in r["derivations"].items():
        v.true(f"sympy, k={k}: fixed point exact, det J = β₁β₂^(−k/(2(k−2))), η-free",
               d.fixed_point_residual == (0, 0) and d.det_minus_claim == 0 and d.eta_derivatives == (0, 0),
               kind="consistency", source="derived", note="symbolic simplification to 0")
    for k, (_, _, thr) in r["rms"].items():
        v.close(f"RMSProp threshold, k={k}: sympy (f'(u*) = −1) vs ((k−2)/k)^(2(k−2))", float(thr),
                rmsprop_threshold(k), rtol=1e-15, kind="consistency", source="secondary",
                basis="model: the same map solved symbolically; rational vs float rounding only",
                note="the threshold formula of the notes is the flip of the 1-D map")
    for k in (4, 6, 8):
        v.equal(f"first |xₜ| ≤ 1e−20, k={k}: batched torch run = scalar reference", r["hits_batched"][k],
                r["hits"][k], kind="consistency", source="derived", note="two implementations of one recurrence")
    for k, ref in ((4, 3384), (6, 5818)):
        v.equal(f"first |xₜ| ≤ 1e−20, k={k}: our recurrence = a third-party 80-digit mpmath run", r["hits"][k],
                ref, kind="consistency", source="secondary",
                note="a reproduction's number, not the paper's: checks our recurrence, not the theory")
    for k, n in r["per_unit"].items():
        v.close(f"steps per e-fold of ε, k={k} (derived from Eq. 10: 2(k−2)/(−ln β₂))", n, r["steps_per_efold"][k],
                rtol=2e-3, kind="consistency", source="derived",
                basis="model: hitting times are integers: ±2 steps over ≥ 2500 steps ≤ 8e-4 relative",
                note="Remark 5.8's log(1/ε) count in its exact form")
    v.close("regime I decouples: ln Rₜ grows by −ln β₂/(k−2) per step", r["lnR_slope"], -np.log(0.91) / 2,
            rtol=1e-3, kind="consistency", source="derived",
            basis="model: the transient |eig|¹⁰⁰⁰ ≈ 4e-3 moves ln R by ≪ the rise of 94 over the window",
            note="v ~ β₂ᵗ and g² ~ r*^((2k−2)t)")
    v.close("RMSProp β₂=0.07: ratio deviation multiplier = f'(u*) of u' = γu(1−u)²", r["mult07"],
            r["mult07_theory"], rtol=1e-4, kind="consistency", source="derived",
            basis="model: median of δ_(t+1)/δₜ for 1e-11 ≤ |δ| ≤ 1e-4: nonlinearity ≤ 1e-4, rounding ≤ 1e-5",
            note="the 1-D map's linearisation, read off the run")
    tr05, (cyc_a, cyc_b) = np.asarray(r["tr05"]), r["cyc"]
    for name, val, pred in (("lower", tr05.min(), cyc_a), ("upper", tr05.max(), cyc_b)):
        v.close(f"RMSProp β₂=0.05 (below): {name} ratio of the tail = 2-cycle of u' = γu(1−u)²", val, pred,
                rtol=1e-9, kind="consistency", source="derived",
                basis="model: the orbit is attracting; rounding ~1e-15", note="the derived period-2 orbit")
    for j, label in ((8, "RMSProp β₂=0.05"), (9, "Adam (0.004, 0.03)")):
        v.close(f"{label}: still linear — two-step ratio = β₂^(1/(k−2))", r["two_step"][j], r["two_step_pred"][j],
                rtol=1e-9, kind="consistency", source="derived",
                basis="model: v shrinks by β₂ per step and λ returns every 2 steps; rounding ~1e-15",
                note="a flipped fixed point still converges linearly")
    v.extend(fixed_point_rows())  # ω_t → ω*, λ_t → λ*
    v.extend(spiral_rows(r["spirals"]))  # period and det J of the spiral, measured, vs the closed form
    v.close("k=4, β₂=0.99: λ_(T) → λ*", r["lam_T"], r["lam_star"], rtol=1e-9, kind="consistency", source="derived",
            basis="model: |eig|⁶⁰⁰⁰ < 1e-100; rounding ~1e-15", note="the derived λ* at another β₂")
    return v
