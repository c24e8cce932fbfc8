"""Every verdict row of the JoSE chapter, each reproduction with its control.

The paper's theorem and tables were read only through a third-party reading note ([secondary]); :data:`PAPER_CLAIMS`
lists what the chapter states. Builders:

* :func:`derivation_verdicts` — the chapter's sympy results and the switch-on bisection (passed in);
* :func:`capacity_verdicts` — Theorem C.1 against an SVD-free numerical maximum (control: equal power, no
  water-filling), against every other precoder (controls: PCA synergies, a random precoder), with an anisotropic
  noise where its whitening matters (controls: the unwhitened SVD, per-joint whitening), saturation and
  Corollary C.3;
* :func:`deterministic_verdicts` — the MuJoCo channel (analytic G vs finite differences, affinity, posture);
* :func:`seeded_verdicts` — Monte-Carlo information of a rollout against the closed form (consistency; control: a
  random precoder), the learned subspace (control: shuffled actions) and water-filling's active modes against a
  trained maximiser's over a power scan (consistency), re-run on 20 unseen seeds by a test;
* :func:`downstream_verdicts` — the downstream experiment from ``bench/results/jose_precoding.json`` (its number
  of seeds fixed by the pilot ``bench/results/jose_precoding_pilot.json``), each row with the paper's 2× speed-up
  planted in the JoSE arm, and the chapter's re-run of one of its seeds;
* :func:`headline` — all of them in the chapter's one table (it carries :data:`PAPER_CLAIMS`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp
import torch

from ..check import Control, PaperClaim, Planted, Scan, Verdicts, z_threshold
from ..device import one_thread, resolve_device
from ..validate import integer
from .core import gaussian_capacity, jose, precoder_capacity, principal_angles
from .downstream import CEMResult, compress, learning_speed
from .experiment import (
    _PLAYS,
    ANGLE_BOUND,
    ANISO_VARIANCES,
    BOOTSTRAP,
    CHAPTER_SEEDS,
    MC_POWER,
    MODE_TOL,
    NOISE,
    POSTURES,
    POWER_LOW,
    VERDICT_PLAY,
    CapacityCurve,
    Whitening,
    _finger,
    affinity_defect,
    channel,
    learning_curve,
    monte_carlo_mi,
    numeric_capacity_max,
    plugin_bias,
    reach_activations,
    switch_off_scan,
    whitening_study,
)

__all__ = ["PAPER_CLAIMS", "RESULTS", "deterministic_verdicts", "seeded_verdicts"]

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "jose_precoding.json"
PILOT = RESULTS.with_name("jose_precoding_pilot.json")
#: The Monte-Carlo row's pilot (``bench/jose_precoding_mc_pilot.py``, seeds 9001–9020).
MC_PILOT = RESULTS.with_name("jose_precoding_mc_pilot.json")


def mc_pilot() -> dict:
    """The committed Monte-Carlo pilot: deviations from the closed form (mean, sd, count below 0) and mean s.e."""
    return json.loads(MC_PILOT.read_text())
#: the registered outcomes of the downstream rows (the bench's seeds were fixed by the pilot before it ran)
DOWNSTREAM_KIND = "differs"
SAR_KIND = "differs"

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("empowerment", "Joint-space empowerment — the channel capacity from a latent action to the next joint "
               "velocities — quantifies how much control an agent has over its mechanical degrees of freedom, and "
               "identifies a low-dimensional action manifold of an over-actuated, tendon-driven hand.",
               where="abstract", source="paper", quoted_only=True, reason_class="no measurable consequence",
               why="a definition: JoSE is the objective the paper introduces. What the abstract claims of it that can "
                   "be measured is its closed-form optimal precoder (T_C1) and the sample efficiency of policies on "
                   "its manifold (downstream), each tested by its own rows; on our finger the manifold's dimension is "
                   "the number of joints (rank G = 4) by construction"),
    PaperClaim("T_C1", "The optimal precoder has a closed form under control-affine Gaussian dynamics (abstract): for "
               "y′ ~ N(f + Ga, Q) it spans the right singular vectors of Q^(−1/2)G, with water-filled powers — the "
               "MIMO capacity (Theorem C.1 [secondary]).", where="abstract", source="paper", headline=True),
    PaperClaim("C2", "Corollary C.2: any invertible change of basis inside the subspace gives the same capacity.",
               where="Corollary C.2", source="secondary", quoted_only=True,
               why="an algebraic identity of the capacity functional, not a property of any model: ΘA with "
                   "Σ' = A⁻¹ΣA⁻ᵀ gives the same action covariance ΘΣΘᵀ, hence the same ½ log det(I + G̃ΘΣΘᵀG̃ᵀ), for "
                   "every channel, learned or true. Any measurement of it — seeded random A applied to the learned "
                   "precoder, or sympy's one line of algebra — holds by construction, so it is no row; the chapter "
                   "prints sympy's identity in its derivation",
               reason_class="no measurable consequence"),
    PaperClaim("C3", "Corollary C.3: water-filling may switch weak modes off, so the optimal representation spans r "
               "dimensions without activating all of them.", where="Corollary C.3", source="secondary",
               quoted_only=True, reason_class="no measurable consequence",
               why="a property of the optimum of a concave program (the KKT conditions of ½ log det(I + G̃ΣG̃ᵀ) under "
                   "a power budget): any maximiser, closed-form or trained, switches the same modes off, so a "
                   "measurement can only check the optimiser. The chapter trains a full-width precoder by L-BFGS on "
                   "the learned channel over a power scan and finds water-filling's active-mode counts (a "
                   "consistency row); the alternatives a sceptic would name either keep every mode on (failing by "
                   "construction) or are rival rules of our own choosing, so no control fails for the paper's "
                   "reason"),
    PaperClaim("learned", "The manifold can be learned from play transitions with a control-affine Gaussian model and "
               "then reused (decoupled dynamics and task learning).", where="§3 (JoSEPi, transfer)",
               source="secondary"),
    PaperClaim("downstream", "Policies learned on the JoSE manifold are more sample-efficient than in the full action "
               "space (abstract: 'significantly enhanced … sample efficiency'); KeyTurn converges ≈2–3× faster (§4 "
               "[secondary]).", where="abstract", source="paper"),
    PaperClaim("sar", "JoSE's manifold beats SAR synergies (ICA + PCA of activations) for downstream learning.",
               where="§4 (transfer)", source="secondary"),
    PaperClaim("rank", "Table 7: rank 15 of the low-rank G is a good but not uniformly best choice on MyoHand.",
               where="Table 7", source="secondary", quoted_only=True, why="MyoHand is not simulated here",
               reason_class="paper-scale GPU"),
)

Z = z_threshold(1e-3)


def derivation_verdicts(*, mi_gap: Any, kkt: Any, p3_sympy: float, p3_bisection: float, interlacing: float,
                        affinity: Any) -> Verdicts:
    """The chapter's sympy rows (results of :mod:`theorybook.jose_precoding.theory`), the switch-on power against a
    bisection on ``water_filling``, and the interlacing defect over random precoders."""
    v = Verdicts("JoSE — derivations", display=False)
    v.equal("Gaussian MI: h(y) − h(n) = ½ log(1 + gp/s²) (sympy)", mi_gap, 0, kind="consistency", source="derived")
    v.equal("KKT: stationary powers of the 3-mode Lagrangian are p_i = ν − 1/g_i (sympy residual)", kkt.residual, 0,
            kind="consistency", source="derived", note="the water-filling form our jose() implements")
    v.close("switch-on power of the weakest mode: sympy's P₃ vs bisection on water_filling (finger's channel)",
            float(p3_bisection), float(p3_sympy), rtol=1e-9, kind="consistency", source="derived",
            basis="model: bisection to 80 halvings of [1e-9, 10]: error ≤ 10·2⁻⁸⁰ ≪ 1e-9 relative")
    v.less("interlacing: max σ_i(G̃Θ) − σ_i(G̃) over 500 random orthonormal Θ", float(interlacing), 1e-9,
           kind="consistency", source="derived",
           basis="model: Cauchy interlacing holds exactly; SVD round-off ≈ 16·ε·σ_max ≈ 1e-13",
           note="why the top-k right singular vectors beat every other k-frame")
    v.equal("one Euler step: ∂y′/∂a = h(M+hD)⁻¹Jᵀdiag(−F), ∂²y′/∂a² = 0 (sympy)",
            (affinity.gap == sp.zeros(*affinity.gap.shape), affinity.hessian_zero), (True, True), kind="consistency",
            source="derived", note="the control-affine model holds exactly for our plant")
    return v


def _margin(x: torch.Tensor, *others: torch.Tensor) -> float:
    """min over entries of ``x − max(others)`` (capacity curves of equal shape, nats)."""
    best = others[0]
    for o in others[1:]:
        best = torch.maximum(best, o)
    return float((x - best).min())


def capacity_verdicts(curves: dict[float, CapacityCurve], whitening: Whitening | None = None, *,
                      seed: int = CHAPTER_SEEDS[0]) -> Verdicts:
    """Theorem C.1 at the extended posture for both powers of ``curves`` (``{P: capacity_vs_k(...)}``), and with an
    anisotropic noise covariance (``whitening``: :func:`~theorybook.jose_precoding.experiment.whitening_study`; run
    here on the reaching controller's activations when not given)."""
    dev = resolve_device(None)
    if whitening is None:
        whitening = whitening_study(reach_activations(40, 50, seed=seed, device=dev), seed=seed, device=dev)
    if not isinstance(whitening, Whitening):
        raise TypeError(f"Invalid whitening: {type(whitening).__name__} (must be a Whitening from whitening_study())")
    v = Verdicts("JoSE — Theorem C.1 on the finger's channel", display=False)
    sat, margins = [], {"jose": [], "pca": [], "random": [], "unwhitened": []}
    for P, c in curves.items():
        ch = channel(POSTURES["extended"], P, device=dev)
        num = numeric_capacity_max(ch.G, ch.Q, P, seed=seed)
        sv2 = ch.jose.singular_values**2
        r = int((sv2 > 0).sum())
        equal = float(0.5 * torch.log1p(sv2[:r] * P / r).sum())
        # the 0 dB rule (the chapter's rival of Corollary C.3): equal power on the m strongest modes, m the largest
        # with σ_m²P/m ≥ 1 — a switch-off rule without water-filling's levels
        m0 = max([1] + [j for j in range(1, r + 1) if float(sv2[j - 1]) * P / j >= 1.0])
        zero_db = float(0.5 * torch.log1p(sv2[:m0] * P / m0).sum())
        V_raw = torch.linalg.svd(ch.G, full_matrices=True)[2].mT  # right singular vectors of G: Q ignored
        unwhitened = [float(precoder_capacity(ch.G, ch.Q, V_raw[:, :kk], P)) for kk in range(1, 16)]
        v.close(f"Theorem C.1: water-filling capacity = numeric max of ½ log det(I + G̃ΣG̃ᵀ) over Σ ⪰ 0, tr Σ ≤ P "
                f"(scipy L-BFGS, no SVD), P = {P:g}", num, float(ch.jose.capacity), atol=1e-4,
                kind="not_specific", source="secondary", tests="T_C1",
                control=[Control(f"equal power P/{r} on the {r} modes (no water-filling)", equal,
                                 why="the ablation of water-filling: same subspace, equal powers",
                                 tuned="none needed: same power budget P and modes"),
                         Control(f"the 0 dB rule: equal power on the {m0} strongest modes (σ_m²P/m ≥ 1)", zero_db,
                                 why="the simplest switch-off rule without water-filling's levels (the rival of the "
                                     "chapter's Corollary C.3 section)",
                                 tuned="none needed: no parameter; same power budget P and modes"),
                         Control("the unwhitened SVD of G (Q ignored), water-filled", unwhitened[3],
                                 why="the ablation of the theorem's whitening Q^(−1/2): the classic SVD precoder of "
                                     "the raw channel",
                                 tuned="none needed: same power budget, its own water-filled powers on the true "
                                       "channel")],
                basis="model: L-BFGS-B on a smooth concave objective to ftol 1e-15 / gtol 1e-11, best of 2 starts, "
                      "finds the optimum to ≪ 1e-6 nats; 1e-4 leaves room for the flat null-space directions",
                note="an SVD-free maximisation over all Σ = P·BBᵀ/‖B‖². With Q = σ²I the whitening is a rescaling, "
                     "so the unwhitened SVD gives the same capacity (sceptic's review): this row checks the "
                     "water-filled closed form, not the whitening (the anisotropic row does). The 0 dB rule's gap "
                     f"to the closed form here is {float(ch.jose.capacity) - zero_db:.1e} nats (tolerance 1e-4): "
                     "when it powers the same modes as water-filling and they are nearly equal, it passes too")
        jo = ch.jose
        for kk in range(5, 17):
            Th = jo.precoder[:, :kk]
            cap = gaussian_capacity(ch.G, ch.Q, Th @ torch.diag(jose(ch.G, ch.Q, P, k=kk).powers) @ Th.mT)
            sat.append(abs(float(cap) - float(c.jose[3])))
        ks = slice(0, 15)  # k = 1..15: at k = 16 every orthonormal frame spans the whole space
        J, Pc, R = c.jose[ks], c.pca[ks], c.random[:, ks]
        margins["jose"].append(float((J - torch.maximum(Pc, R.max(0).values)).min()))
        margins["pca"].append(float((Pc - torch.maximum(J, R.max(0).values)).min()))
        margins["random"].append(float((R[0] - torch.maximum(torch.maximum(J, Pc), R[1:].max(0).values)).min()))
        Uw = torch.as_tensor(unwhitened, dtype=J.dtype, device=J.device)
        margins["unwhitened"].append(float((Uw - torch.maximum(torch.maximum(J, Pc), R.max(0).values)).min()))
    n_rand = int(next(iter(curves.values())).random.shape[0])
    v.greater(f"Theorem C.1: JoSE-k minus the best other k-precoder ({n_rand} random + PCA synergies; k = 1…15, "
              "two powers; Q = σ²I), min (nats)", min(margins["jose"]), -1e-9, kind="not_specific",
              source="secondary", tests="T_C1",
              control=[Control("the unwhitened SVD-k of G (Q ignored) against the others", min(margins["unwhitened"]),
                               why="the ablation of the theorem's whitening: the classic SVD precoder of the raw "
                                   "channel (sceptic's review)",
                               tuned="none needed: same k and power budget, its own water-filled powers on the true "
                                     "channel"),
                       Control("PCA synergies (SAR proxy) against the others", min(margins["pca"]),
                               why="the competitor the paper names: synergies from activation statistics (SAR)",
                               tuned="none needed: same rank, power budget and optimiser"),
                       Control("a random precoder against the others", min(margins["random"]),
                               why="a precoder with no knowledge of the channel",
                               tuned="none needed: same rank and power budget",
                               weak="fails by construction: a random frame is almost surely suboptimal")],
              basis="model: optimality is exact; capacity round-off ≈ 1e-13 nats",
              note="each control is the same margin for another precoder. PCA and random frames fail; the unwhitened "
                   "SVD-k passes (it is JoSE-k when Q = σ²I, where whitening is a rescaling): this row tells the "
                   "SVD precoder from synergies, not Theorem C.1's whitening from its ablation — the anisotropic "
                   "row below does")
    w = whitening
    ks = slice(0, 15)
    J, U, D, Pc = w.jose[:, ks], w.unwhitened[:, ks], w.diagonal[:, ks], w.pca[:, ks]
    R = w.random[:, :, ks].max(1).values
    gain = (w.jose - w.unwhitened)[0, :4]
    p_txt = " and ".join(f"{p:g}" for p in w.powers)
    var_txt = ", ".join(f"×{x:g}" for x in ANISO_VARIANCES)
    v.greater(f"Theorem C.1's whitening, anisotropic Q (noise variances {var_txt} of σ² in a random basis): JoSE-k "
              "(right singular vectors of Q^(−1/2)G) minus the best other k-precoder (unwhitened SVD, per-joint "
              f"whitening, PCA synergies, {w.random.shape[1]} random; k = 1…15, P = {p_txt}), min (nats)",
              _margin(J, U, D, Pc, R), -1e-9, kind="reproduces", source="secondary", tests="T_C1",
              control=[Control("unwhitened SVD-k (right singular vectors of G: Q ignored) against the others",
                               _margin(U, J, D, Pc, R),
                               why="the ablation of the theorem's whitening: the same SVD of the raw channel",
                               tuned="none needed: same k and power budget, and its own optimal (water-filled) "
                                     "powers on the true channel"),
                       Control("SVD-k of diag(Q)^(−1/2)G (per-joint noise only) against the others",
                               _margin(D, J, U, Pc, R),
                               why="the natural half-measure: scale each joint by its own noise s.d., ignore the "
                                   "noise correlations",
                               tuned="none needed: same k and power budget, and its own optimal powers on the true "
                                     "channel")],
              basis="model: optimality is exact; capacity round-off ≈ 1e-13 nats",
              note="with Q = σ²I (the rows above) whitening is a rescaling and never matters; here it does: at "
                   f"P = {w.powers[0]:g} JoSE-k gains " + " / ".join(f"{float(x):+.3f}" for x in gain)
                   + " nats over the unwhitened SVD-k at k = 1…4 (at k = 4 = rank both span G's row space)")
    v.less("capacity with k = 5…16 (log det of the full covariance) minus capacity at k = rank = 4, max |Δ| (nats)",
           max(sat), 1e-9, kind="consistency", source="derived",
           basis="model: two computations (sum of water-filled logs vs log det), round-off ≈ 1e-13",
           note="true by construction (the extra directions lie in G̃'s null space); checks that precoder_capacity "
                "and jose agree past the rank")
    low = channel(POSTURES["extended"], POWER_LOW, device=dev).jose
    v.equal(f"Corollary C.3: at P = {POWER_LOW:g} water-filling switches the weakest of 4 modes off (active modes)",
            int((low.powers > 0).sum()), 3, kind="consistency", source="secondary",
            note="a property of the finger's spectrum and water-filling; our code's behaviour, not a measurement")
    return v


def deterministic_verdicts(*, device=None) -> Verdicts:
    """Rows without randomness: the MuJoCo channel against finite differences, affinity, posture dependence."""
    dev = resolve_device(device)
    f = _finger(NOISE, dev)
    v = Verdicts("JoSE precoding — MuJoCo channel rows", display=False)
    rel = []
    for q in POSTURES.values():
        G, B = f.G(q), f.G_finite_difference(q)
        rel.append(float((G - B).norm() / B.norm()))
    v.less("analytic G = h(M + hD)⁻¹J_tenᵀdiag(−F_max) vs mjd_transitionFD's B (centred differences), relative "
           "Frobenius error, both postures", max(rel), 1e-6, kind="consistency", source="derived",
           basis="model: central differences with ε = 1e-6 on an exactly affine step: error ≈ round-off/ε ≈ 1e-10; "
                 "the bound leaves four decades for MuJoCo's internal tolerances",
           note="the channel every other row uses is MuJoCo's")
    v.less("Euler step is affine in a: |y′(½(a+b)) − ½(y′(a) + y′(b))| / |y′(a) − y′(b)| over 20 random pairs",
           affinity_defect(f), 1e-9, kind="consistency", source="derived",
           basis="model: exact in exact arithmetic; round-off ≈ 1e-14")
    ang = principal_angles(channel(POSTURES["extended"], device=dev).jose.precoder[:, :4],
                           channel(POSTURES["flexed"], device=dev).jose.precoder[:, :4])
    v.greater("our finger's synergy subspace turns with posture: largest principal angle, extended vs flexed (deg)",
              float(ang[-1]), ANGLE_BOUND, kind="consistency", source="reconstruction",
              basis=f"model: {ANGLE_BOUND:g}° is the learned-subspace error bound of the learning row: a turn below it "
                    "could not be told from estimation error",
              note="a property of our tendon routing (moment arms change with posture), not a test of the paper: it "
                   "says the state-dependent Θ(s) matters on this plant")
    return v


def seeded_verdicts(seed: int, *, device=None) -> Verdicts:
    """The chapter's stochastic rows for ``seed``: Monte-Carlo information of a rollout (control: a random precoder),
    the learned subspace at the verdict play budget (control: actions shuffled against the transitions) and
    water-filling's active modes against a trained maximiser's over ``SWITCH_POWERS`` (consistency)."""
    seed = integer("seed", seed, 0)
    dev = resolve_device(device)
    _PLAYS.clear()  # play is simulated once for this call's rows, never reused from an earlier call
    v = Verdicts("JoSE precoding — sampled rows", display=False)
    with one_thread(dev):
        mc = monte_carlo_mi(seed, device=dev)
        mc_r = monte_carlo_mi(seed, precoder="random", device=dev)
        mc_f = monte_carlo_mi(seed, precoder="flexed", device=dev)
        lc = learning_curve((VERDICT_PLAY,), seed, device=dev)
        lc_s = learning_curve((VERDICT_PLAY,), seed, shuffle=True, device=dev)
        lc_0 = learning_curve((VERDICT_PLAY,), seed, degree=0, device=dev)
        sw = switch_off_scan(seed, device=dev)
    bias = plugin_bias(mc.k, 4, mc.n)
    mp = mc_pilot()
    atol = Z * mc.se * (1 + 1 / math.sqrt(2 * BOOTSTRAP))
    ang_f = float(principal_angles(channel(POSTURES["extended"], device=dev).jose.precoder[:, :mc.k],
                                   channel(POSTURES["flexed"], device=dev).jose.precoder[:, :mc.k])[-1])
    v.close(f"our closed form is the information a rollout carries: Monte-Carlo I(z; y′) − plug-in bias, {mc.n} "
            f"MuJoCo one-step rollouts through JoSE's frame (extended posture, P = {MC_POWER:g}) = "
            "½ log det(I + G̃ΘΣΘᵀG̃ᵀ)", mc.mi - bias, mc.closed_form, atol=atol, kind="consistency",
            source="derived",
            control=Control("the same powers on a random 4-frame (MC estimate − bias)",
                            mc_r.mi - plugin_bias(mc_r.k, 4, mc_r.n),
                            why="the same estimator on a frame that ignores the channel's geometry",
                            tuned="none needed: same samples, estimator and power budget"),
            basis=f"model: CLT band of z(1e-3) = {Z:.2f} bootstrap s.e. ({BOOTSTRAP} resamples; ×(1 + 1/√400) for "
                  f"the s.e.'s own sampling error); the plug-in bias +{bias:.4f} (exact, digamma) is subtracted. "
                  f"Pilot seeds 9001–9020: deviations {mp['mean']:.4f} ± {mp['sd']:.3f} ({mp['below']} of {mp['n']} "
                  f"below), bootstrap s.e. {mp['se_mean']:.3f}",
            note=f"checks our channel, closed form and estimator against MuJoCo's rollouts, not Theorem C.1's "
                 f"optimality: the band (±{atol:.3f} nats) is too wide to tell JoSE's frame from a nearby one — "
                 f"JoSE's frame of the flexed posture, {ang_f:.1f}° away, gives {mc_f.mi - bias:.3f} here, inside "
                 f"it. max |a − ½| = {mc.max_excursion:.3f} < ½, so clipping is inactive; the random frame's own "
                 f"closed form is {mc_r.closed_form:.3f} nats")
    v.less(f"learned (least squares, {VERDICT_PLAY} play steps) vs true JoSE subspace: largest principal angle at "
           "both postures (degrees)", float(lc.angles.max()), ANGLE_BOUND, kind="reproduces", source="secondary",
           tests="learned",
           control=[Control("activations shuffled against the transitions", float(lc_s.angles.max()),
                            why="the null: the same fit with the action–transition pairing broken",
                            tuned="none needed: same data, steps and optimiser"),
                    Control("a state-independent G (degree-0 features: one synergy set for every posture)",
                            float(lc_0.angles.max()),
                            why="the ablation of the state-dependent precoder Θ(s) the paper credits: fixed "
                                "synergies learned by the same least squares (sceptic's review)",
                            tuned="none needed: same play data, steps and fit; only the features of q dropped")],
           basis="pilot: seeds 9001–9010 gave 3.5–6.1° at 6000 steps (angle ≈ estimation error / weakest singular "
                 f"value); {ANGLE_BOUND:g}° fixed before the chapter's seeds were run",
           note="our reconstruction of the paper's learned model (least squares on quadratic features); a model "
                "linear in q (degree 1) passes too — it is the same control-affine idea, not an alternative to it")
    p_txt = ", ".join(f"{p:g}" for p in sw.powers)
    v.equal(f"water-filling's active modes on the channel learned from {VERDICT_PLAY} play steps = the modes powered "
            f"by an L-BFGS-trained capacity maximiser (no SVD, no water-filling) at P = {p_txt}",
            sw.trained, sw.water_filling, kind="consistency", source="derived",
            scan=Scan("power budget P", sw.powers, sw.trained),
            basis=f"pilot: seeds 9001–9010 (learned channels): powered eigenvalues of the trained Σ ≥ 0.065·P, "
                  f"unpowered ≤ 3e-16·P; a mode counts as active above {MODE_TOL:g}·P, fixed before the chapter's "
                  "seeds; every scanned P lies ≥ 1.35× from every pilot switch-on power",
            note=f"our water-filling derivation against a numerical optimum of the same concave program, so a check "
                 f"of the derivation and the optimiser, not of the paper (Corollary C.3 stays quoted). Water-filling "
                 f"on the true channel gives {sw.true}; a rival 0 dB rule (equal power on the modes with "
                 f"σ_m²P/m ≥ 1) gives {sw.rival}; the trained optimum's smallest powered eigenvalue is "
                 f"{sw.active_min:.3f}·P, its largest unpowered one {sw.inactive_max:.1e}·P, and its capacity matches "
                 f"water-filling's to {sw.capacity_gap:.1e} nats")
    return v


# -- the downstream experiment (issue 34) ----------------------------------------------------------------------------
def load_results(path: Path | str = RESULTS) -> dict:
    """The committed results of ``bench/jose_precoding.py`` (curves per arm and seed, configuration, machine), or
    of another bench file (``PILOT``: the pilot that fixed the number of seeds)."""
    return json.loads(Path(path).read_text())


def as_result(results: dict) -> CEMResult:
    """The committed curves as a :class:`CEMResult`."""
    cfg = results["config"]
    return CEMResult(tuple(cfg["seeds"]), tuple(cfg["arms"]), np.asarray(results["rollouts"]),
                     {a: np.asarray(c) for a, c in results["curves"].items()})


def _paired_t(a: np.ndarray, b: np.ndarray) -> float:
    """One-sided paired t of ``a − b`` over seeds (> 0: ``b`` is lower, i.e. learns faster)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    sd = float(d.std(ddof=1))
    return float(d.mean() / (sd / math.sqrt(d.size))) if sd > 0 else 0.0


def _boot_caught(a: np.ndarray, b: np.ndarray, thr: float, reps: int = 2000) -> float:
    """Bootstrap over seeds (``reps`` paired resamples, fixed stream): the share whose paired t of ``a − b`` exceeds
    ``thr`` — how often an experiment like this one would catch the planted effect."""
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(a), (reps, len(a)))
    return float(np.mean([_paired_t(a[i], b[i]) > thr for i in idx]))


def downstream_verdicts(results: dict, rerun: CEMResult | None = None, pilot: dict | None = None) -> Verdicts:
    """The downstream rows from the committed bench results (``load_results()``): JoSE latent vs the full space and
    vs the PCA latent by the pre-stated paired t, each with the paper's ≈2× speed-up planted in the JoSE arm's own
    curves (:func:`~theorybook.jose_precoding.downstream.compress`); ``pilot``: the pilot that fixed the number of
    seeds (``load_results(PILOT)``, read when not given); ``rerun``: the chapter's re-run of some of the bench's
    seeds, which must reproduce the committed curves."""
    from scipy.stats import t as student_t

    if not isinstance(results, dict) or "curves" not in results:
        raise TypeError("Invalid results: must be the dict of bench/results/jose_precoding.json")
    pilot = load_results(PILOT) if pilot is None else pilot
    if not isinstance(pilot, dict) or "delta_2x" not in pilot:
        raise TypeError("Invalid pilot: must be the dict of bench/results/jose_precoding_pilot.json")
    res = as_result(results)
    n = len(res.seeds)
    t_thr = float(student_t.ppf(1 - 1e-3, n - 1))
    sp_ = learning_speed(res)
    auc = {a: s.auc for a, s in sp_.items()}
    jose_2x = compress(res.curves["jose"], 2.0)
    pl = learning_speed(CEMResult(res.seeds, ("full", "jose"), res.rollouts,
                                  {"full": res.curves["full"], "jose": jose_2x}))["jose"]
    auc_2x = jose_2x.mean(1)
    t_pj, t_pj_2x = _paired_t(auc["pca"], auc["jose"]), _paired_t(auc["pca"], auc_2x)
    effect = ("the paper's ≈2× speed-up (KeyTurn; the low end of its 2–3×) in the JoSE arm's own runs: after j CEM "
              "iterations each seed's best-so-far has what it had after 2j (capped at its own final value), with "
              "the arm's own spread")
    design = (f"pilot: paired one-sided t at false alarm 1e-3, threshold t_{n - 1}(0.999) = {t_thr:.2f}; {n} seeds "
              f"fixed before the bench ran by the pilot (bench/jose_precoding_pilot.py, seeds "
              f"{pilot['seeds'][0]}–{pilot['seeds'][-1]}: the 2×-planted JoSE arm against the full space δ = "
              f"{pilot['delta_2x']['full']:.2f}, against PCA δ = {pilot['delta_2x']['pca']:.2f} paired s.d.; the "
              f"smallest n with power ≥ {pilot['power']:g} at the smaller is {pilot['design_n']})")
    v = Verdicts(f"JoSE — downstream: CEM reaching in the latent vs the full action space (bench, {n} seeds)",
                 display=False)
    v.less(f"JoSE-4 latent learns faster than the full 16-D space (sample efficiency): paired t of AUC(full) − "
           f"AUC(JoSE) over {n} seeds", sp_["jose"].t, t_thr, kind=DOWNSTREAM_KIND, source="paper",
           tests="downstream", paper=math.nextafter(t_thr, math.inf),
           paper_shown=f"the latent learns significantly faster (t > {t_thr:.2f})",
           planted=Planted("the JoSE arm's own curves compressed 2× in rollouts, same statistic", pl.t,
                           effect=effect),
           basis=design,
           note=f"a bootstrap over the {n} seeds catches the 2× plant in "
                f"{_boot_caught(auc['full'], auc_2x, t_thr):.1%} of resamples. Same statistic for the other arms: "
                f"PCA latent {sp_['pca'].t:.2f}, random 4-D latent {sp_['random'].t:.2f}, a second full-space run "
                f"(null) {sp_['null'].t:.2f}. The paper's own measure, the speed-up, is the next row (inconclusive: "
                "it cannot see the plant). Our instance — a 4-joint finger with a linear policy and CEM, "
                "where the full space's 12 extra directions only change co-contraction — is not SAC on the "
                "39-muscle MyoHand")
    n_it = len(res.rollouts)
    grid = n_it / (n_it // 2 + 1)
    full_2x = learning_speed(CEMResult(res.seeds, ("full", "x"), res.rollouts,
                                       {"full": res.curves["full"], "x": compress(res.curves["full"], 2.0)}))["x"]
    v.less("speed-up of the JoSE latent, the paper's measure ('≈2–3× faster'): budget / rollouts for its median "
           "curve to reach the full space's median final score", sp_["jose"].speedup, grid, kind="inconclusive",
           source="secondary", tests="downstream", paper=2.0,
           planted=Planted("the JoSE arm's own curves compressed 2× in rollouts, same speed-up measure", pl.speedup,
                           effect=effect),
           basis=f"exact: the speed-up takes values {n_it}/m on the {n_it}-iteration grid (0: never within the "
                 f"budget); 'below the paper's ≈2×' is ≤ {n_it}/{n_it // 2 + 1} = {grid:.3f}",
           note=f"the same {n} runs as the paired-t row, another statistic: not a second test. It is blind here — "
                f"JoSE's median final score ({float(np.median(res.curves['jose'][:, -1])):.4f} rad) never reaches "
                f"the full space's ({float(np.median(res.curves['full'][:, -1])):.4f}), and a plant capped at JoSE's "
                f"own final score cannot either ({pl.speedup:.2f}); a clean 2× of the full space's own curves gives "
                f"{full_2x.speedup:.3f}, on the bound, missed as well. Kept by the sceptic's review (it had been "
                f"dropped after its plant was seen to be missed): its 'inconclusive' does not move the claim, which "
                f"the paired-t row's 'differs' decides. Null {sp_['null'].speedup:.2f}, PCA latent "
                f"{sp_['pca'].speedup:.2f}, random latent {sp_['random'].speedup:.2f}")
    v.less(f"JoSE-4 latent learns faster than the PCA-4 latent (SAR proxy): paired t of AUC(PCA) − AUC(JoSE), {n} "
           "seeds", t_pj, t_thr, kind=SAR_KIND, source="secondary", tests="sar",
           paper=math.nextafter(t_thr, math.inf), paper_shown=f"JoSE's manifold beats SAR synergies (t > {t_thr:.2f})",
           planted=Planted("the JoSE arm's own curves compressed 2× in rollouts, same statistic", t_pj_2x,
                           effect=effect + "; the paper states no size for the SAR comparison, so its one stated "
                                           "size is used"),
           basis=design,
           note=f"a bootstrap over the {n} seeds catches the 2× plant in "
                f"{_boot_caught(auc['pca'], auc_2x, t_thr):.1%} of resamples. Our PCA synergies come from a "
                "reaching controller on the same task, a strong SAR proxy; the paper's comparison is a transfer to "
                "new objects")
    if rerun is not None:
        if not isinstance(rerun, CEMResult):
            raise TypeError(f"Invalid rerun: {type(rerun).__name__} (must be a CEMResult)")
        idx = [res.seeds.index(s) for s in rerun.seeds]
        gap = max(float(np.abs(rerun.curves[a] - res.curves[a][idx]).max()) for a in rerun.arms)
        v.less(f"the chapter's re-run of bench seed(s) {', '.join(map(str, rerun.seeds))} reproduces the committed "
               "curves (all arms, max |Δ| in rad)", gap, 1e-9, kind="consistency", source="derived",
               basis="model: MuJoCo, numpy and the seeded streams are deterministic on one machine; another CPU or "
                     "BLAS could flip an elite ranking (then this row fails and the bench must be re-run)",
               note=f"committed by bench/jose_precoding.py on {results['machine'].get('cpu', '?')} "
                    f"({results['machine'].get('cores', '?')} cores)")
    return v


def headline(*, derivations: dict, curves: dict[float, CapacityCurve], whitening: Whitening | None = None,
             rerun: CEMResult | None = None, seed: int = CHAPTER_SEEDS[0], display: bool = True) -> Verdicts:
    """The chapter's one table (it carries :data:`PAPER_CLAIMS`)."""
    v = Verdicts("JoSE — empowerment as optimal precoding on a MuJoCo finger", display=display, claims=PAPER_CLAIMS)
    v.extend(derivation_verdicts(**derivations))
    v.extend(capacity_verdicts(curves, whitening, seed=seed))
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed))
    v.extend(downstream_verdicts(load_results(), rerun))
    return v
