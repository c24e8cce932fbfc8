"""The chapter's experiments and verdict rows: Heisenberg scaling of RPE vs Ramsey, the audit's two-mode run,
SPAM, and the error propagation from ``C`` to ``g`` (torch; the exact Fock simulation is cached per device).

Models (our choice of numbers, [reconstruction] of the secondary protocol):

* one mode, ``N = 30``: ``H = ω a†a + (K/2) a†²a² + (g a† + ḡ a) + (λ a² + λ̄ a†²)``, ``ω = 1``, ``K = 0.2``,
  ``g = 0.3 + 0.1i``, ``λ = 0.05 − 0.02i``, learned as a generic degree-4 Hamiltonian (15 coefficients) from
  3 Chebyshev radii in [0.15, 0.65] × 9 angles;
* two modes, ``N = 11`` per mode, total degree 2 (14 real parameters plus the energy offset), an exact 13-phase
  cyclic twirl per mode, RPE levels 6–12 with 256 shots per basis, 24 replicates (the audit's setting).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import torch

from ..check import Verdicts, z_threshold
from ..device import one_thread, resolve_device, to_numpy
from ..fit import loglog_slope
from ..validate import integer, number, scalar
from .dynamics import (
    CDTYPE,
    Design,
    _as_complex,
    crb,
    design,
    displaced_twirled,
    kicked_evolution,
    ramsey,
    recover_tensor,
    rpe,
    rpe_schedule,
    true_vector,
    vacuum_constant,
)

__all__ = [
    "AUDIT_COEFFS", "AUDIT_REPORTED", "CHAPTER_COEFFS", "CHAPTER_SEEDS", "AuditStudy", "ScalingStudy", "SpamStudy",
    "audit_study", "chapter_coeffs", "deterministic_verdicts", "eq43_ratios", "scaling_study", "seeded_verdicts",
    "spam_study", "vacuum_cumulants",
]

CHAPTER_SEEDS = (20261,)
OMEGA, KERR, G, LAM = 1.0, 0.2, 0.3 + 0.1j, 0.05 - 0.02j
N_FOCK = 30
DEGREE = 4
JS = tuple(range(4, 13))
REPS = 64
AUDIT_N, AUDIT_M, AUDIT_JS, AUDIT_SHOTS, AUDIT_REPS = 11, 13, tuple(range(6, 13)), 256, 24
SPAM_FLIP, SPAM_OFFSET = 0.1, 0.1
Z = z_threshold(1e-3)
#: Numbers a third-party audit reports for its own re-simulation [secondary] (other coefficients and design).
AUDIT_REPORTED = {"slope_rpe": -0.999, "slope_ramsey": -0.493, "finest_rmse": 5.5e-5, "finest_T": 1.3e8,
                  "nodisp_rmse": 0.10, "notwirl_offnorm": 12.6}


def chapter_coeffs(omega: float = OMEGA, kerr: float = KERR, g: complex = G, lam: complex = LAM) -> dict:
    """``{(p, q): g_pq}`` of ``ω a†a + (K/2) a†²a² + (g a† + ḡ a) + (λ a² + λ̄ a†²)``."""
    omega = number("omega", omega, -1e6, 1e6)
    kerr = number("kerr", kerr, -1e6, 1e6)
    g, lam = _as_complex("g", g), _as_complex("lam", lam)
    return {(1, 1): omega, (2, 2): kerr / 2, (1, 0): g, (0, 1): g.conjugate(),
            (0, 2): lam, (2, 0): lam.conjugate()}


CHAPTER_COEFFS = chapter_coeffs()


def _pair(key, val):
    p, q = key
    return {(p, q): val, (q, p): complex(val).conjugate()}


AUDIT_COEFFS = {
    ((1, 0), (1, 0)): 1.0, ((0, 1), (0, 1)): 0.8,
    **_pair(((1, 0), (0, 1)), 0.15 + 0.05j),   # beam splitter a₁†a₂ + h.c.
    **_pair(((0, 0), (1, 0)), 0.2 - 0.1j),     # drive on mode 1
    **_pair(((0, 0), (0, 1)), 0.1 + 0.05j),    # drive on mode 2
    **_pair(((0, 0), (2, 0)), 0.04 + 0.01j),   # squeezing a₁²
    **_pair(((0, 0), (0, 2)), 0.03 - 0.02j),   # squeezing a₂²
    **_pair(((0, 0), (1, 1)), 0.05 + 0.02j),   # two-mode squeezing a₁a₂
}


class _Setup(NamedTuple):
    design: Design
    C: torch.Tensor          # vacuum entry of the simulated H_eff at the design points
    g: torch.Tensor          # true coefficients on the design's keys
    Kpinv: torch.Tensor      # K⁺ (complex), so ĝ = C K⁺ᵀ
    A: torch.Tensor          # Re(K⁺ᴴ K⁺): ‖K⁺e‖² = eᵀAe for real errors e


@functools.lru_cache(maxsize=4)
def _setup(kind: str, device: str) -> _Setup:
    dev = torch.device(device)
    with one_thread(dev):
        if kind == "single":
            d = design(DEGREE, device=dev)
            H = displaced_twirled(CHAPTER_COEFFS, d.beta, n_fock=N_FOCK, device=dev)
            g = true_vector(CHAPTER_COEFFS, d)
        else:
            d = design(2, modes=2, device=dev)
            H = displaced_twirled(AUDIT_COEFFS, d.beta, n_fock=AUDIT_N, n_phases=AUDIT_M, device=dev)
            g = true_vector(AUDIT_COEFFS, d)
        Kp = torch.linalg.pinv(d.K)
        A = (Kp.mH @ Kp).real
    return _Setup(d, H[..., 0, 0].real.contiguous(), g, Kp, A)


def _ghat(C: torch.Tensor, s: _Setup) -> torch.Tensor:
    return C.to(CDTYPE) @ s.Kpinv.mT


class ScalingStudy(NamedTuple):
    """One mode: RMSE of ``C`` (over replicates × design points) for RPE at ``J ∈ Js`` and for Ramsey at the same
    total times ``T`` (per design point), the schedule's CRB, and at the deepest ``J``: ``rmse_g``, the per-point
    MSEs ``mse_points`` and the prediction ``rmse_g_pred`` = ``√(Σ_i A_ii MSE_i / p)``."""

    Js: tuple[int, ...]
    T: np.ndarray
    rmse_rpe: np.ndarray
    rmse_ramsey: np.ndarray
    crb: np.ndarray
    rmse_g: float
    rmse_g_pred: float
    rmse_g_formula: float
    g_hat_mean: np.ndarray
    g_true: np.ndarray
    keys: tuple


def scaling_study(seed: int = CHAPTER_SEEDS[0], *, reps: int = REPS, Js: tuple[int, ...] = JS,
                  device=None) -> ScalingStudy:
    """RPE with ``S_j = 16 + 8(J − j)`` at every ``J`` in ``Js`` vs Ramsey (all shots at ``t = 1``) at equal time."""
    seed = integer("seed", seed, 0)
    reps = integer("reps", reps, 2, 4096)
    Js = tuple(integer("J", j, 1, 16) for j in Js)
    if len(Js) < 3:
        raise ValueError(f"Invalid Js: {Js} (need ≥ 3 depths for a slope)")
    dev = resolve_device(device)
    s = _setup("single", str(dev))
    T, r_rpe, r_ram, bound = [], [], [], []
    last = None
    with one_thread(dev):
        for i, J in enumerate(Js):
            S = rpe_schedule(J)
            res = rpe(s.C, J, S, seed=seed * 1000 + 2 * i, reps=reps, device=dev)
            ram = ramsey(s.C, res.time, seed=seed * 1000 + 2 * i + 1, reps=reps, device=dev)
            T.append(res.time)
            r_rpe.append(float(((res.estimate - s.C) ** 2).mean().sqrt()))
            r_ram.append(float(((ram - s.C) ** 2).mean().sqrt()))
            bound.append(crb(S, J))
            last = res.estimate
        err = last - s.C
        gh = _ghat(last, s)
        rmse_g = float(((gh - s.g).abs() ** 2).mean().sqrt())
        mse_i = (err**2).mean(0)
        p = s.g.numel()
        pred = float(((s.A.diagonal() * mse_i).sum() / p).sqrt())
        formula = r_rpe[-1] * math.sqrt(float(s.A.trace()) / p)
    return ScalingStudy(Js, np.array(T), np.array(r_rpe), np.array(r_ram), np.array(bound), rmse_g, pred, formula,
                        to_numpy(gh.mean(0)), to_numpy(s.g), s.design.keys)


class AuditStudy(NamedTuple):
    """Two modes (the audit's setting): total time per design point ``T``, RMSE of ``C`` and of ``g`` per depth,
    the controls' RMSE of ``g`` without displacement, and the no-twirl off-diagonal norm."""

    Js: tuple[int, ...]
    T: np.ndarray
    rmse_C: np.ndarray
    rmse_g: np.ndarray
    n_points: int
    n_real_params: int


def audit_study(seed: int = CHAPTER_SEEDS[0], *, reps: int = AUDIT_REPS, device=None) -> AuditStudy:
    """RPE at levels 6–12 with 256 shots per basis at every point of the two-mode design, 24 replicates."""
    seed = integer("seed", seed, 0)
    reps = integer("reps", reps, 2, 1024)
    dev = resolve_device(device)
    s = _setup("audit", str(dev))
    T, rc, rg = [], [], []
    with one_thread(dev):
        for i, J in enumerate(AUDIT_JS):
            res = rpe(s.C, J, AUDIT_SHOTS, seed=seed * 1000 + 500 + i, reps=reps, device=dev)
            T.append(res.time)
            rc.append(float(((res.estimate - s.C) ** 2).mean().sqrt()))
            rg.append(float(((_ghat(res.estimate, s) - s.g).abs() ** 2).mean().sqrt()))
    # real parameters: one per diagonal key (p = q), two per conjugate pair of keys — one per key; minus the offset
    return AuditStudy(AUDIT_JS, np.array(T), np.array(rc), np.array(rg), int(s.design.beta.shape[0]),
                      len(s.design.keys) - 1)


class SpamStudy(NamedTuple):
    """Mean and RMS error of ``C`` (one mode, J = 12 time budget) under a readout flip rate ``δ`` or an ancilla phase
    offset ``ε``: rows RPE, Ramsey (atan2), Ramsey (arccos); ``C`` on the design points with ``|C| > 0.05``."""

    flips: np.ndarray
    offsets: np.ndarray
    rms_flip: np.ndarray     # (3, len(flips))
    mean_flip: np.ndarray
    rms_offset: np.ndarray   # (3, len(offsets))
    mean_offset: np.ndarray
    arccos_bias_pred: np.ndarray  # predicted mean arccos error per flip
    time: float
    n_samples: int


def spam_study(seed: int = CHAPTER_SEEDS[0], *, flips=(0.0, 0.05, 0.1, 0.15, 0.2), offsets=(0.0, 0.05, 0.1, 0.2),
               J: int = 12, reps: int = REPS, device=None) -> SpamStudy:
    """RPE vs Ramsey (atan2) vs naive arccos at equal total time, for each flip rate and each phase offset."""
    seed = integer("seed", seed, 0)
    J = integer("J", J, 1, 16)
    reps = integer("reps", reps, 2, 4096)
    dev = resolve_device(device)
    s = _setup("single", str(dev))
    C = s.C[s.C.abs() > 0.05]
    S = rpe_schedule(J)
    T = 2.0 * sum(sj * 2.0**j for j, sj in enumerate(S))

    def errs(flip: float, offset: float, k: int) -> list[torch.Tensor]:
        base = seed * 1000 + 800 + 3 * k
        out = [rpe(C, J, S, flip=flip, offset=offset, seed=base, reps=reps, device=dev).estimate]
        out += [ramsey(C, T, flip=flip, offset=offset, seed=base + 1 + e, reps=reps, estimator=est, device=dev)
                for e, est in enumerate(("atan2", "arccos"))]
        return [o - C for o in out]

    rf, mf, ro, mo, pred = [], [], [], [], []
    with one_thread(dev):
        for k, f in enumerate(flips):
            e = errs(float(f), 0.0, k)
            rf.append([float((x**2).mean().sqrt()) for x in e])
            mf.append([float(x.mean()) for x in e])
            pred.append(float((torch.sign(torch.sin(C)) * torch.arccos((1 - 2 * f) * torch.cos(C)) - C).mean()))
        for k, o in enumerate(offsets):
            e = errs(0.0, float(o), 100 + k)
            ro.append([float((x**2).mean().sqrt()) for x in e])
            mo.append([float(x.mean()) for x in e])
    return SpamStudy(np.array(flips, dtype=float), np.array(offsets, dtype=float), np.array(rf).T, np.array(mf).T,
                     np.array(ro).T, np.array(mo).T, np.array(pred), T, int(reps * C.numel()))


def eq43_ratios(n: int = 200, scale: float = 1e-3, seed: int = 0, device=None) -> np.ndarray:
    """Eq. 43 [secondary]: ``‖δg‖₂ ≤ (L_C/σ_min(K)) ‖δβ‖₂``. For ``n`` random design errors ``δβ`` (complex
    Gaussian, RMS ``scale``), ``δg = K⁺[C(β + δβ) − C(β)]`` (the recovery assumes the nominal β); ``L_C`` bounds
    ``|∇C| = 2|∂C/∂β̄| ≤ 2 Σ |g_pq| p R^{p+q−1}`` on the disc ``|β| ≤ R = max|β + δβ|``. Returns the ratios
    ``‖δg‖/bound`` (≤ 1 when Eq. 43 holds)."""
    n = integer("n", n, 1, 10_000)
    scale = number("scale", scale, 0.0, 0.01, low_open=True)
    seed = integer("seed", seed, 0)
    dev = resolve_device(device)
    s = _setup("single", str(dev))
    gen = torch.Generator().manual_seed(seed)
    P = s.design.beta.shape[0]
    db = (torch.randn(n, P, generator=gen, dtype=torch.float64) + 1j * torch.randn(
        n, P, generator=gen, dtype=torch.float64)).to(dev) * (float(scale) / math.sqrt(2))
    b = s.design.beta[None] + db
    dC = vacuum_constant(CHAPTER_COEFFS, b, device=dev) - vacuum_constant(CHAPTER_COEFFS, s.design.beta, device=dev)
    dg = torch.linalg.vector_norm(_ghat(dC, s), dim=-1)
    R = float(b.abs().max())
    L = 2 * sum(abs(g) * p * R ** (p + q - 1) for (p, q), g in CHAPTER_COEFFS.items() if p > 0)
    smin = float(torch.linalg.svdvals(s.design.K).min())
    bound = L / smin * torch.linalg.vector_norm(db, dim=-1)
    return to_numpy(dg / bound)


def vacuum_cumulants(coeffs: dict | None = None, beta: complex = 0.6165063509461097, n_fock: int = N_FOCK,
                     device=None) -> tuple[float, float, float, float]:
    """Cumulants ``κ₁..κ₄`` of the displaced (untwirled) ``H_D = D†HD`` in the vacuum: ``κ₁ = C``,
    ``κ₂ = Var₀(H_D)``. They give ``ln u₀₀ = Σ_r κ_r (−i dt)^r / r!`` for one kicked step (default: the chapter's
    Hamiltonian at the outermost design point, φ = 0)."""
    cf = CHAPTER_COEFFS if coeffs is None else coeffs
    scalar("beta", beta)
    dev = resolve_device(device)
    HD = displaced_twirled(cf, beta, n_fock=n_fock, n_phases=1, device=dev)
    m = [1.0]
    w = torch.zeros_like(HD[:, 0])
    w[0] = 1
    for _ in range(4):
        w = HD @ w
        m.append(float(w[0].real))
    k2 = m[2] - m[1] ** 2
    k3 = m[3] - 3 * m[2] * m[1] + 2 * m[1] ** 3
    k4 = m[4] - 4 * m[3] * m[1] - 3 * m[2] ** 2 + 12 * m[2] * m[1] ** 2 - 6 * m[1] ** 4
    return m[1], k2, k3, k4


# -- verdict rows ---------------------------------------------------------------------------------------------------
def seeded_verdicts(seed: int) -> Verdicts:
    """The chapter's statistical rows for ``seed``: scaling (RPE, Ramsey, CRB, coefficient RMSE, error
    propagation), the two-mode audit run and SPAM, at the chapter's scale and with its tolerances."""
    seed = integer("seed", seed, 0)
    sc = scaling_study(seed)
    au = audit_study(seed)
    sp_ = spam_study(seed, flips=(0.0, SPAM_FLIP), offsets=(0.0, SPAM_OFFSET))
    return _seeded_rows(sc, au, sp_)


def _seeded_rows(sc: ScalingStudy, au: AuditStudy, sp_: SpamStudy) -> Verdicts:
    v = Verdicts("D-RUT — sampled rows (RPE, Ramsey, SPAM)", display=False)
    s = _setup("single", str(resolve_device(None)))
    slope = loglog_slope(sc.T, sc.rmse_rpe).slope
    v.between("Theorem 1 (one mode): RPE log-RMSE vs log-T slope, J = 4…12", slope, -1.15, -0.85,
              kind="reproduces", source="secondary",
              note="audit −0.999. Error model: each RMSE pools 64 × 27 errors (relative s.e. ≈ 2 %, slope s.e. "
                   "≈ 0.005); the schedule S_j = 16 + 8(J − j) bends T_J/2^J by < 10 % (slope shift < 0.03); one "
                   "level-12 branch error (exact-enumeration bound 4e-8 per run) moves the slope by ≈ 0.02. The "
                   "issue's ±0.15 band is ≫ 3.3 s.e.")
    rslope = loglog_slope(sc.T, sc.rmse_ramsey).slope
    v.between("Ramsey control (all shots at t = 1, equal T): slope, J = 4…12", rslope, -0.65, -0.35,
              kind="reproduces", source="secondary",
              note="audit −0.493 (standard quantum limit). Error model as for RPE: s.e. ≈ 0.005; the band is the "
                   "issue's")
    v.less("Theorem 1: coefficient RMSE at J = 12 (15 complex g_pq, 64 replicates)", sc.rmse_g, 1e-3,
           kind="reproduces", source="secondary",
           note="expected ≈ 3e-4 = RMSE_C·√(tr(KᴴK)⁻¹/p); the bound is the issue's; 64 replicates give a relative "
                "s.e. < 20 %, so 1e-3 is > 10 s.e. above the expectation")
    ratio = sc.rmse_rpe[-1] / sc.crb[-1]
    v.between("RPE efficiency: RMSE_C / CRB at J = 12, CRB = (Σ_j 2 S_j t_j²)^(−1/2)", ratio, 1.0, 3.0,
              kind="reproduces", source="derived",
              note="prototype 1.7; exact enumeration of the level-J atan2 estimator (S_J = 16) gives variance "
                   "0.58–0.90/S_J against the CRB's 1/(2·S_J) per level plus the coarser levels' information: "
                   "expected ≈ 1.5, relative s.e. ≈ 2 %")
    A = to_numpy(s.A)
    Aoff = A - np.diag(np.diag(A))
    # sd of (mean over R replicates of Σ_{i≠j} A_ij e_i e_j) relative to Σ_i A_ii σ_i², with σ_i² within a factor
    # 0.90/0.58 of each other (exact enumeration at S_J = 16)
    rel_sd = math.sqrt(2 * float((Aoff**2).sum()) / REPS) / float(np.trace(A)) * (0.90 / 0.58)
    v.close("RMSE_g² = Σ_i A_ii MSE_i / p, A = Re(K⁺ᴴK⁺) (independent errors at the design points), J = 12",
            sc.rmse_g**2, sc.rmse_g_pred**2, rtol=Z * rel_sd, kind="consistency", source="derived",
            note=f"error model: the cross terms Σ_(i≠j) A_ij e_i e_j have mean 0 and variance 2Σ A_ij² σ_i²σ_j² "
                 f"per replicate; rtol = 3.29 × that s.d. over 64 replicates (σ_i² ratio ≤ 0.90/0.58) = "
                 f"{Z * rel_sd:.3f}")
    aslope = loglog_slope(au.T, au.rmse_C).slope
    v.between("audit two-mode run (degree 2, N = 11, 13-phase twirl, 256 shots, 24 reps): RPE slope, J = 6…12",
              aslope, -1.15, -0.85, kind="reproduces", source="secondary",
              note="audit −0.999; 100 design points × 24 replicates per RMSE (s.e. ≈ 0.005); branch errors "
                   "< 1e-70 per run at 256 shots")
    v.less("audit two-mode run: coefficient RMSE at J = 12", au.rmse_g[-1], 1e-3, kind="reproduces",
           source="secondary", note="audit: 5.5e-5 at T ≈ 1.3e8 (its design, not ours); Theorem 1's claim here")
    # SPAM (J = 12 budget; points with |C| > 0.05; rows: RPE, Ramsey atan2, Ramsey arccos)
    n = sp_.n_samples
    se = math.sqrt(2.0 / sp_.time) / math.sqrt(n)  # s.d. of one Ramsey estimate ≤ √(2/T) (atan2, δ = 0)
    v.less(f"SPAM: RPE RMSE_C at J = 12 with ancilla phase offset ε = {SPAM_OFFSET:g}", sp_.rms_offset[0, -1], 1e-3,
           kind="reproduces", source="secondary",
           note="RPE's bias is ε/2^J t₀ = 2.4e-5; noise ≈ 5e-5; a branch error needs |2e_(j−1) − e_j + ε| > π")
    v.close(f"SPAM: Ramsey mean error with offset ε = {SPAM_OFFSET:g} equals ε/t", sp_.mean_offset[1, -1],
            SPAM_OFFSET, atol=Z * se, kind="consistency", source="derived",
            note="error model: mean of n independent estimates, each with s.d. ≤ √(2/T); atol = 3.29 s.e.")
    vis = 1 - 2 * SPAM_FLIP
    v.less(f"SPAM: RPE RMSE_C at J = 12 with readout flip δ = {SPAM_FLIP:g}", sp_.rms_flip[0, -1], 1e-3,
           kind="reproduces", source="secondary",
           note="atan2 is unbiased under a symmetric flip; noise grows by ≈ 1/(1 − 2δ)")
    v.close(f"SPAM: Ramsey (atan2) mean error with flip δ = {SPAM_FLIP:g} is 0", sp_.mean_flip[1, -1], 0.0,
            atol=Z * se / vis, kind="consistency", source="derived",
            note="⟨X⟩, ⟨Y⟩ shrink alike; per-estimate s.d. ≤ √(2/T)/(1 − 2δ); atol = 3.29 s.e.")
    v.close(f"SPAM: naive arccos mean error with flip δ = {SPAM_FLIP:g} = mean of sign(C)·arccos((1−2δ)cos C) − C",
            sp_.mean_flip[2, -1], sp_.arccos_bias_pred[-1], atol=Z * se / vis, kind="consistency",
            source="derived", note="delta method: s.d. of arccos(X̄) ≤ √(2/T)/(1 − 2δ) away from C = 0 (|C| > 0.05 "
                                   "keeps sign(Ȳ) right); atol = 3.29 s.e.")
    return v


def _roundoff(x: float, floor: float) -> float:
    """``max(x, floor)``: round-off-level differences vary with memory alignment in vendor BLAS/LAPACK kernels, so
    rows that only bound round-off show at least ``floor`` (two or more decades below their tolerance) and repeat
    exactly."""
    return max(float(x), floor)


def deterministic_verdicts() -> Verdicts:
    """Rows without sampling: the vacuum identity on the Fock space, exact recovery, the twirl, Eq. 43 and the
    negative controls."""
    dev = resolve_device(None)
    v = Verdicts("D-RUT — exact rows (Fock simulation, recovery, controls)", display=False)
    # rows bounding round-off show max(|Δ|, floor) (see _roundoff); the others are rounded by the table's 6 digits
    s1, s2 = _setup("single", str(dev)), _setup("audit", str(dev))
    with one_thread(dev):
        gap1 = float((s1.C - vacuum_constant(CHAPTER_COEFFS, s1.design.beta, device=dev)).abs().max())
        gap2 = float((s2.C - vacuum_constant(AUDIT_COEFFS, s2.design.beta, device=dev)).abs().max())
        v.less("vacuum identity: |C_Fock(β) − Σ g_pq β̄^p β^q| at all 27 one-mode design points (N = 30)",
               _roundoff(gap1, 1e-13), 1e-10, kind="reproduces", source="secondary",
               note="H_eff from expm of the truncated generator, D†HD and the exact twirl; the coherent tail beyond "
                    "N is < 1e-12, so truncation errors are far below 1e-10")
        v.less("vacuum identity: the same at all 100 two-mode design points (N = 11 per mode, 13-phase twirl)",
               _roundoff(gap2, 1e-11), 1e-10, kind="reproduces", source="secondary",
               note="tail < 1e-12 per mode at |β| ≤ 0.58")
        H = displaced_twirled(CHAPTER_COEFFS, s1.design.beta, n_fock=N_FOCK, device=dev)
        b = s1.design.beta
        d2 = sum(g * p * q * b.conj() ** (p - 1) * b ** (q - 1) for (p, q), g in CHAPTER_COEFFS.items()
                 if p > 0 and q > 0).real
        v.less("E₁ − E₀ of H_eff = ∂_β∂_β̄ C at the design points", _roundoff(float(
            ((H[:, 1, 1] - H[:, 0, 0]).real - d2).abs().max()), 1e-13), 1e-10,
               kind="consistency", source="derived", note="the one-quantum coefficient of the normal-ordered form")
        e1 = float((recover_tensor(s1.C, s1.design) - s1.g).abs().max())
        e2 = float((recover_tensor(s2.C, s2.design) - s2.g).abs().max())
        v.less("Algorithm 1: exact C recovers all 15 g_pq (one mode, degree 4) and 15 (two modes, degree 2)",
               _roundoff(max(e1, e2), 1e-11), 1e-10, kind="reproduces", source="secondary",
               note="angular inverse DFT + radial least squares on Chebyshev radii; double-precision round-off")
        lsq = torch.linalg.lstsq(s1.design.K, s1.C.to(CDTYPE)[:, None]).solution[:, 0]
        v.less("IDFT + radial fit = least squares K⁺C (max |Δ|)", _roundoff(float(
            (recover_tensor(s1.C, s1.design) - lsq).abs().max()), 1e-13), 1e-12,
               kind="consistency", source="derived", note="equally spaced angles make the DFT orthogonal")
        H1 = displaced_twirled(CHAPTER_COEFFS, b, n_fock=N_FOCK, n_phases=1, device=dev)
        leak = float(torch.linalg.vector_norm(H1[:, 1:, 0], dim=-1).min())
        v.greater("control, no twirl: ‖(1 − |0⟩⟨0|) D†HD |0⟩‖, minimum over the design", float(f"{leak:.5g}"), 1e-2,
                  kind="reproduces", source="secondary", note="the issue's threshold; audit: off-diagonal norm 12.6")
        M5 = displaced_twirled(CHAPTER_COEFFS, b, n_fock=N_FOCK, n_phases=DEGREE + 1, device=dev)
        off5 = M5 - torch.diag_embed(M5.diagonal(dim1=-2, dim2=-1))
        v.less("an M = degree + 1 = 5 phase twirl clears the vacuum column",
               _roundoff(float(off5[:, :, 0].abs().max()), 1e-13), 1e-12,
               kind="consistency", source="derived", note="⟨m|D†HD|0⟩ = 0 for m > degree (normal order)")
        v.greater("… but not the truncated matrix: off-diagonal Frobenius norm at M = 5 (max over the design)",
                  float(f"{float(torch.linalg.matrix_norm(off5).max()):.5g}"), 0.1, kind="consistency",
                  source="derived",
                  note="truncation fills |n − m| ≡ 0 mod 5 near the cutoff; M ≥ N clears it")
        # literal average over M rotations vs the mask
        M = 4
        n_hat = torch.arange(N_FOCK, dtype=torch.float64, device=dev)
        HD = displaced_twirled(CHAPTER_COEFFS, b[:3], n_fock=N_FOCK, n_phases=1, device=dev)
        avg = sum(torch.diag(torch.exp(1j * 2 * math.pi * k / M * n_hat)) @ HD
                  @ torch.diag(torch.exp(-1j * 2 * math.pi * k / M * n_hat)) for k in range(M)) / M
        v.less("M-phase twirl: (1/M) Σ_k R_k† H R_k = mask n ≡ m (mod M), M = 4", _roundoff(float(
            (avg - displaced_twirled(CHAPTER_COEFFS, b[:3], n_fock=N_FOCK, n_phases=M, device=dev)).abs().max()),
            1e-13), 1e-12, kind="consistency", source="derived")
        C0 = displaced_twirled(AUDIT_COEFFS, torch.zeros_like(s2.design.beta), n_fock=AUDIT_N, n_phases=AUDIT_M,
                               device=dev)[:, 0, 0].real
        g0 = recover_tensor(C0, s2.design)
        rm0 = float(((g0 - s2.g).abs() ** 2).mean().sqrt())
        v.close("control, no displacement (two modes): RMSE_g = RMS of the non-constant coefficients",
                float(f"{rm0:.13g}"),
                float(((s2.g.abs() ** 2).sum() / s2.g.numel()).sqrt()), rtol=1e-9, kind="consistency",
                source="derived", note="every C equals g_00, so only the offset is learned; audit: RMSE 0.10")
        # the hardware twirl by random kicks: exact kick average u₀₀^n vs the cumulant expansion
        k1, k2, k3, k4 = vacuum_cumulants(device=dev)
        dt, t_end = 0.05, 20.0
        kr = kicked_evolution(CHAPTER_COEFFS, s1.design.beta[-len(s1.design.angles)], dt=dt, n_steps=int(t_end / dt),
                              n_fock=N_FOCK, device=dev)
        contrast = float(kr.exact[-1].abs())
        pred = math.exp(-k2 * dt * t_end / 2 + k4 * dt**3 * t_end / 24)
        v.close("random-kick twirl (dt = 0.05, t = 20): contrast |⟨0|U|0⟩| = exp(−κ₂ dt t/2 + κ₄ dt³ t/24)",
                float(f"{contrast:.9g}"), pred, rtol=abs(k4) * dt**3 * t_end / 24, kind="consistency",
                source="derived", note="exact average over the kicks u₀₀^n; cumulants of D†HD in the vacuum; tolerance "
                                       "= the last kept term (the remainder is O(κ₆ dt⁵ t))")
        phase = float(torch.angle(kr.exact[-1] / kr.ideal[-1]))
        v.close("random-kick twirl (dt = 0.05, t = 20): phase error = κ₃ dt² t/6", float(f"{phase:.9g}"),
                k3 * dt**2 * t_end / 6, rtol=0.1, kind="consistency", source="derived",
                note="next term O(κ₅ dt⁴ t), a few % of the kept one at dt = 0.05")
        r43 = eq43_ratios()
        v.less("Eq. 43: max over 200 random δβ of ‖δg‖ / (L_C/σ_min(K)·‖δβ‖)", round(float(r43.max()), 4), 1.0,
               kind="reproduces", source="secondary",
               note=f"L_C = 2Σ|g_pq| p R^(p+q−1) bounds |∇C| on the disc; median ratio {float(np.median(r43)):.3f} "
                    "(the bound's slack)")
    return v
