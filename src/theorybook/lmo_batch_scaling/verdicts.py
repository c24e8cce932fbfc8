"""Every verdict row of the LMO batch-scaling chapter (Shulgin, Awad, Richtárik & Gorbunov, ICML 2026), each
reproduction with its control.

Only the abstract is [paper]. Its two batch-size claims are tested on our reconstruction (least squares, τ-nice
sampling, the samples-to-ε metric of :mod:`.experiment`):

* "the optimal momentum must increase with batch size" — α*(τ) (fresh-gradient weight) never decreases and
  rises by at least one step of the factor-2 α grid, for normalised SGD-M (ℓ2) and sign-SGD-M (ℓ∞). Controls: the
  same maps with single-sample noise at every τ (τ samples charged per step: the ablation of the batch's noise
  reduction; the charge itself cannot move the argmin over α at a fixed τ, since N = τ·T) and the noise-free
  maps (exact gradients; α* cannot move — a weak, extra control);
* "there is an optimal batch size that minimises total sample complexity" — on a τ grid that reaches the full
  batch, the depth of an interior optimum, ``min(N*(1), N*(n))/min_interior N* − 1``. It is ≈ 0 here, and the row
  is *not testable here*: exact gradients need T₀ steps, so no batch above N*(1)/T₀ can beat τ = 1 whatever the
  noise, and our law puts its optimum above that batch;
* "a diagonal shift … that matches the theory" — quoted only (the paper's law is unread). :func:`ridge_verdicts`,
  from the committed ``bench/results/lmo_ridge.json`` (``bench/lmo_ridge.py``: the ℓ2 map on a ¼-octave α grid at
  half the chapter's ε, pilot and evaluation seeds), checks our reconstruction: the slope b of log₂ α* against
  log₂ τ over the pre-registered pre-saturation range rejects our corner law min(1, cτ) (b = 1; its noisy instance
  is the row's control) — the corner shape only, as a soft-capped slope-1 law cτ/(1 + cτ) is rejected too — and
  a consistency row re-runs one cell block of the bench.

The remaining rows are consistency checks: our reconstructed bound (with the τ-nice ABC noise) against the measured
rates, the ABC inequality itself on the chapter's problem, our algebra, LMOs and sampler.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from scipy import stats

from ..check import Control, PaperClaim, Planted, Verdicts, z_threshold
from ..validate import integer
from .dynamics import HeatmapResult, dual_norm, lmo, tau_nice_indices, tau_nice_variance
from .experiment import (
    SEEDS,
    SINGLE_SEED,
    VARIANCE_DRAWS,
    VARIANCE_TAUS,
    abc_slack,
    alpha_shift,
    bound_vs_measured,
    chapter_maps,
    chapter_problem,
    interior_depth,
    load_ridge,
    load_single,
    noise_free_maps,
    ridge_alpha_star,
    ridge_fit_taus,
    ridge_slope,
    ridge_slopes,
)
from .theory import (
    critical_batch,
    derive_abc_limits,
    derive_batch_law,
    derive_bound,
    derive_variance_factor,
    optimal_batch,
    sample_complexity,
)

__all__ = ["PAPER_CLAIMS", "DEPTH_BOUND", "PILOT_DEPTHS", "PILOT_SMALL_SUMS", "seeded_verdicts",
           "deterministic_verdicts", "headline", "law_prediction", "RIDGE_SD_FLOOR", "planted_diagonal",
           "planted_softcap", "ridge_stats", "affine_fit",
           "ridge_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("momentum", "For τ-nice sampling the optimal momentum must increase with the batch size",
               where="abstract", source="paper", headline=True),
    PaperClaim("optimal-batch", "There is a theoretical optimal batch size that minimises the total sample "
               "complexity", where="abstract", source="paper"),
    PaperClaim("diagonal-shift", "Linear and matrix regression show a 'diagonal shift' in the optimal "
               "momentum–batch landscape that matches the theory", where="abstract", source="paper",
               quoted_only=True, reason_class="paper text unread",
               why="'matches the theory' needs the paper's own law for the ridge (its constants and shape), which "
                   "could not be read. The shift's direction is the 'momentum' claim's rows (α* rises with τ for "
                   "ℓ2 and ℓ∞ least squares, reproduced with the single-sample and noise-free controls); the "
                   "ridge's slope on the bench's fine α grid is checked only against our own corner law "
                   "α* = min(1, cτ), a consistency row on our reconstruction, where it rejects the corner shape "
                   "alone: a slope-1 law that saturates smoothly, α* = cτ/(1 + cτ), would be rejected too"),
    PaperClaim("abc-theory", "A unified nonconvex theory of momentum LMO methods under expected smoothness (ABC) "
               "via a self-bounding closure, recovering bounded-variance results", where="abstract",
               source="paper", quoted_only=True, reason_class="paper text unread",
               why="the paper's theorem (its constants and the step-size conditions of its self-bounding "
                   "closure) could not be read, so any bound we evaluate is our reconstruction, a consistency row "
                   "by the book's rules; the chapter has two (the τ-nice ABC inequality holds on its least "
                   "squares; our reconstructed bound with the ABC noise lies above every measured rate, loosely). "
                   "The natural control, the bounded-variance bound, cannot fail for the right reason on this "
                   "problem: over the unbounded domain sup_x E‖g_S − ∇f‖² = ∞ (least squares with label noise), so "
                   "that bound is vacuous by construction (a weak control, never the only one), and restricted to "
                   "the sublevel set f ≤ f(x₀) that our bound assumes the iterates stay in, σ² is finite and at most "
                   "the ABC noise 2A(f(x₀) − f_inf) + C our bound already uses: on this measurement the "
                   "bounded-variance bound is at least as tight, so it cannot fail where the ABC one holds. "
                   "Telling them apart needs a problem whose iterates leave every bounded set, or the "
                   "paper's sharper closure constants"),
)

#: Pilot (seeds 9001–9010 of theorybook.check.PILOT_SEEDS, the chapter's scale, τ up to n = 1024): the interior
#: depth of the ℓ2 and ℓ∞ maps, per seed (ℓ2 first). Mean −0.017 and −0.023, sd 0.057 and 0.048.
PILOT_DEPTHS = {
    "l2": (-0.023, -0.013, 0.032, -0.055, 0.004, 0.038, -0.129, 0.074, -0.047, -0.051),
    "linf": (-0.011, 0.025, 0.001, -0.044, -0.038, -0.130, -0.043, -0.038, 0.026, 0.024),
}
#: Smaller finite sums (ℓ2, pilot seed 9001, the chapter's grids, τ up to n): (n, σ) → interior depth. An interior
#: optimum stays shallow (≤ 0.10) where it shows at all; at n = 64, σ = 4 the full batch wins.
PILOT_SMALL_SUMS = {(64, 2.0): 0.096, (64, 4.0): -0.300, (128, 4.0): -0.018, (256, 4.0): -0.008}
#: Largest interior depth the differs row allows: the pilot's largest mean plus 4 of its largest sd, rounded up.
DEPTH_BOUND = 0.25


def _alpha_text(r: HeatmapResult) -> str:
    return ", ".join("—" if not np.isfinite(a) else f"1/{round(1 / a)}" if a < 1 else "1" for a in r.alpha_star)


def _steps_range(r: HeatmapResult) -> str:
    """The smallest and largest steps to ε, N*(τ)/τ, over the resolved τ of a map."""
    st = np.asarray(r.n_star, float) / np.asarray(r.taus, float)
    st = st[np.isfinite(st)]
    return f"{st.min():,.0f}–{st.max():,.0f}" if st.size else "none resolved"


def _shift_ok(r: HeatmapResult) -> bool:
    mono, ratio = alpha_shift(r)
    return bool(mono and math.isfinite(ratio) and ratio >= 2.0)


def _maps_ok(name: str, maps: object, keys: tuple[str, ...] = ("l2", "linf")) -> dict[str, HeatmapResult]:
    if not (isinstance(maps, dict) and set(keys) <= set(maps)
            and all(isinstance(maps[k], HeatmapResult) for k in keys)):
        raise TypeError(f"Invalid {name}: {type(maps).__name__} (must be a dict of HeatmapResults with keys "
                        f"{list(keys)})")
    return maps


def _planted_depth(r: HeatmapResult, norm: str) -> float:
    """The interior depth of ``r`` with our law's N(τ)/N(1) (at ``r``'s ε and the problem's σ₁ in ``norm``)
    multiplied onto its measured N*(τ): the optimal-batch row's plant (censored τ stay censored)."""
    ls = chapter_problem("least_squares")
    kw = dict(n=ls.n, eps=r.eps, rho=1.0, sigma1=ls.sigma1(norm), delta0=1.0, L=1.0)
    f = np.array([sample_complexity(int(t), **kw) for t in r.taus], float)
    ns = np.asarray(r.n_star, float) * f / f[0]
    inner = float(np.min(ns[1:-1]))
    return min(float(ns[0]), float(ns[-1])) / inner - 1 if math.isfinite(inner) else math.nan


def law_prediction(r: HeatmapResult) -> dict[str, float]:
    """Our batch law at the chapter problem's measured constants (σ₁ at x*, the map's ε, ρ = 1): the critical batch
    τ_c, the integer optimum τ_opt and its depth N(1)/N(τ_opt) − 1."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult, e.g. chapter_maps(seed)['l2'])")
    ls = chapter_problem("least_squares")
    sig = ls.sigma1("l2")
    tc = critical_batch(ls.n, r.eps, 1.0, sig)
    to = optimal_batch(ls.n, r.eps, 1.0, sig)
    kw = dict(n=ls.n, eps=r.eps, rho=1.0, sigma1=sig, delta0=1.0, L=1.0)
    return {"tau_c": tc, "tau_opt": float(to), "depth": sample_complexity(1, **kw) / sample_complexity(to, **kw) - 1}


def headline(maps: dict[str, HeatmapResult], seed: int, control: dict[str, HeatmapResult] | None = None,
             *, single: dict[str, HeatmapResult] | None = None, title: str | None = None,
             display: bool = False) -> Verdicts:
    """The chapter's stochastic rows from its maps (``chapter_maps(seed)``), the noise-free control maps (default
    :func:`~.experiment.noise_free_maps`) and the uncensored single-sample control maps (default: the committed
    run of ``bench/lmo_batch_scaling_single.py``, :func:`~.experiment.load_single`), plus the Monte-Carlo check of
    the τ-nice sampler and the ABC and bound rows; the table carries :data:`PAPER_CLAIMS` (``display=True`` for
    the chapter's ``.report()``)."""
    _maps_ok("maps", maps)
    sd = integer("seed", seed, 0, 2**62)
    ctrl = _maps_ok("control", noise_free_maps() if control is None else control)
    one = _maps_ok("single", load_single() if single is None else single)
    if not isinstance(display, bool):
        raise TypeError(f"Invalid display: {display!r} (must be a bool)")
    v = Verdicts(title or f"LMO batch scaling — headline claims (seed {sd})", display=display, claims=PAPER_CLAIMS)
    grid = ("ordinal statistic on the factor-2 α grid: one grid step (×2) is the smallest shift the grid can "
            "resolve; its seed robustness is the 20-unseen-seed test (no Gaussian error model applies to a grid "
            "argmin). Censored τ (every cell past 2·best samples) are skipped")
    for norm, name in (("l2", "normalised SGD-M (ℓ2), least squares"), ("linf", "sign-SGD-M (ℓ∞), least squares")):
        r, c, o = maps[norm], ctrl[norm], one[norm]
        _, ratio = alpha_shift(r)
        _, cr = alpha_shift(c)
        _, orat = alpha_shift(o)
        v.true(f"optimal momentum grows with the batch: α*(τ) never decreases and rises ≥ ×2 from τ = 1 ({name})",
               _shift_ok(r), kind="reproduces", source="paper", predicted="non-decreasing, ratio ≥ 2",
               measured=f"α* = [{_alpha_text(r)}] (ratio {ratio:g})",
               control=[Control("single-sample noise at every τ, τ samples charged per step", _shift_ok(o),
                                shown=f"α* = [{_alpha_text(o)}] (ratio {orat:g})",
                                why="the ablation that removes exactly the credited mechanism, the batch's noise "
                                    "reduction, and keeps the rest (grids, ε, τ samples charged per step). Not a test "
                                    "of a budget confound: N = τ·T with T a first hitting time, so at a fixed τ the "
                                    "charge cannot change which α is fastest (only censoring could, and this map is "
                                    "uncensored); its steps to ε are the same in distribution at every τ (at α*: "
                                    f"{_steps_range(o)} steps over the {len(o.taus)} τ, no trend), so it asks whether "
                                    "the argmin's seed noise alone fakes a monotone ×2 rise",
                                tuned=f"the method's α, γ grids, τ grid and ε, with {SEEDS // 2} of its {SEEDS} "
                                      f"seeds (a noisier argmin: more apt to move by chance); one fixed seed "
                                      f"({SINGLE_SEED}). Uncensored: no 2·best rule, and the method's τ = 1 budget "
                                      f"in steps ({int(o.cap // o.taus[-1]):,}) at every τ, since its steps to ε do "
                                      "not shrink with τ (the method's rule, in samples, would censor it from τ = 4 "
                                      f"on); {int(np.isfinite(o.alpha_star).sum())} of {len(o.taus)} τ resolved. "
                                      "Computed by bench/lmo_batch_scaling_single.py (committed JSON; a test re-runs "
                                      "two τ of it)"),
                        Control("noise-free: exact gradients, τ samples charged per step", _shift_ok(c),
                                shown=f"α* = [{_alpha_text(c)}] (ratio {cr:g})",
                                why="no batch noise at all: the null of 'the shift is the noise's doing'",
                                tuned="the method's grids and budget, censored at the budget only",
                                weak="its trajectory does not depend on τ, so α* cannot move by construction")],
               basis=f"exact: {grid}", tests="momentum",
               note="α = weight of the fresh gradient (β = 1 − α) [reconstruction of the convention]. Only the "
                    "direction of the shift is tested here (the abstract's 'diagonal shift', in direction); its "
                    "slope against our own corner law is a consistency row (bench/lmo_ridge.py); the abstract's "
                    "matrix regression (Muon) is not checked. Sceptic review: an independent numpy re-implementation "
                    "(its own least-squares draw, n = 1024, d = 16, σ = 2; its own τ-nice sampler; the same grids, "
                    "ε and budget, 8 seeds) gives α* = 1/4, 1/4, 1/2, 1, … (ℓ2) and 1/4, 1/4, 1/2, 1/2, 1/2, 1/2, 1 "
                    "(ℓ∞) — the same rise; the bench's ℓ2 maps "
                    "(ε = 0.1, budget 2¹⁵, τ ≤ 32) pass this test on all 20 of their seeds (8 pilot, 12 evaluation) "
                    "when read on the factor-2 grid")
    depths = {k: interior_depth(maps[k]) for k in ("l2", "linf")}
    worst = max(depths.values())
    mean = max(float(np.mean(x)) for x in PILOT_DEPTHS.values())
    sdv = max(float(np.std(x, ddof=1)) for x in PILOT_DEPTHS.values())
    law = law_prediction(maps["l2"])
    t0 = float(ctrl["l2"].n_star[0])  # exact gradients at τ = 1: samples = steps
    n1 = float(maps["l2"].n_star[0])
    small = ", ".join(f"n = {n}, σ = {s:g}: {dep:+.3f}" for (n, s), dep in PILOT_SMALL_SUMS.items())
    pdep = {k: _planted_depth(maps[k], k) for k in ("l2", "linf")}
    untestable_why = (f"exact gradients need {t0:.0f} steps to ε, so no batch above N*(1)/{t0:.0f} ≈ "
                      f"{n1 / t0:.0f} can beat τ = 1 whatever the noise; our law puts the optimum at τ = "
                      f"{law['tau_opt']:.0f}, where exact gradients alone cost {t0 * law['tau_opt']:,.0f} samples "
                      f"> N*(1) = {n1:,.0f}. Planted on the measured counts, the law's optimum is missed (it lies "
                      f"in the censored τ), and on smaller sums, where it could, none showed (ℓ2, pilot seed 9001: "
                      f"{small})")
    v.less(f"an interior optimal batch: depth min(N*(1), N*(n))/min_(1<τ<n) N* − 1 on τ = 1…{int(maps['l2'].taus[-1])}"
           f" (max over ℓ2, ℓ∞)", worst, DEPTH_BOUND, kind="inconclusive", source="paper", paper=law["depth"],
           paper_shown=f"an optimum exists; our law at the measured constants: depth {law['depth']:.3f} at τ = "
                       f"{law['tau_opt']:.0f}", tests="optimal-batch",
           planted=Planted("our law's optimum planted on the measured counts", max(pdep.values()),
                           effect=f"each map's measured N*(τ) multiplied by our law's N(τ)/N(1) at that map's ε and "
                                  f"σ₁ (ℓ2: depth {law['depth']:.3f} at τ = {law['tau_opt']:.0f}); censored τ stay "
                                  "censored",
                           shown=f"depth ℓ2 {pdep['l2']:.3f}, ℓ∞ {pdep['linf']:.3f} (missed: the law's optimum "
                                 "lies in the censored τ)"),
           basis=f"pilot: seeds 9001–9010 measured the depth at this scale, mean ≤ {mean:.3f}, sd ≤ {sdv:.3f}; the "
                 f"bound {DEPTH_BOUND} is that mean + 4 sd, rounded up (≥ 4.6 sd above both pilot means: false "
                 "alarm < 1e-5 under a Gaussian model)",
           note=f"Not testable here: {untestable_why}. ℓ2 {depths['l2']:.3f}, ℓ∞ {depths['linf']:.3f}: the "
                "sample count is smallest at (or within seed noise of) τ = 1 and nearly flat up to the first "
                "α* = 1, then grows. Not a difference from the paper: "
                "the row could not have seen the optimum where our law puts it (not testable here)")
    for norm in ("l2", "linf"):
        b = bound_vs_measured(maps[norm])
        v.greater(f"our reconstructed bound Φ = Δ₀/(γT) + γL/α + ρσ̄_τ√α (ABC noise) over the measured running mean "
                  f"at each (τ, α, γ) cell that reached ε ({norm}): smallest ratio", b["min_ratio"], 1.0,
                  kind="consistency", source="reconstruction",
                  basis="exact: an upper bound must not fall below the measured rate (ratio 1); float64",
                  note=f"{b['cells']} cells; median ratio {b['median_ratio']:.1f}, at each τ's best cell "
                       f"{b['best_median']:.1f}: the bound holds with constant 1 on this problem but is loose by an "
                       "order of magnitude. σ̄_τ² = 2A(τ)(f(x₀) − f_inf) + C(τ), the τ-nice ABC noise along f ≤ f(x₀)")
    v.extend(_variance_rows(sd))
    return v


def seeded_verdicts(seed: int, maps: dict[str, HeatmapResult] | None = None) -> Verdicts:
    """The chapter's stochastic rows (display=False), from :func:`~.experiment.chapter_maps` ``(seed)`` (or the
    given maps), against the noise-free and single-sample control maps."""
    sd = integer("seed", seed, 0, 2**62)
    if maps is not None:
        _maps_ok("maps", maps)
    return headline(chapter_maps(sd) if maps is None else maps, sd)


def _variance_rows(seed: int) -> Verdicts:
    """Monte Carlo of E‖g_S − ḡ‖² under our τ-nice sampler vs (n−τ)/(τ(n−1))·σ₁² at x*."""
    v = Verdicts("variance", display=False)
    prob = chapter_problem("least_squares", device="cpu")
    G = prob.per_sample_grads().reshape(prob.n, -1)
    gbar = G.mean(0)
    gen = torch.Generator().manual_seed(seed * 7 + 3)
    zmax, worst = 0.0, ""
    for tau in VARIANCE_TAUS:
        idx = tau_nice_indices(prob.n, tau, VARIANCE_DRAWS, gen)
        dev = ((G[idx].mean(1) - gbar) ** 2).sum(1)
        pred = tau_nice_variance(G, tau)
        se = float(dev.std()) / math.sqrt(VARIANCE_DRAWS)
        z = abs(float(dev.mean()) - pred) / se
        if z > zmax:
            zmax, worst = z, f"τ = {tau}"
    zt = z_threshold(1e-3, len(VARIANCE_TAUS))
    v.less(f"our τ-nice sampler has the variance factor (n−τ)/(τ(n−1)): max |z| of Monte Carlo vs closed form "
           f"over τ ∈ {{{', '.join(map(str, VARIANCE_TAUS))}}} (worst {worst})", zmax, zt,
           kind="consistency", source="derived",
           basis=f"model: CLT, z = (mean − closed form)/SE with SE from the sample sd of {VARIANCE_DRAWS} draws; "
                 f"Bonferroni threshold z_threshold(1e-3, {len(VARIANCE_TAUS)}) = {zt:.2f}",
           note="a self-check of the experiment's noise source (Floyd's algorithm), not of the paper: a sampler "
                "with replacement would give 1/τ and a wrong critical batch")
    return v


def deterministic_verdicts() -> Verdicts:
    """The chapter's exact rows: sympy identities and the LMO/dual-norm identities for the three norms."""
    v = Verdicts("LMO batch scaling — exact", display=False)
    vf = derive_variance_factor()
    v.equal("τ-nice variance factor by exact enumeration of all τ-subsets (n = 6, rational vectors): residuals "
            "for τ = 1..6", [int(r) for r in vf.values()], [0] * 6, kind="consistency", source="secondary",
            note="sympy, exact rationals: E‖g_S − ḡ‖² over all C(6, τ) subsets minus the closed form of Khaled & "
                 "Richtárik (2020) — the noise model the batch law rests on")
    lim = derive_abc_limits()
    v.equal("ABC limits: A(1) = L_max, B(1) = 0; A(n) = C(n) = 0, B(n) = 1 (residuals)", list(lim.values()),
            [0] * len(lim), kind="consistency", source="secondary", note="sympy on the τ-nice constants")
    ab = abc_slack()
    v.greater(f"the τ-nice ABC inequality E‖g_S‖² ≤ 2A(f − f_inf) + B‖∇f‖² + C on the chapter's least squares: "
              f"smallest ratio right/left over {ab['cases']} (point, τ) cases, τ ∈ "
              f"{{{', '.join(map(str, VARIANCE_TAUS))}}}",
              ab["min_ratio"], 1.0, kind="consistency", source="secondary",
              basis="exact: the inequality itself (ratio 1); E‖g_S‖² in closed form, float64",
              note=f"L_i = ‖a_i‖², f_i^inf = 0, Δ_inf = f_inf; points x* + r·u with r log-uniform over three decades; "
                   f"median ratio {ab['median_ratio']:.2f}: the constants of Khaled & Richtárik (2020) hold here")
    b = derive_bound()
    v.equal("bound algebra: γ*, α* = 2√(Δ₀L/T)/(ρσ_τ), min Φ, T_ε, α*(T_ε) (residuals)",
            list(b.residuals.values()), [0] * len(b.residuals), kind="consistency", source="reconstruction",
            note="sympy solves ∂Φ = 0 and compares with the closed forms in the text")
    law = derive_batch_law()
    v.equal("batch law: α*(τ_c) = 1, α = 1 branch, N continuous at τ_c, lim τ_c, argmin N → τ_c (residuals)",
            list(law.residuals.values()), [0] * len(law.residuals), kind="consistency", source="reconstruction")
    gen = torch.Generator().manual_seed(0)
    worst = 0.0
    for norm, shape in (("l2", (64, 16)), ("linf", (64, 16)), ("spectral", (64, 8, 5))):
        m = torch.randn(*shape, generator=gen, dtype=torch.float64)
        d = lmo(m, norm)
        inner = (m * d).sum(-1) if norm != "spectral" else (m * d).sum((-1, -2))
        unit = {"l2": torch.linalg.vector_norm(d, dim=-1), "linf": d.abs().amax(-1),
                "spectral": torch.linalg.matrix_norm(d, ord=2)}[norm]
        worst = max(worst, float(((inner + dual_norm(m, norm)).abs() / dual_norm(m, norm)).max()),
                    float((unit - 1).abs().max()))
    v.less("LMO identities ⟨m, LMO(m)⟩ = −‖m‖_*, ‖LMO(m)‖ = 1 for ℓ2, ℓ∞, spectral (64 random m each): max "
           "relative error", worst, 1e-12, kind="consistency", source="derived",
           basis="model: float64 round-off of an SVD of an 8×5 matrix and a 16-term sum, ~10–100 ulp ≈ 1e-14; "
                 "1e-12 leaves 100× for the SVD's backward error",
           note="float64; the dual norm is computed separately (ℓ2, ℓ1 sum, SVD nuclear norm)")
    return v


#: Slope sd floor: the α grid's quantisation alone (step ¼ in log₂ α, uniform rounding error sd ¼/√12 per point),
#: through the least-squares slope over three points at log₂ τ = 0, 1, 2 (sd · √2/2).
RIDGE_SD_FLOOR = 0.25 / math.sqrt(12) * math.sqrt(2) / 2


def _eval_log_alpha(results: dict[str, Any]) -> tuple[tuple[int, ...], np.ndarray]:
    """The fit range and the evaluation seeds' log₂ α* on it, (seeds, len(fit)); a censored α* there is an error."""
    fit = ridge_fit_taus(results)  # validates results
    taus = list(results["design"]["taus"])
    Y = np.log2(ridge_alpha_star(results, "eval")[:, [taus.index(t) for t in fit]])
    if not np.all(np.isfinite(Y)):
        raise ValueError("Invalid results: a censored α* inside the fit range")
    return fit, Y


def planted_diagonal(results: dict[str, Any]) -> np.ndarray:
    """The planted instance of the ridge row: for every evaluation seed, a slope-1 ridge through the evaluation
    seeds' mean log₂ α*(1) plus that seed's own measured deviation from the seed mean at each fit τ, rounded to the
    bench's α grid (¼ in log₂) and clipped at α = 1; returns its per-seed fitted slopes."""
    fit, Y = _eval_log_alpha(results)
    lt = np.log2(np.array(fit, float))
    P = np.minimum(0.0, np.round(4 * (Y[:, :1].mean() + lt + (Y - Y.mean(0)))) / 4)
    return np.array([ridge_slope(2.0**p, fit)[0] for p in P])


def planted_softcap(results: dict[str, Any]) -> np.ndarray:
    """The soft-cap law with the measured noise: for every evaluation seed, log₂ α* = log₂(cτ/(1 + cτ)) with c set
    so that α*(1) = 2^(mean log₂ α*(1)) of the evaluation seeds, plus that seed's own deviation from the seed mean at
    each fit τ, rounded to the bench's ¼-octave grid and clipped at α = 1; returns its per-seed fitted slopes. A law
    of slope 1 as τ → 0 (like our corner law) that bends smoothly towards α = 1 instead of running into a corner."""
    fit, Y = _eval_log_alpha(results)
    tau = np.array(fit, float)
    a1 = 2.0 ** float(Y[:, :1].mean())
    c = a1 / (1.0 - a1)
    law = np.log2(c * tau / (1.0 + c * tau))
    P = np.minimum(0.0, np.round(4 * (law + (Y - Y.mean(0)))) / 4)
    return np.array([ridge_slope(2.0**p, fit)[0] for p in P])


def ridge_stats(results: dict[str, Any]) -> dict[str, Any]:
    """The ridge row's statistics from the bench results: the pre-registered fit range, per-seed slopes (pilot,
    evaluation), the pilot sd (and the sd used, floored at :data:`RIDGE_SD_FLOOR`), the t quantile, the tolerance on
    the mean slope, the mean slope b, the corner law's (:func:`planted_diagonal`) and the soft-cap law's
    (:func:`planted_softcap`) mean slopes with the measured noise, and the evaluation seeds' mean rise of log₂ α*
    per doubling of τ inside the fit range (``steps``)."""
    res = results
    fit, Y = _eval_log_alpha(res)
    if len(fit) < 3:
        raise ValueError(f"Invalid results: the pilot's pre-saturation range {fit} has < 3 batch sizes")
    bp, be = ridge_slopes(res, "pilot"), ridge_slopes(res, "eval")
    kp, ke = len(bp), len(be)
    sp = float(np.std(bp, ddof=1))
    sd_used = max(sp, RIDGE_SD_FLOOR)
    tq = float(stats.t.ppf(1 - 0.5e-3, kp - 1))
    tol = tq * sd_used / math.sqrt(ke)
    b = float(np.mean(be))
    bpl = float(np.mean(planted_diagonal(res)))
    bsc = float(np.mean(planted_softcap(res)))
    steps = tuple(float(x) for x in np.diff(Y, axis=1).mean(0))
    return {"steps": steps, "fit": fit, "pilot_slopes": bp, "eval_slopes": be, "kp": kp, "ke": ke, "pilot_sd": sp,
            "sd": sd_used, "t_quantile": tq, "tol": tol, "b": b, "b_planted": bpl, "b_softcap": bsc}


def affine_fit(results: dict[str, Any]) -> dict[str, Any]:
    """The bench's evaluation-seed mean N*(τ) fitted by N(τ) = τ·T₀ + V·(n − τ)/(n − 1) (weighted by the seed
    mean's standard error; n of the chapter's least squares): T₀, V, the residual z-scores' maximum, its Bonferroni
    threshold (1e-3 over the τ), the largest relative residual, and ``z_max_interior``: the same statistic for the
    two-constant rival N = a/τ + b·τ, which has an interior minimum."""
    _eval_log_alpha(results)  # validates results
    taus = np.array(results["design"]["taus"], float)
    N = np.array([[math.inf if x is None else float(x) for x in m["n_star"]] for m in results["eval"]], float)
    if not np.all(np.isfinite(N)) or len(N) < 2:
        raise ValueError("Invalid results: a censored N* (or < 2 evaluation seeds) in the bench's eval maps")
    n = chapter_problem("least_squares").n
    mean, se = N.mean(0), N.std(0, ddof=1) / math.sqrt(len(N))
    X = np.stack([taus, (n - taus) / (n - 1)], 1)
    coef, *_ = np.linalg.lstsq(X / se[:, None], mean / se, rcond=None)
    resid = X @ coef - mean
    # a rival with the same two constants and an interior minimum, N = a/τ + b·τ (sceptic review)
    Xr = np.stack([1.0 / taus, taus], 1)
    cr, *_ = np.linalg.lstsq(Xr / se[:, None], mean / se, rcond=None)
    return {"taus": taus, "T0": float(coef[0]), "V": float(coef[1]), "z_max": float(np.max(np.abs(resid) / se)),
            "z_threshold": z_threshold(1e-3, len(taus)), "max_rel": float(np.max(np.abs(resid) / mean)),
            "mean": mean, "n": n, "z_max_interior": float(np.max(np.abs(Xr @ cr - mean) / se))}


def ridge_verdicts(results: dict[str, Any] | None = None, *, rerun: dict[str, Any] | None = None) -> Verdicts:
    """The ridge row from the committed ``bench/results/lmo_ridge.json`` (:func:`~.experiment.load_ridge`): the
    slope b of log₂ α* = a + b·log₂ τ over the pre-registered pre-saturation τ (:func:`~.experiment.ridge_fit_taus`),
    mean over the evaluation seeds, against the diagonal law's b = 1 (our derived α* ∝ τ), with the pilot seeds'
    slope spread as the error model; and with ``rerun`` (:func:`~.experiment.ridge_rerun`) the check that the
    chapter's reduced re-run reproduces the committed counts. ``display=False``."""
    res = load_ridge() if results is None else results
    st = ridge_stats(res)  # validates res
    fit, bp, be, kp, ke, sp, tq, tol, b, bpl, bsc, sd_used, steps = (st[k] for k in (
        "fit", "pilot_slopes", "eval_slopes", "kp", "ke", "pilot_sd", "t_quantile", "tol", "b", "b_planted",
        "b_softcap", "sd", "steps"))
    d = res["design"]
    mach = res.get("machine", {})
    z = {b0: abs(b - b0) / (sd_used / math.sqrt(ke)) for b0 in (1.0, 0.5, 0.0)}
    alphas = ridge_alpha_star(res, "eval")
    med = ", ".join(f"τ = {t}: 2^{np.median(np.log2(alphas[:, i])):+.2f}" for i, t in enumerate(d["taus"]))
    v = Verdicts("LMO batch scaling — the ridge on a fine α grid (bench/lmo_ridge.py)", display=False,
                 claims=PAPER_CLAIMS)
    v.less(f"our corner law α* = min(1, cτ) against the measured ridge: its slope b in log₂ α* = a + b·log₂ τ over "
           f"the pre-saturation τ ∈ {{{', '.join(map(str, fit))}}} (normalised SGD-M, least squares, ε = "
           f"{d['eps_rel']}·‖∇f(x₀)‖, 4 α per octave), mean over {ke} evaluation seeds, lies below the corner law's "
           f"b = 1 by more than the tolerance (the corner shape is rejected)", b, 1.0 - tol,
           kind="consistency", source="reconstruction",
           control=Control("our corner law with the measured seed-to-seed noise", bpl, shown=f"b = {bpl:.3f}",
                           why="the law this row checks, put through the same fit: the test must be able to keep it",
                           tuned=f"for each of the {ke} evaluation seeds, log₂ α* = mean log₂ α*(1) + log₂ τ plus "
                                 "that seed's measured deviation from the seed mean at each τ, rounded to the bench's "
                                 "¼-octave grid and clipped at α = 1"),
           basis=f"pilot: seeds {d['pilot_seeds'][0]}–{d['pilot_seeds'][-1]} ({kp} maps) fixed the fit range "
                 f"(the prefix of τ whose pilot-median α* ≤ 2^(−1/2), two grid steps below α = 1) and the slope sd "
                 f"{sp:.3f} (floor {RIDGE_SD_FLOOR:.3f}: the grid's quantisation); tolerance = t_{kp - 1}(1 − 5e-4)"
                 f" = {tq:.2f} × sd/√{ke} = {tol:.3f} (false alarm ≤ 5e-4 if b = 1)",
           note=f"measured b = {b:.3f} (evaluation seeds' sd {float(np.std(be, ddof=1)):.3f}). This checks our "
                f"reconstruction, not the paper, whose law could not be read (and ours misses α*(1) and τ_c by an "
                f"order of magnitude). Only the corner shape is rejected: the soft-cap law α* = cτ/(1 + cτ) — slope 1 "
                f"as τ → 0 like ours, c set by the measured α*(1), the same seed deviations and ¼-octave rounding — "
                f"fits b = {bsc:.3f} and is rejected by this test too, so the row says nothing against α* ∝ τ at "
                f"small τ. The fit range ends half an octave below α = 1, where a smooth cap already bends the "
                f"ridge. In pilot standard errors (sd/√{ke}) b = 1 is {z[1.0]:.1f} away, α* ∝ √τ (b = ½) "
                f"{z[0.5]:.1f}, a constant α* (b = 0) {z[0.0]:.1f}; successive doublings of τ lift log₂ α* by "
                f"{', '.join(f'{x:.2f}' for x in steps)} on average. The shift's direction (α* rises with τ) is the "
                f"'momentum' claim's rows. Median α* over the evaluation seeds: {med}. Matrix regression (Muon) is "
                f"not covered: at our scale its α* = 1 already at τ = 1. Committed on {mach.get('cpu', '?')}, "
                f"{mach.get('workers', '?')} processes × {mach.get('torch_threads_per_worker', '?')} thread, "
                f"commit {str(res.get('commit'))[:10]}")
    af = affine_fit(res)
    v.less(f"the bench's mean samples-to-ε N*(τ), τ = {int(af['taus'][0])}…{int(af['taus'][-1])} ({ke} evaluation "
           f"seeds), is affine in the τ-nice noise, N(τ) = τ·T₀ + V·(n − τ)/(n − 1): max |z| of the weighted "
           f"least-squares residuals", af["z_max"], af["z_threshold"], kind="consistency", source="reconstruction",
           basis=f"model: CLT, z = residual/SE with SE the seed mean's standard error at each τ (sd over {ke} seeds "
                 f"/√{ke}); Bonferroni threshold z_threshold(1e-3, {len(af['taus'])}) = {af['z_threshold']:.2f} "
                 "(the two fitted constants only shrink the residuals)",
           note=f"T₀ = {af['T0']:.0f} steps, V = {af['V']:,.0f} samples; largest relative residual "
                f"{af['max_rel']:.2%}. This N(τ) is linear in τ (slope T₀ − V/(n − 1) = "
                f"{af['T0'] - af['V'] / (af['n'] - 1):.0f}), so its minimum sits at an end of 1 ≤ τ ≤ n, never "
                "inside: the measured sample count has no interior optimum to find, which is why the "
                "'optimal-batch' row is not testable here. Sceptic review: on this range (τ ≤ "
                f"{int(af['taus'][-1])} ≪ n) the two-constant form is any straight line a + b·τ (the same fit, the "
                "same max |z|), so the row does not single out the τ-nice noise term; a rival with two constants and "
                f"an interior minimum, N = a/τ + b·τ, fails the same test (max |z| {af['z_max_interior']:.1f})")
    if rerun is not None:
        if not (isinstance(rerun, dict) and {"samples", "committed", "cap", "committed_cap"} <= set(rerun)):
            raise TypeError("Invalid rerun: must be ridge_rerun(...)'s dict")
        new, old = np.asarray(rerun["samples"], float), np.asarray(rerun["committed"], float)
        same = np.isfinite(new) == np.isfinite(old)
        both = np.isfinite(new) & np.isfinite(old)
        rel = float(np.max(np.abs(new[both] - old[both]) / old[both])) if both.any() else math.nan
        worst = rel if bool(same.all()) else math.inf
        v.less(f"the chapter's re-run of the bench's first evaluation seed (τ = 1, the {new.size} (α, γ) cells "
               f"around its best cell) reproduces the committed samples-to-ε: max relative difference", worst,
               0.01, kind="consistency", source="reconstruction",
               basis="model: the same seeds, batch streams (τ = 1 is the map's first group) and censoring level "
                     f"(committed {rerun['committed_cap']:,.0f}, re-run {rerun['cap']:,.0f}: the budget) give the same "
                     "float64 trajectories; 1% leaves room for another CPU's rounding moving a near-tie hitting time",
               note=f"{int(both.sum())} finite cells, {int((~same).sum())} censored on one side only; a check that "
                    "the committed results come from this code")
    return v
