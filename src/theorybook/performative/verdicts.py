"""The chapter's experiment at verdict scale and its verdict rows (Rodemann et al., ICML 2026).

:func:`run_experiment` draws everything from one seed; :func:`seeded_verdicts` turns a run into exactly the
stochastic rows the chapter shows (the chapter calls it with ``CHAPTER_SEEDS[0]``; the seed-robustness test with
20 others); :func:`deterministic_verdicts` holds the rows without randomness (the authors' formulas, the paper's
case-study numbers, exact optimal transport and LP parity). Tolerances are fixed here, before any run, from
the error model written in each row's note.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ..check import Control, PaperClaim, Planted, Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import line_fit
from ..validate import integer, number
from .echo import Tradeoff, tradeoff
from .experiment import (
    TRUE_W,
    LogisticModel,
    Population,
    RetrainTrace,
    dro_labels,
    dro_risk,
    estimate_La,
    fit_logistic,
    flip_top_positives,
    loss_lipschitz,
    population,
    retrain,
    risk,
    scores,
    wasserstein,
)
from .theory import (
    NOTEBOOK_38,
    BoundTerms,
    cor38_bound,
    cor38_reading,
    drift_bound,
    flip_distance,
    log_drift_bound,
    thm313_bound,
    thm315_bound,
)

__all__ = [
    "CHAPTER_SEEDS", "Thm310Scan", "POPULATION_SIZE", "SAMPLE_SIZE", "SHARES", "RETRAIN_SIZE", "ROUNDS", "REGIMES",
    "Experiment", "run_experiment", "drift_rate", "synthetic_bound", "seeded_verdicts", "deterministic_verdicts",
    "PAPER_CLAIMS", "GAP_STEP", "headline", "GAMING_EPS", "SATURATION", "ROUND_SCAN", "SATURATION_SCAN", "thm310_scan",
    "saturation_scan",
]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("tradeoff", "Change vs learn: the more a model's predictions change the data it is retrained on, the "
               "larger its generalisation gap (the empirical echo chamber)", where="abstract", source="paper",
               headline=True),
    PaperClaim("cor3.8", "Under sample performativity the true risk is at most the empirical risk plus a sampling "
               "term and an in-sample drift term L_ℓ(m/n)^(1/p)𝒟 (Corollary 3.8)", where="Corollary 3.8",
               source="secondary"),
    PaperClaim("cor3.8-case", "Case study (n = 60,147, m/n = 0.030): generalisation bound ≈ 0.01 (sampling) + 0.29 "
               "(performative) ≈ 0.30 nats", where="Sec. 4 (case study)", source="secondary"),
    PaperClaim("thm3.10", "Under full performativity the performative term is governed by ε(1 + L_a): exponential "
               "growth in the retrainings T above 1, and it grows with m", where="Theorem 3.10", source="secondary",
               regime="retrainings T", quoted_only=True, reason_class="no measurable consequence",
               why="its inequality is the triangle inequality W(d̂₀, d̂_T) ≤ Σδ_t plus the one-step bound δ_(t+1) ≤ "
                   "ε(δ_t + ‖θ̂_(t+1) − θ̂_t‖) that Condition 3.2 gives, with ‖θ̂_(t+1) − θ̂_t‖ ≤ L_a δ_t by the "
                   "definition of L_a: on any transition that satisfies the conditions — every transition we can "
                   "build and check them on — it cannot fail (review 2026-12: the former 'reproduces' row, drift / "
                   "term ≤ 1 on the saturating transition, stayed ≤ 0.99997 over 25 random (ε, c, κ), and its "
                   "ε-only rival is exceeded whenever the response pushes the same way, as it does by "
                   "construction); the exponential growth is a property of the worst-case term, which a transition "
                   "attains only when built to (the chapter's consistency rows). The saturating scan stays in the "
                   "chapter as an illustration"),
    PaperClaim("thm3.13", "The generalisation gap is bounded by complexity + sampling + 2L_ℓR, the performative "
               "term dominating at large shares (Fig. 1.3)", where="Theorems 3.13, 3.15", source="secondary",
               quoted_only=True, reason_class="no measurable consequence",
               why="with the synthetic problem's constants the bound is ≥ 100× the measured gap, so 'gap ≤ bound' "
                   "cannot fail. Its structure, a performative term 2L_ℓR that does not shrink with n, was tried as "
                   "a scan of the gap over n at a fixed share (pilot seeds 9001–9004): the gap is flat in n, but so "
                   "is the gap under random label flips of the same share (fitted exponents within ±0.03 for both), "
                   "so flatness marks any fixed-share change of the data, not the performative term; the authors'-"
                   "constants shape is a check of their formula, not a measurement"),
    PaperClaim("echo", "The population self-negates (a W-DRO sup) while the sample self-fulfils (a min-min)",
               where="Theorems 3.13/3.15 discussion", source="secondary", quoted_only=True,
               why="an identification of two functionals, not a prediction: the measured self-negated and "
                   "self-fulfilled risks are feasible points of our label-shift ball [reconstruction], so they lie "
                   "between the sup and the min-min by construction (consistency rows), and our self-negation (the "
                   "top-score positives flip) is the sup's knapsack restricted to positives, so its nearness to the "
                   "sup is built in too; that the two sides move apart with the share is what the 'tradeoff' row "
                   "measures, against its controls",
               reason_class="no measurable consequence"),
    PaperClaim("cor3.11", "Predicting with the initial fit θ̂₀ and charging the observed per-round drifts "
               "tightens the guarantee", where="Corollary 3.11", source="secondary", quoted_only=True,
               reason_class="no measurable consequence",
               why="as the secondary account states it, both halves hold by construction: the observed charge "
                   "Σ_t W(d̂_(t−1), d̂_t) bounds the drift by the triangle inequality and, wherever Theorem 3.10's "
                   "one-step bound holds, can never exceed its worst case δ₁Σρ^s; how much it tightens is a property "
                   "of the world's transition, not of the corollary (on our saturating gaming transition the share "
                   "at T = 10 moves from near 0 to near 1 with the saturation constant c alone — the chapter's scan "
                   "over c), and θ̂₀'s held-out risk increase sits at a few per cent of the observed-drift bound "
                   "(Kantorovich–Rubinstein), so 'still holds' cannot fail either. In our translation worlds the "
                   "charge also equals the population's drift exactly, so a row on it would re-read Theorem 3.10's "
                   "measured drift. The former 'reproduces' row (share ≤ 0.9 at c = 0.3) passed because of c"),
    PaperClaim("thm3.16", "Retraining on the sample, then on the population: cumulative performative excess risk",
               where="Theorem 3.16", source="secondary", quoted_only=True,
               why="the secondary account gives no formula for how the sample phase's drift enters the population "
                   "phase, so there is no stated quantity to measure the cumulative excess against; the schedule was "
                   "not built here",
               reason_class="paper text unread"),
)

#: The least rise of the measured gap between consecutive shares that counts as "rises" (see seeded_verdicts).
GAP_STEP = 0.05

#: The seed the chapter runs with (the seed-robustness test uses 20 others).
CHAPTER_SEEDS = (0,)
#: Population N, sample n and the treated shares ξ of the change-vs-learn sweep.
POPULATION_SIZE = 20_000
SAMPLE_SIZE = 5_000
SHARES = tuple(float(x) for x in np.linspace(0.02, 0.5, 7))
#: Repeated retraining: sample size, rounds T and the two transition strengths ε (ε(1 + L_a) ≈ 0.76 and 1.27).
RETRAIN_SIZE = 2_000
ROUNDS = 10
REGIMES = (0.15, 0.25)
#: Theorem 3.10 on a transition *not* built to attain the one-step bound: the same gaming transition with a
#: saturating (tanh, scale c) arms race, its strength ε, and the retraining counts T scanned.
GAMING_EPS = 0.25
SATURATION = 0.3
ROUND_SCAN = (2, 4, 6, 8, 10)
#: The saturation constants c of the chapter's illustration of Corollary 3.11: its observed-drift charge, as a share
#: of Theorem 3.10's worst case at T = 10, is set by c (no row: the corollary is quoted, see PAPER_CLAIMS).
SATURATION_SCAN = (0.01, 0.1, 0.3, 1.0, 3.0)
#: Theorem 3.13 with this problem's constants uses the notebook's δ and p.
DELTA, P = 0.05, 2.0


class Experiment(NamedTuple):
    """Everything the chapter measures for one seed (CPU summaries; the population on the resolved device)."""

    seed: int
    pop: Population
    sample: Tradeoff  # sample performativity (Cor 3.8)
    full: Tradeoff  # full performativity (Thm 3.13, echo chamber)
    random: Tradeoff  # the tradeoff row's control: the same flips of random units (not the model's top scores)
    covariate: Tradeoff  # the tradeoff row's control: the same flips of units ranked by one covariate (no model)
    population_only: Tradeoff  # the tradeoff row's ablation: only the population reacts, the sample stays
    cor38: list[BoundTerms]  # Cor 3.8 with the synthetic constants, per share
    thm313: list[BoundTerms]  # Thm 3.13 with the synthetic constants, per share
    sup_pop: torch.Tensor  # label-shift W-DRO sup of the deployed θ̂_1 around the population, radius √(m_pop/N)
    inf_smp: torch.Tensor  # label-shift W-DRO inf of θ̂_1 around the sample, radius √(m/n)
    base_pop: float  # 𝓡(d_0, θ̂_1)
    L1: float  # L_ℓ(θ̂_1)
    runs: dict  # ε → RetrainTrace
    oos: dict  # ε → (measured 𝓡(d_T, θ̂_0) − 𝓡(d_0, θ̂_0) on held-out units, Cor 3.11 bound L_ℓ(θ̂_0) Σ δ_t)
    pot_check: tuple[float, float]  # (POT W₂, translation W₂) for one transition step on 300 units
    gaming: RetrainTrace  # the saturating (non-linear) gaming transition, ε = GAMING_EPS, c = SATURATION
    gaming_oos: np.ndarray  # (len(ROUND_SCAN),): 𝓡(d_T, θ̂_0) − 𝓡(d_0, θ̂_0) on the held-out units, T ∈ ROUND_SCAN
    gaming_L0: float  # L_ℓ(θ̂_0) of the saturating run's initial fit
    retrain_idx: torch.Tensor  # (RETRAIN_SIZE,): the units every retraining run uses (the rest are held out)
    covariate_steps: tuple[float, ...] = ()  # per covariate j: the gap's smallest step when flips follow x_j alone


def synthetic_bound(tr: Tradeoff, i: int, *, n: int, p: float = P, delta: float = DELTA) -> tuple[BoundTerms, float]:
    """Theorem 3.13 with the synthetic problem's own constants for entry ``i`` of a :class:`Tradeoff`:
    𝒟_𝒵 = √5, L_ℓ = L_ℓ(θ̂_2), L_f = ‖w‖/4, F = C_∞ = sup_z ℓ(θ̂_2; z), r = max(m/n, m_pop/N, 1/n)."""
    if not isinstance(tr, Tradeoff):
        raise TypeError(f"Invalid tr: {type(tr).__name__} (must be a Tradeoff from tradeoff())")
    i = integer("i", i, 0, len(tr.shares) - 1)
    n = integer("n", n, 1)
    r = max(float(tr.r_sample[i]), float(tr.r_pop[i]), 1.0 / n)
    c_inf = float(tr.C_inf[i])
    return thm313_bound(n, min(r, 1.0), p=p, delta=delta, diam=math.sqrt(5.0), L_loss=float(tr.L_loss[i]),
                        L_f=float(tr.L_f[i]), F=c_inf, C_inf=c_inf), r


def run_experiment(seed: int, *, device=None) -> Experiment:
    """The chapter's stochastic experiment at verdict scale (≈ 0.4 s on one CPU core)."""
    seed = integer("seed", seed, 0)
    dev = resolve_device(device)
    with one_thread(dev):
        pop = population(POPULATION_SIZE, seed=seed, device=dev)
        samp = tradeoff(pop, SAMPLE_SIZE, SHARES, mode="sample", seed=seed + 1)
        full = tradeoff(pop, SAMPLE_SIZE, SHARES, mode="full", seed=seed + 1)
        rand = tradeoff(pop, SAMPLE_SIZE, SHARES, mode="random", seed=seed + 1)
        cov = tradeoff(pop, SAMPLE_SIZE, SHARES, mode="covariate", seed=seed + 1)
        cov_steps = tuple(float(np.diff(to_numpy(tradeoff(pop, SAMPLE_SIZE, SHARES, mode="covariate", seed=seed + 1,
                                                           covariate=j).gap)).min())
                          for j in range(pop.X.shape[1]))
        pop_only = tradeoff(pop, SAMPLE_SIZE, SHARES, mode="population", seed=seed + 1)
        c38 = [cor38_bound(float(samp.emp_risk[i]), SAMPLE_SIZE, float(samp.r_sample[i]), T=2, p=P, nu=4.0,
                           delta=0.1, diam=1.0, L_loss=float(samp.L_loss[i]), L_a=0.0, eps=1.0)
               for i in range(len(SHARES))]
        t313 = [synthetic_bound(full, i, n=SAMPLE_SIZE)[0] for i in range(len(SHARES))]
        theta1 = full.deployed
        Xs, ys = pop.X[full.sample_idx.to(dev)], pop.y[full.sample_idx.to(dev)]
        sup_pop = dro_risk(theta1, pop.X, pop.y, full.r_pop.sqrt(), "max").cpu()
        inf_smp = dro_risk(theta1, Xs, ys, full.r_sample.sqrt(), "min").cpu()
        base_pop, L1 = float(risk(theta1, pop.X, pop.y)), float(loss_lipschitz(theta1))
        # repeated retraining on the first RETRAIN_SIZE units of a fresh permutation; the rest are held out
        perm = torch.randperm(POPULATION_SIZE, generator=torch.Generator().manual_seed(seed + 2)).to(dev)
        tr_idx, held = perm[:RETRAIN_SIZE], perm[RETRAIN_SIZE:]
        runs: dict[float, RetrainTrace] = {}
        oos = {}
        for eps in REGIMES:
            tr = retrain(pop.X[tr_idx], pop.y[tr_idx], ROUNDS, eps)
            runs[eps] = tr
            # Corollary 3.11's recipe: predict out of sample with the initial fit θ̂_0 = G(d̂_0); the population
            # (held-out units) reacts with the same common shift v_T; bound its drift by the observed sample drifts
            th = tr.thetas[0].to(dev, pop.X.dtype)
            th0 = LogisticModel(th[:-1], th[-1], 1e-4)
            v_T = tr.shifts[-1].to(dev, pop.X.dtype)
            measured = float(risk(th0, pop.X[held] + v_T, pop.y[held]) - risk(th0, pop.X[held], pop.y[held]))
            oos[eps] = (measured, float(loss_lipschitz(th0)) * float(tr.step_drift.sum()))
        one = retrain(pop.X[tr_idx[:300]], pop.y[tr_idx[:300]], 1, REGIMES[-1])
        pot = (wasserstein(pop.X[tr_idx[:300]], one.features, 2.0), float(one.step_drift[0]))
        # Theorem 3.10 / Corollary 3.11 on the saturating transition (same sample, same held-out units)
        gaming = retrain(pop.X[tr_idx], pop.y[tr_idx], max(ROUND_SCAN), GAMING_EPS, saturation=SATURATION)
        th = gaming.thetas[0].to(dev, pop.X.dtype)
        th0 = LogisticModel(th[:-1], th[-1], 1e-4)
        base0 = float(risk(th0, pop.X[held], pop.y[held]))
        g_oos = np.array([float(risk(th0, pop.X[held] + gaming.shifts[T].to(dev, pop.X.dtype), pop.y[held])) - base0
                          for T in ROUND_SCAN])
        g_L0 = float(loss_lipschitz(th0))
    return Experiment(seed, pop, samp, full, rand, cov, pop_only, c38, t313, sup_pop, inf_smp, base_pop, L1, runs,
                      oos, pot, gaming, g_oos, g_L0, tr_idx.cpu(), cov_steps)


def drift_rate(trace: RetrainTrace) -> float:
    """Geometric growth factor of the per-round drift: exp of the least-squares slope of log δ_t against t."""
    if not isinstance(trace, RetrainTrace):
        raise TypeError(f"Invalid trace: {type(trace).__name__} (must be a RetrainTrace from retrain())")
    if len(trace.step_drift) < 3 or not bool((trace.step_drift > 0).all()):
        raise ValueError("Invalid trace: need ≥ 3 rounds with positive drift to fit a rate")
    t = np.arange(1, len(trace.step_drift) + 1, dtype=np.float64)
    return float(np.exp(line_fit(t, np.log(to_numpy(trace.step_drift))).slope))


class Thm310Scan(NamedTuple):
    """Theorem 3.10 and Corollary 3.11 read off one retraining run at the counts T of ``rounds``."""

    rounds: tuple[int, ...]
    drift: np.ndarray  # W₂(d̂₀, d̂_T), measured (exact: a translation)
    observed: np.ndarray  # Σ_{t≤T} δ_t, the observed per-round drifts (Corollary 3.11's charge)
    bound: np.ndarray  # δ₁ Σ_{s<T} (ε(1 + L̂_a))^s, Theorem 3.10's worst case
    rival: np.ndarray  # δ₁ Σ_{s<T} ε^s, the same bound without the model's response
    L_a: float  # L̂_a read off the run (same-round pairs)


def thm310_scan(trace: RetrainTrace, eps: float, rounds=ROUND_SCAN) -> Thm310Scan:
    """The measured accumulated drift W₂(d̂₀, d̂_T) of a run of :func:`retrain` against Theorem 3.10's drift term
    δ₁Σ_{s<T}(ε(1 + L̂_a))^s (L̂_a from the run's same-round pairs, :func:`estimate_La`), against the rival
    δ₁Σ_{s<T}ε^s that charges only the transition's ε-sensitivity, and the observed charge Σ_{t≤T}δ_t of
    Corollary 3.11, at each T of ``rounds`` (each ≤ the run's length)."""
    if not isinstance(trace, RetrainTrace):
        raise TypeError(f"Invalid trace: {type(trace).__name__} (must be a RetrainTrace from retrain())")
    eps = number("eps", eps, 0.0, 1.0, low_open=True)
    T_max = len(trace.step_drift)
    rounds = tuple(integer("rounds[i]", T, 1, T_max) for T in rounds)
    if not rounds:
        raise ValueError("Invalid rounds: empty (need at least one retraining count)")
    La = estimate_La(trace.theta_steps, trace.step_drift)
    d1 = float(trace.step_drift[0])
    W, cs = to_numpy(trace.total_drift), np.cumsum(to_numpy(trace.step_drift))
    idx = [T - 1 for T in rounds]
    return Thm310Scan(rounds, W[idx], cs[idx], np.array([drift_bound(T, eps * (1 + La), d1) for T in rounds]),
                      np.array([drift_bound(T, eps, d1) for T in rounds]), La)


def saturation_scan(ex: Experiment, saturations=SATURATION_SCAN, *, rounds: int = ROUND_SCAN[-1]) -> np.ndarray:
    """Corollary 3.11's observed-drift charge Σ_{t≤T}δ_t as a share of Theorem 3.10's worst case
    δ₁Σ_{s<T}(ε(1 + L̂_a))^s after T = ``rounds`` retrainings of the saturating gaming transition (ε =
    :data:`GAMING_EPS`, the chapter's retraining units), one entry per saturation constant c of ``saturations``
    (``None``: no saturation, the attaining transition). It shows that the tightening is set by the world's
    transition, not by the corollary."""
    if not isinstance(ex, Experiment):
        raise TypeError(f"Invalid ex: {type(ex).__name__} (must be an Experiment from run_experiment)")
    rounds = integer("rounds", rounds, 1, 50)
    cs = tuple(saturations)
    if not cs:
        raise ValueError("Invalid saturations: empty (need at least one saturation constant c)")
    cs = tuple(None if c is None else number("saturations[i]", c, 0.0, math.inf, low_open=True) for c in cs)
    dev = ex.pop.X.device
    idx = ex.retrain_idx.to(dev)
    X, y = ex.pop.X[idx], ex.pop.y[idx]
    out = []
    with one_thread(dev):
        for c in cs:
            tr = retrain(X, y, rounds, GAMING_EPS, saturation=c)
            sc = thm310_scan(tr, GAMING_EPS, (rounds,))
            out.append(float(sc.observed[-1] / sc.bound[-1]))
    return np.array(out)


def seeded_verdicts(seed: int, result: Experiment | None = None) -> Verdicts:
    """The chapter's stochastic verdict rows for ``seed`` (display off). Pass ``result`` to reuse a run."""
    seed = integer("seed", seed, 0)
    if result is not None and not isinstance(result, Experiment):
        raise TypeError(f"Invalid result: {type(result).__name__} (must be an Experiment from run_experiment, or None)")
    ex = run_experiment(seed) if result is None else result
    v = Verdicts(f"Performative learning theory: synthetic experiment, seed {seed}", display=False)
    S = len(SHARES)

    # --- Corollary 3.8 (sample performativity) ---------------------------------------------------------
    true38 = to_numpy(ex.sample.clean_risk)
    b38 = np.array([c.total for c in ex.cor38])
    no_drift = b38 - np.array([c.performative for c in ex.cor38])
    counted = no_drift + to_numpy(ex.sample.r_sample) * to_numpy(ex.sample.s_max)
    v.less(f"Cor 3.8: true risk 𝓡(d₀, θ̂₂) − bound, max over {S} shares", float((true38 - b38).max()), 0.0,
           kind="not_specific", source="secondary", tests="cor3.8",
           control=[Control("the same bound without its drift term (no performativity charged)",
                            float((true38 - no_drift).max()), why="the classical (non-performative) generalisation "
                            "bound a sceptic would say suffices", tuned="none needed: the same constants, sample and "
                            "shares, only the drift term removed"),
                    Control("the same bound with the drift term replaced by counting: (m/n)·s_max(θ̂₂), the flipped "
                            "share times the largest loss change one flip can cause (no Wasserstein distance, no "
                            "(·)^(1/p))", float((true38 - counted).max()),
                            why="the elementary accounting a practitioner would write without the paper's W_p drift: "
                                "m of n labels changed, each moving the loss by at most |s| ≤ s_max",
                            tuned="none needed: the same θ̂₂, m/n, sampling term, sample and shares; s_max read off "
                                  "θ̂₂ on 𝒵 like the bound's L_ℓ")],
           basis="paper: Corollary 3.8's inequality itself (bound − true risk ≥ 0)",
           note="bound with this problem's L_ℓ(θ̂₂), exact drift (m/n)^½ and the notebook's C_a = C_b = 1; true "
                "risk measured on the N = 20,000 population. Without a drift term the bound fails, so some charge "
                "for the flips is needed; but the counting charge (m/n)·s_max, which is W₁ = m/n priced at s_max, "
                "holds too, so the test cannot tell the paper's (m/n)^(1/p) term from plain counting (review "
                "2026-12: the counting bound held on seed 0 and on the 20 unseen seeds 7001–7020; a test re-runs the "
                "one closest to failing, 7018)")

    # --- Theorem 3.13 (full performativity) -------------------------------------------------------------
    gap = to_numpy(ex.full.gap)
    gap_sample = to_numpy(ex.sample.gap)
    gap_rand = to_numpy(ex.random.gap)
    gap_cov = to_numpy(ex.covariate.gap)
    gap_pop = to_numpy(ex.population_only.gap)
    v.greater(f"measured gap rises with the share: smallest step between consecutive shares (≥ {GAP_STEP})",
              float(np.diff(gap).min()), GAP_STEP, kind="not_specific", source="paper", tests="tradeoff",
              control=[Control("random label flips at the same share (same counts and directions, units drawn "
                               "at random, not by the model's scores): same steps", float(np.diff(gap_rand).min()),
                               why="the data change, but not through the model's predictions: is it the echo "
                                   "chamber or any label noise of that size?",
                               tuned="none needed: the same sample, population, shares and refit"),
                       Control("sample performativity only (the population does not react): same steps",
                               float(np.diff(gap_sample).min()), why="the ablation without the population's "
                               "reaction", tuned="none needed: the same sample, shares and refit"),
                       Control("population performativity only (the sample, and so the retrained model, does not "
                               "react): same steps", float(np.diff(gap_pop).min()),
                               why="the ablation without the echo chamber's sample side: the classical performative "
                                   "setting, where the data the model is retrained on do not change",
                               tuned="none needed: the same sample, population, shares and flips of the population"),
                       Control("the same flips (counts and directions) of the units ranked by one covariate — the "
                               "one most correlated with the label in the undistorted sample, oriented towards risk "
                               "— instead of the model's scores: same steps", float(np.diff(gap_cov).min()),
                               why="a structured label shift that does not come from the model's predictions (a "
                                   "one-criterion rule, no model): is the rise the echo chamber, or any shift of "
                                   "that size aligned with risk, opposite in sample and population?",
                               tuned="none needed: the same sample, population, shares and refit; the covariate is "
                                     "chosen from the undistorted sample by a fixed rule, before any flip")],
              basis=f"model: one gap's sampling sd is ≈ sd(ℓ)/√n ≈ 0.01, a step's ≈ 0.014; {GAP_STEP} is 3.5 sd "
                    "above no rise",
              note="full performativity: the population self-negates while the sample self-fulfils. Random flips of "
                   "the same size, and the ablations in which only the sample or only the population reacts, do not "
                   "rise steadily; but the same flips of units ranked by one covariate (no model) do, so the test "
                   "cannot tell prediction-driven change from any risk-aligned label shift of the same size, "
                   "opposite in sample and population. Each single covariate x_j oriented towards risk (true "
                   "weights " + ", ".join(f"{w:g}" for w in TRUE_W) + "), same flips: smallest steps "
                   + ", ".join(f"x{j + 1}: {x:.3f}" for j, x in enumerate(ex.covariate_steps)))

    # --- the echo chamber as W-DRO sup / inf (label shifts) ---------------------------------------------
    d_pop, d_smp = to_numpy(ex.full.deployed_pop), to_numpy(ex.full.deployed_sample)
    sup_pop, inf_smp = to_numpy(ex.sup_pop), to_numpy(ex.inf_smp)
    rad = np.sqrt(to_numpy(ex.full.r_pop))
    v.less("self-negating population ≤ W-DRO sup (max excess over shares)", float((d_pop - sup_pop).max()), 1e-12,
           kind="consistency", source="reconstruction", basis="model: float64 round-off of a mean over 20,000 losses",
           note="the flips are a feasible point of the ball, so the knapsack optimum must dominate them")
    v.less("W-DRO sup ≤ Kantorovich–Rubinstein cap 𝓡 + L_ℓ ρ (max excess)",
           float((sup_pop - ex.base_pop - ex.L1 * rad).max()), 1e-12, kind="consistency", source="derived",
           basis="model: float64 round-off of a mean over 20,000 losses",
           note="invariant of the closed form: each flip gains |s| ≤ L_ℓ per unit of W₁ ≤ W₂")
    v.greater("self-fulfilling sample ≥ W-DRO inf (min excess over shares)", float((d_smp - inf_smp).min()), -1e-12,
              kind="consistency", source="reconstruction", basis="model: float64 round-off of a mean over 5,000 losses",
              note="feasible point vs the optimum, as above")

    # --- Theorem 3.10: the two regimes of repeated retraining ------------------------------------------
    for eps, tr in ex.runs.items():
        regime = "drift dies out" if tr.rho < 1 else "drift grows"
        v.close(f"our gaming transition attains Thm 3.10's one-step factor, ε = {eps}: drift factor = ε(1 + L_a) "
                f"({regime})", drift_rate(tr), tr.rho, rtol=0.02, kind="consistency", source="reconstruction",
                basis="model: the λ = 1e-4 shrinkage of b and the refit's small change of w, each ≲ 1%",
                note="exact by construction of the transition (the intercept absorbs a translation, so L_a = ‖w‖): "
                     "a check of our retraining code, not a test of the theorem")
        v.close(f"ε = {eps}: L̂_a read off the run (same-round pairs) = ‖ŵ₁‖",
                estimate_La(tr.theta_steps, tr.step_drift), tr.L_a, rtol=0.03, kind="consistency", source="derived",
                basis="model: the refit's change of w adds ≲ 2%",
                note="‖G(d̂_t) − G(d̂_{t−1})‖ / W₂(d̂_{t−1}, d̂_t); the refit's change of w adds ≲ 2%")
    v.close("transition step: W₂ by the identity coupling = exact OT (POT), 300 units", ex.pot_check[1],
            ex.pot_check[0], rtol=1e-8, kind="consistency", source="derived",
            basis="model: network simplex in float64 on 300 atoms; round-off ≲ 1e-12 relative",
            note="a translation: the identity coupling is optimal (Brenier); network simplex in float64")
    return v


def _lp_knapsack(gains: np.ndarray, budget: float) -> float:
    from scipy.optimize import linprog

    res = linprog(-gains, A_ub=np.ones((1, len(gains))), b_ub=[budget], bounds=[(0.0, 1.0)] * len(gains),
                  method="highs")
    return float(-res.fun)


def deterministic_verdicts() -> Verdicts:
    """Rows without randomness: exact OT of label flips, the authors' formulas, the paper's case-study terms,
    the log-space drift sum and the DRO closed forms against independent solvers."""
    v = Verdicts("Performative learning theory: formulas and exact identities", display=False)
    with one_thread():
        small = population(400, seed=7)
        fit = fit_logistic(small.X, small.y)
        y_flip, flipped = flip_top_positives(fit, small.X, small.y, 0.2)
        z0 = torch.cat([small.X, small.y[:, None]], 1)
        z1 = torch.cat([small.X, y_flip[:, None]], 1)
        m = int(flipped.sum())
        for p in (1.0, 2.0, 3.0):
            v.close(f"W_p of {m} label flips among 400 = (m/n)^(1/p), p = {p:g} (exact OT, POT)",
                    wasserstein(z0, z1, p), flip_distance(m, 400, p), rtol=1e-9, kind="consistency",
                    source="derived", basis="model: float64 round-off of the network simplex (≲ 1e-12 relative)",
                    note="network simplex vs the closed form")
        # label-shift DRO closed forms vs independent solvers
        X, y = small.X[:200], small.y[:200]
        s = to_numpy(scores(fit, X))
        gains = np.where(to_numpy(y) > 0.5, s, -s).clip(min=0)
        for rho in (0.1, 0.3):
            lp = float(to_numpy(risk(fit, X, y))) + _lp_knapsack(gains, rho**2 * 200) / 200
            v.close(f"label-shift W-DRO sup (binary labels), ρ = {rho}: knapsack = LP (HiGHS)",
                    float(dro_risk(fit, X, y, rho, "max")), lp, rtol=1e-9, kind="consistency",
                    source="reconstruction", basis="model: HiGHS's optimality tolerance 1e-9 on an O(1) objective",
                    note="closed form vs a linear-programming solver")
        yd = dro_labels(fit, X, y, 0.01, "max", labels="interval")
        a = np.where(np.sign(s) * (to_numpy(y) - 0.5) > 0, np.abs(s), 0.0)  # atoms whose label can move usefully
        holder = float(to_numpy(risk(fit, X, y))) + 0.01 * math.sqrt(float((a**2).mean()))
        v.close("label-shift W-DRO sup (labels in [0, 1]), p = 2, ρ = 0.01: water-filling = Hölder",
                float(risk(fit, X, yd)), holder, rtol=1e-9, kind="consistency", source="derived",
                basis="model: float64 round-off of a 200-term water-filling",
                note="no label reaches 0 or 1 at this radius, so the sup is ρ·(mean s²)^½ over the movable atoms")
    # the authors' formulas against an independent numpy evaluation (values from a secondary account)
    n_ref = 41_585
    for r, t13, t15 in ((0.01, 23.82, 7.41), (0.50, 43.67, 41.34)):
        v.close(f"Thm 3.13 total, authors' constants, n = 41,585, r = {r}", thm313_bound(n_ref, r).total, t13,
                atol=0.005, kind="consistency", source="derived", basis="model: printed to 2 decimals (±0.005)",
                note="same formula evaluated independently in numpy")
        v.close(f"Thm 3.15 total, authors' constants, n = 41,585, r = {r}", thm315_bound(n_ref, r).total, t15,
                atol=0.005, kind="consistency", source="derived", basis="model: printed to 2 decimals (±0.005)",
                note="as above")
    lo, hi = thm313_bound(n_ref, 0.01), thm313_bound(n_ref, 0.5)
    v.true("authors' constants, n = 41,585: the performative term rises with the share and overtakes the "
           "complexity term (Fig. 1.3's shape)", hi.performative > hi.complexity and hi.performative > lo.performative
           and lo.performative < lo.complexity, kind="consistency", source="paper",
           measured=f"r = 0.01: {lo.performative:.2f} vs {lo.complexity:.2f}; r = 0.5: {hi.performative:.2f} vs "
                    f"{hi.complexity:.2f}",
           note="the authors' formula at their constants; with the synthetic problem's constants the complexity "
                "term stays the largest (shown in the chapter), because the retrained weights grow with the share")
    c38 = cor38_bound(0.0, 60_147, 1_816 / 60_147, T=2, **NOTEBOOK_38)
    need = cor38_reading(0.29, 60_147, 1_816, L_loss=NOTEBOOK_38["L_loss"])
    c38_planted = cor38_bound(0.0, 60_147, 1_816 / 60_147, T=2, **{**NOTEBOOK_38, "L_a": need.L_a, "eps": 3.0})
    v.close("Cor 3.8 sampling term, case study n = 60,147: the notebook formula gives the printed 0.01", c38.sampling,
            0.01, atol=0.005, kind="consistency", source="paper", basis="model: the paper prints 2 decimals (±0.005)",
            note="the paper's number from the paper's own formula: a check of our transcription, not a measurement")
    v.between("Cor 3.8 performative term, case study m/n = 1,816/60,147", c38.performative, 0.10, 0.13,
              kind="differs", source="secondary", paper=0.29, tests="cor3.8-case",
              planted=Planted(f"the same formula at the case study's own m/n = 1,816/60,147 with L̃_a = "
                              f"{need.L_a_tilde:.3f} (L_a = {need.L_a:.3f}, ε = 3, T = 2), where the printed 0.29 "
                              "comes out", c38_planted.performative,
                              effect="the paper's 0.29 at the paper's response rate, through the one constant the "
                                     "secondary account leaves open (L̃_a)"),
              basis="model: the band holds the notebook reading 2·(m/n)^½/3 = 0.116 and excludes the other readings "
                    "(0.232 with L_a/(1+L_a), 0.348 without L̃_a)",
              note="the notebook formula with its defaults (L_ℓ ≈ 2, L_a = 2, ε = 3, T = 2) does not give the printed "
                   "0.29: a difference inside the paper's own materials (its exact constant is unknown)")
    exact = math.log((3**2000 - 1) // 2)  # an exact integer; math.log takes big ints
    v.close("log Σ_{s<2000} 3^s in log space = exact rational arithmetic", log_drift_bound(2000, 3.0, 1.0), exact,
            rtol=1e-13, kind="consistency", source="derived", basis="model: float64 log-sum-exp round-off ~1e-15",
            note="the sum is ≈ 10^954, beyond float range")
    return v


def headline(seed: int, result: Experiment | None = None, *, display: bool = True) -> Verdicts:
    """The chapter's table: :func:`deterministic_verdicts` and :func:`seeded_verdicts` of ``seed`` (``result``:
    reuse the chapter's run), carrying :data:`PAPER_CLAIMS`."""
    seed = integer("seed", seed, 0)
    if result is not None and not isinstance(result, Experiment):
        raise TypeError(f"Invalid result: {type(result).__name__} (must be an Experiment from run_experiment, or None)")
    if not isinstance(display, bool):
        raise TypeError(f"Invalid display: {display!r} (must be a bool)")
    v = Verdicts("Performative learning theory: headline claims", display=display, claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed, result))
    return v
