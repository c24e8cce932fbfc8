"""Every row the flat-minima chapter shows, the paper's claims they test, and their controls.

``derivation_verdicts(D, brute_max_rel, brute_points)`` — sympy and the closed-form-vs-brute-force sharpness;
``claim1_verdicts`` (with ``claim1_test``, the test its controls take too), ``dynamics_verdicts``,
``stability_verdicts`` — the rows of each study; ``rate_verdicts`` —
SA-GD's step count against d and n; ``seeded_verdicts(seed)`` / ``deterministic_verdicts()`` — what the
seed-robustness test re-runs; ``headline(...)`` — the chapter's table with ``PAPER_CLAIMS``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import sympy as sp
from scipy.stats import binom

from ..check import Control, PaperClaim, Scan, Verdicts, z_threshold
from ..device import to_numpy
from ..fit import loglog_slope
from ..validate import integer, number
from . import theory
from .coupled import (
    COUPLED_UNSEEN,
    CoupledCheck,
    CoupledStudy,
    coupled_instance,
    coupled_sharpness_check,
    coupled_study,
)
from .dynamics import PGD_RADII, DynamicsStudy, dynamics_study, perturbed_gd, sagd_sharpness_prediction, sagd_steps
from .experiment import Claim1Study, claim1_study
from .instance import BETA, expected_unseen, prob_some_unseen, sharpness_check, unseen_instance
from .stability import ALGORITHMS, StabilityResult, stability

__all__ = ["FLAT_FACTOR", "OMEGA1", "PAPER_CLAIMS", "RISK_PILOT", "SLOPE_BAND", "RateStudy", "claim1_test",
           "claim1_verdicts", "claim2_risk_test", "claim2_risk_verdicts", "coupling_verdicts", "derivation_verdicts",
           "deterministic_verdicts", "dynamics_verdicts", "headline", "rate_study", "rate_verdicts", "seeded_verdicts",
           "stability_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("claim1", "flat empirical minima may incur trivial Ω(1) population risk, while sharp minima "
               "generalise optimally"),
    PaperClaim("claim2-flat", "SA-GD converges to a flat minimum"),
    PaperClaim("claim2-rate", "SA-GD converges at a fast rate", quoted_only=True,
               reason_class="paper text unread",
               why="the abstract gives no rate we could read, so there is no number to compare with; the chapter "
                   "measures SA-GD's step count against d and n on our instance (consistency rows)"),
    PaperClaim("claim2-risk", "SA-GD's flat solution can have population risk Ω(1)"),
    PaperClaim("claim3-sharp", "SAM minimises the empirical loss but may converge to a sharp minimum"),
    PaperClaim("claim3-risk", "SAM's sharp solution can have population risk Ω(1)", quoted_only=True,
               reason_class="paper text unread",
               why="on the separable instance SAM's step uses ∇F̂(w + v) = a ⊙ min(w + v, 0), which is 0 on every "
                   "unseen coordinate, so F(w_T) is the start's risk (0 from the chapter's start). On the coupled "
                   "instance that tests claim 2's risk, SAM does not fail either: from w₀ = b·1, ∇F̂(w₀) = 0 and SAM "
                   "never moves; from starts b·1 + cρu (c ∈ {1, 5, 20}, F(w₀) up to 0.12) with ascent radii ρ, 5ρ, "
                   "20ρ, SAM reached F̂ = 0 within 32 steps with every coordinate still positive, F(w_T) = 0 (pilot "
                   "seeds 9001–9003). SAM stops at the first zero gradient, so it only drifts while F̂ > 0; we found no "
                   "convex smooth instance on which that drift carries Ω(1) mass to unseen coordinates, and the "
                   "paper's construction could not be read"),
    PaperClaim("claim4", "population-risk upper bounds for SA-GD and SAM through algorithmic stability",
               quoted_only=True, reason_class="paper text unread",
               why="the bounds could not be read; the chapter shows the 1/n shape of a stand-in (Hardt et al.'s "
                   "template) as consistency rows"),
)

#: The band of the replace-one divergence's log–log slope: pilot seeds 9001–9040 (see stability_verdicts).
SLOPE_BAND = (-1.302, -0.904)
_ALPHA = 1e-3
#: Ω(1) read as at least 40 % of the largest population risk ¼ a point of the unit ball can have.
OMEGA1 = 0.1
#: "Flat" read as S_ρ at most 10⁻³ of the sharp ERM's S_ρ(0) (claim 2's 1000-fold drop).
FLAT_FACTOR = 1e-3


def _binom_interval(N: int, p: float, alpha: float = _ALPHA) -> tuple[int, int]:
    """Central interval of Binomial(N, p) with probability ≥ 1 − alpha (each tail ≤ alpha/2)."""
    lo = int(binom.ppf(alpha / 2, N, p))
    hi = int(binom.isf(alpha / 2, N, p))
    if binom.cdf(lo - 1, N, p) > alpha / 2:  # ppf returns the smallest k with cdf ≥ q; keep tails ≤ alpha/2
        lo -= 1
    return lo, hi + 1 if binom.sf(hi, N, p) > alpha / 2 else hi


def claim1_test(empirical: float, sharpness_ratio: float, flat_risk: float, sharp_risk: float, n: int) -> bool:
    """Claim 1's test, the same for the method and its controls: the point in the flat role is an ERM
    (``F̂ = 0``), flat (``S_ρ ≤ FLAT_FACTOR·S_ρ(0)``) and has held-out ``F ≥ OMEGA1``, while the sharp ERM's held-out
    ``F`` is at most the optimal rate ``βB²/n`` (B = 1, the unit ball)."""
    emp = number("empirical", empirical, 0.0)
    ratio = number("sharpness_ratio", sharpness_ratio, 0.0)
    flat = number("flat_risk", flat_risk, 0.0)
    sharp = number("sharp_risk", sharp_risk, 0.0)
    nn = integer("n", n, 1)
    return bool(emp == 0.0 and ratio <= FLAT_FACTOR and flat >= OMEGA1 and sharp <= BETA / nn)


def claim1_verdicts(st: Claim1Study) -> Verdicts:
    """The rows of claim 1 (and the sampler checks) from a :class:`Claim1Study`: the held-out risks of the flat
    ERM and the sharp ERM, against SA-GD's flat minima (from a random start and from 0) in the flat role."""
    if not isinstance(st, Claim1Study):
        raise TypeError(f"Invalid st: {type(st).__name__} (must be a Claim1Study)")
    v = Verdicts("flat minima: claim 1 rows", display=False)
    ok = st.unseen > 0
    N = st.unseen.size
    c2 = st.c**2 / 4
    h = st.heldout
    m, k = h.m, st.mc_unseen
    rate = BETA / st.n
    s0 = float(st.max_a[np.flatnonzero(ok)[0]]) * st.rho**2 / 2  # S_ρ(0) on the measured instance
    flat_ratio = float(st.flat_sharp[0]) / s0
    flat_emp = float(st.flat_emp[0])
    F_flat, F_sharp = float(h.mean[0]), float(h.mean[1])

    def shown(F: float, se: float, emp: float, ratio: float) -> str:
        return f"F = {F:.4g} ± {se:.1e}, F̂ = {emp:.3g}, S_ρ/S_ρ(0) = {ratio:.2g}"

    # SA-GD's end points in the flat role: run i of st.sagd_* is held-out point i + 2 (after the flat and sharp ERM)
    def sagd_passes(i: int) -> bool:
        return claim1_test(float(st.sagd_empirical[i]), float(st.sagd_sharpness[i]), float(h.mean[i + 2]), F_sharp,
                           st.n)

    def sagd_shown(i: int) -> str:
        return shown(float(h.mean[i + 2]), float(h.stderr[i + 2]), float(st.sagd_empirical[i]),
                     float(st.sagd_sharpness[i]))

    v.equal(f"flat ERM: F̂ = 0 and S_ρ = 0 on all {int(ok.sum())} instances with an unseen coordinate "
            "(largest value)", float(max(st.flat_emp.max(), st.flat_sharp.max())), 0.0,
            kind="consistency", source="reconstruction",
            note="F̂ evaluated sample by sample; S_ρ by the closed form (checked against brute force elsewhere)")
    rel = float(np.max(np.abs(st.flat_pop - c2)) / c2) if c2 > 0 else float(np.max(np.abs(st.flat_pop)))
    v.less("flat ERM: F = ½Σφ(w_i) equals c²/4 on every instance (max relative error)", rel, 1e-12,
           kind="consistency", source="derived", basis="model: float64 sums of ≤ 20 terms: error ≲ 10⁻¹⁵")
    hoeff = math.exp(-2 * m * (c2 - OMEGA1) ** 2 / (st.c**2 / 2) ** 2)
    v.true(f"claim 1: a flat ERM has held-out F ≥ {OMEGA1:g} (Ω(1)) while the sharp ERM w = 0 has held-out "
           f"F ≤ βB²/n = {rate:g} — F on {m} held-out z, the same draws for every point",
           claim1_test(flat_emp, flat_ratio, F_flat, F_sharp, st.n), kind="reproduces", source="paper",
           tests="claim1",
           predicted=f"flat role: F̂ = 0, S_ρ ≤ {FLAT_FACTOR:g}·S_ρ(0), F ≥ {OMEGA1:g}; sharp: F ≤ {rate:g}",
           measured=f"flat ERM: {shown(F_flat, float(h.stderr[0]), flat_emp, flat_ratio)}; sharp ERM: "
                    f"F = {F_sharp:.3g} ± {float(h.stderr[1]):.1e}",
           control=[Control(f"SA-GD's flat minimum from a random start of norm c = {st.c:g} in the flat role "
                            "(same held-out draws, same sharp ERM)",
                            sagd_passes(0), shown=sagd_shown(0),
                            why="a flat minimum an algorithm reaches from a generic start, not one built to fail: "
                                "if Ω(1) risk were a property of flat empirical minima as such, this one — which "
                                "starts with mass on the unseen coordinates, so its risk is not 0 by construction — "
                                "would pass too",
                            tuned=f"as claim 2's SA-GD: η = 1/β, exact inner max, {st.steps} steps; the start "
                                  "ξ/‖ξ‖·c (ξ ~ N(0, I_d), |·| on seen coordinates) has the norm c the flat ERM "
                                  "puts on its unseen coordinates — the same budget; SA-GD only raises seen "
                                  "coordinates toward ρ, so ‖w_T‖² ≤ c² + dρ² ≤ 1 and the end point stays in the "
                                  "unit ball"),
                    Control("SA-GD's flat minimum from 0 in the flat role (its limit: ρ on the seen coordinates, 0 "
                            "on the unseen ones — the minimum-norm flat ERM)",
                            sagd_passes(1), shown=sagd_shown(1),
                            why="the implicit-bias answer (GD/SA-GD from 0, min-norm, ridge): the flat minimum a "
                                "norm-seeking method picks",
                            tuned=f"as claim 2: η = 1/β, exact inner max, {st.steps} steps from w₀ = 0",
                            weak="F = 0 by construction: the unseen coordinates start at 0 and get no gradient")],
           basis=f"paper: Ω(1) read as ≥ {OMEGA1:g} (40 % of the largest risk ¼ in the unit ball); 'generalise "
                 f"optimally' as ≤ βB²/n, the fast rate of non-negative β-smooth SCO with F* = 0 (Srebro et al. "
                 f"2010; B = 1; at n = {st.n} it equals {rate:g}); 'flat' as S_ρ ≤ {FLAT_FACTOR:g}·S_ρ(0), claim 2's "
                 f"reading; model: f ∈ [0, c²/2], so (Hoeffding) the flat ERM's held-out mean falls below "
                 f"{OMEGA1:g} with probability ≤ exp(−2m(c²/4 − {OMEGA1:g})²/(c²/2)²) = {hoeff:.0e}; the sharp "
                 "ERM's f is 0 on every draw; no threshold was set from a run",
           note=f"an existence claim ('may'), shown on our instance (not the paper's construction): d = {st.d}, "
                f"n = {st.n}, c = {st.c:g}, k = {k} unseen coordinates on the measured instance. The flat ERM is our "
                "construction (F = c²/4 by design); the row measures F on fresh z of every coordinate, not through "
                "the formula. The random-start control is flat too and fails only on its risk: an isotropic start "
                "puts a fraction ≈ k/d of its mass on the unseen coordinates, so the row separates the built flat "
                "minimum from a generic one — it does not say flat minima typically fail")
    lo, hi = _binom_interval(m * k, 0.5)
    scale = st.c**2 / (2 * k * m)
    v.between(f"held-out estimator: F of the flat ERM ({m} fresh z) vs c²/4 = {c2:g}", F_flat, lo * scale,
              hi * scale, kind="consistency", source="derived",
              basis=f"model: m·mean·2k/c² ~ Binomial(m·k, ½) exactly (k = {k}); central interval, false alarm ≤ 1e-3",
              note="checks the held-out sampler and the estimator against the closed form")
    v.equal("SA-GD from the random start: held-out F(w_T) − F(w₀) (same draws)", float(h.mean[2] - h.mean[4]), 0.0,
            kind="consistency", source="derived",
            note="SA-GD's step moves coordinate i by η a_i(ρ − w_i)₊ and a_i = 0 on an unseen coordinate, so "
                 "F(w_T) = ½Σ_unseen φ(w₀,i): on this separable instance the risk of SA-GD's solution is its "
                 "start's — why claim 2's Ω(1) risk is tested on the coupled instance")
    wit_rel = float(np.max(np.abs(st.sharp_sharp - st.sharp_witness) / np.maximum(st.sharp_sharp, 1e-300)))
    v.less("sharp ERM w = 0: S_ρ(0) = ρ²·max a_i/2 equals F̂(−ρe_{i*}) evaluated from the samples (max rel. error)",
           wit_rel, 1e-12, kind="consistency", source="derived", basis="model: float64 round-off",
           note="closed form vs an explicit maximiser")
    v.true(f"sharp ERM w = 0: F̂ = F = 0 (closed form) and S_ρ ≥ ρ²/(2n) > 0 on all {N} instances",
           bool(np.all(st.sharp_emp == 0) and np.all(st.sharp_pop == 0)
                and np.all(st.sharp_sharp >= st.rho**2 / (2 * st.n) * (1 - 1e-12))),
           kind="consistency", source="reconstruction",
           predicted="F̂ = F = 0, S_ρ > 0",
           measured=f"max F̂ {np.max(st.sharp_emp):.3g}, max F {np.max(st.sharp_pop):.3g}, min S_ρ/ρ² "
                    f"{np.min(st.sharp_sharp) / st.rho**2:.3g}",
           note="any seen coordinate gives S_ρ ≥ ρ²/(2n); risk 0 at 0 by construction")
    p = 2.0 ** (-st.n)
    lo, hi = _binom_interval(N * st.d, p)
    v.between(f"#unseen summed over {N} instances ~ Binomial({N}·{st.d}, 2⁻ⁿ)", int(st.unseen.sum()), lo, hi,
              kind="consistency", source="derived", basis="model: exact binomial interval, false alarm ≤ 1e-3",
              note=f"mean {expected_unseen(st.d, st.n):g} per instance")
    P = prob_some_unseen(st.d, st.n)
    lo, hi = _binom_interval(N, P)
    v.between(f"instances with an unseen coordinate ~ Binomial({N}, 1 − (1 − 2⁻ⁿ)^d)", int(ok.sum()), lo, hi,
              kind="consistency", source="derived", basis="model: exact binomial interval, false alarm ≤ 1e-3",
              note=f"P = {P:.4f}")
    return v




def dynamics_verdicts(ds: DynamicsStudy, pgd_seed: int = 0) -> Verdicts:
    """The rows of claims 2–3 from a :class:`DynamicsStudy`, with perturbed GD (noise seed ``pgd_seed``) as
    claim 2's control."""
    if not isinstance(ds, DynamicsStudy):
        raise TypeError(f"Invalid ds: {type(ds).__name__} (must be a DynamicsStudy)")
    v = Verdicts("flat minima: claims 2-3 rows", display=False)
    sg, sm = ds.sagd, ds.sam
    T = int(sg.t[-1])
    pgd = perturbed_gd(ds.instance.a, ds.rho, T, seed=pgd_seed)
    ratio = float(sg.sharpness[-1] / sg.sharpness[0])
    v.less(f"claim 2: SA-GD (η = 1, exact inner max) reaches a flat point — S_ρ(w_T)/S_ρ(w₀) after {T} steps",
           ratio, 1e-3, kind="reproduces", source="paper", tests="claim2-flat",
           control=Control(f"perturbed GD (Jin et al.) from the same start, {T} steps, best of {len(PGD_RADII)} "
                           "radii", float(pgd.min()),
                           why="plain GD cannot leave w₀ = 0 (∇F̂ = 0 there); GD with perturbations at stationary "
                               "points is the standard way to escape them and drifts into the flat orthant by noise",
                           tuned=f"the same step budget T = {T} and η = 1; perturbation radius tuned on a "
                                 f"{len(PGD_RADII)}-point grid ({', '.join(f'{x:g}' for x in PGD_RADII)} × ρ√d), "
                                 "the best on this very instance shown (favouring the control)"),
           basis=f"paper: 'flat' read as a 1000-fold drop of S_ρ; the run is long enough by the exact count "
                 f"Σ_i k_i = {ds.predicted_hit} < T (row below)",
           note="on our instance; perturbed GD in the unit ball cannot push all ~4,092 seen coordinates to ρ "
                f"(ratios over the radii {', '.join(f'{x:.3g}' for x in pgd)}): the flattening is the ascent "
                "step's doing")
    v.equal("SA-GD: first step with S_ρ ≤ 10⁻³S_ρ(w₀) (simulation) = Σ_i k_i (per-coordinate count)",
            int(sg.hit), ds.predicted_hit, kind="consistency", source="derived",
            note="each SA-GD step multiplies one gap ρ − w_i by (1 − a_i) and always acts above the threshold")
    pred = sagd_sharpness_prediction(ds.instance.a, ds.rho, sg.t)
    rel = float(np.max(np.abs(sg.sharpness - pred) / pred))
    v.less(f"SA-GD: S_ρ(w_t) simulated = ½·(t+1)-th largest of {{a_i(1 − a_i)^{{2k}}ρ²}} (sorting), at {sg.t.size} "
           "recorded t (max rel. error)", rel, 1e-9, kind="consistency", source="derived",
           basis="model: the simulation updates gaps one at a time, the prediction sorts closed-form powers: "
                 "rounding only")
    v.less("SAM minimises F̂ — F̂(w_T)/F̂(w₀)", float(sm.empirical[-1] / sm.empirical[0]), 1e-12,
           kind="consistency", source="paper", basis="model: F̂ = 0 is reached exactly; 1e-12 for round-off",
           note="SAM from −ρ on the seen coordinates, η = 1 (plain GD would minimise F̂ too, so this is no test)")
    s0 = float(np.max(to_numpy(ds.instance.a)) * ds.rho**2 / 2)  # S_ρ of the sharp ERM w = 0
    sam_end = float(sm.sharpness[-1]) / s0 if bool(sm.in_orthant[-1]) else math.nan  # NaN fails the row
    v.greater("claim 3: SAM ends at a sharp minimum — S_ρ(w_T^SAM) / S_ρ(0) (0 = the sharp ERM)", sam_end, 0.5,
              kind="reproduces", source="paper", tests="claim3-sharp",
              control=Control("SA-GD's end point, same instance", float(sg.sharpness[-1]) / s0,
                              why="the flat-seeking method on the same instance: is the sharp end SAM's doing or the "
                                  "instance's?",
                              tuned="the same η = 1, ρ and step budget as SAM"),
              basis="paper: 'sharp' read as at least half the sharpness of the sharp ERM w = 0",
              note="SAM stops where ∇F̂ = 0 first holds, near 0 ≪ ρ; SA-GD pushes every seen w_i to ρ")
    v.equal("claims 2–3 on the separable instance: F(w_T) of the SA-GD and SAM solutions (largest)",
            float(max(sg.population[-1], sm.population[-1])), 0.0, kind="consistency", source="reconstruction",
            note="on this instance neither method moves an unseen coordinate, so F(w_T) = 0: claim 2's Ω(1) risk is "
                 "tested on the coupled instance instead; claim 3's stays quoted")
    return v


def stability_verdicts(results: Sequence[StabilityResult]) -> Verdicts:
    """The rows of claim 4 from three :class:`StabilityResult` (GD, SA-GD, SAM)."""
    if not isinstance(results, (list, tuple)) or not results or not all(
            isinstance(r, StabilityResult) for r in results):
        raise TypeError("Invalid results: must be a non-empty sequence of StabilityResult")
    v = Verdicts("flat minima: claim 4 rows", display=False)
    for st in results:
        fit = loglog_slope(st.n, st.delta)
        v.between(f"claim 4 stand-in ({st.algorithm}): replace-one divergence δ ∝ n^slope — log–log slope",
                  fit.slope, SLOPE_BAND[0], SLOPE_BAND[1], kind="consistency", source="reconstruction",
                  basis="pilot: seeds 9001–9040 (40 seeds × 3 methods, this design) gave mean −1.103, sd 0.061; "
                        "band = mean ± 3.29 sd (false alarm 1e-3 per row), not widened",
                  note="least squares, d = 20, ρ = 0.05, η = 0.5, T = 200, n = 50…800: the 1/n law plus a finite-n "
                       "bias toward steeper slopes (Ĥ is ill-conditioned at n = 50, d/n = 0.4)")
    return v


class RateStudy(NamedTuple):
    """SA-GD's exact step count to a 10³-fold flatter point, against d (at ``n_fixed``) and n (at ``d_fixed``),
    each averaged over ``instances`` instances, and the fitted exponents."""

    d: np.ndarray
    steps_d: np.ndarray
    n: np.ndarray
    steps_n: np.ndarray
    slope_d: float
    slope_n: float
    n_fixed: int
    d_fixed: int


def rate_study(d: Sequence[int] = (1024, 4096, 16384), n: Sequence[int] = (5, 10, 20, 40), n_fixed: int = 10,
               d_fixed: int = 4096, instances: int = 5, seed: int = 0) -> RateStudy:
    """Steps SA-GD needs (η = 1, from 0) until S_ρ falls 10³-fold, by the exact count :func:`~.dynamics.sagd_steps`
    (equal to the simulation, a consistency row), on ``instances`` seeded instances per (d, n)."""
    if not isinstance(d, (list, tuple)) or not isinstance(n, (list, tuple)):
        raise TypeError("Invalid d/n: must be sequences of sizes")
    if len(set(d)) < 3 or len(set(n)) < 3:
        raise ValueError(f"Invalid d/n: {d}, {n} (each needs ≥ 3 distinct sizes for a log–log fit)")
    dd = [integer("d", x, 2, 2**20) for x in d]
    nn = [integer("n", x, 1, 1000) for x in n]
    nf, df = integer("n_fixed", n_fixed, 1, 1000), integer("d_fixed", d_fixed, 2, 2**20)
    k = integer("instances", instances, 1, 100)
    sd = integer("seed", seed, 0)

    def mean_steps(d_: int, n_: int) -> float:
        return float(np.mean([sagd_steps(to_numpy(unseen_instance(d_, n_, sd + i, "cpu").a)) for i in range(k)]))

    sdv = np.array([mean_steps(x, nf) for x in dd])
    snv = np.array([mean_steps(df, x) for x in nn])
    return RateStudy(np.array(dd), sdv, np.array(nn), snv, loglog_slope(dd, sdv).slope, loglog_slope(nn, snv).slope,
                     nf, df)


def rate_verdicts(rs: RateStudy) -> Verdicts:
    """SA-GD's step count against d and n (claim 2's rate is quoted only: no rate to compare with)."""
    if not isinstance(rs, RateStudy):
        raise TypeError(f"Invalid rs: {type(rs).__name__} (must be a RateStudy)")
    v = Verdicts("flat minima: SA-GD's step count", display=False)
    v.between(f"SA-GD steps to S_ρ/S_ρ(0) ≤ 10⁻³ grow ∝ d^b (n = {rs.n_fixed}, d = {', '.join(map(str, rs.d))})",
              rs.slope_d, 0.9, 1.1, kind="consistency", source="derived",
              basis="model: steps = Σ over ≈ d(1 − 2⁻ⁿ) seen coordinates of k_i = O(1) steps each, k_i depending on "
                    "a_i only: b = 1 up to the slow drift of max a with d",
              note="each step moves one coordinate (the inner maximiser is −ρe_i): no dimension-free rate on our "
                   "instance; the paper's rate is unknown to us")
    v.between(f"… and hardly depend on n at fixed d = {rs.d_fixed} (exponent over n = {', '.join(map(str, rs.n))})",
              rs.slope_n, -0.1, 0.1, kind="consistency", source="derived",
              basis="model: k_i depends on a_i only, and a_i concentrates at ½ as n grows, so the count converges",
              note="the sample size enters only through the spread of a_i")
    return v


def derivation_verdicts(D: theory.Derivations, brute_max_rel: float, brute_points: int) -> Verdicts:
    """The symbolic rows, plus the closed-form-vs-brute-force row (``brute_max_rel`` over ``brute_points``)."""
    if not isinstance(D, theory.Derivations):
        raise TypeError(f"Invalid D: {type(D).__name__} (must be the Derivations of derive_all())")
    brute_max_rel = number("brute_max_rel", brute_max_rel, 0.0)
    brute_points = integer("brute_points", brute_points, 1)
    rho, c = sp.symbols("rho c", positive=True)
    v = Verdicts("flat minima: derivation rows", display=False)
    ph = D.phi
    v.true("φ ≥ 0, C¹ at 0, 0 ≤ φ'' ≤ 1 on each piece: convex and 1-smooth (β = 1)",
           ph.nonnegative and ph.c1_at_zero and ph.curvature_range == (0, 1), kind="consistency", source="derived",
           measured=f"φ'' ∈ [{ph.curvature_range[0]}, {ph.curvature_range[1]}]", note="sympy, piece by piece")
    v.true("φ' = min(u, 0) is 1-Lipschitz (three sign cases)", ph.lipschitz_ok, kind="consistency", source="derived",
           measured=", ".join(f"{k}: {sp.simplify(e)}" for k, e in ph.lipschitz_cases.items()),
           predicted="each |u − v| − |φ'(u) − φ'(v)| ≥ 0")
    v.true("F(w) = E f(w; z) = ½ Σ φ(w_i), and F ≤ ¼ on the unit ball", D.population.identity_ok
           and D.population.max_on_ball == sp.Rational(1, 4), kind="consistency", source="derived",
           measured=f"E[zφ] = {D.population.expectation}, max = {D.population.max_on_ball}")
    sh = D.sharpness
    v.true("orthant sharpness: ρ(t − w) − t(ρ − w) = −w(ρ − t) ≤ 0, so S_ρ(w) = max_i a_i(ρ − w_i)₊²/2",
           sh.lemma_ok and sh.two_coordinate_ok, kind="consistency", source="derived",
           measured=f"lemma = {sh.lemma}; two coordinates: linear in cos²θ", note="our proof (the paper's is unknown)")
    v.less(f"orthant sharpness: closed form = brute force (sphere search + SLSQP) at {brute_points} random points "
           "(max rel. error)", brute_max_rel, 1e-6, kind="consistency", source="derived",
           basis="model: SLSQP (ftol 1e-15) converges to ≲ 1e-12 relative; 1e-6 allows a poorly started polish",
           note="d = 3, n = 5, seen w_i ∈ [0, 0.8ρ] ∪ [ρ, 1.5ρ]")
    e = D.erms
    v.true("flat ERM: F̂ = 0, S_ρ = 0, F = c²/4, ‖w‖² = #seen·ρ² + c²",
           e.flat_empirical == 0 and e.flat_sharpness == 0 and sp.simplify(e.flat_population - c**2 / 4) == 0,
           kind="consistency", source="reconstruction",
           measured=f"F̂ = {e.flat_empirical}, S_ρ = {e.flat_sharpness}, F = {e.flat_population}, "
                    f"‖w‖² = {e.flat_norm2}")
    v.true("sharp ERM w = 0: F = 0, S_ρ = ρ²·max a_i/2", e.sharp_population == 0
           and sp.simplify(e.sharp_sharpness - sp.Symbol("a_max", positive=True) * rho**2 / 2) == 0,
           kind="consistency", source="reconstruction", measured=f"F = {e.sharp_population}, S_ρ = {e.sharp_sharpness}")
    un = D.unseen
    v.close(f"P(some unseen) at d = {un.d}, n = {un.n}: float log1p/expm1 = exact sympy 1 − (1 − 2⁻ⁿ)^d",
            prob_some_unseen(un.d, un.n), un.prob_value, rtol=1e-12, kind="consistency", source="derived",
            basis="model: 30-digit evaluation vs double precision",
            note=f"E #unseen = d·2⁻ⁿ = {un.expected_value}")
    return v


def claim2_risk_test(empirical_ratio: float, sharpness_ratio: float, risk: float, norm: float, start_risk: float,
                     beta: float, n: int) -> bool:
    """Claim 2's risk test, the same for SA-GD and its controls, on the coupled instance: the end point is an ERM
    and flat (``F̂(w_T)`` and ``S_ρ(w_T)`` at most ``FLAT_FACTOR·S_ρ(w₀)``), its held-out ``F`` is at least
    ``OMEGA1·B²`` with ``B = max(1, ‖w_T‖)`` (Ω(1) on the scale of the ball that holds the run), while the start
    ``w₀`` — an empirical minimiser GD never leaves — has held-out ``F ≤ βB²/n`` (the optimal rate)."""
    emp = number("empirical_ratio", empirical_ratio, 0.0)
    ratio = number("sharpness_ratio", sharpness_ratio, 0.0)
    F = number("risk", risk, 0.0)
    B2 = max(1.0, number("norm", norm, 0.0)) ** 2
    F0 = number("start_risk", start_risk, 0.0)
    bt = number("beta", beta, 0.0, low_open=True)
    nn = integer("n", n, 1)
    return bool(emp <= FLAT_FACTOR and ratio <= FLAT_FACTOR and F >= OMEGA1 * B2 and F0 <= bt * B2 / nn)


#: The pilot of claim 2's risk row (coupled_study's design at seeds 9001–9040: 40 instances per dimension
#: d ∈ {48, 64, 96}, n = 4): the smallest, largest and mean ratio F(w_T)/max(1, ‖w_T‖)² and its sd, and the smallest
#: seen coordinate met / b — measured before the chapter's run; the threshold 0.1 is claim 1's, not set from them.
RISK_PILOT = {"min": 0.141, "max": 0.244, "mean": 0.209, "sd": 0.017, "min_seen_over_b": 0.010,
              "seeds": "9001–9040"}


def claim2_risk_verdicts(cs: CoupledStudy) -> Verdicts:
    """The rows of claim 2's risk part from a :class:`~.coupled.CoupledStudy`: SA-GD's flat end point on the coupled
    instance (a scan over d), against SA-GD at radii below the start's margin, SA-GD without the coupling and GD."""
    if not isinstance(cs, CoupledStudy):
        raise TypeError(f"Invalid cs: {type(cs).__name__} (must be a CoupledStudy)")
    v = Verdicts("flat minima: claim 2's risk (coupled instance)", display=False)
    inst = cs.instance
    beta = 1.0 + inst.lam
    n = cs.n

    def passes(run, risk: float, norm: float, start: float = 0.0) -> bool:
        return claim2_risk_test(run.empirical / run.sharpness0, run.sharpness / run.sharpness0, risk, norm, start,
                                beta, n)

    def shown(run, risk: float, norm: float) -> str:
        return (f"F = {risk:.3g} (F/B² = {risk / max(1.0, norm) ** 2:.3f}), "
                f"F̂/S_ρ(w₀) = {run.empirical / run.sharpness0:.1g}, S_ρ/S_ρ(w₀) = {run.sharpness / run.sharpness0:.2g}")

    ok = [passes(r, F, nr, F0) for r, F, nr, F0 in zip(cs.runs, cs.risk, cs.norm, cs.start_risk, strict=True)]
    ratios = [F / max(1.0, nr) ** 2 for F, nr in zip(cs.risk, cs.norm, strict=True)]
    j = cs.d.index(inst.d)
    w0_norm = inst.b * math.sqrt(inst.d)
    # Hoeffding: f(w; z) − ψ ∈ [0, Σφ(w_i)] = [0, 2(F − ψ)], so the held-out mean falls OMEGA1·B² short w.p. ≤ …
    hoeff = max(math.exp(-2 * cs.m * (F - OMEGA1 * max(1.0, nr) ** 2) ** 2 / max(2 * F, 1e-300) ** 2)
                for F, nr in zip(cs.closed_risk, cs.norm, strict=True))
    hoeff_txt = f"{hoeff:.1e}" if hoeff > 0 else "1e-300 (underflow)"
    best = int(np.argmax([F / max(1.0, float(np.linalg.norm(r.w))) ** 2 for F, r in zip(cs.small_risk, cs.small_runs,
                                                                                           strict=True)]))
    sr = cs.small_runs[best]
    s_norm = float(np.linalg.norm(sr.w))
    u_norm = float(np.linalg.norm(cs.uncoupled_run.w))
    v.true(f"claim 2: SA-GD's flat minimum has held-out F ≥ {OMEGA1:g}·B² (B = max(1, ‖w_T‖)) while the start "
           f"w₀ = b·1, an ERM, has F ≤ βB²/n — coupled instance, n = {n}, d ∈ {{{', '.join(map(str, cs.d))}}}",
           all(ok), kind="reproduces", source="paper", tests="claim2-risk",
           predicted=f"at every d: F̂(w_T), S_ρ(w_T) ≤ {FLAT_FACTOR:g}·S_ρ(w₀); F ≥ {OMEGA1:g}·B²; F(w₀) ≤ βB²/n",
           measured="; ".join(f"d = {d} (k = {k}): {shown(r, F, nr)}, F(w₀) = {F0:.2g}" for d, k, r, F, nr, F0 in
                              zip(cs.d, cs.k, cs.runs, cs.risk, cs.norm, cs.start_risk, strict=True)),
           control=[Control(f"SA-GD at a radius below the start's margin, ρ' = {cs.small_rho[best] / inst.b:g}·b "
                            f"(d = {inst.d}; best of ρ'/b ∈ {{¼, ½, ¾}})", passes(sr, cs.small_risk[best], s_norm),
                            shown=shown(sr, cs.small_risk[best], s_norm),
                            why="the same method on the same instance and start with a smaller flatness radius: if the "
                                "Ω(1) risk were what SA-GD does here whatever ρ (or an artefact of the start or the "
                                "coupling alone), it would pass; it reaches its own flat ERM and keeps F = 0",
                            tuned=f"same start w₀ = b·1, η = 1/β, flatness factor {FLAT_FACTOR:g} and step cap; ρ' "
                                  "on a 3-point grid {¼, ½, ¾}·b, the one with the largest F/B² shown (favouring the "
                                  "control)"),
                    Control(f"SA-GD on the uncoupled loss (λ = 0: the chapter's separable loss), same start (d = "
                            f"{inst.d})", passes(cs.uncoupled_run, cs.uncoupled_risk, u_norm),
                            shown=shown(cs.uncoupled_run, cs.uncoupled_risk, u_norm),
                            why="the ablation of the construction: is the risk the coupling's doing?",
                            tuned="same ρ, start, η = 1/β of the coupled loss, flatness factor and step cap",
                            weak="fails by construction: without the coupling no step touches an unseen coordinate"),
                    Control(f"GD (and SAM) from the same start, any η ∈ (0, 2/β) (d = {inst.d})",
                            cs.start_grad == 0.0 and passes(cs.runs[j]._replace(
                                w=np.full(inst.d, inst.b), empirical=0.0, sharpness=cs.runs[j].sharpness0),
                                cs.start_risk[j], w0_norm),
                            shown=f"max|∇F̂(w₀)| = {cs.start_grad:g}, so w_T = w₀: F = {cs.start_risk[j]:.2g}, "
                                  "S_ρ/S_ρ(w₀) = 1",
                            why="the algorithm without the ascent step: the sharp ERM it stays at generalises",
                            tuned="none needed: with ∇F̂(w₀) = 0 (computed sample by sample) every step size gives "
                                  "the same end point",
                            weak="fails by construction: ∇F̂(w₀) = 0, so GD and SAM never move")],
           basis=f"paper: Ω(1) read as ≥ {OMEGA1:g}·B² (claim 1's 0.1 = 40 % of ¼, the largest F/B² of the φ-part), "
                 f"'flat' as claim 2's 10⁻³; pilot: seeds {RISK_PILOT['seeds']} (40 instances × 3 dimensions) gave "
                 f"F/B² ∈ [{RISK_PILOT['min']:g}, {RISK_PILOT['max']:g}] (mean {RISK_PILOT['mean']:g}, sd "
                 f"{RISK_PILOT['sd']:g}; lowest at the most unseen coordinates — below 0.1 only past k ≈ 13 at d = 48, "
                 "probability < 1e-5 per instance); the threshold is claim 1's, not fitted; model: f − ψ ∈ "
                 "[0, Σφ(w_i)], so (Hoeffding) the held-out mean falls "
                 f"below {OMEGA1:g}·B² with probability ≤ {hoeff_txt} at the measured end points (closed-form F)",
           scan=Scan("d (n = 4; d = K·2ⁿ, K unseen on average)", tuple(cs.d), tuple(round(x, 4) for x in ratios)),
           note=f"an existence claim ('can have') on our coupled instance, not the paper's construction: f(w; z) = "
                f"Σ z_i φ(w_i) + (λ/2)(⟨u, w⟩ − τ)₊², u = 1/√d, λ = {inst.lam:g} (β = {beta:g}), start b·1 with "
                f"τ = b√d, ρ = {inst.rho / inst.b:g}b, b = {inst.b * inst.d:g}/d. Every flat ERM has Σ_unseen w_i ≤ "
                "db − √dρ − #seen·ρ < 0, so flatness itself forces the risk; SA-GD is shown to get there from a "
                "start with F = 0. The scan measures F/B² (the row's quantity) at each d")
    v.true("SA-GD on the coupled instance stays on the orthant (every seen w_i ≥ 0), where the exact inner max "
           "holds — smallest seen coordinate met / b, over the scan and the controls",
           all(r.min_seen >= 0 for r in cs.runs + cs.small_runs + (cs.uncoupled_run,)), kind="consistency",
           source="derived", predicted="≥ 0",
           measured=f"{min(r.min_seen / inst.b for r in cs.runs + cs.small_runs + (cs.uncoupled_run,)):.3g}",
           note="coupled_sa_gd raises if a seen coordinate turns negative; the row shows the margin")
    v.true("SA-GD's end points lie near the flat set: Σ_unseen w_i(T) ≤ 0.8 × the flat-set bound db − √dρ − "
           "#seen·ρ (every flat ERM has Σ_unseen w_i ≤ the bound)",
           all(u <= 0.8 * bd for u, bd in zip(cs.unseen_sum, cs.flat_bound, strict=True)), kind="consistency",
           source="derived", predicted="ratio ≥ 0.8",
           measured=", ".join(f"d = {d}: {u / bd:.3f}" for d, u, bd in zip(cs.d, cs.unseen_sum, cs.flat_bound,
                                                                            strict=True)),
           note="the bound is sympy's (derivation rows); at S_ρ = 10⁻³S_ρ(w₀) SA-GD is not exactly on the flat set")
    z = z_threshold(_ALPHA, len(cs.d))
    dev = max(abs(F - C) / se if se > 0 else (0.0 if F == C else math.inf) for F, C, se in
              zip(cs.risk, cs.closed_risk, cs.risk_se, strict=True))
    v.less("held-out estimator on the coupled loss: max |held-out F − closed form| / s.e. over the scan", dev, z,
           kind="consistency", source="derived",
           basis=f"model: CLT, m = {cs.m}; two-sided, Bonferroni over {len(cs.d)} end points, false alarm ≤ 1e-3",
           note="F = ½Σφ(w_i) + ψ(⟨u, w⟩ − τ) in closed form; the held-out draws see every coordinate")
    return v


def _flat_bound_lp_gap(bound: sp.Expr) -> float:
    """Largest |max Σ_unseen w_i − bound| over the scan's instances (:func:`~.coupled.coupled_instance` at its default
    design, seed 0, for each expected unseen count of ``COUPLED_UNSEEN``): the maximum by a linear program over the
    flat set's constraints (w_i ≥ ρ on the seen coordinates, ⟨1, w⟩/√d ≤ τ − ρ), the bound by substituting the
    instance's d, b, ρ and unseen count k into sympy's expression — two independent computations."""
    from scipy.optimize import linprog

    d_, b_, rho_, k_ = sp.symbols("d b rho k", positive=True)
    gaps = []
    for unseen in COUPLED_UNSEEN:
        inst = coupled_instance(seed=0, unseen=unseen)
        d, k, b, rho, tau = inst.d, int((~inst.seen).sum()), inst.b, inst.rho, inst.tau
        cost = np.where(inst.seen, 0.0, -1.0)
        res = linprog(cost, A_ub=np.full((1, d), 1.0 / math.sqrt(d)), b_ub=[tau - rho],
                      bounds=[(rho, None) if x else (None, None) for x in inst.seen], method="highs")
        if res.status != 0:
            raise RuntimeError(f"flat-set LP failed at d = {d}: {res.message}")
        exact = float(bound.subs({d_: d, b_: b, rho_: rho, k_: k}))
        gaps.append(abs(-res.fun - exact))
    return float(max(gaps))


def coupling_verdicts(D: theory.Derivations, chk: CoupledCheck) -> Verdicts:
    """The coupled instance's sympy rows and its inner-max formula against brute force."""
    if not isinstance(D, theory.Derivations):
        raise TypeError(f"Invalid D: {type(D).__name__} (must be the Derivations of derive_all())")
    if not isinstance(chk, CoupledCheck):
        raise TypeError(f"Invalid chk: {type(chk).__name__} (must be a CoupledCheck)")
    v = Verdicts("flat minima: coupled instance derivations", display=False)
    c = D.coupling
    lam = sp.Symbol("lambda", positive=True)
    v.true("coupled loss: ψ ≥ 0, C¹ at 0, ψ'' ∈ {0, λ}; Hessian diag(z_i φ'') + ψ''uuᵀ has eigenvalues ≤ 1 + λ: "
           "convex, non-negative, (1 + λ)-smooth", c.psi_nonnegative and c.psi_c1 and c.psi_curvature == (0, lam)
           and sp.simplify(max(c.hessian_eigs, key=sp.default_sort_key) - (1 + lam)) == 0,
           kind="consistency", source="derived", measured=f"ψ'' ∈ {c.psi_curvature}, eigenvalues {c.hessian_eigs}",
           note="sympy; u = 1/√d has norm 1, so the rank-one term adds at most λ to the top eigenvalue")
    lp_gap = _flat_bound_lp_gap(c.flat_bound)
    v.less("flat set of the coupled instance: sympy's bound Σ_unseen w_i ≤ db − √dρ − (d − k)ρ against an LP (HiGHS) "
           "that maximises Σ_unseen w_i under w_i ≥ ρ (seen) and ⟨u, w⟩ ≤ τ − ρ, at the scan's designs (max |Δ|); "
           "attainment identity of the inner-max maximiser", lp_gap if c.attained == 0 else math.inf, 1e-6,
           kind="consistency", source="derived",
           basis="model: HiGHS's primal and dual feasibility tolerances (1e-7) on constraint values of order 1",
           note=f"bound = {c.flat_bound}; attainment residual {c.attained}; the scan's instances (d = K·2⁴, K ∈ "
                f"{COUPLED_UNSEEN}, seed 0), k their unseen coordinates")
    v.less(f"coupled instance: exact inner-max formula = brute force (sphere search + SLSQP) at {chk.points} random "
           "points (max rel. error)", chk.max_rel, 1e-6, kind="consistency", source="derived",
           basis="model: SLSQP (ftol 1e-15) and the golden-section refinement converge to ≲ 1e-10 relative; 1e-6 "
                 "allows a poorly started polish",
           note="d ≤ 16, every branch visited (σ ∈ [−2ρ, ρ], ρ/b ∈ [1, 4], λ ∈ [0.2, 2])")
    return v


def deterministic_verdicts() -> Verdicts:
    """The rows without randomness: sympy identities, the closed-form-vs-brute-force sharpness check (fixed
    points, seed 0) and SA-GD's step count against d and n (fixed instances, seeds 0–4)."""
    chk = sharpness_check()
    D = theory.derive_all()
    v = derivation_verdicts(D, chk.max_rel, chk.points)
    v.extend(coupling_verdicts(D, coupled_sharpness_check()))
    v.extend(rate_verdicts(rate_study()))
    return v


def seeded_verdicts(seed: int) -> Verdicts:
    """Exactly the stochastic rows the chapter shows, for ``seed``: claim 1 on 500 instances (d = 4096, n = 10,
    ρ = 1/(2√d), c = 0.8) with 10⁴ held-out draws and SA-GD (2¹⁵ steps) from a random start and from 0; claims
    2–3 on one instance (2¹⁵ steps); claim 4 on least
    squares for n ∈ {50, …, 800}."""
    s = integer("seed", seed, 0)
    v = Verdicts(f"flat minima (seed {s})", display=False)
    ds = dynamics_study(seed=s, device="cpu")
    v.extend(claim1_verdicts(claim1_study(seed=s, device="cpu")))
    v.extend(dynamics_verdicts(ds, pgd_seed=s))
    v.extend(claim2_risk_verdicts(coupled_study(seed=s)))
    v.extend(stability_verdicts(stability(ALGORITHMS, seed=s, device="cpu")))
    return v


def headline(st: Claim1Study, ds: DynamicsStudy, results: Sequence[StabilityResult], D: theory.Derivations,
             brute_max_rel: float, brute_points: int, rs: RateStudy, cs: CoupledStudy, cchk: CoupledCheck,
             seed: int = 0) -> Verdicts:
    """The chapter's table, from the chapter's own studies, with ``PAPER_CLAIMS``."""
    v = Verdicts("Flat minima — headline claims", claims=PAPER_CLAIMS)
    v.extend(derivation_verdicts(D, brute_max_rel, brute_points))
    v.extend(coupling_verdicts(D, cchk))
    v.extend(rate_verdicts(rs))
    v.extend(claim1_verdicts(st))
    v.extend(dynamics_verdicts(ds, pgd_seed=seed))
    v.extend(claim2_risk_verdicts(cs))
    v.extend(stability_verdicts(results))
    return v
