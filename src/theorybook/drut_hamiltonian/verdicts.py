"""Every verdict row of the D-RUT chapter, each reproduction with its control.

The paper's text beyond the abstract could not be read, so its statements come from third-party audits
([secondary]); :data:`PAPER_CLAIMS` lists them. Builders:

* :func:`derivation_verdicts` — the sympy identities and the qutip peer check (computed by the chapter, passed in);
* :func:`deterministic_verdicts` — the Fock simulation, the recovery, the twirl and the kicks (Eq. 43 has no
  row: it holds by construction, :data:`PAPER_CLAIMS`);
* :func:`seeded_verdicts` — RPE vs Ramsey, the audit's two-mode run and SPAM for one seed;
* :func:`headline` — all three in the chapter's one table (it carries :data:`PAPER_CLAIMS`).

Tolerances (``basis=``) come from error models fixed before measuring: round-off and the coherent tail beyond the
Fock cutoff for the exact rows; for the sampled rows the Cramér–Rao bound of the schedule times the efficiency band
[1, 3] of the atan2 estimator (exact enumeration at S_J = 16, see the efficiency row) and CLT bands at a false-alarm
rate 1e-3. Round-off rows show the measured value (never a floor).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp
import torch

from ..check import Control, PaperClaim, Scan, Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import loglog_slope
from ..validate import integer
from .dynamics import CDTYPE, coherent_tail, displaced_twirled, kicked_evolution, vacuum_constant
from .estimation import crb, recover_tensor, rpe_schedule
from .experiment import (
    AUDIT_COEFFS,
    AUDIT_M,
    AUDIT_N,
    CHAPTER_COEFFS,
    CHAPTER_SEEDS,
    DEGREE,
    FLIP_REPS,
    N_FOCK,
    REPS,
    SPAM_FLIP,
    SPAM_FLIPS,
    SPAM_OFFSET,
    SPAM_OFFSETS,
    AuditStudy,
    ScalingStudy,
    SpamStudy,
    Z,
    _setup,
    audit_study,
    scaling_study,
    spam_study,
    vacuum_cumulants,
)

# derivation_verdicts / headline take the chapter's sympy results: not fuzzed, so not in __all__
__all__ = ["PAPER_CLAIMS", "EFFICIENCY", "deterministic_verdicts", "seeded_verdicts", "spam_ratios"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("heisenberg", "Displacement plus random unitary transformation learns every coefficient of a "
               "continuous-variable (bosonic) Hamiltonian at the Heisenberg limit: total evolution time O(1/ε) for "
               "RMSE ε.", where="abstract", source="paper", headline=True),
    PaperClaim("T1", "Theorem 1: for a generic multi-mode bosonic Hamiltonian of fixed degree, D-RUT with robust "
               "phase estimation reaches coefficient RMSE ε with total time O(1/ε).", where="Theorem 1",
               source="secondary"),
    PaperClaim("vacuum", "After displacement and the twirl the vacuum is an eigenstate of H_eff(β) with eigenvalue "
               "C(β) = Σ g_pq β̄^p β^q.", where="Eqs. 9–19", source="secondary", quoted_only=True,
               reason_class="no measurable consequence",
               why="an identity: D†HD is a polynomial of degree d in a, a†, so its vacuum column lives on |0⟩…|d⟩, "
                   "and any twirl with M > d phases (the exact one included) keeps only ⟨0|D†HD|0⟩ = ⟨β|H|β⟩ = "
                   "Σ g β̄^p β^q — every Hamiltonian of degree ≤ d satisfies it, and every M ≤ d fails it generically "
                   "(sceptic review: 1e-15 for M = 5 on random degree-4 H, residuals of order 1–10 for M = 1…4). "
                   "The simulation's agreement with it is a consistency row; what the twirl buys is measured by the "
                   "no-twirl ablations of the learning rows"),
    PaperClaim("spam", "Robust phase estimation tolerates bounded state-preparation and measurement errors.",
               where="Eqs. 20–25", source="secondary"),
    PaperClaim("eq43", "Design errors move the coefficients by at most ‖δg‖ ≤ (L_C/σ_min(K))‖δβ‖.", where="Eq. 43",
               source="secondary", quoted_only=True, reason_class="no measurable consequence",
               why="a norm inequality that holds by construction (a Lipschitz bound times the pseudo-inverse's "
                   "norm): any design and any C satisfy it, so a check of it tests nothing (the chapter shows the "
                   "ratio as an illustration, without a verdict)"),
    PaperClaim("T2", "Theorem 2: the first-quantised version reaches RMSE ε_G in Õ(1/ε_G), with a bisection for the "
               "squeezing parameter.", where="Theorem 2", source="secondary", quoted_only=True,
               why="first quantisation (learning the physical parameters of H(x̂, p̂) through a Bogoliubov/squeezing "
                   "parameter found by bisection) is known only from a paraphrase: Eqs. 77–78 and the theorem's "
                   "conditions (known zeros, a non-degenerate response to basis mismatch, a close-enough initial "
                   "guess) could not be read, so the protocol is not simulated here",
               reason_class="paper text unread"),
    PaperClaim("hier", "Hierarchical learning (single-mode terms first) has Cov_hier ⪯ Cov_sim.", where="App. A",
               source="secondary", quoted_only=True,
               why="App. A could not be read, and the secondary account gives neither its design nor its budget "
                   "split: on the same design points and shots, C = Kg + e is linear with independent errors, so "
                   "the simultaneous (noise-weighted) least-squares fit is the best linear unbiased estimator and "
                   "Gauss–Markov already gives Cov_sim ⪯ Cov_hier (a Monte Carlo of that would be true by "
                   "construction); the paper's ordering must rest on a different allocation (single-mode points, "
                   "cluster designs, shots per stage) that we cannot reconstruct",
               reason_class="paper text unread"),
)

#: The efficiency band of RPE: RMSE_C / CRB ∈ [1, 3]. Exact enumeration of the level-J atan2 estimator at S_J = 16
#: gives a variance 0.58–0.90/S_J against the CRB's 1/(2 S_J) of that level alone; a secondary prototype measured
#: 1.7. The upper end 3 propagates into every RMSE bound below (never fitted to this chapter's run).
EFFICIENCY = (1.0, 3.0)
SLOPE_BAND = 0.07
#: The SPAM scans' pilot (bench/drut_hamiltonian_spam.py, seeds 9001–9040; results in
#: bench/results/drut_hamiltonian_spam.json, which a test checks these against): each estimator's RMSE ÷ the row's
#: bound, worst over the scan, its largest (or smallest) value over the seeds, rounded outwards.
PILOT_SPAM = {"offset_rpe_max": 0.49, "offset_sched_max": 0.67, "offset_ramsey_min": 1309,
              "flip_rpe_max": 0.63, "flip_sched_min": 28.9, "flip_ramsey_min": 20.6, "flip_uniform_min": 13.7,
              "flip_rpe_02_above": 0}
EPS = float(np.finfo(np.float64).eps)

_SLOPE_BASIS = ("model: ±0.07 = slope s.e. ≈ 0.005 (each RMSE pools ≥ 64 × 27 errors, relative s.e. ≈ 2 %) × 3.3 "
                "+ the schedule S_j = 16 + 8(J − j) bending T_J/2^J (< 0.03) + one level-12 branch error (≈ 0.02, "
                "exact-enumeration probability 4e-8 per run)")


def derivation_verdicts(*, shift: Any, kerr: Any, normal_form: Any, twirl_values: Any, fisher: Any, spam: Any,
                        propagation: Any, qutip_gap: float) -> Verdicts:
    """The chapter's sympy rows (results of :mod:`theorybook.drut_hamiltonian.theory`) and the qutip peer check
    (``qutip_gap``: max |Δ| of D(β), and of H and D†HD relative to max |H|)."""
    v = Verdicts("D-RUT — derivations", display=False)
    v.equal("Hadamard series: D†(β) a D(β) − (a + β) (sympy, BosonOp)", shift, 0, kind="consistency",
            source="derived", note="nested commutators with non-commuting a, a†: the displaced Hamiltonian the "
                                   "simulation builds is the one the algebra assumes")
    v.equal("Kerr: (K/2) n(n−1) normal-orders to (K/2) a†²a²", kerr, 0, kind="consistency", source="derived")
    v.equal("normal form: vacuum value c_00 = C(β) = Σ g β̄^p β^q (generic degree 4)", normal_form.gap_vacuum, 0,
            kind="consistency", source="derived", note="the vacuum identity, symbolically (our derivation of the "
                                                        "secondary statement)")
    v.equal("normal form: E₁ − E₀ = c_11 = ∂_β∂_β̄ C, and every c_rs = ∂_β̄^r ∂_β^s C/(r!s!)",
            (normal_form.gap_one_quantum, normal_form.gap_taylor), (0, 0), kind="consistency", source="derived")
    v.equal("M-phase twirl keeps n ≡ m (mod M): values for M = 5, d = −12..12",
            [int(x) for _, x in twirl_values], [int(d % 5 == 0) for d in range(-12, 13)], kind="consistency",
            source="derived", note="sympy summation of the geometric series")
    t, T = sp.Symbol("t", positive=True), sp.Symbol("T", positive=True)
    v.equal("Fisher information of one X/Y pair = 2t²; Ramsey CRB = 1/√(Tt)", (fisher.I_pair, fisher.crb_ramsey),
            (2 * t**2, 1 / sp.sqrt(T * t)), kind="consistency", source="derived",
            note="the two limits the sampled rows compare: RPE's CRB ∝ 1/T, Ramsey's ∝ 1/√T")
    j, t0, eps = sp.Symbol("j", integer=True, nonnegative=True), sp.Symbol("t_0", positive=True), \
        sp.Symbol("epsilon", positive=True)
    v.equal("flip leaves Y/X (hence atan2) unchanged; offset bias at level j = ε/(2^j t₀)",
            (spam.ratio_gap, spam.offset_bias), (0, eps / (2**j * t0)), kind="consistency", source="derived")
    v.equal("error propagation: tr(K⁺K⁺ᵀ) = tr((KᵀK)⁻¹) (symbolic 3×2 K)", propagation, 0, kind="consistency",
            source="derived")
    v.less("qutip peer: max |Δ| of D(β), and of H and D†HD relative to max |H| (N = 30, outermost β)",
           float(qutip_gap), 1e-12, kind="consistency", source="derived",
           basis="model: double round-off of a 30 × 30 expm and two products, ≈ N·ε ≈ 7e-15 relative, with "
                 "two orders of margin for the different expm algorithms",
           note="qutip.displace / destroy vs our torch matrices")
    return v


def _eigen_residual(H: torch.Tensor, C: torch.Tensor) -> float:
    """max over design points of ‖H|0⟩ − C|0⟩‖ (the vacuum eigen-equation)."""
    col = H[..., :, 0].clone()
    col[..., 0] -= C.to(col.dtype)
    return float(torch.linalg.vector_norm(col, dim=-1).max())


def deterministic_verdicts() -> Verdicts:
    """Rows without sampling: the vacuum eigen-equation (control: no twirl), the recovery, the twirl algebra on the
    Fock space and the random-kick cumulants."""
    dev = resolve_device(None)
    with one_thread(dev):
        return _deterministic(dev)


def _deterministic(dev: torch.device) -> Verdicts:
    v = Verdicts("D-RUT — exact rows (Fock simulation, recovery, controls)", display=False)
    s1, s2 = _setup("single", str(dev)), _setup("audit", str(dev))
    b = s1.design.beta
    H = displaced_twirled(CHAPTER_COEFFS, b, n_fock=N_FOCK, device=dev)
    H1 = displaced_twirled(CHAPTER_COEFFS, b, n_fock=N_FOCK, n_phases=1, device=dev)
    Cf1 = vacuum_constant(CHAPTER_COEFFS, b, device=dev)
    hmax1 = float(H.abs().max())
    tail1 = float(coherent_tail(b.abs(), N_FOCK).max())
    bound1 = hmax1 * (tail1 + N_FOCK * EPS) * 10
    # The exact U(1) twirl (and the audit's 13 > N phases per mode) leaves a diagonal H_eff: its vacuum is an
    # eigenstate by construction and its eigenvalue ⟨β|H|β⟩ = Σ g β̄^p β^q is the normal-ordered symbol (the sympy
    # row above). A finite twirl with M = degree + 1 phases is no different (sceptic review): D†HD has degree d, so its
    # vacuum column lives on |0⟩…|d⟩ and the mask n ≡ m (mod M > d) removes all of it but ⟨0|D†HD|0⟩ — true for
    # every degree-d Hamiltonian. The row below checks our simulation (expm, cutoff, mask) against the identity.
    b2 = s2.design.beta
    hmax2 = float(displaced_twirled(AUDIT_COEFFS, b2, n_fock=AUDIT_N, n_phases=AUDIT_M, device=dev).abs().max())
    bound2 = hmax2 * (float(coherent_tail(b2.abs(), AUDIT_N).max()) * 2 + AUDIT_N**2 * EPS) * 10  # two modes
    M5 = displaced_twirled(CHAPTER_COEFFS, b, n_fock=N_FOCK, n_phases=DEGREE + 1, device=dev)
    M2 = displaced_twirled(CHAPTER_COEFFS, b, n_fock=N_FOCK, n_phases=2, device=dev)
    v.less(f"vacuum eigen-equation under a finite twirl: max ‖H_eff|0⟩ − C(β)|0⟩‖ over the {b.numel()} one-mode "
           f"design points, M = degree + 1 = {DEGREE + 1} phases (N = {N_FOCK})", _eigen_residual(M5, Cf1), bound1,
           kind="consistency", source="derived",
           control=[Control("no twirl (M = 1): D†HD itself", _eigen_residual(H1, Cf1),
                            why="the ablation: displacement without the random-unitary twirl",
                            tuned="none needed: same design points, cutoff and Hamiltonian"),
                    Control("a twirl with too few phases: M = 2 (parity)", _eigen_residual(M2, Cf1),
                            why="the cheapest twirl, below the claim's M > degree: it keeps even offsets such as "
                                "⟨2|D†HD|0⟩ from the squeezing and Kerr terms",
                            tuned="none needed: same design points, cutoff and Hamiltonian")],
           basis=f"model: 10 × max|H| × (coherent weight beyond N + N·ε) = 10 × {hmax1:.0f} × ({tail1:.1e} + "
                 f"{N_FOCK * EPS:.1e}): truncation plus double round-off of expm and two products",
           note="the M-phase mask is the literal average over rotations (consistency row below). A consistency "
                "row, not evidence for the paper (sceptic review): for any Hamiltonian of degree ≤ 4, M = 5 phases "
                "leave exactly ⟨0|D†HD|0⟩ = ⟨β|H|β⟩ in the vacuum column (an independent numpy check on random "
                "degree-4 H: 1e-15), and M ≤ 4 fails generically — the controls fail by construction too. With "
                "the exact twirl H_eff is diagonal (no row); the audit's two-mode run twirls with 13 > N = 11 "
                "phases per mode, diagonal as well (no row). Without the twirl the vacuum leaks into the first "
                "levels (the audit: off-diagonal norm 12.6 on its own model)")
    d2 = sum(g * p * q * b.conj() ** (p - 1) * b ** (q - 1) for (p, q), g in CHAPTER_COEFFS.items()
             if p > 0 and q > 0).real
    v.less("E₁ − E₀ of H_eff = ∂_β∂_β̄ C at the design points", float(((H[:, 1, 1] - H[:, 0, 0]).real - d2).abs().max()),
           bound1, kind="consistency", source="derived",
           basis="model: as for the vacuum eigen-equation (same matrices, one more entry)",
           note="the one-quantum coefficient of the normal-ordered form: the simulation agrees with the sympy "
                "derivation beyond the vacuum")
    e1 = float((recover_tensor(s1.C, s1.design) - s1.g).abs().max())
    e2 = float((recover_tensor(s2.C, s2.design) - s2.g).abs().max())
    cond = max(float(torch.linalg.cond(s.design.K)) for s in (s1, s2))
    gmax = max(float(s.g.abs().max()) for s in (s1, s2))
    v.less("Algorithm 1 on exact C recovers all 15 g_pq (one mode, degree 4) and 15 (two modes, degree 2), max |Δ|",
           max(e1, e2), 10 * cond * (bound1 + bound2 + EPS * gmax), kind="consistency", source="derived",
           basis=f"model: 10 × cond(K) = 10 × {cond:.0f} times the error of C (the two eigen-equation bounds) and "
                 "the round-off of g",
           note="our implementation of the secondary Algorithm 1 (IDFT over angles + radial least squares): the "
                "design is invertible for every key, so the sampled rows' errors are sampling errors, not blind "
                "directions of the design")
    lsq = s1.C.to(CDTYPE) @ s1.Kpinv.mT  # the cached pseudo-inverse (one LAPACK call per process: repeatable)
    v.less("IDFT + radial fit = least squares K⁺C (max |Δ|)", float((recover_tensor(s1.C, s1.design) - lsq)
                                                                   .abs().max()),
           10 * cond * EPS * float(s1.C.abs().max()), kind="consistency", source="derived",
           basis="model: 10 × cond(K) × ε × max|C| (two backward-stable solvers of the same system)",
           note="equally spaced angles make the DFT orthogonal")
    off5 = M5 - torch.diag_embed(M5.diagonal(dim1=-2, dim2=-1))
    v.greater("… but not the truncated matrix: off-diagonal Frobenius norm at M = 5 (max over the design)",
              float(torch.linalg.matrix_norm(off5).max()), 0.1, kind="consistency", source="derived",
              basis="model: the cutoff distorts entries ⟨n|D†HD|m⟩ near N of size ≈ |g|·N·|β|, ≫ 0.1; a norm "
                    "below 0.1 would mean the mask, not the truncation, is wrong",
              note="truncation fills |n − m| ≡ 0 mod 5 near the cutoff; M ≥ N clears it")
    M = 4
    n_hat = torch.arange(N_FOCK, dtype=torch.float64, device=dev)
    HD = displaced_twirled(CHAPTER_COEFFS, b[:3], n_fock=N_FOCK, n_phases=1, device=dev)
    avg = sum(torch.diag(torch.exp(1j * 2 * math.pi * k / M * n_hat)) @ HD
              @ torch.diag(torch.exp(-1j * 2 * math.pi * k / M * n_hat)) for k in range(M)) / M
    masked = displaced_twirled(CHAPTER_COEFFS, b[:3], n_fock=N_FOCK, n_phases=M, device=dev)
    v.less("M-phase twirl: (1/M) Σ_k R_k† H R_k = mask n ≡ m (mod M), M = 4", float((avg - masked).abs().max()),
           10 * M * N_FOCK * EPS * float(HD.abs().max()), kind="consistency", source="derived",
           basis="model: 10 × M·N·ε·max|H|: M conjugations by diagonal phases, each row sum of N products",
           note="the mask the learning runs use is the literal average over rotations")
    C0 = displaced_twirled(AUDIT_COEFFS, torch.zeros_like(b2), n_fock=AUDIT_N, n_phases=AUDIT_M,
                           device=dev)[:, 0, 0].real
    rm0 = float(((recover_tensor(C0, s2.design) - s2.g).abs() ** 2).mean().sqrt())
    v.close("no displacement (two modes): RMSE_g = RMS of the non-constant coefficients", float(f"{rm0:.13g}"),
            float(((s2.g.abs() ** 2).sum() / s2.g.numel()).sqrt()), rtol=1e-9, kind="consistency",
            source="derived", basis="model: round-off of a 100-point least-squares fit (cond(K) ≈ 8) ≪ 1e-9",
            note="every C equals g_00, so only the offset is learned (the audit: RMSE 0.10 on its model) — why the "
                 "displacement is needed")
    k1, k2, k3, k4 = vacuum_cumulants(device=dev)
    dt, t_end = 0.05, 20.0
    kr = kicked_evolution(CHAPTER_COEFFS, b[-len(s1.design.angles)], dt=dt, n_steps=int(t_end / dt),
                          n_fock=N_FOCK, device=dev)
    contrast = float(kr.exact[-1].abs())
    pred = math.exp(-k2 * dt * t_end / 2 + k4 * dt**3 * t_end / 24)
    v.close("random-kick twirl (dt = 0.05, t = 20): contrast |⟨0|U|0⟩| = exp(−κ₂ dt t/2 + κ₄ dt³ t/24)",
            float(f"{contrast:.9g}"), pred, rtol=abs(k4) * dt**3 * t_end / 24, kind="consistency", source="derived",
            basis="model: the last kept term of the cumulant series (the remainder is O(κ₆ dt⁵ t))",
            note="exact average over the kicks u₀₀^n; cumulants of D†HD in the vacuum: the kicked twirl is faithful "
                 "at short times only")
    phase = float(torch.angle(kr.exact[-1] / kr.ideal[-1]))
    v.close("random-kick twirl (dt = 0.05, t = 20): phase error = κ₃ dt² t/6", float(f"{phase:.9g}"),
            k3 * dt**2 * t_end / 6, rtol=0.1, kind="consistency", source="derived",
            basis="model: next term O(κ₅ dt⁴ t), a few % of the kept one at dt = 0.05")
    return v


def seeded_verdicts(seed: int, *, studies: tuple[ScalingStudy, AuditStudy, SpamStudy] | None = None) -> Verdicts:
    """The chapter's statistical rows for ``seed``: RPE vs Ramsey (one mode and the audit's two modes), the
    coefficient RMSE against the CRB-based bound, and SPAM. ``studies``: the chapter's own runs for this seed
    (``scaling_study``, ``audit_study``, ``spam_study`` with ``SPAM_FLIPS``/``SPAM_OFFSETS`` among their values)."""
    seed = integer("seed", seed, 0)
    if studies is None:
        studies = (scaling_study(seed), audit_study(seed),
                   spam_study(seed, flips=SPAM_FLIPS, offsets=SPAM_OFFSETS))
    sc, au, sp_ = studies
    if not (isinstance(sc, ScalingStudy) and isinstance(au, AuditStudy) and isinstance(sp_, SpamStudy)):
        raise TypeError("Invalid studies: must be (ScalingStudy, AuditStudy, SpamStudy)")
    return _seeded_rows(sc, au, sp_)


def spam_ratios(study: SpamStudy) -> tuple[np.ndarray, np.ndarray]:
    """The SPAM rows' statistics: each estimator's RMSE of C (rows RPE, Ramsey atan2, Ramsey arccos, RPE's schedule
    read by arccos, RPE with uniform shots) divided by the row's bound — ``ε/2^J + 3·CRB`` at each offset of
    :data:`SPAM_OFFSETS`, and ``3·CRB/(1 − 2δ)`` at each flip of :data:`SPAM_FLIPS` (J = 12). Returns
    ``(offsets (5, 3), flips (5, 3))``."""
    if not isinstance(study, SpamStudy):
        raise TypeError(f"Invalid study: {type(study).__name__} (must be a SpamStudy)")
    missing = [x for x in SPAM_OFFSETS if x not in list(study.offsets)] + [
        x for x in SPAM_FLIPS if x not in list(study.flips)]
    if missing:
        raise ValueError(f"Invalid study: values {missing} missing (need offsets {SPAM_OFFSETS}, flips {SPAM_FLIPS})")
    cap = EFFICIENCY[1] * crb(rpe_schedule(12), 12)
    ro = study.rms_offset[:, [list(study.offsets).index(e) for e in SPAM_OFFSETS]] / np.array(
        [e / 2**12 + cap for e in SPAM_OFFSETS])
    rf = study.rms_flip[:, [list(study.flips).index(f) for f in SPAM_FLIPS]] / np.array(
        [cap / (1 - 2 * f) for f in SPAM_FLIPS])
    return ro, rf


def _seeded_rows(sc: ScalingStudy, au: AuditStudy, sp_: SpamStudy) -> Verdicts:
    v = Verdicts("D-RUT — sampled rows (RPE, Ramsey, SPAM)", display=False)
    s = _setup("single", str(resolve_device(None)))
    slope = loglog_slope(sc.T, sc.rmse_rpe).slope
    rslope = loglog_slope(sc.T, sc.rmse_ramsey).slope
    ntslope = loglog_slope(sc.T, sc.rmse_notwirl).slope
    v.between("Heisenberg limit (one mode): RPE log-RMSE vs log-T slope, J = 4…12", slope, -1 - SLOPE_BAND,
              -1 + SLOPE_BAND, kind="reproduces", source="paper", tests="heisenberg",
              control=[Control("Ramsey, all shots at t = 1, same total times", rslope,
                               why="the rival law: the standard quantum limit (slope −1/2) of the textbook "
                                   "estimator",
                               tuned="none needed: same total times and shots as RPE"),
                       Control("no twirl (M = 1): RPE on the vacuum signal of the untwirled D†HD", ntslope,
                               why="the ablation of the paper's credited mechanism: RPE (Kimmel, Low & Yoder 2015) "
                                   "is prior art; D-RUT's part is the twirl that makes the displaced vacuum an "
                                   "eigenstate",
                               tuned="none needed: same schedule, shots, total times and design as RPE")],
              basis=_SLOPE_BASIS,
              note="audit −0.999 [secondary]; the first control is the standard quantum limit's estimator. Without "
                   "the twirl RPE locks onto an eigenphase of D†HD that is not C(β): its RMSE stays at "
                   f"{sc.rmse_notwirl.min():.2f}–{sc.rmse_notwirl.max():.2f} at every depth (sceptic review)")
    v.between("Ramsey (all shots at t = 1, equal T) sits at the standard quantum limit: slope, J = 4…12", rslope,
              -0.5 - SLOPE_BAND, -0.5 + SLOPE_BAND, kind="consistency", source="derived",
              basis="model: as for RPE (s.e. ≈ 0.005; Ramsey has no schedule bend and no branch errors)",
              note="the control of the Heisenberg row behaves as its Fisher information says (audit −0.493)")
    bound_g = EFFICIENCY[1] * sc.crb[-1] * sc.trace_factor
    v.less("Theorem 1: coefficient RMSE at J = 12 (15 complex g_pq, 64 replicates)", sc.rmse_g, bound_g,
           kind="reproduces", source="secondary", tests="T1",
           control=[Control("Ramsey at the same total time", sc.rmse_g_ramsey,
                            why="the textbook estimator a practitioner runs at the same total evolution time",
                            tuned="none needed: same total time, shots and design"),
                    Control("no twirl (M = 1): RPE on the untwirled vacuum signal", sc.rmse_g_notwirl,
                            why="the ablation of the paper's credited mechanism (the twirl)",
                            tuned="none needed: same schedule, shots, total time and design as RPE")],
           basis=f"model: 3 × CRB(J = 12) × √(tr A/p) = 3 × {sc.crb[-1]:.2e} × {sc.trace_factor:.2f} (the "
                 "efficiency band's upper end, propagated by K⁺)",
           note="Theorem 1's Heisenberg-limited coefficients at this time budget; Ramsey misses the same bound")
    ratio = sc.rmse_rpe[-1] / sc.crb[-1]
    v.between("RPE efficiency: RMSE_C / CRB at J = 12, CRB = (Σ_j 2 S_j t_j²)^(−1/2)", ratio, *EFFICIENCY,
              kind="consistency", source="derived",
              basis="model: exact enumeration of the level-J atan2 estimator (S_J = 16): variance 0.58–0.90/S_J "
                    "against the CRB's 1/(2 S_J) per level; a secondary prototype measured 1.7",
              note="the constant in front of the 1/T law; every RMSE bound of this table uses its upper end")
    A = to_numpy(s.A)
    Aoff = A - np.diag(np.diag(A))
    rel_sd = math.sqrt(2 * float((Aoff**2).sum()) / REPS) / float(np.trace(A)) * (0.90 / 0.58)
    v.close("RMSE_g² = Σ_i A_ii MSE_i / p, A = Re(K⁺ᴴK⁺) (independent errors at the design points), J = 12",
            sc.rmse_g**2, sc.rmse_g_pred**2, rtol=Z * rel_sd, kind="consistency", source="derived",
            basis=f"model: the cross terms Σ_(i≠j) A_ij e_i e_j have mean 0 and variance 2Σ A_ij² σ_i²σ_j² per "
                  f"replicate; rtol = z(1e-3) × that s.d. over 64 replicates (σ_i² ratio ≤ 0.90/0.58) = "
                  f"{Z * rel_sd:.3f}",
            note="the propagation C → g the bounds use")
    aslope = loglog_slope(au.T, au.rmse_C).slope
    araslope = loglog_slope(au.T, au.rmse_C_ramsey).slope
    v.between("audit two-mode run (degree 2, N = 11, 13-phase twirl, 256 shots, 24 reps): RPE slope, J = 6…12",
              aslope, -1 - SLOPE_BAND, -1 + SLOPE_BAND, kind="reproduces", source="secondary", tests="T1",
              control=[Control("Ramsey at the same total times", araslope,
                               why="the rival law: the standard quantum limit (slope −1/2) of the textbook "
                                   "estimator",
                               tuned="none needed: same total times and shots as RPE"),
                       Control("no twirl (M = 1): RPE on the vacuum signal of the untwirled two-mode D†HD",
                               loglog_slope(au.T, au.rmse_C_notwirl).slope,
                               why="the ablation of the paper's credited mechanism (the twirl); RPE is prior art",
                               tuned="none needed: same schedule, 256 shots, total times, design and replicates as "
                                     "RPE")], basis=_SLOPE_BASIS,
              note="audit −0.999; 100 design points × 24 replicates per RMSE; branch errors < 1e-70 per run at 256 "
                   "shots. Without the twirl RPE's RMSE_C stays at "
                   f"{au.rmse_C_notwirl.min():.2f}–{au.rmse_C_notwirl.max():.2f} at every depth (sceptic review)")
    bound_ga = EFFICIENCY[1] * au.crb[-1] * au.trace_factor
    v.less("audit two-mode run: coefficient RMSE at J = 12", au.rmse_g[-1], bound_ga, kind="reproduces",
           source="secondary", tests="T1",
           control=[Control("Ramsey at the same total time", au.rmse_g_ramsey[-1],
                            why="the textbook estimator a practitioner runs at the same total evolution time",
                            tuned="none needed: same total time, shots and design"),
                    Control("no twirl (M = 1): RPE on the untwirled two-mode vacuum signal", au.rmse_g_notwirl[-1],
                            why="the ablation of the paper's credited mechanism (the twirl)",
                            tuned="none needed: same schedule, 256 shots, total time, design and replicates as "
                                  "RPE")],
           basis=f"model: 3 × CRB(256 shots, J = 12) × √(tr A/p) = 3 × {au.crb[-1]:.2e} × {au.trace_factor:.2f}",
           note="audit: 5.5e-5 at T ≈ 1.3e8 (its design, not ours)")
    i_o = list(sp_.offsets).index(SPAM_OFFSET)
    i_f = list(sp_.flips).index(SPAM_FLIP)
    crb_J = crb(rpe_schedule(12), 12)  # the SPAM runs' schedule
    cap = EFFICIENCY[1] * crb_J
    n = sp_.n_samples
    se = math.sqrt(2.0 / sp_.time) / math.sqrt(n)  # s.d. of one Ramsey estimate ≤ √(2/T) (atan2, δ = 0)
    se_f = math.sqrt(2.0 / sp_.time) / math.sqrt(sp_.n_flip_samples)  # the flip study's replicates
    P = PILOT_SPAM
    ro, rf = spam_ratios(sp_)  # (estimator, ε) and (estimator, δ): RMSE ÷ the row's bound
    show = (lambda r: ", ".join(f"{x:.2f}" for x in r))  # noqa: E731
    v.less(f"SPAM offset: RPE's RMSE_C at J = 12 ÷ (ε/2^J + 3·CRB), worst over ε ∈ {{{show(SPAM_OFFSETS)}}}",
           float(ro[0].max()), 1.0, kind="not_specific", source="secondary", tests="spam",
           control=[Control("Ramsey (atan2) at the same total time and offsets", float(ro[1].max()),
                            why="the textbook estimator at the same total time and the same ancilla offset",
                            tuned="none needed: same total time, shots and offsets (Ramsey's single time t = 1)"),
                    Control("RPE's own schedule read by the naive arccos (same shots, times, branch tracking)",
                            float(ro[3].max()),
                            why="the ablation of RPE's estimator: any estimator that tracks the branch out to "
                                "t_J = 2^J divides the offset by t_J — is the tolerance RPE's, or the schedule's?",
                            tuned="none needed: same schedule, shots, total time and offsets as RPE")],
           scan=Scan("ancilla phase offset ε", SPAM_OFFSETS, tuple(float(x) for x in ro[0])),
           basis=f"model: bias ε/2^J + 3 × CRB = ε/4096 + {cap:.1e} (the efficiency band's upper end); pilot seeds "
                 f"9001–9040 (bench/drut_hamiltonian_spam.py): RPE's worst ratio ≤ {P['offset_rpe_max']}, the "
                 f"arccos schedule's ≤ {P['offset_sched_max']}, Ramsey's ≥ {P['offset_ramsey_min']:.0f}",
           note="holds for RPE, and as well for the naive arccos on RPE's schedule (ratios per ε: RPE "
                f"{show(ro[0])}; arccos schedule {show(ro[3])}; Ramsey {show(ro[1])}): the offset is divided by the "
                "long times of the schedule, which any branch-tracking estimator shares — what this row shows is a "
                "property of the Heisenberg schedule, not of RPE's estimator. A branch error needs "
                "|2e_(j−1) − e_j + ε| > π; Ramsey carries the whole offset ε/t")
    v.close(f"SPAM: Ramsey mean error with offset ε = {SPAM_OFFSET:g} equals ε/t", sp_.mean_offset[1, i_o],
            SPAM_OFFSET, atol=Z * se, kind="consistency", source="derived",
            basis="model: mean of n independent estimates, each with s.d. ≤ √(2/T); atol = z(1e-3) s.e.")
    vis = 1 - 2 * SPAM_FLIP
    v.less(f"SPAM flip: RPE's RMSE_C at J = 12 ÷ 3·CRB/(1 − 2δ), worst over δ ∈ {{{show(SPAM_FLIPS)}}}",
           float(rf[0].max()), 1.0, kind="reproduces", source="secondary", tests="spam",
           control=[Control("RPE's own schedule read by the naive arccos (same shots, times, branch tracking)",
                            float(rf[3].max()),
                            why="the ablation of RPE's estimator: what the schedule alone tolerates when each "
                                "level's phase is read as arccos of the shrunken ⟨X⟩",
                            tuned="none needed: same schedule, shots, total time and flips as RPE"),
                    Control("Ramsey (atan2) at the same total time and flips", float(rf[1].max()),
                            why="the textbook estimator at the same total time: unbiased under a symmetric flip, "
                                "but at the standard quantum limit",
                            tuned="none needed: same total time, shots and flips (Ramsey's single time t = 1)"),
                    Control("RPE (atan2) with uniform shots: the same number at every level, same total time",
                            float(rf[4].max()),
                            why="the ablation of RPE's shot allocation S_j = 16 + 8(J − j): is the tolerance the "
                                "estimator's alone, or does it need the extra shots at the coarse levels, whose "
                                "wrap errors are the costly ones?",
                            tuned="none needed: same levels, estimator, flips and total time (24 shots per level "
                                  "at J = 12, within 0.1 % of the schedule's time)")],
           scan=Scan("readout flip rate δ", SPAM_FLIPS, tuple(float(x) for x in rf[0])),
           basis=f"model: 3 × CRB/(1 − 2δ) (the flip shrinks the contrast; atan2 is unbiased); pilot seeds "
                 f"9001–9040 (bench/drut_hamiltonian_spam.py): RPE's worst ratio over the scan ≤ "
                 f"{P['flip_rpe_max']}, the arccos schedule's ≥ {P['flip_sched_min']}, Ramsey's ≥ "
                 f"{P['flip_ramsey_min']}, uniform shots' ≥ {P['flip_uniform_min']} — at {FLIP_REPS} replicates per "
                 "flip, fixed on the pilot because at 64 the uniform-shot control's one branch error was a coin flip "
                 "(it passed on 15 of 40 pilot seeds, median worst ratio 9.0). The scan stops at δ = 0.15, fixed at "
                 "64 replicates where RPE's own "
                 "branch decisions began to fail at δ = 0.2 (1 of 40 pilot seeds); at 512 RPE stays below the bound "
                 f"there on {40 - P['flip_rpe_02_above']} of 40 (worst 0.94) — the scan was not widened. Sceptic "
                 "review, after the pilot: on 20 seeds outside it (8999–9000, 9201–9203, 424242–424256) every row "
                 "held but the uniform-shot control came as close as 1.83 (the pilot's ≥ 13.7 overstates its "
                 "margin); an independent numpy RPE at 512 replicates misses the row with uniform shots on 100 of "
                 "100 seeds (lowest 3.65; 7.3 branch errors a seed at δ = 0.15), and RPE's own ratio at δ = 0.2 "
                 "exceeds the bound on 1 of 22 seeds (1.51)",
           note=f"ratios per δ: RPE {show(rf[0])}; arccos schedule {show(rf[3])}; Ramsey {show(rf[1])}; uniform shots "
                f"{show(rf[4])}. The naive "
                "estimator reads (1 − 2δ)cos φ as cos φ, biased at first order in δ; at each level that bias "
                "triggers branch errors on the long times — rarely at δ ≤ 0.1 (it passes there on some seeds), "
                "always at 0.15. 'Tolerates' here means reading both quadratures (atan2), for symmetric flips. "
                f"Naive arccos Ramsey at t = 1, δ = {SPAM_FLIP:g}: {sp_.rms_flip[2, i_f]:.2e}")
    v.close(f"SPAM: Ramsey (atan2) mean error with flip δ = {SPAM_FLIP:g} is 0", sp_.mean_flip[1, i_f], 0.0,
            atol=Z * se_f / vis, kind="consistency", source="derived",
            basis="model: ⟨X⟩, ⟨Y⟩ shrink alike; per-estimate s.d. ≤ √(2/T)/(1 − 2δ); atol = z(1e-3) s.e.")
    v.close(f"SPAM: naive arccos mean error with flip δ = {SPAM_FLIP:g} = mean of sign(C)·arccos((1−2δ)cos C) − C",
            sp_.mean_flip[2, i_f], sp_.arccos_bias_pred[i_f], atol=Z * se_f / vis, kind="consistency",
            source="derived", basis="model: delta method: s.d. of arccos(X̄) ≤ √(2/T)/(1 − 2δ) away from C = 0 "
                                    "(|C| > 0.05 keeps sign(Ȳ) right); atol = z(1e-3) s.e.")
    return v


def headline(derivations: Mapping[str, Any], seed: int = CHAPTER_SEEDS[0], *,
             studies: tuple[ScalingStudy, AuditStudy, SpamStudy] | None = None, display: bool = True) -> Verdicts:
    """The chapter's table: derivations (keywords of :func:`derivation_verdicts`), exact rows and sampled rows."""
    v = Verdicts("D-RUT Hamiltonian learning — headline claims", display=display, claims=PAPER_CLAIMS)
    v.extend(derivation_verdicts(**derivations))
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed, studies=studies))
    return v
