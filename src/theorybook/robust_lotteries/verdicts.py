"""Every verdict row the robust-lotteries chapter shows, and the paper's claims they test (Khalaf et al., ICML 2026).

Builders take the chapter's computations and return :class:`~theorybook.check.Verdicts`:

* :func:`derivation_verdicts` — the sympy/exact-LP checks (consistency rows of our reconstruction);
* :func:`world_verdicts` — rows on the true preferences of one world (the LP identities, and the Bradley–Terry
  row against a world whose groups agree);
* :func:`replicate_verdicts` — rows of the 20 sampled train/test replicates, among them the headline: the
  train–test gap of the guaranteed win rate, the same objective for both lotteries, on a shifted test population;
* :func:`guarantee_verdicts` — the maximal lottery's guarantee (Fishburn) fitted on sampled votes and scored on the
  true preferences of random worlds with a top cycle, against pure winners and other lotteries;
* :func:`headline` — all of them in one table with ``claims=PAPER_CLAIMS`` (what the chapter shows);
* :func:`seeded_verdicts` / :func:`deterministic_verdicts` — the sampled rows for a seed, and the rest.

Tolerances are fixed here, before any run, from the error model written in each row's ``basis``.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp
import torch

from ..check import Control, PaperClaim, Planted, Scan, Verdicts, z_threshold
from ..device import to_numpy
from ..validate import finite_tensor, integer, number
from .experiment import (
    CHAPTER_SEEDS,
    KAPPA,
    MILD_DISLIKE,
    N_CHOIX,
    N_TEST_MIXES,
    PER_PAIR,
    RHO_STAR,
    SHIFT_RHO,
    PreferenceWorld,
    ReplicateStudy,
    WorldSweep,
    _bt_fit,
    preference_world,
    replicate_study,
    shifted_populations,
    world_sweep,
)
from .lotteries import robust_lottery
from .studies import (
    BAD_GUARANTEE,
    CYCLE_KAPPA,
    CYCLE_SIGMA,
    LIPSCHITZ_CAP,
    Axioms,
    GuaranteeStudy,
    Sensitivity,
    TVSearch,
    axiom_checks,
    guarantee_study,
    sensitivity_study,
    tv_direct_search,
)

#: The gap row's threshold on the narrowing fraction 1 − gap_robust/gap_ML (pilot seeds 9011–9060, see the row).
GAP_NARROWING = 0.47
#: The ml-sensitive row's threshold: more than a tenth of the random worlds.
SENSITIVE_SHARE = 0.1
#: Fresh seeds for the gap row (digest §2.18): the robustness seeds 7001–7040 informed its statistic, so the row is
#: re-run on these, disjoint from them, from the pilot seeds and from the chapter's seed, and used for nothing else.
FRESH_GAP_SEEDS = tuple(range(8001, 8021))

__all__ = ["PAPER_CLAIMS", "CHAPTER_SEEDS", "BT_MISFIT", "FRESH_GAP_SEEDS", "derivation_verdicts", "world_verdicts",
           "replicate_verdicts", "guarantee_verdicts", "study_verdicts", "headline", "seeded_verdicts",
           "deterministic_verdicts", "bt_loses_somewhere", "bt_misfit", "bt_top_sets"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("bt-line", "Bradley–Terry forces heterogeneous preferences onto one line (a total order), which "
               "misleads when annotators disagree", where="abstract"),
    PaperClaim("ml-guarantee", "a maximal lottery is unexploitable: a model drawn from it wins against any opponent "
               "at least half the time (Fishburn)", where="introduction (Fishburn's guarantee; not in the abstract)"),
    PaperClaim("ml-sensitive", "maximal lotteries are sensitive to heterogeneity across annotators and prompts and "
               "can put weight on models that badly underperform for some subpopulation", where="abstract"),
    PaperClaim("robust-reliable", "robust lotteries give more reliable win-rate guarantees across the annotator "
               "distribution (LMArena, HUMAINE)", where="abstract", headline=True),
    PaperClaim("gap", "the train–test win-rate gap shrinks from ~6 % to ~2 %", where="§5 (results)",
               source="secondary"),
    PaperClaim("tv-lp", "the robust lottery is a worst case over a total-variation ball of population weights and "
               "is computed by a linear program", where="§4", source="secondary", quoted_only=True,
               reason_class="paper text unread",
               why="the paper's uncertainty set and its LP could not be read: the chapter's TV ball and its LP are our "
                   "reconstruction from secondary accounts, so the LP-against-direct-search row checks our LP against "
                   "our objective (a consistency row), not the paper's construction"),
    PaperClaim("stable-set", "robust lotteries recover a stable set of top models", where="abstract"),
    PaperClaim("axioms", "robust lotteries keep continuity, neutrality and monotonicity", where="§4",
               source="secondary", quoted_only=True, reason_class="paper text unread",
               why="no proof text could be read, so the axioms are checked on our reconstruction of the LP only "
                   "(studies.axiom_checks, consistency rows): neutrality under relabelling, monotonicity under "
                   "improvement, and continuity — the Lipschitz-type ratio ‖Δp‖₁/‖ΔM‖_max stays bounded as the "
                   "perturbation shrinks, at a point where the tie-broken argmax (a pure winner) jumps, its control. "
                   "They test our LP, not the paper's (whose axioms may be stated for a set-valued rule or another "
                   "uncertainty set), so the claim stays quoted"),
    PaperClaim("repro-4958", "an unofficial reproduction reports a held-out win rate of 49.58 % at ρ = 0.4 vs "
               "44.48 % for its baseline", where="third-party reproduction", source="secondary", quoted_only=True,
               reason_class="data not shippable", why="its data and its baseline are not known"),
)

_HIGHS_BASIS = ("model: HiGHS primal/dual feasibility tolerances 1e-10 on O(1) coefficients put LP values and "
                "optimal points within a few 1e-10 of exact")


def derivation_verdicts(cyc: Any, inner: Any, exact: Any, highs_value: float) -> Verdicts:
    """The exact checks of the derivation section (our reconstruction, so consistency rows): why each matters is
    said in its note."""
    for name, obj, attrs in (("cyc", cyc, ("ratio_check", "value", "nullity")),
                             ("inner", inner, ("symbolic_gap", "certificate_feasible", "n_instances")),
                             ("exact", exact, ("value_vertex", "value_dual"))):
        if not all(hasattr(obj, a) for a in attrs):
            raise TypeError(f"Invalid {name}: {type(obj).__name__} (must be the result of theory's derivation)")
    highs_value = number("highs_value", highs_value)
    v = Verdicts("robust lotteries: derivations", display=False)
    v.true("3-cycle: sympy solves Mᵀp = 0, Σp = 1 to p = (c, b, a)/(a+b+c), value 0, unique",
           cyc.ratio_check == sp.zeros(3, 1) and cyc.value == 0 and cyc.nullity == 1,
           kind="consistency", source="derived",
           measured=f"p − (c,b,a)/Σ = {list(cyc.ratio_check)}, value {cyc.value}, nullity {cyc.nullity}",
           note="exact symbolic solve: the closed form the tests use for the maximal-lottery solver")
    v.true("inner TV minimum: closed form = LP dual (symbolic certificate, regime ρ ≤ w₀ of the dearest slice)",
           inner.symbolic_gap == 0 and inner.certificate_feasible, kind="consistency", source="reconstruction",
           measured=f"gap {inner.symbolic_gap}, feasible {inner.certificate_feasible}",
           note="the dual is what turns the robust objective into one LP")
    v.equal(f"inner TV minimum: closed form = primal LP = dual LP on {inner.n_instances} rational instances (max |Δ|)",
            max(inner.max_primal_gap, inner.max_dual_gap), 0, kind="consistency", source="reconstruction",
            note="exact rational simplex (sympy) vs the greedy closed form that scores every lottery below")
    v.close("robust LP, rational instance: HiGHS dual form = exact vertex form (sympy)", float(highs_value),
            float(exact.value_vertex), atol=1e-9, kind="consistency", source="reconstruction", basis=_HIGHS_BASIS,
            note="two formulations, two solvers: the floating-point LP the experiment uses is the exact one")
    v.equal("robust LP, rational instance: exact inner dual at p* = exact vertex value", exact.value_dual,
            exact.value_vertex, kind="consistency", source="reconstruction", note="exact rationals")
    return v


#: The BT row's threshold: the line misstates some pooled win probability by more than 2 points.
BT_MISFIT = 0.02


def bt_misfit(world: PreferenceWorld) -> tuple[float, tuple[int, int]]:
    """``max_ij |σ(s_i − s_j) − P̄_ij|`` for the Bradley–Terry scores ``s`` fitted to the pooled true
    ``P̄ = Σ_k w₀_k P_k``, and the pair where it is largest: 0 exactly when P̄ is of Bradley–Terry form."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    Pp = torch.einsum("k,kij->ij", world.shares, world.P)
    s = _bt_fit(Pp, 0.0)
    fit = torch.sigmoid(s[:, None] - s[None, :])
    err = np.abs(np.asarray(to_numpy(fit - Pp), dtype=np.float64))
    i, j = np.unravel_index(int(np.argmax(err)), err.shape)
    return float(err.max()), (int(min(i, j)), int(max(i, j)))


def bt_top_sets(scores: Any, k: int) -> list[tuple[int, ...]]:
    """Per row of Bradley–Terry ``scores`` (R, m), the sorted tuple of the ``k`` best models (ties to the lower
    index): the leaderboard's top-k set."""
    sc = np.atleast_2d(np.asarray(to_numpy(finite_tensor("scores", scores)), dtype=np.float64))
    if sc.ndim != 2 or sc.shape[1] < 1:
        raise ValueError(f"Invalid scores: shape {sc.shape} (must be (R, m))")
    kk = integer("k", k, 1, sc.shape[1])
    return [tuple(sorted(int(i) for i in np.argsort(-row, kind="stable")[:kk])) for row in sc]


def bt_loses_somewhere(world: PreferenceWorld, leaders: int = 2) -> tuple[float, tuple[int, ...]]:
    """``max`` over the ``leaders`` best Bradley–Terry models i (fitted to the pooled true P) of
    ``min_{k, j ≠ i} P_k[i, j]``: below ½ when each of them loses to some model in some group (the diagonal,
    P = ½, is excluded). Returns the value and the leaders."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    L = integer("leaders", leaders, 1, world.P.shape[-1])
    P = np.asarray(to_numpy(world.P), dtype=np.float64)
    scores = to_numpy(_bt_fit(torch.einsum("k,kij->ij", world.shares, world.P), 0.0))
    top = tuple(int(i) for i in np.argsort(-np.asarray(scores), kind="stable")[:L])
    m = P.shape[-1]
    off = ~np.eye(m, dtype=bool)
    return float(max(P[:, i, off[i]].min() for i in top)), top


def _thurstone_misfit(world: PreferenceWorld) -> tuple[float, float]:
    """The bt-line row's rival law: one population with ``P_ij = Φ(c(ū_i − ū_j))`` (ū = Σ_k w₀_k u_k), the scale c
    fitted by least squares to the pooled true P̄; returns c and the Bradley–Terry misfit of that world."""
    from scipy.optimize import minimize_scalar
    from scipy.stats import norm

    u = np.asarray(to_numpy(world.utilities), dtype=np.float64)
    w0 = np.asarray(to_numpy(world.shares), dtype=np.float64)
    Pp = np.einsum("k,kij->ij", w0, np.asarray(to_numpy(world.P), dtype=np.float64))
    du = (w0 @ u)[:, None] - (w0 @ u)[None, :]
    c = float(minimize_scalar(lambda x: float(((norm.cdf(x * du) - Pp) ** 2).sum()), bounds=(0.01, 10.0),
                              method="bounded", options={"xatol": 1e-8}).x)
    ub = torch.as_tensor(w0 @ u, dtype=torch.float64)[None]
    Pt = torch.as_tensor(norm.cdf(c * du), dtype=torch.float64)[None]
    return c, bt_misfit(PreferenceWorld(ub, Pt, torch.ones(1, dtype=torch.float64)))[0]


def world_verdicts(sw: WorldSweep, world: PreferenceWorld) -> Verdicts:
    """Rows on the true margins of one world (deterministic)."""
    if not isinstance(sw, WorldSweep) or not isinstance(world, PreferenceWorld):
        raise TypeError("Invalid sw/world: must be a WorldSweep and the PreferenceWorld it was computed from")
    v = Verdicts("robust lotteries: true-P rows", display=False)
    r = sw.rhos
    i0 = int(np.argmin(np.abs(r)))
    v.less("ρ = 0 recovers the maximal lottery: max_i |p_0,i − p_ML,i|", float(np.abs(sw.robust[i0].p - sw.ml.p).max()),
           1e-7, kind="consistency", source="secondary", basis=_HIGHS_BASIS,
           note="immediate from the definition (TV ball of radius 0 = {w₀}); checks that two different LPs (the "
                "robust dual form on the K slices, Fishburn's LP on the pooled M̄) agree where they must — the "
                "pooled lottery is unique here (model A is the pooled Condorcet winner)")
    lp = np.array([x.value for x in sw.robust])
    v.less(f"dual-form LP = vertex-form LP at every ρ (max |Δ| over the {r.size} radii)",
           float(np.abs(lp - sw.vertex_values).max()), 1e-7, kind="consistency", source="reconstruction",
           basis=_HIGHS_BASIS, note="LP duality for the inner TV minimum vs enumeration of the TV-ball vertices")
    v.less("closed-form worst case of p_ρ = its LP value (max |Δ| over ρ)",
           float(np.abs(sw.worst_robust - lp).max()), 1e-8, kind="consistency", source="reconstruction",
           basis=_HIGHS_BASIS, note="greedy mass transfer evaluated at the LP's p vs the LP's objective t: the "
                                    "closed form scores every lottery in the sampled study")
    v.greater("robust lottery's worst case ≥ the ML's worst case at every ρ (min over ρ of the difference)",
              float((sw.worst_robust - sw.worst_ml).min()), -1e-9, kind="consistency", source="reconstruction",
              basis=_HIGHS_BASIS, note="optimality of p_ρ (a solver check, not evidence for the paper: it holds in "
                                       "any world)")
    v.less("robust value non-increasing in ρ (max increase between consecutive radii)",
           float(np.diff(lp).max()), 1e-9, kind="consistency", source="reconstruction", basis=_HIGHS_BASIS,
           note="the TV balls are nested")
    mis, pair = bt_misfit(world)
    thur_c, thur_mis = _thurstone_misfit(world)
    K = world.P.shape[0]
    mild = preference_world(world.P.shape[-1], to_numpy(world.shares), 0.0, 0, boost=0.0, device=world.P.device)
    agree = preference_world(world.P.shape[-1], to_numpy(world.shares), 0.0, 0, noise=0.0, boost=0.0,
                             device=world.P.device)
    v.greater(f"BT's line misstates the pooled preferences: max over pairs of |σ(s_i − s_j) − P̄_ij| (largest at "
              f"models {pair[0]}, {pair[1]})", mis, BT_MISFIT, kind="reproduces", source="paper", tests="bt-line",
              control=[Control(f"the same {K} groups disagreeing only by utility noise σ_u = 0.3 (no boost, no "
                               "dislike)", bt_misfit(mild)[0],
                               why="a sceptic's null: any spread of tastes makes a one-line fit imperfect — the claim "
                                   "is that a line misleads when groups *disagree*, so mild noise must not be enough",
                               tuned="none needed: the same world generator and BT fit, the designed disagreement "
                                     "removed"),
                       Control(f"a world whose {K} groups agree (no noise, boost or dislike)", bt_misfit(agree)[0],
                               why="the one-line world: pooled preferences of Bradley–Terry form",
                               tuned="none needed: exact population fit",
                               weak="Bradley–Terry form by construction, so the misfit is 0 up to rounding"),
                       Control("one homogeneous population with a probit (Thurstone) link: P_ij = Φ(c(ū_i − ū_j)), "
                               f"ū the population-mean utilities, c = {thur_c:.3f} fitted to the pooled P̄",
                               thur_mis,
                               why="the rival law with as many free parameters: a line with another link; the misfit "
                                   "of a logistic line may come from the link, not from groups that disagree",
                               tuned="the scale c by least squares to the same pooled true P̄ (bounded scalar search); "
                                     "the same BT fit and the same threshold")],
              basis="model: 2 points of win probability is what a leaderboard resolves with ≈ 2500 votes per pair "
                    "(binomial s.e. 0.01, two s.e.); true P, no sampling",
              note="the line is fitted to the pooled true P (the infinite-data limit of pooled votes). It tests the "
                   "line, not a single winner: the maximal lottery's own pick (model A) also loses to some model in "
                   "some group, so 'the top model loses somewhere' could not tell BT from any winner")
    return v


_W0 = np.asarray(to_numpy(preference_world().shares), dtype=np.float64)


@lru_cache(maxsize=1)
def _tv_minority() -> float:
    """The minority's mean share under the planted shift (20 000 mixes uniform in the TV ball; seed 0)."""
    return float(shifted_populations(_W0, SHIFT_RHO, 20_000, 0)[:, -1].mean())


def _z(d: np.ndarray) -> float:
    sd = float(d.std(ddof=1))
    return float(d.mean() / (sd / math.sqrt(d.size))) if sd > 0 else math.copysign(math.inf, float(d.mean()))


def replicate_verdicts(st: ReplicateStudy) -> Verdicts:
    """The rows of the sampled study (the chapter shows them; the seed-robustness test re-runs them)."""
    if not isinstance(st, ReplicateStudy):
        raise TypeError(f"Invalid st: {type(st).__name__} (must be a ReplicateStudy)")
    R = st.certified.shape[0]
    if R < 2 or st.mild_diff.size < 2:
        raise ValueError("Invalid st: needs at least 2 replicates and 2 mild-world replicates (an s.e. is taken)")
    v = Verdicts("robust lotteries: sampled rows", display=False)
    a = int(np.argmin(np.abs(st.rhos - RHO_STAR)))
    rho = float(st.rhos[a])
    v.greater(f"maximal lottery is unexploitable on the sampled pooled M̂: min_j (M̂ᵀp)_j, worst of {R} replicates",
              float(st.ml_certified.min()), -1e-9, kind="consistency", source="paper", tests="ml-guarantee",
              basis=_HIGHS_BASIS,
              note="a best-response scan of M̂ᵀp (not the LP's reported t), but Fishburn's guarantee is the LP's own "
                   "optimum, so this checks the solver, not the paper: a consistency row. Its measurable version — "
                   "the fitted lottery scored on the true preferences of worlds with a top cycle — is the "
                   "reproduces row of guarantee_verdicts")
    if st.bt_choix_gap is not None:
        v.less(f"own Newton BT = choix ILSR on the pooled train votes (max |Δs|, first {min(R, N_CHOIX)} replicates)",
               st.bt_choix_gap, 1e-6, kind="consistency", source="derived",
               basis="model: Newton stops at |∇| ≤ 1e-13·N and ILSR at an L1 step of 1e-12; the MLE is unique, "
                     "so both land within ≈ 1e-9 of it",
               note="two algorithms for the same MLE: our BT is the one the chapter ranks with")
    z = z_threshold(1e-3)
    zbasis = (f"model: CLT over iid replicates (independent train and test votes), one-sided z > z_threshold(1e-3) "
              f"= {z:.2f}: a zero effect passes with probability ≤ 5e-4")
    best = np.maximum(st.ml_heldout[:, a], st.alt_heldout[:, :, a].max(1))
    d = (st.heldout[:, a] - best) / 2.0  # win-rate units
    d2 = (st.top2_heldout[:, a] - best) / 2.0  # the top-two hedge, the same statistic
    v.greater(f"held-out worst-case win rate over the TV ball ρ = {rho:g}: robust − the best of ML, uniform and BT "
              f"top-1 (per replicate), z over {R} replicates", _z(d), z, kind="not_specific", source="paper",
              tests="robust-reliable",
              control=[Control("the same statistic for the leaderboard's top-two hedge (½ on each of the two best "
                               f"Bradley–Terry scores; mean {d2.mean():+.4f})", _z(d2),
                               why="the simplest hedge without the paper's idea (no game, no uncertainty set, no LP): "
                                   "split the bet between the top two of the ranking the paper argues against — if it "
                                   "also beats ML, uniform and BT top-1 held out, the advantage is hedging, not "
                                   "robust optimisation",
                               tuned="fitted on the same train votes (the same Newton BT scores), scored on the same "
                                     "test votes and TV ball; no parameter; the same capacity: two models, the size "
                                     "of the robust lottery's modal support"),
                       Control(f"the same statistic in a milder world (the minority's dislike of A = {MILD_DISLIKE:g} "
                              f"instead of 3; {st.mild_diff.size} replicates): mean {st.mild_diff.mean():+.4f}",
                              _z(st.mild_diff),
                              why="a sceptic's alternative: the held-out advantage is an artefact of fitting a worst "
                                  "case on finite votes, present in any world; where the minority barely dislikes A "
                                  "there is little to hedge, and the advantage must vanish",
                              tuned="the same radius, votes per pair, seed and fitting; half the replicates (CPU "
                                    "budget), the z uses its own s.e.")],
              basis=zbasis,
              note=f"fitted on train votes, scored on independent test votes; mean {d.mean():+.4f} (win rate), SE "
                   f"{d.std(ddof=1) / math.sqrt(R):.4f}; the best alternative is chosen per replicate after scoring, "
                   "which favours the alternatives. The leaderboard's top-two hedge passes the same test (robust − "
                   f"hedge {(d - d2).mean():+.4f} per replicate): in this world the held-out advantage is that of "
                   "mixing A with model 1, which the ranking's top two already do, so the row holds but does not "
                   "tell the robust lottery from a hedge read off the leaderboard. The sceptic's review also tried the "
                   "robust pure winner (z 2.19 at the chapter seed) and the maximal lottery of equal group weights "
                   "(z 2.40): both fail here but pass on some robustness seeds (z up to 3.65 and 4.32 on 7001–7020), "
                   "the top-two hedge passed on all of them (z ≥ 13.7)")
    gap_ml = st.ml_gwr[:, 0] - st.ml_gwr[:, 1]
    gap_rob = st.gwr_train[:, a] - st.gwr_shift[:, a]
    pl_ml = st.ml_gwr[:, 0] - st.ml_gwr[:, 3]
    pl_rob = st.gwr_train[:, a] - st.gwr_tvshift[:, a]
    alt_pl = st.alt_gwr[:, :, 0] - st.alt_gwr[:, :, 3]
    f, f_pl = 1.0 - gap_rob.mean() / gap_ml.mean(), 1.0 - pl_rob.mean() / pl_ml.mean()
    v.less(f"train–test gap of the guaranteed win rate under a random shift (w ~ Dirichlet(κw₀), κ = {KAPPA:g}): "
           f"narrowing fraction 1 − robust (ρ = {rho:g}) gap / ML gap, ratio of means over {R} replicates",
           f, GAP_NARROWING, kind="differs", source="secondary", tests="gap", paper=2.0 / 3.0,
           paper_shown="≈ 6 % → ≈ 2 %: a narrowing fraction of 2/3 (LMArena/HUMAINE)",
           planted=Planted("a shift that favours the minority: test mixes uniform in the TV ball of radius "
                           f"{SHIFT_RHO:g} (mean minority share {_tv_minority():.2f} instead of "
                           f"{float(_W0[-1]):.2f})", f_pl,
                           effect=f"the gap narrows there by about the paper's factor: ML {pl_ml.mean():.4f} → robust "
                                  f"{pl_rob.mean():.4f}; the uniform lottery ({alt_pl[:, 0].mean():.4f}) and a 50/50 "
                                  f"hedge of A and model 1 ({alt_pl[:, 1].mean():.4f}) narrow it too, so that "
                                  "narrowing shows 'not a pure strategy', not robustness"),
           basis=f"pilot: seeds 9011–9060 (50 studies of {R} replicates): f ≤ 0.334 under the random shift and ≥ 0.597 "
                 f"under the planted shift; the threshold {GAP_NARROWING:g} is their midpoint. (A first design, "
                 "'no significant narrowing' z < 3.29 on 9001–9020, failed on robustness seed 7017 with z = 4.09: "
                 "the random-shift narrowing is small but not always zero. Robustness seeds 7001–7040 informed that "
                 f"change, so they are spent for this row: it is re-run on 20 fresh seeds {FRESH_GAP_SEEDS[0]}–"
                 f"{FRESH_GAP_SEEDS[-1]}, never used before, in tests/test_robust_lotteries.py)",
           note=f"the same objective for both lotteries (guaranteed win rate on the train votes at w₀ minus on the "
                f"test votes of {N_TEST_MIXES} random mixes, mean over mixes); gaps ML {gap_ml.mean():.4f}, robust "
                f"{gap_rob.mean():.4f}. A mean-zero shift lowers the pure ML's guarantee only through the concavity "
                "of the min, and the hedge buys little or no smaller gap. The comparison with the paper is in ratio "
                f"only: our ML gap is {100 * gap_ml.mean():.1f} points of win rate, the paper's ≈ 6 (real data, "
                "real annotator splits), so the absolute sizes are not comparable")
    modal = Counter(x[a] for x in st.supports).most_common(1)[0]
    k = len(modal[0])
    top_k = bt_top_sets(st.bt_scores, k)
    topk_mode = Counter(top_k).most_common(1)[0]
    bt_mode = Counter(int(t) for t in st.bt_top).most_common(1)[0]
    ml_mode = Counter(st.ml_supports).most_common(1)[0]
    thr = 1.0 - 0.5 / R
    v.greater(f"robust lottery (ρ = {rho:g}) recovers a stable set: share of the {R} replicates whose support is the "
              f"modal support {modal[0]}", modal[1] / R, thr, kind="not_specific", source="paper",
              tests="stable-set",
              control=[Control(f"the leaderboard's top-{k} set (the {k} best Bradley–Terry scores, as many models as "
                               f"the robust support; modal set {topk_mode[0]})", topk_mode[1] / R,
                               why="the sceptic's set of top models with no game theory: read a stable set off the "
                                   "ranking itself — the paper contrasts pluralistic winners with a single ranking, "
                                   "so the ranking's own top set is the rival, not only its winner",
                               tuned=f"fitted on the same train votes (Newton MLE, no parameter); the same capacity: k "
                                     f"= {k}, the size of the robust lottery's modal support"),
                       Control(f"the leaderboard's winner (BT top-1; modal model {bt_mode[0]})", bt_mode[1] / R,
                               why="the paper contrasts a stable set of top models with a single ranking's winner, "
                                   "which flips between near-tied models on resampled votes",
                               tuned="none needed: fitted on the same train votes (Newton MLE, no parameter)")],
              basis="exact: 'stable' read as the same support in every replicate (a share above 1 − 1/(2R))",
              note=f"the maximal lottery is as stable here ({ml_mode[1]}/{R} replicates at {ml_mode[0]}): model A is "
                   "the pooled Condorcet winner by a clear margin, so this world cannot show robust lotteries being "
                   f"*more* stable than maximal ones. Bradley–Terry's top-{k} set is as stable as the robust support "
                   f"({topk_mode[1]}/{R} at {topk_mode[0]}): its winner flips between the two near-tied leaders, its "
                   "top set does not, so stability of a set of top models does not tell the robust lottery from the "
                   "leaderboard in this world")
    return v


def guarantee_verdicts(gs: GuaranteeStudy) -> Verdicts:
    """The ml-guarantee row: Fishburn's guarantee of a maximal lottery fitted on sampled votes, scored against every
    pure opponent on the *true* preferences of random worlds with a top cycle, at the chapter's votes per pair; the
    scan over votes per pair is shown with it."""
    if not isinstance(gs, GuaranteeStudy):
        raise TypeError(f"Invalid gs: {type(gs).__name__} (must be the result of studies.guarantee_study)")
    if PER_PAIR not in gs.per_pairs:
        raise ValueError(f"Invalid gs: per_pairs {gs.per_pairs} (must include the chapter's {PER_PAIR})")
    a = gs.per_pairs.index(PER_PAIR)
    n, tol = gs.n_worlds, float(gs.tol[a])
    thr = 0.5 - tol
    v = Verdicts("robust lotteries: the guarantee in worlds with a top cycle", display=False)

    def below(x: np.ndarray) -> str:
        return f"{int((x < thr).sum())}/{x.size}"

    def sep(i: int) -> bool:
        t = 0.5 - float(gs.tol[i])
        return bool(gs.ml[i].min() >= t and all(x[i].min() < t for x in (gs.bt, gs.copeland, gs.borda,
                                                                             gs.bt_softmax, gs.smith))
                    and gs.uniform.min() < t)

    same = f"the same {n} worlds and votes"
    v.greater(f"a maximal lottery fitted on sampled votes is unexploitable on the true preferences: its worst-case win "
              f"rate against every pure opponent, min over {n} random worlds with a top cycle ({PER_PAIR} votes per "
              "pair and group)", float(gs.ml[a].min()), thr, kind="reproduces", source="paper", tests="ml-guarantee",
              control=[Control("the Bradley–Terry winner of the pooled votes (the leaderboard's pick)",
                               float(gs.bt[a].min()),
                               why="the deployed practice: report the top of the ranking; in a top cycle every model "
                                   "loses to some model, and the question is whether by more than sampling error",
                               tuned=f"{same}; Newton MLE with a unit ridge (the ML has no parameter)"),
                       Control("the empirical Copeland winner (most pairwise majorities on M̂, ties to Borda)",
                               float(gs.copeland[a].min()),
                               why="the social-choice sceptic's pure winner: a Condorcet-consistent rule that, unlike "
                                   "BT, reads the pairwise majorities themselves",
                               tuned=f"{same}; no parameter"),
                       Control("the model with the best average win rate (Borda winner of M̂)",
                               float(gs.borda[a].min()),
                               why="the simplest summary a practitioner would report: best against a random opponent",
                               tuned=f"{same}; no parameter"),
                       Control("the Bradley–Terry lottery p_i ∝ exp(s_i)", float(gs.bt_softmax[a].min()),
                               why="a sceptic's mixed alternative: randomise over the leaderboard — is any lottery "
                                   "built from the votes as safe?",
                               tuned=f"{same}; the same ridge-BT scores, softmax at their fitted scale"),
                       Control("the uniform lottery over the Smith set of M̂ (the empirical top cycle)",
                               float(gs.smith[a].min()),
                               why="the social-choice sceptic's set-valued answer: keep the top cycle the maximal "
                                   "lottery lives in, but drop its game-theoretic weights — is the support, not the "
                                   "LP's weights, what makes a lottery unexploitable?",
                               tuned=f"{same}; no parameter (the Smith set of the same M̂)"),
                       Control("the uniform lottery over all models", float(gs.uniform.min()),
                               why="'any mixture hedges': the lottery that needs no votes at all",
                               tuned="none needed: no parameter, no data")],
              scan=Scan("votes per pair and group n", gs.per_pairs, tuple(round(float(x), 4) for x in gs.ml.min(1)),
                        effect=tuple(sep(i) for i in range(len(gs.per_pairs)))),
              basis=f"model: Hoeffding for M̂ − M̄ (a sum over votes of terms of range 2w₀_k/n_k) with a union over "
                    f"the {n} worlds × {gs.m * (gs.m - 1) // 2} pairs at α = {gs.alpha:g}: in every world the fitted "
                    f"lottery's worst-case margin on M̄ is ≥ −max_ij |M̂_ij − M̄_ij| − 1e-9, so its win rate is "
                    f"≥ ½ − {tol:.4f} except with probability ≤ {gs.alpha:g} (studies.guarantee_tolerance)",
              note=f"worlds: σ_u = {CYCLE_SIGMA:g}, shares ~ Dirichlet({CYCLE_KAPPA:g}·1), kept when the true pooled "
                   f"M̄ has no Condorcet winner ({n} of {gs.drawn} drawn). Worlds below ½ − tol: ML {below(gs.ml[a])}, "
                   f"BT {below(gs.bt[a])}, Copeland {below(gs.copeland[a])}, Borda {below(gs.borda[a])}, BT lottery "
                   f"{below(gs.bt_softmax[a])}, Smith-set uniform {below(gs.smith[a])}, uniform "
                   f"{below(gs.uniform)}; mean worst-case win rate ML "
                   f"{gs.ml[a].mean():.4f}, BT {gs.bt[a].mean():.4f}. Even the best pure strategy chosen on the true "
                   f"M̄ (an oracle) reaches only {gs.best_pure.min():.4f} in the worst world: in these worlds no single "
                   "model can pass, which is the claim's point. Scan (votes per pair: ML min / tolerance / BT min): "
                   + "; ".join(f"{c}: {gs.ml[i].min():.4f} / {gs.tol[i]:.4f} / {gs.bt[i].min():.4f}"
                               for i, c in enumerate(gs.per_pairs))
                   + f". Fitted lotteries certify min_j (M̂ᵀp̂)_j ≥ {gs.ml_certified.min():.1e} on their own votes")
    return v


def study_verdicts(sens: Sensitivity, tvs: TVSearch, ax: Axioms) -> Verdicts:
    """Rows of the deterministic studies: random heterogeneous worlds (ml-sensitive), the LP against a direct
    worst-case search (tv-lp) and the axioms of our reconstructed LP (consistency)."""
    if not isinstance(sens, Sensitivity) or not isinstance(tvs, TVSearch) or not isinstance(ax, Axioms):
        raise TypeError("Invalid sens/tvs/ax: must be the results of sensitivity_study, tv_direct_search, axiom_checks")
    v = Verdicts("robust lotteries: studies", display=False)
    sg = np.asarray(sens.sigmas)
    a = int(np.argmin(np.abs(sg - 0.6)))
    c = int(np.argmin(sg))
    n = sens.n_worlds
    v.greater(f"maximal lotteries put weight on a model whose guaranteed win rate in some group is "
              f"< {BAD_GUARANTEE:g}: "
              f"share of {n} random heterogeneous worlds (σ_u = {sg[a]:g}, no designed dislike)",
              float(sens.ml_share[a]), SENSITIVE_SHARE, kind="not_specific", source="paper", tests="ml-sensitive",
              control=[Control(f"the Bradley–Terry winner in the same {n} worlds (fitted to the pooled true P): share "
                               "whose winner is such a model", float(sens.bt_share[a]),
                               why="the sceptic's rival: is the exposure to a model some group rejects a property of "
                                   "maximal lotteries, or of any single summary of pooled votes — the leaderboard the "
                                   "paper argues against included?",
                               tuned="none needed: the same worlds, the same pooled true preferences (the "
                                     "infinite-data limit of both rules), no parameter"),
                       Control(f"the same share in worlds whose groups barely differ (σ_u = {sg[c]:g})",
                               float(sens.ml_share[c]),
                               why="a sceptic's null: the maximal lottery picks a model that some group dislikes "
                                   "whatever the heterogeneity; the claim says the heterogeneity is the cause",
                               tuned="none needed: the same worlds' draws of shares and noise, scaled by σ_u")],
              scan=Scan("σ_u (heterogeneity of the random worlds)", tuple(sens.sigmas),
                        tuple(round(float(x), 4) for x in sens.ml_share)),
              basis=f"model: binomial over {n} worlds — a true share ≤ 0.02 exceeds {SENSITIVE_SHARE:g} with "
                    "probability < 1e-3",
              note=f"maximal-lottery shares over the scan {', '.join(f'{x:.3f}' for x in sens.ml_share)}; the "
                   f"Bradley–Terry winner's {', '.join(f'{x:.3f}' for x in sens.bt_share)} — as exposed, so the "
                   "row shows that heterogeneity exposes any pooled summary, not that maximal lotteries are more "
                   f"sensitive than the leaderboard; the robust lottery (ρ = {RHO_STAR:g}) does no better either "
                   f"({', '.join(f'{x:.3f}' for x in sens.robust_share)}): a larger support holds more models, and "
                   "an 'average' hedge need not avoid the one a group dislikes")
    err = max(abs(tvs.direct_at_lp - tvs.t_lp), max(0.0, tvs.best_searched - tvs.t_lp))
    err_half = max(abs(tvs.direct_at_half - tvs.t_half), max(0.0, tvs.best_searched - tvs.t_half))
    v.less(f"the robust LP computes the max–min over the TV ball (ρ = {RHO_STAR:g}): |LP value − direct search| (the "
           f"ball enumerated on {tvs.n_grid} grid points, the outer max over {tvs.n_search} lotteries)", err, 1e-9,
           kind="consistency", source="reconstruction",
           control=Control(f"the LP solved with the radius halved (ρ = {RHO_STAR / 2:g}: the TV distance ½‖·‖₁ read "
                           "as ‖·‖₁)", err_half, why="the commonest slip in a TV uncertainty set: a factor 2 in the "
                                                     "radius gives a plausible lottery and an optimistic value",
                           tuned="none needed: the same LP and the same direct search"),
           basis=_HIGHS_BASIS + "; the ball's vertices are grid points (w₀ and ρ are multiples of the step 0.01)",
           note=f"LP value {tvs.t_lp:.6f}; grid worst case at the LP's p {tvs.direct_at_lp:.6f}; best searched "
                f"lottery {tvs.best_searched:.6f} (none beats the LP). Our LP against our objective (the secondary "
                "account's, as we read it): a check of our reconstruction, not evidence that the paper's LP is ours — "
                "the paper's claim stays quoted. The halved radius is a bug model, kept as the check's control")
    v.less(f"neutrality of our robust LP: relabelled models give the relabelled lottery (max |Δp| over {ax.n_perm} "
           "permutations)", ax.neutrality_gap, 1e-7, kind="consistency", source="reconstruction", tests="axioms",
           basis=_HIGHS_BASIS + "; the optimum is unique here", note="our reconstruction, not the paper's proof")
    v.greater(f"monotonicity of our robust LP: raising model i's margins by ε = {ax.eps:g} never lowers p_i (min "
              f"over the {len(ax.support)} models of the support {ax.support} of the change)", ax.monotonicity_min,
              -1e-7, kind="consistency", source="reconstruction", tests="axioms", basis=_HIGHS_BASIS,
              note=f"our reconstruction, not the paper's proof. The minimum runs over the support, where p_i > 0 "
                   "could fall; off the support p_i starts at 0 and cannot (min change there "
                   f"{ax.monotonicity_off:.3g}), so including those models would show 0 whatever the LP does")
    if not ax.cont_ratio:
        raise ValueError("Invalid ax: no continuity scan (the pure robust winner never switches on the heterogeneity "
                         "path of this world)")
    eps = tuple(float(e) for e in ax.cont_eps)
    v.less(f"continuity of our robust LP: Lipschitz-type ratio ‖Δp‖₁/‖ΔM‖_max, max over ‖ΔM‖_max ∈ "
           f"{{{', '.join(f'{e:g}' for e in eps)}}} and {2 * (ax.n_dir + 1)} directions, at the point where the pure "
           f"robust winner switches (t = {ax.tie_t:.4f} on the heterogeneity path (1 − t)·M̄ + t·M_k)",
           max(ax.cont_ratio), LIPSCHITZ_CAP, kind="consistency", source="reconstruction", tests="axioms",
           control=Control("the tie-broken argmax: the single model with the best robust worst case (ties to the "
                           "lowest index)", max(ax.winner_ratio),
                           why="the pure winner a robust leaderboard would report: it must jump from one model to "
                               "the other where they tie, so ‖Δe‖₁ = 2 however small the perturbation",
                           tuned="none needed: the same instance, perturbations and closed-form worst case"),
           scan=Scan("perturbation size ‖ΔM‖_max", eps, tuple(round(float(x), 4) for x in ax.cont_ratio)),
           basis=f"model: where the LP's optimum is unique its solution is piecewise affine in M (a vertex p = B⁻¹b, B "
                 f"linear in M), so the ratio stays bounded as ε → 0, while a jump gives 2/ε = {2 / min(eps):.0e} at "
                 f"the smallest ε; the cap {LIPSCHITZ_CAP:g} (fixed before the run) sits three decades from both, and "
                 "HiGHS's 1e-10 tolerances add of order 1e-4 to the ratio at ε = 1e-6",
           note=f"ratio per ε: robust lottery {', '.join(f'{x:.4g}' for x in ax.cont_ratio)}; tie-broken argmax "
                f"{', '.join(f'{x:.4g}' for x in ax.winner_ratio)}. Our reconstruction, not the paper's proof: "
                "continuity of a single-valued rule holds only where the optimum is unique (at an exact tie of the "
                "LP itself, e.g. two clones, the solver's pick may jump too)")
    return v


def headline(cyc: Any, inner: Any, exact: Any, highs_value: float, sw: WorldSweep, world: PreferenceWorld,
             st: ReplicateStudy, sens: Sensitivity, tvs: TVSearch, ax: Axioms, gs: GuaranteeStudy, *,
             display: bool = True) -> Verdicts:
    """The chapter's table: derivations, true-P rows, studies and sampled rows, carrying ``PAPER_CLAIMS``."""
    if not isinstance(display, bool):
        raise TypeError(f"Invalid display: {display!r} (must be a bool)")
    v = Verdicts("Robust lotteries — headline claims", display=display, claims=PAPER_CLAIMS)
    v.extend(derivation_verdicts(cyc, inner, exact, highs_value))
    v.extend(world_verdicts(sw, world))
    v.extend(study_verdicts(sens, tvs, ax))
    v.extend(replicate_verdicts(st))
    v.extend(guarantee_verdicts(gs))
    return v


def seeded_verdicts(seed: int) -> Verdicts:
    """Exactly the sampled rows the chapter shows, for ``seed``: 20 replicates of 500 votes per pair and group on
    average in the world of seed 0, and the guarantee study's random worlds with a top cycle and their votes."""
    s = integer("seed", seed, 0)
    v = replicate_verdicts(replicate_study(preference_world(), PER_PAIR, s))
    v.extend(guarantee_verdicts(guarantee_study(seed=s)))
    return v


def deterministic_verdicts() -> Verdicts:
    """The derivation rows and the true-P rows of the chapter's default world."""
    from . import theory

    cyc, inner = theory.derive_three_cycle(), theory.derive_inner_tv_dual()
    Ms_q, w0_q, rho_q = theory.exact_instance()
    exact = theory.robust_lp_exact(Ms_q, w0_q, rho_q)
    highs = robust_lottery(np.array([np.array(M, dtype=float) for M in Ms_q]), np.array(w0_q, dtype=float),
                           float(rho_q))
    world = preference_world()
    v = derivation_verdicts(cyc, inner, exact, highs.value)
    v.extend(world_verdicts(world_sweep(world), world))
    v.extend(study_verdicts(sensitivity_study(), tv_direct_search(world), axiom_checks(world)))
    return v
