"""Every verdict row the SAM-at-saddles chapter shows (Kim, Park, Choi, Lee, ICML 2026), each reproduction with
its control.

:func:`seeded_verdicts` turns one seed's :func:`~theorybook.sam_saddle.experiments.stochastic_run` into the
stochastic rows (the chapter shows exactly these; ``tests/test_seed_robustness.py`` re-runs them for 20 unseen
seeds); every statistical tolerance is fixed here, before any measurement, at a false-alarm probability ≤ 10⁻³
(Bonferroni over the ``m`` comparisons a row takes the maximum of, :func:`theorybook.check.z_threshold`).
:func:`headline` builds the deterministic rows from the chapter's results (a mapping with the keys of
:data:`HEADLINE_KEYS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch

from .. import validate
from ..check import Control, PaperClaim, Planted, Verdicts, z_threshold
from .experiments import (
    COR1_K,
    ESC_LR,
    ESC_PATHS,
    ESC_SLOW_SGD,
    MC_BATCH,
    MC_EVERY,
    MC_LAM,
    MC_LR,
    MC_PATHS,
    MC_RHO,
    PLANTED_PATHS,
    StochasticRun,
    random_ascent_run,
)
from .experiments import stochastic_run as _stochastic_run
from .theory import corollary1_gap, sam_variance

__all__ = ["PAPER_CLAIMS", "HEADLINE_KEYS", "theorem2_excess", "seeded_verdicts", "headline"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("attractor", "SAM can turn a saddle point into an attractor: where GD escapes, SAM gets stuck at the "
               "saddle (Beale, x² − y²)", where="abstract", source="paper", headline=True),
    PaperClaim("escape", "Stochastic SAM escapes saddles more slowly than SGD; momentum and batch size matter for "
               "escaping", where="abstract", source="paper"),
    PaperClaim("thm1", "The saddle becomes an attractor of SAM iff ρ > −1/λ₁", where="Theorem 1",
               source="secondary"),
    PaperClaim("caseIII", "Stuck within ρ of the saddle, the perturbed point crosses into the other basin each "
               "step: cos(∇ℓ(w), ∇ℓ(w^p)) keeps oscillating between −1 and 1; away from it SAM ≈ GD",
               where="Sec. 3 (Cases I–III)", source="secondary"),
    PaperClaim("thm2", "SAM's diffusion at the saddle has variance σ²(t) = η|λ|/(2Ba)(1 − e^(−2at)) with "
               "a = λ(1+ρλ)²", where="Theorem 2", source="secondary"),
    PaperClaim("cor1", "Δ_SGD − Δ_SAM = 2ηt²|λ|³ρ/B + O(t³) > 0: SGD's escape variance exceeds SAM's",
               where="Corollary 1", source="secondary"),
    PaperClaim("thm3", "A larger momentum γ and a smaller batch size B speed up SAM's escape", where="Theorem 3",
               source="secondary"),
    PaperClaim("cifar", "On CIFAR-10/100 (ResNet-18) SAM at large B and γ = 0 fails to train; momentum fixes it "
               "(Table 1: 95.08 % at ρ = 0.1, γ = 0.95)", where="Table 1", source="secondary", quoted_only=True,
               why="ResNet-18 training on CIFAR-10/100 needs a paper-scale GPU, and the paper's lr, epochs and "
                   "weight decay were not recovered, so Table 1's 95.08 % cannot be re-measured. A small-scale proxy "
                   "(theorybook.sam_saddle.proxy: sklearn digits, MLP 64→64→10, normalised SAM with ρ ∈ {0.1, 0.5}, "
                   "γ ∈ {0, 0.9}, B ∈ {64, 512, full}, η tuned per arm on one half-decade grid 0.03–10 with the same "
                   "200-step budget on pilot seeds) found no stall to test: at its own tuned η, SAM with γ = 0 trains "
                   "at every B (training loss far below the paper's > 1), as GD does; momentum lowers the loss "
                   "further, for GD as well as for SAM. Starting the network next to the saddle w = 0 (weights × 0.01) "
                   "makes SAM with γ = 0 stall at a fixed small η where GD trains — the paper's mechanism — but a "
                   "tuned η escapes it at large B; the one tuned stall seen was at B = 64 with ρ = 0.5, the opposite "
                   "of the claim's regime. At this scale the stall is a fixed-step effect that per-arm tuning "
                   "removes: the claim's test fails on the proxy itself, and a differs row would need the paper's "
                   "stall planted under the same tuning at large B, which the proxy could not produce; whether the "
                   "paper tuned η per arm is not known",
               reason_class="paper-scale GPU"),
)

#: What :func:`headline` reads from the chapter's results.
HEADLINE_KEYS = (
    "sympy_linear_map", "sympy_ou", "sympy_thm3", "hessian_eig", "hessian_eig_sympy", "f01", "f01_sympy",
    "parity", "gd_final_y", "gd_y_exact", "factor_err", "escape_rule", "scan", "scan_control", "demo_sam",
    "demo_gd", "d_saddle", "cos_min", "cos_max", "flips", "near_cos_min", "near_cos_max", "near_flips",
)


def _per_direction(fn, x, rho, batch, **kw) -> torch.Tensor:
    return torch.stack([fn(x, lam, rho, MC_LR, batch, **kw) for lam in MC_LAM], -1)


def theorem2_excess(run: StochasticRun, pred: torch.Tensor) -> float:
    """max over t > 0, ρ, B, j of (|MC − pred| − |disc − σ²_lin|)/s.e.: how far a predicted variance ``pred``
    (shape of ``run.mc.msd``) sits from the Monte-Carlo moments, beyond the SDE's own O(η) discretisation bias.

    The allowance |disc − σ²_lin| is that of the *algorithm's* drift, fixed for every prediction, so the statistic
    depends on ``pred`` (for σ²_lin itself it is ≤ |MC − disc|/s.e., a Gaussian z-score)."""
    if not isinstance(run, StochasticRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a StochasticRun)")
    if not isinstance(pred, torch.Tensor) or pred.shape != run.mc.msd.shape:
        raise ValueError(f"Invalid pred: must be a tensor of shape {tuple(run.mc.msd.shape)}")
    allowance = (run.disc - run.pred).abs()
    return float((((run.mc.msd - pred.to(run.mc.msd.device)).abs() - allowance) / run.mc.se)[1:].max())


def _median_rank_z(samples: torch.Tensor, predicted: torch.Tensor, slack: float) -> torch.Tensor:
    """How far ``predicted`` (±``slack``) sits from the sample median, in rank standard deviations √n/2.

    Under the hypothesis that ``predicted`` is the population median, #{X < p} ~ Binomial(n, ½): the statistic
    max(#{X < p − slack} − n/2, n/2 − #{X ≤ p + slack}) / (√n/2) exceeds z with probability ≤ P(|N(0,1)| > z)
    (normal approximation, n = 256), whatever the distribution of X. 0 or negative: p is inside.
    """
    n = samples.shape[0]
    below = (samples < predicted - slack).sum(0).to(torch.float64)
    upto = (samples <= predicted + slack).sum(0).to(torch.float64)
    return torch.maximum(below - n / 2, n / 2 - upto) / (math.sqrt(n) / 2)


def _sign_z(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-cell sign-test z that ``x`` exceeds ``y`` (paired along dim 0, ties dropped): (n₊ − n₋)/√(n₊ + n₋),
    ≈ N(0, 1) when each pair is exchangeable; 0 where every pair ties."""
    d = x - y
    pos, neg = (d > 0).sum(0).to(torch.float64), (d < 0).sum(0).to(torch.float64)
    return (pos - neg) / torch.sqrt((pos + neg).clamp_min(1.0))


def _strictly(med: torch.Tensor, axis: int, falling: bool) -> bool:
    a = med.movedim(axis, 0)
    return bool((a[1:] < a[:-1]).all()) if falling else bool((a[1:] > a[:-1]).all())


def seeded_verdicts(seed: int, *, run: StochasticRun | None = None) -> Verdicts:
    """The chapter's stochastic verdict rows for ``seed`` (``run``: reuse an existing run of that seed)."""
    seed = validate.integer("seed", seed, 0, 2**62)
    if run is None:
        run = _stochastic_run(seed)
    elif not isinstance(run, StochasticRun) or run.seed != seed:
        raise ValueError(f"Invalid run: must be a StochasticRun of seed {seed}")
    mc, v = run.mc, Verdicts("SAM at saddles: stochastic rows", display=False)
    msd, se = mc.msd[1:], mc.se[1:]  # t = 0 is exact (every path starts at the saddle)
    dev = mc.t.device
    rho_all = torch.tensor(MC_RHO, dtype=torch.float64, device=dev).reshape(-1, 1)
    batch_all = torch.tensor(MC_BATCH, dtype=torch.float64, device=dev)
    tt = mc.t.reshape(-1, 1, 1)

    # Theorem 2: σ²(t) with the algorithm's drift against Monte Carlo, beyond the SDE's fixed O(η) bias; the
    # controls are the same statistic for the printed drift, for SGD's drift (ρ ignored) and for no drift.
    m_var = msd.numel()
    z_var = z_threshold(1e-3, m_var)
    sgd = _per_direction(sam_variance, tt, torch.zeros_like(rho_all), batch_all, drift="linear")
    none = MC_LR * torch.stack([abs(lam) * tt / batch_all + 0 * rho_all for lam in MC_LAM], -1)
    v.less("Theorem 2's form with the algorithm's drift λ(1+ρλ): max over t, ρ, B, j of "
           "(|MC − σ²(t)| − SDE bias)/s.e.", theorem2_excess(run, run.pred), z_var, kind="consistency",
           source="derived",
           control=[Control("printed drift λ(1+ρλ)²", theorem2_excess(run, run.pred_full),
                            why="the paper's own formula", tuned="none needed: the same Monte-Carlo moments"),
                    Control("SGD's drift λ (ρ ignored)", theorem2_excess(run, sgd),
                            why="the null that SAM's ascent does not change the diffusion",
                            tuned="none needed: the same Monte-Carlo moments"),
                    Control("no drift (pure diffusion η|λ|t/B)", theorem2_excess(run, none),
                            why="the short-time limit of every drift", tuned="none needed: the same moments")],
           basis=f"model: {MC_PATHS} paths per (ρ, B), s.e. of the mean of w²; Bonferroni over m = {m_var} z-scores "
                 "at false-alarm 1e-3; the allowance is the algorithm's-drift SDE's O(η) bias vs the exact discrete "
                 "variance, the same for every prediction",
           note="the drift is derived from the SAM algorithm, not the paper's printed one; the row can fail: each "
                "control is the same statistic for another drift")
    z_full = ((msd - run.pred_full[1:]) / se).abs().max()
    pl = run.planted
    z_planted = float(((pl.msd[1:] - run.pred_full[1:]) / pl.se[1:]).abs().max())
    v.greater("Theorem 2 as printed, drift λ(1+ρλ)²: max |MC − σ²(t)|/s.e.", float(z_full), 2 * z_var,
              kind="differs", source="secondary", paper=z_var, tests="thm2",
              paper_shown=f"≤ {z_var:.2f} (σ²(t) with a = λ(1+ρλ)² fits the Monte Carlo: Bonferroni max of "
                          f"{m_var} z-scores)",
              planted=Planted(f"gradient descent on the SAM objective ({PLANTED_PATHS} paths): same statistic",
                              z_planted, effect="paths whose drift is the printed λ(1+ρλ)², by construction"),
              basis=f"model: twice the Bonferroni threshold {z_var:.2f} of the row above",
              note="contradicts the printed formula: at ρ = 2 > ρ* it predicts escape, the measured variance "
                   "saturates (the algorithm's drift λ(1+ρλ) changes sign at ρ*)")

    # Corollary 1 (escape direction j = 1): the paired gap Δ_SGD − Δ_SAM
    gap, gap_se = mc.gap[1:, 1:, :, 1], mc.gap_se[1:, 1:, :, 1]
    gap_exact = run.disc[1:, :1, :, 1] - run.disc[1:, 1:, :, 1]
    m_gap = gap.numel()
    v.less("Corollary 1: max over t, ρ > 0, B of |MC gap − exact discrete gap| / s.e.",
           float(((gap - gap_exact) / gap_se).abs().max()), z_threshold(1e-3, m_gap), kind="consistency",
           source="derived", basis=f"model: paired (common-noise) differences over {MC_PATHS} paths; Bonferroni "
                                   f"over m = {m_gap} at false-alarm 1e-3",
           note="our exact discrete-time gap, the reference for the two Corollary-1 rows")
    z_pos = gap[-1] / gap_se[-1]
    bound = z_threshold(2e-3, z_pos.numel())
    # control: SGD against SGD (two independent halves of the paths), which has no gap to find
    w2 = mc.w[-1, :, 0, :, 1].square()  # (paths, B), ρ = 0
    h = w2.shape[0] // 2
    a, b = w2[:h], w2[h:2 * h]
    z_null = (a.mean(0) - b.mean(0)) / torch.sqrt(a.var(0) / h + b.var(0) / h)
    # the sceptic's ablation: SAM's ascent along a random direction (same length ρ‖∇ℓ‖), its own noise stream
    abl = random_ascent_run(seed, device=dev)
    r2 = abl.w2.to(dev)  # (paths, ρ > 0, B)
    w2s = w2[:, None, :]
    z_rand = (w2s.mean(0) - r2.mean(0)) / torch.sqrt(w2s.var(0) / w2s.shape[0] + r2.var(0) / r2.shape[0])
    v.greater("Corollary 1: SGD's escape variance exceeds SAM's at t = 3 (min over ρ > 0, B of gap/s.e.)",
              float(z_pos.min()), bound, kind="reproduces", source="secondary", tests="cor1",
              control=[Control("SGD vs SGD (independent halves of the paths): min over B of gap/s.e.",
                               float(z_null.min()), why="the null of no gap: the same test between two methods "
                               "that are the same", tuned="none needed: the same SGD paths, split in halves"),
                       Control("SAM with its ascent along a random direction (same length ρ‖∇ℓ‖): min over ρ > 0, "
                               "B of the unpaired gap/s.e.", float(z_rand.min()),
                               why="the ablation of the credited mechanism: the ascent's direction along the "
                                   "gradient, kept its size (random-perturbation SAM)",
                               tuned="none needed: the same ρ, B, η, steps and paths as the SAM run (own noise "
                                     "stream, so the gap is unpaired)")],
              basis="model: one-sided z-test of gap > 0 at false-alarm 1e-3, Bonferroni over the (ρ, B) cells",
              note="paired differences; the control's gap has mean 0")

    # Corollary 1's constant: ĉ = gap / (η t²|λ|³ρ/B), divided by κ = exact gap / leading term (κ ≈ 0.90 at
    # k = 10), pooled per path over (ρ, B) so the paths are i.i.d.; exactly 1 for the algorithm's drift.
    k_idx = COR1_K // MC_EVERY
    t_s = float(mc.t[k_idx])
    rho = rho_all[1:]
    lead = corollary1_gap(t_s, -1.0, rho, MC_LR, batch_all, drift="linear")
    kappa = gap_exact[k_idx - 1] / lead
    w2k = mc.w[k_idx, ..., 1].square()  # (paths, R, nB)
    c_path = ((w2k[:, :1] - w2k[:, 1:]) / (lead * kappa)).mean((1, 2))
    c_hat, c_se = float(c_path.mean()), float(c_path.std()) / math.sqrt(MC_PATHS)
    w2p = run.planted_c.w[k_idx, ..., 1].square()
    c_planted = float(((w2p[:, :1] - w2p[:, 1:]) / (lead * kappa)).mean((1, 2)).mean())
    z1 = z_threshold(1e-3, 1)
    v.between(f"Corollary 1's constant c at t = {t_s:g} (pooled over ρ ∈ {{0.5, 2}}, B ∈ {{1, 8}})", c_hat,
              1 - z1 * c_se, 1 + z1 * c_se, kind="differs", source="secondary", paper=2, tests="cor1",
              planted=Planted(f"paths with the drift λ(1+2ρλ) ({MC_PATHS} paths): same ĉ", c_planted,
                              effect="the printed gap 2ηt²|λ|³ρ/B at every ρ, by construction (the first-order "
                              "expansion of the printed squared drift)"),
              basis=f"model: CLT band 1 ± {z1:.2f} s.e. (path-level s.e. {c_se:.3f}), false-alarm 1e-3",
              note=f"contradicts the printed constant 2: the algorithm's drift gives c = 1 (the 2 needs the squared "
                   f"drift); the discretisation factor κ ∈ [{float(kappa.min()):.3f}, {float(kappa.max()):.3f}] is "
                   "divided out")

    # The abstract's "escapes more slowly than SGD": paired sign test on the escape step, SAM against SGD on the
    # same noise (common random numbers), every (γ, B) cell; the control splits the SGD paths in two halves.
    med, med_sgd = run.esc_median, run.esc_sgd.median(0).values
    excess = med / med_sgd  # SAM/SGD median escape step, (γ, B)
    m_cells = run.esc.shape[1] * run.esc.shape[2]
    z_slow = _sign_z(run.esc, run.esc_sgd)
    h = run.esc_sgd.shape[0] // 2
    z_slow_null = _sign_z(run.esc_sgd[:h], run.esc_sgd[h:2 * h])
    bound_slow = z_threshold(2e-3, m_cells)
    z_slow_rand = _sign_z(abl.esc.to(dev), run.esc_sgd)  # path i of each arm: independent noise, exchangeable
    v.greater("SAM (ρ = 0.5) escapes more slowly than SGD: min over (γ, B) of the paired sign-test z that SAM's "
              "escape step exceeds SGD's", float(z_slow.min()), bound_slow, kind="reproduces", source="paper",
              tests="escape",
              control=[Control("SGD vs SGD (path i against path i + n/2, independent noise): same statistic",
                               float(z_slow_null.min()), why="the null that SAM's ascent step leaves the escape "
                               "time unchanged: the same test between two methods that are the same",
                               tuned="none needed: the same γ, B, η, steps and noise as the SAM run (half the paths "
                                     "each)"),
                       Control("SAM with its ascent along a random direction (same length ρ‖∇ℓ‖) vs SGD: same "
                               "statistic", float(z_slow_rand.min()),
                               why="the ablation of the credited mechanism: the ascent's direction along the "
                                   "gradient, kept its size (random-perturbation SAM)",
                               tuned="none needed: the same ρ, γ, B, η, steps, radius and paths as the SAM run (own "
                                     "noise stream, paired by path index)")],
              basis=f"model: one-sided sign test per cell (ties dropped), normal approximation, false-alarm 1e-3 "
                    f"Bonferroni over the m = {m_cells} cells; under the null a path's SAM and SGD steps are "
                    "exchangeable",
              note=f"paired on common noise, {ESC_PATHS} paths per cell; SAM/SGD median escape step "
                   f"{float(excess.min()):.2f}–{float(excess.max()):.2f}× over the cells")

    # Theorem 3's direction: shared with SGD with momentum (ρ = 0), so it is no SAM-specific evidence
    v.true("Escape step falls with momentum γ and rises with batch size B (every cell; medians of 256 paths) — "
           "SGD with momentum (ρ = 0) shows the same orderings", _strictly(med, 0, True) and _strictly(med, 1, False),
           kind="consistency", source="secondary",
           measured=f"γ=0: {med[0].tolist()}, γ=0.9: {med[-1].tolist()}; SGD γ=0: {med_sgd[0].tolist()}",
           note="the [derived] prediction puts neighbouring γ ≥ 50 % and B ≥ 39 % apart; not a reproduction: "
                "plain SGD with momentum passes the same test (the excess-shrinking row follows)")
    # Theorem 3, SAM-specific: momentum shrinks SAM's escape-time excess over SGD (paired, same noise)
    s_sam = float(torch.log(excess[0] / excess[-1]).mean())
    h = run.esc_sgd.shape[0] // 2
    ex_null = run.esc_sgd[:h].median(0).values / run.esc_sgd[h:2 * h].median(0).values
    s_null = float(torch.log(ex_null[0] / ex_null[-1]).mean())
    med_slow = run.esc_sgd_slow.median(0).values
    ex_slow = med_slow / med_sgd  # slower SGD / SGD median escape step, (γ, B)
    s_slow = float(torch.log(ex_slow[0] / ex_slow[-1]).mean())
    v.greater("Theorem 3, momentum shrinks SAM's escape-time excess over SGD — mean over B of "
              "ln[(SAM/SGD median escape step at γ = 0) / (same at γ = 0.9)]", s_sam, 0.15, kind="not_specific",
              source="secondary", tests="thm3",
              control=[Control(f"SGD at the smaller step η/{ESC_SLOW_SGD:g} in SAM's place (ρ = 0, same noise): same "
                               "statistic", s_slow,
                               why="any slower escaper: heavy ball's growth rate is concave in the escape drift, so "
                                   "momentum compresses the escape-time ratio of every slower method, and SAM at "
                                   "ρ = 0.5 is SGD with the drift halved",
                               tuned=f"the step matched to SAM's γ = 0 median escape step on pilot seeds 9001–9010 "
                                     f"(η = {ESC_LR:g}/{ESC_SLOW_SGD:g}, nearest match on the grid 1.3–2.0); the "
                                     "same γ, B, steps, paths and noise as the SAM run"),
                       Control("SGD with momentum in SAM's place (two independent halves of the SGD paths): same "
                               "statistic", s_null, why="the null: no excess to shrink",
                               tuned="none needed: the same γ, B, η, steps and noise as the SAM run (half the "
                                     "paths each)")],
              basis="pilot: over pilot seeds 9001–9030 the statistic was 0.292 ± 0.016 (s.d.) and the null's "
                    "−0.007 ± 0.031; 0.15 lies 8.9 s.d. below the first and 4.9 above the second (fixed before the "
                    "slower-SGD control was added)",
              note=f"SAM/SGD median ratio at γ = 0: {[round(x, 2) for x in excess[0].tolist()]}, at γ = 0.9: "
                   f"{[round(x, 2) for x in excess[-1].tolist()]} (per B); the slower SGD's at γ = 0: "
                   f"{[round(x, 2) for x in ex_slow[0].tolist()]}, at γ = 0.9: "
                   f"{[round(x, 2) for x in ex_slow[-1].tolist()]}: the shrinking is shared with SGD-M")
    m_esc = med.numel()
    zr = _median_rank_z(run.esc, run.esc_pred, 1.0)
    v.less("Median escape step vs [derived] heavy-ball covariance prediction: max rank-z over (γ, B)",
           float(zr.max()), z_threshold(1e-3, m_esc), kind="consistency", source="derived",
           basis=f"model: distribution-free: #paths below the prediction ~ Binomial({ESC_PATHS}, ½) if it is the "
                 f"median; ±1 step for the integer crossing; Bonferroni over m = {m_esc} at false-alarm 1e-3",
           note="our own prediction of the escape step, checked against the run")
    return v


def headline(r: Mapping[str, Any], *, seed: int, run: StochasticRun | None = None, display: bool = True
             ) -> Verdicts:
    """The chapter's table: the deterministic rows from the results ``r`` (keys :data:`HEADLINE_KEYS`), then the
    stochastic rows of ``seed`` (:func:`seeded_verdicts`)."""
    if not isinstance(r, Mapping):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a mapping of the chapter's results)")
    missing = [k for k in HEADLINE_KEYS if k not in r]
    if missing:
        raise ValueError(f"Invalid r: missing keys {missing}")
    v = Verdicts("SAM at saddles (Kim et al.)", display=display, claims=PAPER_CLAIMS)
    scan, ctrl = r["scan"], r["scan_control"]
    # ---- reproduces: the paper's claims against simulations, each with a control
    v.close("Beale: measured capture threshold of unnormalised SAM vs Theorem 1's −1/λ₁ = 4/111", scan.measured,
            4 / 111, atol=scan.spacing, kind="reproduces", source="secondary", tests="thm1",
            control=Control("GD on the expanded SAM objective f + ρ‖∇f‖² (drift λ(1+2ρλ)): same scan", ctrl.measured,
                            "no switch on the grid: captured at every ρ" if not math.isfinite(ctrl.measured)
                            else f"{ctrl.measured:.5f}",
                            why="the rival drift the chapter discusses (the first-order expansion of the SAM "
                                "objective; it would put the threshold at −1/(2λ₁) = 2/111)",
                            tuned="none needed: the same 25-point ρ grid, η = 10⁻³, 2000 steps, start and escape "
                                  "test"),
            basis="model: a 25-point ρ grid locates the switch to within one grid step",
            note="Beale's full polynomial, not its Hessian: an independent check of the linearisation")
    d_demo_sam, d_demo_gd = float(r["demo_sam"]), float(r["demo_gd"])
    v.less("Normalised demo (official code, x² − y²): SAM final ‖w − d‖", d_demo_sam, 1e-2, kind="reproduces",
           source="paper", tests="attractor",
           control=Control("GD, same start and steps: final ‖w − d‖", d_demo_gd,
                           why="the method that escapes saddles: what SAM is claimed to differ from",
                           tuned="none needed: the official code's step and start, ρ = 0"),
           basis="model: inside the ρ-ball both directions contract by ≥ 2η(ρ/‖w‖ − 1) per step for 500 − t_in steps",
           note="stuck at the saddle; GD escapes along y")
    ds = r["d_saddle"]
    v.less("Beale ρ ∈ {0.5, 1}: ‖w_T − (0,1)‖ after 10⁵ steps", max(ds[2:]), 1e-3, kind="reproduces",
           source="paper", tests="attractor",
           control=[Control("GD (ρ = 0): same distance", ds[0], why="the method that escapes",
                            tuned="none needed: the official code's step, start and 10⁵ steps"),
                    Control("ρ = 0.1: same distance", ds[1], why="SAM below the capture threshold: the claim is "
                            "about large ρ, not SAM as such", tuned="none needed: the official settings")],
           basis="model: a trapped iterate moves ≤ η‖∇ℓ(w^p)‖ ≈ η·27.75ρ ≤ 3.5e-4 per step",
           note="the official settings; the loss stays at the saddle's 909/64, and GD and ρ = 0.1 go on to the "
                "official stop radius of the minimum (3, ½) (shown in the chapter, not separate rows: they restate "
                "this distance)")
    cmin, cmax, flips = r["cos_min"], r["cos_max"], r["flips"]
    ncmin, ncmax, nflips = r["near_cos_min"], r["near_cos_max"], r["near_flips"]

    def osc(i: int) -> bool:
        return bool(cmin[i] < -0.9 and cmax[i] > 0.9)

    near_osc = all(lo < -0.9 and hi > 0.9 for lo, hi in zip(ncmin, ncmax, strict=True))
    near_why = ("Case III's signature at another stationary point: is it the saddle's, or does SAM's ρ-ball swing and "
                "flip wherever it straddles a critical point, a minimum included?")
    near_tuned = ("the stuck runs' own settings — normalised SAM, ρ ∈ {0.5, 1}, the official step, 10⁵ steps, the "
                  "same second-half window — started within the official stop radius 0.15 of the minimum (3, ½), on "
                  "the ray to the official start (1, 2): experiments.beale_near_minimum_run, start fixed before it "
                  "ran. Sceptic review (independent pure-Python re-implementation): started 10⁻³ from the minimum "
                  "on the same ray instead, the second half is the same — cosine in [+0.296, +0.788], flips 0 %, "
                  "SAM settles 0.012 (ρ = 0.5) and 0.016 (ρ = 1) from (3, ½) — so the start does not choose the "
                  "outcome; at a minimum ĝᵀHĝ > 0 keeps the cosine positive to first order")

    v.true("Beale stuck (each ρ ≥ 0.5): cos(∇ℓ(w), ∇ℓ(w^p)) swings below −0.9 and above 0.9 (2nd half)",
           osc(2) and osc(3), kind="reproduces", source="secondary", tests="caseIII",
           measured=f"[{min(cmin[2:]):+.3f}, {max(cmax[2:]):+.3f}]",
           control=[Control("ρ = 0.1 (escaping)", osc(1), f"[{cmin[1]:+.3f}, {cmax[1]:+.3f}]",
                            why="SAM away from the saddle (Cases I/II: SAM ≈ GD)",
                            tuned="none needed: the official settings"),
                    Control("GD", osc(0), f"[{cmin[0]:+.3f}, {cmax[0]:+.3f}]", why="no ascent step at all",
                            tuned="none needed: the official settings",
                            weak="ρ = 0: the ascent point is w itself, so the cosine is 1 by construction"),
                    Control("SAM (ρ = 0.5, 1) started near the minimum (3, ½)", near_osc,
                            f"[{min(ncmin):+.3f}, {max(ncmax):+.3f}]", why=near_why, tuned=near_tuned)],
           note="Case III: the cosine reaches −1 and +1")
    v.greater("Beale stuck (each ρ ≥ 0.5): share of steps the ascent flips side", min(flips[2:]), 0.5,
              kind="reproduces", source="secondary", tests="caseIII",
              control=[Control("ρ = 0.1 (escaping): same share", flips[1],
                               why="SAM away from the saddle (Cases I/II: SAM ≈ GD, the ascent turns slowly)",
                               tuned="none needed: the official settings"),
                       Control("SAM (ρ = 0.5, 1) started near the minimum (3, ½): same share, least over ρ",
                               min(nflips), why=near_why, tuned=near_tuned)],
              basis=f"model: chaotic (0.89–0.94 under 1e-15 changes of the start); ½ separates it from the "
                    f"escaping ρ = 0.1 run ({flips[1]:.0%})", note="the perturbed point crosses into the other basin")

    # ---- consistency: our algebra and code
    v.true("sympy: one SAM step on λw²/2 multiplies w by 1 − ηλ(1+ρλ); the SAM objective's by 1 − ηλ(1+ρλ)²",
           bool(r["sympy_linear_map"]), kind="consistency", source="derived",
           note="the two drifts the chapter tells apart")
    v.true("sympy: Theorem 2's σ²(t) solves the OU moment ODE with a = λ(1+ρλ)²", bool(r["sympy_ou"]),
           kind="consistency", source="secondary", note="the printed formula is self-consistent for its drift")
    v.true("sympy: Theorem 3 at γ = 0 reduces to Theorem 2", bool(r["sympy_thm3"]), kind="consistency",
           source="secondary", note="as transcribed by the notes")
    v.close("Beale Hessian at (0,1): torch autograd eigenvalue λ₁ vs sympy's −111/4", r["hessian_eig"],
            r["hessian_eig_sympy"], atol=1e-12, kind="consistency", source="derived",
            basis="model: float64 rounding of a degree-8 polynomial's second derivatives (~1e-14)",
            note="autograd of the torch polynomial vs exact sympy differentiation")
    v.close("Beale f(0,1): torch vs sympy's 909/64", r["f01"], r["f01_sympy"], rtol=1e-15, kind="consistency",
            source="derived", basis="model: exact binary fractions; float64 rounding only",
            note="the test function is the paper's")
    v.less("Beale fast path vs batched torch path: max |Δw| over the first 500 steps, 4 cells", r["parity"], 1e-12,
           kind="consistency", source="derived",
           basis="model: same update, another evaluation order: last-bit rounding (~1e-16 per step × 500)",
           note="compared before ρ = 1 reaches the saddle (≈ step 600), where the flipping dynamics amplify any "
                "rounding difference")
    v.close("Normalised demo: GD final y vs y₀(1+2η)^T", r["gd_final_y"], r["gd_y_exact"], rtol=1e-12,
            kind="consistency", source="derived", basis="model: 500 float64 multiplications, rounding ≤ 500 ulp",
            note="GD on a quadratic is exactly geometric")
    v.less("x²−y²: max |measured y_{t+1}/y_t − (1 − ηλ(1+ρλ))| over 10 ρ", r["factor_err"], 1e-12,
           kind="consistency", source="derived", basis="model: the map is exactly linear on a quadratic; float64 "
                                                       "rounding ~1e-16",
           note="the simulator implements the linearised map Theorem 1 is about")
    v.true("x²−y²: escape exactly for ρ < ρ* = 0.5 (the algebra of Theorem 1 on a quadratic)",
           bool(r["escape_rule"]), kind="consistency", source="derived",
           note="on a quadratic the growth factor 1 − ηλ(1+ρλ) decides it exactly; Beale above is the test")
    v.extend(seeded_verdicts(seed, run=run))
    return v
