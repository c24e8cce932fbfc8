"""Every verdict row the CoLoRA chapter shows, and the paper's claims they test (Magakyan et al., ICML 2026).

* :func:`derivation_verdicts` — the sympy identities, counts and the sin Θ cross-check (consistency rows: they
  check our reconstruction and our code, and say why each matters);
* :func:`sampled_results` — the seeded computations the sampled rows need (it reuses the chapter's study and
  convergence run when given them, so the chapter computes nothing twice);
* :func:`sampled_verdicts` — the sampled rows (pooling, recovery at the oracle's rate, the need for similarity);
* :func:`fl_verdicts` — the headline: federated CoLoRA against the federated-LoRA baselines (FedAvg-, FFA-, FedSA-LoRA
  at CoLoRA's rank, per-client LoRA), none sending more per round, with the homogeneous and the dissimilar-subspace
  worlds as controls; read from the committed ``bench/results/colora_fl.json`` (:func:`load_fl`), whose 20 unseen
  seeds :func:`fl_robustness` re-reads;
* :func:`headline` — all the tables in one with ``claims=PAPER_CLAIMS`` (what the chapter shows);
* :func:`seeded_verdicts` / :func:`deterministic_verdicts` — for the seed-robustness and rules tests.

Bounds are fixed here, before the chapter's run, from the error model or the pilot named in each row's ``basis``
(pilot seeds 9001–9020 of :data:`theorybook.check.PILOT_SEEDS`, run by ``bench/colora.py --pilot``; results in
``bench/results/colora.json``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg
import sympy as sp
import torch

from ..check import Control, PaperClaim, Verdicts, z_threshold
from ..device import to_numpy
from ..validate import integer
from . import theory
from .experiment import (
    CHAPTER_SEEDS,
    ITERS,
    METHODS,
    N_REPS,
    NS,
    RANK,
    SIGMA,
    D,
    K,
    RecoveryStudy,
    _batch,
    _recovery,
    _solve,
    colora_fit,
    convergence_study,
    make_tasks,
    oracle_monte_carlo,
    parameter_count,
    sin_theta,
)
from .federated import (
    FL_CELLS,
    FL_GRID,
    FL_METHODS,
    FL_ROUNDS,
    LOCAL_STEPS,
    N_VAL,
    communicated,
    fl_message_size,
    fl_ratio,
)

# sampled_results is public but not in __all__: its study marks the cells it does not need with NaN (documented in
# RecoveryStudy), which the API fuzz would read as silent garbage.
__all__ = ["PAPER_CLAIMS", "CHAPTER_SEEDS", "SampledResults", "derivation_verdicts", "fl_verdicts", "load_fl",
           "pilot_statistics", "sampled_verdicts", "seeded_verdicts", "deterministic_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("pooling", "individual tasks gain substantially when trained together with similar tasks",
               where="abstract"),
    PaperClaim("fed-baselines", "CoLoRA outperforms federated LoRA baselines under heterogeneity", where="abstract",
               headline=True),
    PaperClaim("altmin-recovery", "alternating minimisation provably recovers the ground truth (GRIP-based "
               "guarantees in heterogeneous linear regression)", where="theory (secondary summary)",
               source="secondary"),
    PaperClaim("needs-similarity", "the recovery guarantee needs sufficient task similarity", where="theory "
               "(secondary summary)", source="secondary"),
    PaperClaim("params", "O(dr + kr²) trainable parameters for k tasks", where="secondary summary",
               source="secondary", quoted_only=True, reason_class="no measurable consequence",
               why="bookkeeping of our reconstructed parameterisation (2dr + kr², checked as a consistency row), not "
                   "a measurable claim of the paper"),
    PaperClaim("rouge-ni", "Natural Instructions (test) Rouge-L 97.9", where="leaderboard entry", source="secondary",
               quoted_only=True, reason_class="language model",
               why="no language models here; the synthetic tasks cannot test it"),
)

RATIO_BAND = (0.8, 2.0)
RATE_BOUND = 0.8
E24_BOUND = 0.02
MC_N, MC_TRIALS = 32, 5_000

# The pilot behind the bounds (bench/colora.py --pilot, seeds 9001–9020, 3 replicates each as in the chapter, and
# seeds 9001–9100 for the contraction rate;
# the numbers are copied from bench/results/colora.json["pilot"], and a test checks they match it).
PILOT = {
    "e24_colora_max": 0.0095, "e24_indep_min": 1.11,
    "ratio_range": {32: (1.17, 1.59), 64: (1.12, 1.51), 128: (1.14, 1.46)},
    "ratio_indep_min": {32: 1097.0, 64: 233.0, 128: 4.75},
    "rate_max": 0.73, "rate_slow": 2,
    "scan_max": 0.051, "scan_ctrl_min": 4.22, "e24_shared_min": 1.13,
}


def derivation_verdicts(d: int = 3, r: int = 2, *, seed: int = CHAPTER_SEEDS[0]) -> Verdicts:
    """The exact and round-off rows of the derivation (consistency: they check our reconstruction and code)."""
    d = integer("d", d, 2, 4)
    r = integer("r", r, 1, d)
    seed = integer("seed", seed, 0)
    ids = theory.adapter_identities(d, r)
    gauss = theory.gaussian_sensing_mean(2)
    risk = theory.oracle_risk()
    jac = theory.jacobian_rank(4, 2, 3)
    counts = theory.parameter_counts()
    d_, r_, k_ = counts.symbols
    at = {d_: D, r_: RANK, k_: K}
    T = make_tasks(K, D, RANK, 32, sigma=SIGMA, seed=seed)
    fit = colora_fit(T.X, T.y, RANK)
    ours = np.asarray(to_numpy(sin_theta(fit.A_history, T.A.expand_as(fit.A_history))))
    ref = np.array([np.sin(scipy.linalg.subspace_angles(to_numpy(Ah), to_numpy(T.A))[0]) for Ah in fit.A_history])
    v = Verdicts("CoLoRA: derivations", display=False)
    v.true(f"⟨X, ARBᵀ⟩ = ⟨XBRᵀ, A⟩ = ⟨XᵀAR, B⟩ = ⟨AᵀXB, R⟩ (symbolic, d = {d}, r = {r})",
           ids.gap_A == 0 and ids.gap_B == 0 and ids.gap_R == 0, kind="consistency", source="derived",
           measured=f"differences {ids.gap_A}, {ids.gap_B}, {ids.gap_R}",
           note="sympy expand of fully symbolic matrices: each step of the solver is a least-squares problem")
    v.true("E[⟨X, M⟩X] = M for X with iid N(0, 1) entries (symbolic M, 2 × 2)", gauss == sp.zeros(2, 2),
           kind="consistency", source="derived", measured=f"E[⟨X,M⟩X] − M = {gauss.tolist()}",
           note="sympy.stats expectation: why the spectral start points at the shared subspace")
    v.equal("oracle risk: sympy's E[1/χ²_n] − p/(n − p − 1) at p = 1", risk.gap_p1, 0, kind="consistency",
            source="derived", note="the scalar case of the inverse-Wishart mean behind the oracle curve")
    v.equal("Jacobian rank of (A, B, R_i) ↦ (ARᵢBᵀ) = manifold dimension (CoLoRA; one task), d=4, r=2, k=3",
            (jac.rank_colora, jac.rank_single), (jac.dim_colora, jac.dim_single), kind="consistency",
            source="derived", note="exact rank over ℚ at a random integer point vs 2r(d−r)+kr² and 2dr−r²: the "
                                   "counting thresholds the figure marks rest on these dimensions")
    v.equal(f"parameter counts at d = {D}, r = {RANK}, k = {K} (CoLoRA 2dr + kr², independent 2kdr, one pooled "
            "adapter 2dr + r²): parameter_count = sympy's table", [parameter_count(D, RANK, K, m) for m in METHODS],
            [int(counts.params[m].subs(at)) for m in METHODS], kind="consistency", source="reconstruction",
            note="the [secondary] O(dr + kr²) is this bookkeeping of our reconstruction, not a measurement (quoted)")
    v.equal(f"message per client and round, counted from the tensors each federated method averages (d = {D}, "
            f"r = {RANK}): {', '.join(FL_METHODS)}", [fl_message_size(m, D, RANK) for m in FL_METHODS],
            [communicated(D, RANK, m) for m in FL_METHODS], kind="consistency", source="reconstruction",
            note="2dr numbers for CoLoRA, FedAvg- and FFA-LoRA (rank 2r), dr for FedSA-LoRA at rank r (only U "
                 "is averaged), 0 for per-client LoRA: no baseline sends more than CoLoRA")
    v.less(f"sin Θ by projection = sin of scipy.linalg.subspace_angles' largest angle (max |Δ| over "
           f"{ours.size} rounds)", float(np.abs(ours - ref).max()), 1e-10, kind="consistency", source="derived",
           basis="model: both are backward stable in float64; for orthonormal 16 × 2 inputs the absolute error of "
                 "either is ≲ 1e-14, and 1e-10 leaves room for the loss of relative accuracy at tiny angles",
           note="two algorithms (‖(I − UUᵀ)V‖₂ vs scipy's SVD-based angles) on the chapter's n = 32 run: the "
                "convergence figure plots the first")
    return v


def spectral_only_ratio(seed: int, n: int) -> float:
    """The ablation of alternating minimisation: CoLoRA's spectral start (top-r eigenvectors of Σ M̂_i M̂_iᵀ and
    Σ M̂_iᵀ M̂_i) with each core R_i fitted by least squares and no alternating round; its median relative error over
    tasks ÷ the oracle's, on one draw of :func:`make_tasks` (k, d, r, σ of the chapter) at ``seed``."""
    s = integer("seed", seed, 0)
    n = integer("n", n, RANK**2 + 2, 4096)
    T = make_tasks(K, D, RANK, n, sigma=SIGMA, seed=s)
    X, y, M = (np.asarray(to_numpy(t), dtype=np.float64) for t in (T.X, T.y, T.M))
    Mh = np.einsum("kl,klde->kde", y, X) / n
    A = np.linalg.eigh(np.einsum("kde,kfe->df", Mh, Mh))[1][:, -RANK:]
    B = np.linalg.eigh(np.einsum("ked,kef->df", Mh, Mh))[1][:, -RANK:]
    Z = np.einsum("da,klde,eb->klab", A, X, B).reshape(K, n, RANK * RANK)
    R = np.stack([np.linalg.lstsq(Z[i], y[i], rcond=None)[0].reshape(RANK, RANK) for i in range(K)])
    err = np.linalg.norm(A @ R @ B.T - M, axis=(1, 2)) / np.linalg.norm(M, axis=(1, 2))
    orc = SIGMA * math.sqrt(RANK**2 / (n - RANK**2 - 1)) / np.linalg.norm(M, axis=(1, 2))
    return float(np.median(err) / np.median(orc))


def centre_pair_errors(seed: int, tau: float, n: int = 128, *, device: Any = None) -> np.ndarray:
    """A shared pair handed the generator's centre subspaces ``A*, B*`` (no estimation, no alternating round), each
    core ``R_i`` by least squares: the median-over-tasks relative error on each of the :data:`N_REPS` replicates'
    draws of :func:`~theorybook.colora.experiment.recovery_study` at ``seed`` (the scan's draws). At ``τ > 0`` its
    error is the misfit of the shared rank-r parameterisation itself, whatever algorithm fits it."""
    s = integer("seed", seed, 0)
    n = integer("n", n, RANK**2 + 2, 4096)
    T = _batch(K, D, RANK, n, float(tau), SIGMA, s, N_REPS, device)
    Z = T.A.transpose(-1, -2)[:, None, None] @ T.X @ T.B[:, None, None]  # (reps, k, n, r, r)
    R = _solve(Z.reshape(N_REPS, K, n, RANK * RANK), T.y).reshape(N_REPS, K, RANK, RANK)
    M = T.A[:, None] @ R @ T.B[:, None].transpose(-1, -2)
    err = torch.linalg.matrix_norm(M - T.M) / torch.linalg.matrix_norm(T.M)
    return np.asarray(to_numpy(err.median(dim=1).values), dtype=np.float64)


#: The needs-similarity row's scan of the subspace perturbation τ at n = 128: a decade around the chapter's τ = 0.3
#: (log-spaced, fixed before any scan was measured), with τ = 0 as the control world.
SCAN_TAUS = (0.1, 0.3, 1.0)


class SampledResults(NamedTuple):
    """What the sampled rows read: the τ ∈ {0, 0.3} study, the noiseless convergence run and the oracle Monte Carlo
    ``(mean, SE)``; ``spectral`` maps n ∈ {32, 64, 128} to the spectral-start-only ablation's error ÷ the oracle's
    (:func:`spectral_only_ratio`); ``scan`` the n = 128 study of CoLoRA and per-client LoRA at each τ of
    :data:`SCAN_TAUS` (the same replicates' draws); ``centre`` the errors of :func:`centre_pair_errors` at each τ of
    the scan (rows) and replicate (columns)."""

    study: RecoveryStudy
    conv: np.ndarray
    mc: tuple[float, float]
    spectral: dict[int, float]
    scan: RecoveryStudy
    centre: np.ndarray


def _cells() -> list[tuple[float, int, str]]:
    return ([(0.0, n, m) for n in (24, 32, 64, 128) for m in ("colora", "independent")]
            + [(0.0, 24, "shared"), (0.3, 128, "colora"), (0.3, 128, "independent")])


def sampled_results(seed: int, study: RecoveryStudy | None = None, conv: Any = None, *,
                    device: Any = None) -> SampledResults:
    """The seeded computations of the sampled rows (chapter scale: k = 16, d = 16, r = 2, σ = 0.01, 15 rounds, 3
    replicates). A ``study`` from :func:`recovery_study` with ``seed`` (τ = 0 and 0.3 among its τ, the n of
    :data:`NS`) and the chapter's ``conv`` are reused when given."""
    s = integer("seed", seed, 0)
    if study is not None and not isinstance(study, RecoveryStudy):
        raise TypeError(f"Invalid study: {type(study).__name__} (must be a RecoveryStudy)")
    if study is None:
        study = _recovery(_cells(), NS, (0.0, 0.3), k=K, d=D, r=RANK, sigma=SIGMA, iters=ITERS, reps=N_REPS,
                          seed=s, device=device, oracle_fit=False)
    if conv is None:
        conv = convergence_study(seed=s, device=device)
    conv = np.asarray(conv, dtype=np.float64)
    if conv.ndim != 2 or conv.shape[1] < 11:
        raise ValueError(f"Invalid conv: shape {conv.shape} (must be (reps, ≥ 11))")
    mc = oracle_monte_carlo(MC_N, RANK**2, MC_TRIALS, seed=s)
    scan = _recovery([(t, 128, m) for t in SCAN_TAUS for m in ("colora", "independent")], (128,), SCAN_TAUS, k=K,
                     d=D, r=RANK, sigma=SIGMA, iters=ITERS, reps=N_REPS, seed=s, device=device, oracle_fit=False)
    centre = np.stack([centre_pair_errors(s, t, device=device) for t in SCAN_TAUS])
    return SampledResults(study, conv, mc, {n: spectral_only_ratio(s, n) for n in (32, 64, 128)}, scan, centre)


def _scan_ratios(res: SampledResults) -> list[float]:
    """Per-client / CoLoRA error at n = 128, worst of the replicates, at each τ of :data:`SCAN_TAUS`."""
    sc, ci, ii = res.scan, METHODS.index("colora"), METHODS.index("independent")
    return [float((sc.errors[a, ii, 0] / sc.errors[a, ci, 0]).max()) for a in range(len(sc.taus))]


def _centre_ratios(res: SampledResults) -> list[float]:
    """The row's statistic with the centre-pair fit (:func:`centre_pair_errors`) in CoLoRA's place: per-client /
    centre-pair error at n = 128, worst of the replicates, at each τ of :data:`SCAN_TAUS`."""
    ii = METHODS.index("independent")
    return [float((res.scan.errors[a, ii, 0] / res.centre[a]).max()) for a in range(len(res.scan.taus))]


def pilot_statistics(res: SampledResults) -> dict[str, float]:
    """The statistics the pilot reports for one seed (the same ones the rows measure, and their controls')."""
    if not isinstance(res, SampledResults):
        raise TypeError(f"Invalid res: {type(res).__name__} (must be a SampledResults)")
    st = res.study
    ci, ii = METHODS.index("colora"), METHODS.index("independent")
    t0 = st.taus.index(0.0)
    med = np.median(st.errors, axis=-1)
    c = {n: st.ns.index(n) for n in (24, 32, 64, 128)}
    si = METHODS.index("shared")
    out = {"e24_colora": float(st.errors[t0, ci, c[24]].max()), "e24_indep": float(st.errors[t0, ii, c[24]].max()),
           "e24_shared": float(st.errors[t0, si, c[24]].max())}
    for n in (32, 64, 128):
        orc = float(np.median(st.oracle[c[n]]))
        out[f"ratio_{n}"] = float(med[t0, ci, c[n]] / orc)
        out[f"ratio_indep_{n}"] = float(med[t0, ii, c[n]] / orc)
    rate = (res.conv[:, 10] / res.conv[:, 2]) ** (1 / 8)
    out["rate"] = float(np.median(rate))
    out["rate_worst"] = float(rate.max())
    out["sim"] = max(_scan_ratios(res))
    out["sim_ctrl"] = float((st.errors[t0, ii, c[128]] / st.errors[t0, ci, c[128]]).max())
    return out


def sampled_verdicts(res: SampledResults) -> Verdicts:
    """The sampled rows (the chapter shows them; the seed-robustness test re-runs them on 20 unseen seeds)."""
    if not isinstance(res, SampledResults):
        raise TypeError(f"Invalid res: {type(res).__name__} (must be a SampledResults)")
    st, conv = res.study, res.conv
    for tau in (0.0, 0.3):
        if tau not in st.taus:
            raise ValueError(f"Invalid study: τ = {tau} missing (taus {st.taus})")
    v = Verdicts("CoLoRA: sampled rows", display=False)
    ci, ii = METHODS.index("colora"), METHODS.index("independent")
    t0 = st.taus.index(0.0)
    reps = st.errors.shape[-1]
    med = np.median(st.errors, axis=-1)
    th = st.thresholds
    n24 = st.ns.index(24)
    P = PILOT
    v.less(f"τ = 0, n = 24: CoLoRA's median relative error (worst of {reps} replicates)",
           float(st.errors[t0, ci, n24].max()), E24_BOUND, kind="reproduces", source="paper", tests="pooling",
           control=[Control("per-client LoRA (each task alone), same statistic", float(st.errors[t0, ii, n24].max()),
                            why="training alone is what the claim says loses: the no-collaboration alternative",
                            tuned=f"the same alternating solver, spectral start and {ITERS} rounds, on each task"),
                    Control("one pooled adapter for all tasks (FedAvg-LoRA's pooled optimum)",
                            float(st.errors[t0, METHODS.index("shared"), n24].max()),
                            why="pooling without personal parameters: the other way to use the other tasks' data",
                            tuned=f"the same solver with one shared core, {ITERS} rounds")],
           basis=f"pilot: seeds 9001–9020 — CoLoRA worst {P['e24_colora_max']}, per-client best "
                 f"{P['e24_indep_min']}, pooled best {P['e24_shared_min']}; the bound 0.02 (≈ 6× the oracle's "
                 "0.003) sits between",
           note=f"n = 24 is above CoLoRA's counting threshold {th['colora']:.2f} per task and below the single-task "
                f"one 2dr − r² = {th['independent']:.0f}: pooling 16 similar tasks is what makes it solvable")
    for n in (32, 64, 128):
        c = st.ns.index(n)
        orc = float(np.median(st.oracle[c]))
        pred = math.sqrt(th["colora"] * (n - RANK**2 - 1) / (RANK**2 * n))
        lo, hi = P["ratio_range"][n]
        v.between(f"τ = 0, n = {n}: CoLoRA / oracle error (medians over tasks and {reps} replicates)",
                  float(med[t0, ci, c] / orc), *RATIO_BAND, kind="reproduces", source="secondary",
                  tests="altmin-recovery",
                  control=[Control("per-client LoRA / oracle", float(med[t0, ii, c] / orc),
                                   why="the same solver without the shared subspace: does pooling reach the oracle?",
                                   tuned=f"the same alternating solver, spectral start and {ITERS} rounds"),
                           Control("spectral start alone, cores by least squares, no alternating round / oracle "
                                   "(one draw at the row's seed)", res.spectral[n],
                                   why="the ablation of the credited mechanism: is it alternating minimisation that "
                                       "reaches the oracle, or the pooled spectral estimate it starts from?",
                                   tuned="none needed: the same spectral start as CoLoRA, no step size or rounds")],
                  basis=f"pilot: seeds 9001–9020 — the ratio ranged over [{lo}, {hi}] (per-client ≥ "
                        f"{P['ratio_indep_min'][n]}); band {RATIO_BAND} keeps ≥ 0.3 on each side",
                  note=f"'recovers the ground truth' [secondary] up to the statistical error: oracle = "
                       f"σ r/√(n − r² − 1)/‖M_i‖ (inverse-Wishart formula, A, B known); a parameter count "
                       f"(dof per task {th['colora']:.2f} vs r² = {RANK**2}) predicts ≈ {pred:.2f}")
    rate = (conv[:, 10] / conv[:, 2]) ** (1 / 8)
    v.less(f"σ = 0, n = 24: contraction of sin Θ(Â_t, A*) per round over rounds 2–10 (median of {conv.shape[0]} "
           "replicates)", float(np.median(rate)), RATE_BOUND, kind="consistency", source="reconstruction",
           basis=f"pilot: seeds 9001–9100 — the median of 3 replicates stayed ≤ {P['rate_max']}; single draws are "
                 f"slow (rate ≥ 0.95) in about 1 of 100 ({P['rate_slow']} of 300 pilot draws), so the row bounds the "
                 "median, with 0.8 < 1 the contraction the expected theorem shape asks for",
           note="linear convergence, the shape we expect of the (unread) theorem: a check of our reconstruction "
                "and solver, not of the paper")
    c128 = st.ns.index(128)
    scan = _scan_ratios(res)
    sim0 = float((st.errors[t0, ii, c128] / st.errors[t0, ci, c128]).max())
    per_tau = ", ".join(f"τ = {t:g}: {x:.3g}" for t, x in zip(SCAN_TAUS, scan, strict=True))
    v.less(f"τ scanned over {{{', '.join(f'{t:g}' for t in SCAN_TAUS)}}} (a decade around 0.3), n = 128: per-client "
           f"/ CoLoRA error, worst of {reps} replicates, max over the scan", max(scan), 1.0, kind="not_specific",
           source="secondary", tests="needs-similarity",
           control=[Control("the same ratio with similar tasks (τ = 0)", sim0,
                            why="the world where the claim says collaboration must win",
                            tuned=f"the same solvers and {ITERS} rounds, the same replicates' draws"),
                    Control("the same statistic with CoLoRA replaced by a shared pair handed the true centre "
                            "subspaces A*, B* (cores by least squares, no alternating minimisation)",
                            max(_centre_ratios(res)),
                            why="the ablation of the credited mechanism (sceptic review): does the row see the "
                                "alternating scheme's guarantee, or only the misfit of any shared rank-r pair?",
                            tuned="none needed: the truth's own centre pair, the scan's draws, the same per-client "
                                  "errors")],
           basis=f"pilot: seeds 9001–9010 (bench/colora_tau_scan.py) — scan max {P['scan_max']}, control best "
                 f"{P['scan_ctrl_min']}; the scan (a decade around the chapter's τ, log-spaced) was fixed before it "
                 "was measured; the bound 1 is the claim itself (per-client LoRA has the lower error)",
           note=f"{per_tau}; at every scanned τ no rank-2 shared subspace fits all tasks (CoLoRA's error is the "
                f"misfit), while n = 128 is above the single-task threshold {th['independent']:.0f}; the scan does "
                "not locate the similarity threshold, which lies below τ = 0.1. Not specific to the alternating "
                "scheme (sceptic review): a shared pair handed the true centre subspaces, with no alternating "
                "minimisation, loses to per-client LoRA by the same margin (centre-pair errors "
                + ", ".join(f"{x:.3g}" for x in res.centre.max(axis=1))
                + " at the scanned τ, worst replicate) — the row sees the misfit of the shared rank-r "
                "parameterisation, which any fit of it inherits, not the need of the paper's guarantee")
    mean, se = res.mc
    pred = RANK**2 / (MC_N - RANK**2 - 1)
    z = z_threshold(1e-3)
    v.close(f"oracle: E‖R̂ − R‖²/σ² at n = {MC_N}, p = r² = {RANK**2} (Monte Carlo, {MC_TRIALS} draws)", mean, pred,
            atol=z * se, kind="consistency", source="derived",
            basis=f"model: CLT, two-sided z·SE with z = z_threshold(1e-3) = {z:.2f} (false alarm ≤ 1e-3)",
            note=f"inverse-Wishart mean p/(n − p − 1) vs simulated least squares (SE = {se:.2g}): the oracle curve "
                 "the ratio rows divide by")
    return v


FL_NAMES = {"colora": "federated CoLoRA", "fedavg": "FedAvg-LoRA", "ffa": "FFA-LoRA (rank 2r)",
            "fedsa": "FedSA-LoRA (shared U, personal V_i, rank r)", "per_client": "per-client LoRA"}


def load_fl(path: Any = None) -> dict[str, Any]:
    """The committed federated comparison, ``bench/results/colora_fl.json`` (written by ``bench/colora_fl.py``)."""
    import json
    from pathlib import Path

    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"Invalid path: {path!r} (must be a str, a Path or None)")
    p = Path(__file__).parents[3] / "bench" / "results" / "colora_fl.json" if path is None else Path(path)
    if not p.is_file():
        raise ValueError(f"Invalid path: {str(p)!r} (no such file; run bench/colora_fl.py)")
    fl = json.loads(p.read_text())
    if not isinstance(fl, dict) or set(fl.get("cells", {})) != set(FL_CELLS):
        raise ValueError(f"Invalid federated results in {p}: need cells {sorted(FL_CELLS)}")
    return fl


def fl_margin(cell: dict[str, Any]) -> tuple[str, float]:
    """The best federated baseline (by its worst replicate's error ÷ CoLoRA's) and min over replicates of its error
    ÷ federated CoLoRA's: the margin CoLoRA wins by (< 1: it loses)."""
    e = np.asarray(cell["colora"]["error"])
    ratios = {m: float((np.asarray(cell[m]["error"]) / e).min()) for m in FL_METHODS[1:]}
    best = min(ratios, key=ratios.get)
    return best, ratios[best]


def fl_stalls(cell: dict[str, Any]) -> int:
    """Replicates on which federated CoLoRA (gradient rounds) ends at more than twice the error of its alternating
    least squares on the same samples: the optimisation, not the model, limits it there."""
    return int((np.asarray(cell["colora"]["error"]) > 2 * np.asarray(cell["colora_als"]["error"])).sum())


def fl_ratio_als(cell: dict[str, Any]) -> float:
    """:func:`~theorybook.colora.federated.fl_ratio` with CoLoRA fitted by alternating least squares (pooled, not
    federated) in place of its federated training: what the ratio would be without CoLoRA's optimisation failures."""
    e = np.asarray(cell["colora_als"]["error"])
    best = np.min([cell[m]["error"] for m in FL_METHODS[1:]], axis=0)
    return float((e / best).max())


def _fl_seeds(fl: dict[str, Any], part: str) -> dict[str, dict[str, Any]]:
    runs = fl.get(part, {})
    if not isinstance(runs, dict) or any(set(c) != set(FL_CELLS) for c in runs.values()):
        raise ValueError(f"Invalid federated results: {part!r} must map seeds to the cells {sorted(FL_CELLS)}")
    return runs


def fl_verdicts(fl: dict[str, Any]) -> Verdicts:
    """The headline against the federated-LoRA baselines run as federated algorithms (read from the committed
    ``bench/results/colora_fl.json``: the chapter's seed, and pilot seeds 9001–9010 for the basis)."""
    if not isinstance(fl, dict) or "cells" not in fl:
        raise TypeError("Invalid fl: need the dictionary of load_fl()")
    cells, pilot = fl["cells"], _fl_seeds(fl, "pilot")
    ratio = fl_ratio(cells["heterogeneous"])
    eta, tau, n = FL_CELLS["heterogeneous"]
    best, margin = fl_margin(cells["heterogeneous"])
    pr = [fl_ratio(pilot[s]["heterogeneous"]) for s in pilot]
    ph = [fl_ratio(pilot[s]["homogeneous"]) for s in pilot]
    pd = [fl_ratio(pilot[s]["dissimilar"]) for s in pilot]
    seeds = sorted(int(s) for s in pilot)
    span = f"{seeds[0]}–{seeds[-1]}" if seeds else "none"
    rng = (lambda xs: f"{min(xs):.3g}–{max(xs):.3g}" if xs else "none")  # noqa: E731
    same = (f"the same {FL_ROUNDS} rounds × {LOCAL_STEPS} local steps, initialisation and step-size grid "
            f"{FL_GRID}, each method's step size chosen by its own validation MSE ({N_VAL} held-out samples per "
            "client)")
    c, hom = cells["heterogeneous"], cells["homogeneous"]
    reps = len(c["colora"]["error"])
    errs = (lambda m, cell=c: ", ".join(f"{e:.3g}" for e in cell[m]["error"]))  # noqa: E731
    why_margin = (" — the statistical price of FedSA-LoRA's dr personal numbers per client against CoLoRA's r²"
                  if best == "fedsa" else "")
    v = Verdicts("CoLoRA: against federated LoRA baselines", display=False)
    v.less(f"η = {eta:g}, τ = {tau:g}, n = {n}: federated CoLoRA's error ÷ the best federated baseline's (FedAvg-, "
           f"FFA-LoRA, FedSA-LoRA at CoLoRA's rank r, per-client LoRA), worst of {reps} replicates", ratio, 1.0,
           kind="reproduces", source="paper", tests="fed-baselines",
           control=[Control(f"homogeneous tasks (η = 0, n = {FL_CELLS['homogeneous'][2]}): one global adapter is "
                            "the right model", fl_ratio(hom),
                            why="a world where FedAvg-LoRA must win: is the row measuring heterogeneity?",
                            tuned=same + f"; federated CoLoRA stalls here on {fl_stalls(hom)} of {reps} replicates "
                                         f"(error > 2× its least squares'); with its least squares the ratio is "
                                         f"{fl_ratio_als(hom):.3g}, still > 1"),
                    Control(f"dissimilar subspaces (τ = {FL_CELLS['dissimilar'][1]:g}, n = "
                            f"{FL_CELLS['dissimilar'][2]}): no shared pair fits", fl_ratio(cells["dissimilar"]),
                            why="a world where a personal model must win (the similarity the claim needs is absent)",
                            tuned=same)],
           basis=f"pilot: seeds {span} (bench/colora_fl.py --pilot) — the ratio {rng(pr)}, controls {rng(ph)} "
                 f"(η = 0) and {rng(pd)} (τ = 0.5); the bound 1 is the claim (a lower error); 20 unseen seeds "
                 "(7001–7020, --robust) are committed and checked by tests/test_colora.py",
           note=f"all run as federated algorithms, none sending more per round than CoLoRA's "
                f"{communicated(D, RANK)} numbers (FedSA-LoRA {communicated(D, RANK, 'fedsa')}, per-client LoRA "
                f"none); the best baseline is {FL_NAMES[best]}, whose error is ≥ {margin:.3g}× CoLoRA's on every "
                f"replicate{why_margin}. FedSA-LoRA runs at rank r: at 2r its personal V_i (2dr numbers) would "
                f"interpolate a client's {n} samples. Errors: "
                f"CoLoRA {errs('colora')}; "
                + "; ".join(f"{FL_NAMES[m]} {errs(m)}" for m in FL_METHODS[1:])
                + f"; CoLoRA by alternating least squares (pooled, not federated) {errs('colora_als')}")
    return v


def fl_robustness(fl: dict[str, Any]) -> dict[int, Verdicts]:
    """The federated row on each committed robustness seed (``fl["robustness"]``, written by ``bench/colora_fl.py
    --robust``): seed → its table, with the chapter's pilot as basis."""
    if not isinstance(fl, dict):
        raise TypeError("Invalid fl: need the dictionary of load_fl()")
    rob = _fl_seeds(fl, "robustness")
    return {int(s): fl_verdicts({"cells": cells, "pilot": fl.get("pilot", {})}) for s, cells in rob.items()}


def headline(res: SampledResults, fl: dict[str, Any] | None = None, *, display: bool = True) -> Verdicts:
    """The chapter's table: the derivation rows, the sampled rows and the federated comparison (``fl``, default the
    committed :func:`load_fl`), carrying ``PAPER_CLAIMS``."""
    if not isinstance(display, bool):
        raise TypeError(f"Invalid display: {display!r} (must be a bool)")
    v = Verdicts("CoLoRA — shared low-rank adapters, headline claims", display=display, claims=PAPER_CLAIMS)
    v.extend(derivation_verdicts())
    v.extend(sampled_verdicts(res))
    v.extend(fl_verdicts(load_fl() if fl is None else fl))
    return v


def seeded_verdicts(seed: int) -> Verdicts:
    """Exactly the sampled rows the chapter shows, for ``seed``."""
    return sampled_verdicts(sampled_results(integer("seed", seed, 0)))


def deterministic_verdicts() -> Verdicts:
    """The derivation rows (sympy, counts, and the sin Θ cross-check on the chapter's seed)."""
    return derivation_verdicts()
