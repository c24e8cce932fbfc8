"""Every row the C-DEQ chapter shows, with its control, and the paper's claims they test.

* :data:`PAPER_CLAIMS` — the abstract's claims [paper] and the secondary summaries' NFE range [secondary].
* :func:`deterministic_verdicts` — sympy identities, the two time grids, ``picard_nfe_to`` and ``anderson2``.
* :func:`seeded_verdicts` — solver invariants on a random teacher drawn with ``seed`` (re-run on 20 unseen seeds by
  ``tests/test_seed_robustness.py``): our Picard, Anderson and Broyden against torchdeq and against each other.
* :func:`headline` — the rows on the chapter's trained runs: the digits teacher (A3) and the gated hard teacher (A1,
  A2, A4, S1), each claim against the alternatives a sceptic would pick — the truncated solvers, the 1-call maps
  without consistency training (linear readout, quasi-Newton step, the student-as-regressor) and the 0-NFE
  predictors. Where one of them passes the claim's test too, the row is "holds, not specific" and names it.
* :func:`chapter_table` — the chapter's one table (carries ``PAPER_CLAIMS``).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..check import Control, PaperClaim, Verdicts
from ..device import one_thread, to_numpy
from ..validate import integer
from .evaluation import Curve, cdeq_infer
from .experiment import GAIN, GATE_SCALE, LR_GRID, S_MIN, Run
from .model import LinearDEQ, digits_split, hard_teacher
from .solvers import anderson2, picard_nfe_to, solve, torchdeq_solve
from .training import _qn, linear_readout, quasi_newton, readout_features

__all__ = ["A1_FACTOR", "A3_DROP", "A3_NFE", "A4_NFE", "FEW_STEPS", "PAPER_CLAIMS", "PILOT", "S1_TARGET",
           "STATE_GAIN", "STATE_TOL", "a1_seeds_needed", "chapter_table", "deterministic_verdicts", "few_step_ratio",
           "headline", "seeded_verdicts", "statistics"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("A1", "Consistent 2–20× accuracy improvements over implicit DEQs under the same few-step inference "
                     "budget, across domains.", headline=True),
    PaperClaim("A2", "The student maps any intermediate state of the solver's trajectory directly to the fixed "
                     "point."),
    PaperClaim("A3", "Few-step inference keeps the teacher's performance."),
    PaperClaim("A4", "Multi-step evaluation trades compute for accuracy."),
    PaperClaim("S1", "1–8 function evaluations instead of tens.", source="secondary", where="secondary summary"),
)

#: The few-step budget of A1: NFE 1–8 (the secondary summaries' "1–8 function evaluations").
FEW_STEPS = 8
#: A1: the paper's low end — C-DEQ's test error at least 2× below the best truncated solver's at every NFE 1–8.
A1_FACTOR = 2.0
#: A2's bounds: the student's distance to z* from any trajectory state, and the ratio (from the last state ÷ from
#: z₀) that says it uses the state (pilot seeds 9001–9003, ``bench/results/cdeq_pilot.json``).
STATE_TOL, STATE_GAIN = 0.25, 0.75
#: A3: "keeps the teacher's performance" = the best test accuracy within A3_NFE calls is at most A3_DROP below the
#: exact equilibrium's (our threshold, fixed before the run; pilot drops in the json).
A3_NFE, A3_DROP = 4, 0.01
#: S1: the distance to z* that counts as "solved" (mean ‖ẑ − z*‖/‖z*‖), fixed before the run.
S1_TARGET = 0.1
#: A4: re-jump's error at NFE A4_NFE against NFE 1.
A4_NFE = 4
#: The pilot's statistics (seeds 9001–9003; copied from ``bench/results/cdeq_pilot.json``, a test checks they match).
PILOT: dict[str, tuple[float, ...]] = {
    "a1_margin": (0.5833333333333343, 0.6428571428571442, 0.9565217391304335),
    "a1_vs_solvers": (3.3333333333333406, 2.2631578947368385, 5.0),
    "a1_readout": (3.6363636363636407, 2.0526315789473655, 4.08333333333334),
    "a1_qn": (2.6666666666666705, 1.8571428571428568, 3.1818181818181834),
    "a1_regressor": (5.636363636363641, 3.3076923076923035, 3.888888888888881),
    "a2_max": (0.09224157173573405, 0.1024970021942112, 0.07853126870960517),
    "a2_ratio": (0.47764651275230163, 0.4364927704543823, 0.4031581465518792),
    "a2_qn_max": (0.1283215345288206, 0.12805881144736214, 0.09602360478427314),
    "a2_qn_ratio": (0.0006911890255881626, 0.0017177815147906967, 0.0001174968023244046),
    "a3_cdeq": (-0.0025188916876573986, -0.007556675062972196, -0.005037783375314797),
    "a3_solver": (-0.1335012594458438, -0.055415617128463435, -0.09068010075566746),
    "a3_explicit": (0.0, -0.007556675062972196, -0.007556675062972196),
    "a4_aug": (0.8267543517442519, 0.8734040810994337, 0.7698631688552283),
    "a4_plain": (1.27515278435056, 1.2941819137457573, 1.1363388344265788),
    "s1_cdeq": (1, 2, 1),
    "s1_solver": (10, 11, 9),
    "s1_readout": (1, 2, 1),
    "readout": (0.09756177138582675, 0.10786021538435331, 0.07371839548634197),
}
#: The few-step alternatives of A1's note (the best of them at each NFE is C-DEQ's margin): the truncated solvers,
#: the 1-call maps refined by Picard steps, and the 0-NFE predictors.
ALTERNATIVES = ("picard", "anderson", "broyden", "readout", "quasi-newton", "regressor-refine")
#: A ratio of errors whose denominator is 0 (a perfect predictor) is shown as this (≥ any threshold), not ``inf``.
RATIO_CAP = 1e12


#: The review's unseen seeds (``bench/cdeq_sceptic_seeds.py``): A1's single-run ratio on each, for A1's error model.
SPREAD = Path(__file__).resolve().parents[3] / "bench" / "results" / "cdeq_sceptic_seeds.json"


def a1_seeds_needed(ratios: Any, factor: float = A1_FACTOR, alpha: float = 1e-3, k_max: int = 99) -> tuple[float, int]:
    """A1's error model from a seed spread: with ln(ratio) ~ N(mean, sd) fitted to ``ratios`` (one trained run per
    seed), ``p`` = P(one run < ``factor``) and the least odd ``k`` whose median of k runs falls below ``factor`` with
    probability ≤ ``alpha`` (0 if none up to ``k_max``)."""
    from math import comb, erf, log, sqrt

    r = np.asarray(ratios, dtype=np.float64)
    if r.ndim != 1 or r.size < 2 or not np.all(r > 0):
        raise ValueError(f"Invalid ratios: {ratios!r} (need ≥ 2 positive numbers)")
    lg = np.log(r)
    z = (log(factor) - lg.mean()) / lg.std(ddof=1)
    p = 0.5 * (1 + erf(z / sqrt(2)))
    for k in range(1, k_max + 1, 2):
        if sum(comb(k, j) * p**j * (1 - p) ** (k - j) for j in range((k + 1) // 2, k + 1)) <= alpha:
            return p, k
    return p, 0


def _a1_spread() -> str:
    """What the committed seed spread implies for A1's single run (empty if the json is not there)."""
    if not SPREAD.exists():
        return ""
    runs = list(json.loads(SPREAD.read_text())["seeds"].values())
    a1 = [float(r["a1"]) for r in runs]
    below = sum(a < A1_FACTOR for a in a1)
    p, k = a1_seeds_needed(a1)
    # the sceptic's review: ratios of small error counts land exactly on the threshold, where ≥ is decided by float
    # round-off; and what the spread says about the claim as a statement over seeds (a sign test on the median)
    tie = sum(abs(a - A1_FACTOR) < 1e-9 for a in a1)
    ok = len(a1) - below
    sign = sum(math.comb(len(a1), j) for j in range(ok, len(a1) + 1)) / 2 ** len(a1)
    ns = sum(a >= A1_FACTOR and max(float(r["a1_ro"]), float(r["a1_qn"])) >= A1_FACTOR for a, r in zip(a1, runs,
                                                                                                        strict=True))
    return (f"; error model: A1 is one trained run — on the review's {len(a1)} unseen seeds its ratio spread "
            f"{min(a1):.2f}–{max(a1):.2f} and fell below {A1_FACTOR:g} on {below}; a log-normal fit gives "
            f"P(one run < {A1_FACTOR:g}) = {p:.2f}, so a single run's test misses the claim about that often (not "
            f"the 1e-3 of a statistical row); the median of k runs reaches 1e-3 at k = {k} trained seeds (≈ 11.7 s "
            f"CPU each, so ≈ {11.7 * k:.0f} s per evaluation and ≈ {11.7 * k * 21 / 60:.0f} CPU-minutes with the 20 "
            "robustness seeds), beyond the chapter's 60 s and this session's budget: the row stays one run, and "
            f"its outcome is this seed's. Sceptic's review of that spread: {tie} of the {len(a1)} ratios is exactly "
            f"{A1_FACTOR:g} (a ratio of error counts of a few images), passing ≥ {A1_FACTOR:g} only by float "
            f"round-off; the row's outcome with its controls (holds, not specific) recurs on {ns} of {len(a1)} seeds; "
            f"read as a claim about the median over seeds, {ok} of {len(a1)} at ≥ {A1_FACTOR:g} is a sign-test "
            f"p = {sign:.3f}, not 1e-3")


def few_step_ratio(run: Run, errors: Any = None, n_max: int = FEW_STEPS) -> float:
    """``min over n = 1..n_max`` of (the best truncated solver's test error at NFE n, over Picard, Anderson and
    Broyden) ÷ (``errors``' test error at n). ``errors``: a number (a 0-NFE control: the same at every n), an array of
    errors at NFE 1..n_max, or ``None`` for C-DEQ ("refine"). ``inf`` where the denominator is 0."""
    if not isinstance(run, Run):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a Run from run_experiment)")
    n_max = integer("n_max", n_max, 1, int(run.curves["anderson"].nfe.max()))
    c = run.curves
    best = np.min([1.0 - c[m].accuracy[:n_max] for m in ("picard", "anderson", "broyden")], axis=0)
    if errors is None:
        errors = 1.0 - c["cdeq-refine"].accuracy[:n_max]
    return _min_ratio(best, errors)


def _min_ratio(num: Any, den: Any) -> float:
    num = np.asarray(num, dtype=np.float64)
    e = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    with np.errstate(divide="ignore"):
        return float(np.min(np.where(e > 0, num / np.where(e > 0, e, 1.0), np.inf)))


def _least(curve: Curve, target: float) -> int:
    """Least NFE on a dense curve with mean distance ≤ target; ``len + 1`` (more than the curve holds) if none."""
    hit = np.nonzero(np.asarray(curve.rel_error) <= target)[0]
    return int(curve.nfe[hit[0]]) if hit.size else int(curve.nfe[-1]) + 1


def statistics(digits: Run, hard: Run) -> dict[str, Any]:
    """Every number the headline rows test, and their controls' (the pilot ``bench/cdeq_pilot.py`` reports the same
    dictionary on pilot seeds). Errors are fractions of the test images (disagreements with the teacher on the hard
    teacher); every ratio of errors is a ratio of fractions, so of counts."""
    _check_runs(digits, hard)
    n, c = FEW_STEPS, hard.curves
    err = {m: 1.0 - c[m].accuracy[:n] for m in ALTERNATIVES}
    err["explicit"] = np.full(n, 1.0 - hard.explicit_accuracy)
    err["logistic"] = np.full(n, 1.0 - hard.logistic_accuracy)
    best_alt = np.min(list(err.values()), axis=0)
    which = [list(err)[i] for i in np.argmin(list(err.values()), axis=0)]
    cd = 1.0 - c["cdeq-refine"].accuracy[:n]
    def ratio(e: Any = None) -> float:  # A1's statistic for C-DEQ (None) or a control's errors
        return min(few_step_ratio(hard, e), RATIO_CAP)

    out: dict[str, Any] = {
        "a1_vs_solvers": ratio(), "a1_margin": min(_min_ratio(best_alt, cd), RATIO_CAP), "a1_best_alt": which,
        **{f"a1_{k}_vs_solvers": ratio(err[m]) for k, m in (("readout", "readout"), ("qn", "quasi-newton"),
                                                             ("regressor", "regressor-refine"),
                                                             ("explicit", "explicit"), ("logistic", "logistic"))},
        "readout_rel1": float(c["readout"].rel_error[0]), "qn_rel1": float(c["quasi-newton"].rel_error[0]),
        "cdeq_rel1": float(c["cdeq-refine"].rel_error[0]), "explicit_rel": hard.explicit_rel_error,
    }
    st, rs = hard.states, hard.regressor_states
    M = quasi_newton(hard.teacher, hard.split)
    with torch.no_grad():
        x = hard.split.x_test
        zs = hard.teacher.fixed_point(x)
        zk = hard.teacher.picard_states(x, [int(k) - 1 for k in st.nfe])
        zn = zs.norm(dim=-1)
        d_state = to_numpy(((zk - zs).norm(dim=-1) / zn).mean(-1))
        f = hard.teacher.step_fn(x)
        d_call = to_numpy(torch.stack([((f(z) - zs).norm(dim=-1) / zn).mean() for z in zk]))
        d_qn = to_numpy(torch.stack([((_qn(f, M, z) - zs).norm(dim=-1) / zn).mean() for z in zk]))
    e_jump = np.full(len(st.nfe), float(st.rel_error[0]))  # ignores the state: the jump from x at every state
    for key, e in (("cdeq", np.asarray(st.rel_error)), ("ignore", e_jump), ("nojump", d_state),
                   ("regressor", np.asarray(rs.rel_error)), ("call", d_call), ("qn", d_qn)):
        out[f"a2_{key}"] = (float(e.max()), float(e[-1] / e[0]))
    out["a2_late"] = {"cdeq": float(st.rel_error[-1]), "qn": float(d_qn[-1]), "k": int(st.nfe[-1]) - 1}
    cd4 = digits.curves
    exact = digits.exact_accuracy
    out["a3_cdeq"] = float(cd4["cdeq-refine"].accuracy[:A3_NFE].max() - exact)
    out["a3_solver"] = float(max(cd4[m].accuracy[:A3_NFE].max() for m in ("picard", "anderson", "broyden")) - exact)
    out["a3_explicit"] = float(digits.explicit_accuracy - exact)
    out["a3_logistic"] = float(digits.logistic_accuracy - exact)
    out["a3_readout"] = float(cd4["readout"].accuracy[:A3_NFE].max() - exact)
    out["a3_qn"] = float(cd4["quasi-newton"].accuracy[:A3_NFE].max() - exact)
    rj, rj0 = hard.augmented_rejump, c["cdeq-rejump"]
    out["a4_aug"] = float(rj.rel_error[A4_NFE - 1] / rj.rel_error[0])
    out["a4_plain"] = float(rj0.rel_error[A4_NFE - 1] / rj0.rel_error[0])
    out["a4_aug_rel"] = (float(rj.rel_error[0]), float(rj.rel_error[A4_NFE - 1]))
    # A4's alternatives (the sceptic's review): the same extra calls spent without the student's multi-step — Picard
    # steps of the teacher's layer after the augmented student's jump, and the training-free chord iteration from z₀
    with torch.no_grad():
        e_ref = [float(((cdeq_infer(hard.augmented, x, n) - zs).norm(dim=-1) / zn).mean()) for n in (1, A4_NFE)]
        z, e_ch = torch.zeros_like(zs), []
        for _ in range(A4_NFE):
            z = _qn(f, M, z)
            e_ch.append(float(((z - zs).norm(dim=-1) / zn).mean()))
    out["a4_refine"], out["a4_chord"] = e_ref[1] / e_ref[0], e_ch[-1] / e_ch[0]
    out["a4_refine_rel"], out["a4_chord_rel"] = (e_ref[0], e_ref[1]), (e_ch[0], e_ch[-1])
    out["s1_cdeq"] = _least(c["cdeq-refine"], S1_TARGET)
    out["s1_solver"] = min(_least(c[m], S1_TARGET) for m in ("picard", "anderson", "broyden"))
    out["s1_solvers"] = tuple(_least(c[m], S1_TARGET) for m in ("picard", "anderson", "broyden"))
    out["s1_readout"] = _least(c["readout"], S1_TARGET)
    out["s1_qn"] = _least(c["quasi-newton"], S1_TARGET)
    out["s1_regressor"] = _least(c["regressor-refine"], S1_TARGET)
    return out


_PILOT_KEYS = {"a2_max": ("a2_cdeq", 0), "a2_ratio": ("a2_cdeq", 1), "a2_qn_max": ("a2_qn", 0),
               "a2_qn_ratio": ("a2_qn", 1), "readout": ("readout_rel1", None),
               "a1_readout": ("a1_readout_vs_solvers", None), "a1_qn": ("a1_qn_vs_solvers", None),
               "a1_regressor": ("a1_regressor_vs_solvers", None)}


def _pilot_values(stats: dict[str, dict[str, Any]], key: str) -> list[float]:
    """The pilot's values of the statistic behind ``PILOT[key]`` over the seeds of ``stats`` (the json's
    ``statistics``)."""
    name, i = _PILOT_KEYS.get(key, (key, None))
    return [float(v[name] if i is None else v[name][i]) for v in stats.values()]


def _check_runs(digits: Any, hard: Any) -> None:
    for name, r in (("digits", digits), ("hard", hard)):
        if not isinstance(r, Run):
            raise TypeError(f"Invalid {name}: {type(r).__name__} (must be a Run from run_experiment)")
    if (hard.regressor_states is None or hard.augmented_rejump is None or hard.config["teacher"] != "hard"
            or digits.config["teacher"] != "digits"):
        raise ValueError("Invalid runs: need run_experiment(teacher='digits') and "
                         "run_experiment(teacher='hard', regressor=True, augment=True)")


@functools.lru_cache(maxsize=1)
def _derivations() -> tuple[Any, Any]:
    """The sympy results behind :func:`deterministic_verdicts` (seconds of sympy; computed once a process)."""
    from . import theory

    return theory.anderson_weight(2), theory.picard_closed_form(3)


def deterministic_verdicts() -> Verdicts:
    """The rows without randomness: sympy identities, ``picard_nfe_to`` and ``anderson2``."""
    import sympy as sp

    aw, pf = _derivations()
    v = Verdicts("C-DEQ — algebra", display=False)
    v.true("2-point Anderson: argmin ‖(1 − α₁)r₀ + α₁r₁‖² = −⟨r₀, r₁ − r₀⟩/‖r₁ − r₀‖² (the code's α₁), a minimum",
           aw.gap == 0 and aw.curvature == 0, kind="consistency", source="paper", measured=f"gap {aw.gap}, "
           f"curvature − ‖Δr‖² = {aw.curvature}", note="sympy solve of the stationarity condition, symbolic r ∈ ℝ²")
    v.equal("2-point Anderson on f(z) = az + c lands on c/(1 − a) from any two distinct points (sympy)",
            aw.scalar_gap, 0, kind="consistency", source="derived")
    a, c = 0.97, 0.3
    fa = lambda z: a * z + c  # noqa: E731 - scalar linear map, applied row-wise
    za = anderson2(fa, torch.tensor([[0.0], [2.0]], dtype=torch.float64),
                   torch.tensor([[0.3], [-1.0]], dtype=torch.float64))
    v.less("anderson2 (torch) on f(z) = 0.97z + 0.3: max |ẑ − c/(1 − a)| over two starts", float(
        (za - c / (1 - a)).abs().max()), 1e-12, kind="consistency", source="derived",
        basis="model: float64 round-off of a 2-term combination, ≲ 1e-15·|z*|·κ with κ ≤ 1/(1 − a) ≈ 33",
        note="the step of the paper's code on a map where it must be exact")
    v.true("Picard from 0 on f(z) = Wz + u: z_k = (I − W^k)(I − W)⁻¹u and z_k − z* = −W^k z* (2 × 2, k = 1..3)",
           all(g == sp.zeros(2, 1) for g in pf.closed_form_gaps + pf.error_gaps), kind="consistency",
           source="derived", measured="all gaps zero" if all(g == sp.zeros(2, 1) for g in pf.closed_form_gaps
                                                             + pf.error_gaps) else "nonzero gap",
           note="fully symbolic W, u; hence ‖z_k − z*‖ ≤ ‖W̄‖₂^k‖z*‖ = γ^k‖z*‖")
    brute = []
    for tol in (0.5, 0.1, 0.0493, 1e-3):
        k = 0
        while 0.99**k > tol:
            k += 1
        brute.append(k)
    v.equal("picard_nfe_to(0.99, tol) = least k with 0.99^k ≤ tol, by counting (tol = 0.5, 0.1, 0.0493, 1e-3)",
            [picard_nfe_to(0.99, t) for t in (0.5, 0.1, 0.0493, 1e-3)], brute, kind="consistency", source="derived")
    return v


def seeded_verdicts(seed: int) -> Verdicts:
    """Solver invariants on a fresh, untrained *gated* teacher drawn with ``seed`` (H = 64, γ = 0.99, the hard teacher's
    gain and gate) and the test inputs of the split drawn with ``seed``. (The trained students cost seconds each, too
    much to rerun for 20 seeds; their rows are in :func:`headline`, with tolerances from pilot seeds.)"""
    s = integer("seed", seed, 0)
    split = digits_split(s)
    teacher = hard_teacher(LinearDEQ(seed=s), GAIN, gate_scale=GATE_SCALE, s_min=S_MIN, seed=s + 1)
    x = split.x_test
    v = Verdicts(f"C-DEQ — solver invariants on a random gated teacher (seed {s})", display=False)
    with torch.no_grad(), one_thread(x.device):
        zs = teacher.fixed_point(x)
        states = teacher.picard_states(x, tuple(range(1, 129)))
        rel = to_numpy((states - zs).norm(dim=-1) / zs.norm(dim=-1))
        bound = 0.99 ** np.arange(1, 129)[:, None]
        v.less("Picard from 0: max over 1 ≤ k ≤ 128 and all test inputs of ‖z_k − z*‖/‖z*‖ − γ^k",
               float((rel - bound).max()), 1e-9, kind="consistency", source="derived",
               basis="model: z_k − z* = −(diag(s)W̄)^k z* and ‖diag(s)W̄‖₂ ≤ γ exactly (s ∈ [s_min, 1]); the slack "
                     "covers the linear solves' round-off, κ ≤ 199 times 1e-16, amplified ≤ 128 steps",
               note="the bound Picard's curve is drawn against; holds for the gated layer too")
        gaps = [float((torchdeq_solve(teacher, x, k, "picard").z - solve(teacher, x, k, "picard").z).abs().max())
                for k in (1, 2, 8, 32)]
        v.less("our Picard = torchdeq fixed_point_iter (max |Δ| at NFE 1, 2, 8, 32)", max(gaps), 1e-12,
               kind="consistency", source="derived",
               basis="exact: the same recursion in float64; any difference is operation order (≲ 1e-15·|z|)")
        br = [float((torchdeq_solve(teacher, x, n, "broyden").z - solve(teacher, x, n, "broyden").z).abs().max()
                    / zs.abs().max()) for n in (2, 3, 5)]
        v.less("our Broyden after n calls = torchdeq's broyden_solver after max_iter = n (n = 2, 3, 5): "
               "max |Δ|/max|z*|",
               max(br), 1e-9, kind="consistency", source="derived",
               basis="model: the same good-Broyden recursion; float64 round-off grows with each rank-1 update "
                     "(1e-15 × κ of the secant system); 1e-9 leaves ≥ 1e4 for that growth",
               note="so our Broyden is torchdeq's, one call cheaper: torchdeq evaluates the last residual")
        calls = [solve(teacher, x, n, m).calls for m in ("picard", "anderson", "broyden") for n in (1, 2, 7)]
        td_calls = [torchdeq_solve(teacher, x, n, "broyden").calls for n in (2, 3, 5)]
        v.equal("our solvers make exactly NFE calls of f (NFE 1, 2, 7 each); torchdeq's Broyden makes max_iter + 1",
                (calls, td_calls), ([1, 2, 7] * 3, [3, 4, 6]), kind="consistency", source="derived",
                note="a counting wrapper around f")
        f = teacher.step_fn(x)
        z0 = torch.zeros_like(zs)
        a2 = anderson2(f, z0, f(z0))
        v.less("our Anderson at NFE 2 = the paper code's 2-point step anderson2(z₀, f(z₀)): max |Δ|/max|z*|",
               float((solve(teacher, x, 2, "anderson").z - a2).abs().max() / zs.abs().max()), 1e-8,
               kind="consistency", source="paper",
               basis="model: the ridge λ = 1e-10 × mean diagonal of the 2 × 2 Gram matrix shifts α by ≲ λ·cond(Gram); "
                     "two residuals of a 0.99-contraction give cond ≲ 1e2, so ≲ 1e-8",
               note="the step of the paper's code is Anderson's iterate at NFE 2")
        res = float((teacher.layer(zs, x) - zs).norm(dim=-1).max())
        v.less("exact solve (one per input, gated layer): max ‖f(z*) − z*‖ over the test inputs", res, 1e-12,
               kind="consistency", source="derived",
               basis="model: LU solve in float64, κ(I − diag(s)W̄) ≤ (1 + γ)/(1 − γ) = 199 and ‖u‖ ≤ 8: "
                     "residual ≲ 199·8·1e-16 ≈ 2e-13")
    return v


def headline(digits: Run, hard: Run) -> Verdicts:
    """The rows on the chapter's trained runs (``digits``: the digits teacher; ``hard``: the gated hard teacher with
    the student-as-regressor and the augmented student trained). Tolerances: the paper's, or pilot seeds 9001–9003
    (``bench/results/cdeq_pilot.json``), never the chapter's run."""
    st = statistics(digits, hard)
    P = PILOT
    v = Verdicts("C-DEQ — the few-step claims", display=False)
    n_test = hard.config["n_test"]
    tuned_same = (f"the student's budget ({hard.config['steps']} steps, width {hard.config['width']}, batch "
                  f"{hard.config['batch']}, cosine schedule) and its step size {hard.config['lr']:g}, tuned for the "
                  f"student on the grid {LR_GRID} on the pilot seeds' validation split")
    tuned_explicit = (f"step size and nonlinearity on the grid {LR_GRID} × {{SiLU, tanh}} on the pilot seeds' "
                      f"validation split (got {hard.config['explicit_lr']:g}, {hard.config['explicit_act']}); the "
                      "student's steps, width, batch and schedule")
    tuned_readout = "none needed: closed-form least squares on the student's training inputs (ridge 1e-8·mean diag)"
    tuned_qn = ("none needed: no parameter — M = (I − diag(s̄)W̄)⁻¹ from the layer's weights and the mean gate s̄ over "
                "the training inputs, computed once")
    why_qn = ("the training-free step a numerical analyst would take: one layer call and a fixed quasi-Newton "
              "(chord) matrix — a better solver, not a student")
    tuned_logistic = "none needed: convex; full-batch Adam to convergence (300 steps, zero start) on the same labels"

    def logistic(value: float, why: str) -> Control:
        return Control("logistic regression on the pixels (0 NFE)", value, why=why, tuned=tuned_logistic)

    def explicit(label: str, value: float, why: str) -> Control:
        return Control(f"explicit distillation ({label}; 0 NFE)", value, why=why, tuned=tuned_explicit)

    def readout(suffix: str, value: float) -> Control:
        return Control(f"linear readout of one layer call{suffix} + Picard steps", value,
                       why="the simplest 1-NFE map without consistency training", tuned=tuned_readout)
    # -- A1: the 2× over the implicit DEQ's truncated solvers -------------------------------------------------------
    v.greater(f"hard teacher, one trained run (not a statistic over seeds): min over NFE 1–{FEW_STEPS} of (best "
              "truncated solver's test error at that NFE — "
              "Picard, Anderson, Broyden) ÷ C-DEQ's (one jump, then Picard steps)",
              st["a1_vs_solvers"], A1_FACTOR, kind="not_specific", source="paper", tests="A1",
              control=[Control("linear readout of one layer call (least squares on [f(0, x), x, 1]) + Picard steps",
                               st["a1_readout_vs_solvers"],
                               why="the simplest 1-NFE map without consistency training: is the 2× the student's "
                                   "or the layer call's?", tuned=tuned_readout),
                       Control("quasi-Newton step from z₀, z₀ + M(f(z₀) − z₀), M = (I − diag(s̄)W̄)⁻¹ + Picard steps",
                               st["a1_qn_vs_solvers"], why=why_qn, tuned=tuned_qn),
                       Control("student-as-regressor (the student's network trained only at z₀) + Picard steps",
                               st["a1_regressor_vs_solvers"],
                               why="the ablation of consistency training: same network, data and budget, never an "
                                   "intermediate state, no local-consistency term", tuned=tuned_same),
                       explicit("MLP of the student's size regressing z* on x", st["a1_explicit_vs_solvers"],
                                "distillation without the DEQ: the honesty baseline of the paper digest (§6)"),
                       logistic(st["a1_logistic_vs_solvers"], "the simplest predictor of the teacher's labels")],
              basis=f"paper: the claim's low end, {A1_FACTOR:g}× (2–20×), at every budget of the [secondary] "
                    f"summaries' 1–{FEW_STEPS} NFE; pilot seeds 9001–9003: C-DEQ {_rng(P['a1_vs_solvers'])}, "
                    f"linear readout {_rng(P['a1_readout'])}, quasi-Newton step {_rng(P['a1_qn'])}, "
                    f"student-as-regressor {_rng(P['a1_regressor'])}",
              note=f"the paper's 2× over the implicit DEQ holds, but any good 1-call map passes the same test: the "
                   f"least-squares readout, the quasi-Newton step and the student's network trained only at z₀; "
                   f"against the best alternative at each NFE ({', '.join(sorted(set(st['a1_best_alt'])))}) C-DEQ's "
                   f"margin is {st['a1_margin']:.2f}× (pilot {_rng(P['a1_margin'])}); distance to z* at 1 NFE: "
                   f"C-DEQ {st['cdeq_rel1']:.3f}, readout {st['readout_rel1']:.3f}, quasi-Newton "
                   f"{st['qn_rel1']:.3f}, explicit {st['explicit_rel']:.3f}; errors are disagreements with the "
                   f"teacher on {n_test} test images" + _a1_spread())
    # -- A2: from any state, using the state ------------------------------------------------------------------------
    a2 = st["a2_cdeq"]

    def a2_test(e: tuple[float, float]) -> bool:
        return e[0] <= STATE_TOL and e[1] <= STATE_GAIN

    def a2_shown(e: tuple[float, float]) -> str:
        return f"max {e[0]:.3f}, last/first {e[1]:.3f}"

    late = st["a2_late"]
    v.true(f"hard teacher: from every trajectory state z_k (k ∈ KS, k < 128) one call lands within {STATE_TOL} of "
           f"z* (max mean ‖ẑ − z*‖/‖z*‖) and uses the state (landing distance from the last state ÷ from z₀ "
           f"≤ {STATE_GAIN})", a2_test(a2), kind="not_specific", source="paper", tests="A2",
           measured=a2_shown(a2), predicted=f"max ≤ {STATE_TOL}, ratio ≤ {STATE_GAIN}",
           control=[Control("quasi-Newton step from the state, z_k + M(f(z_k) − z_k), M = (I − diag(s̄)W̄)⁻¹ "
                            "(no student)", a2_test(st["a2_qn"]), shown=a2_shown(st["a2_qn"]), why=why_qn,
                            tuned=tuned_qn),
                    Control("student-as-regressor (same network, trained only at z₀)", a2_test(st["a2_regressor"]),
                            shown=a2_shown(st["a2_regressor"]),
                            why="the ablation: does the jump from later states come from consistency training?",
                            tuned=tuned_same),
                    Control("one more layer call from the state, f(z_k) (no student)", a2_test(st["a2_call"]),
                            shown=a2_shown(st["a2_call"]), why="what the DEQ itself does with the same call",
                            tuned="none needed: no parameter"),
                    Control("ignore the state: the 1-NFE jump from x", a2_test(st["a2_ignore"]),
                            shown=a2_shown(st["a2_ignore"]),
                            why="a map that ignores z_k also 'maps every state to z*', at its 1-NFE distance",
                            tuned="none needed: it is the student's own jump",
                            weak="its ratio is 1 by construction"),
                    Control("no jump (z_k itself)", a2_test(st["a2_nojump"]), shown=a2_shown(st["a2_nojump"]),
                            why="doing nothing", tuned="none needed: no parameter",
                            weak="z₀ = 0 is at distance 1 by construction")],
           basis=f"pilot: seeds 9001–9003 gave max {_rng(P['a2_max'])} and ratio {_rng(P['a2_ratio'])} for C-DEQ "
                 f"(the quasi-Newton step: max {_rng(P['a2_qn_max'])}, ratio {_rng(P['a2_qn_ratio'])}); bounds "
                 f"{STATE_TOL} and {STATE_GAIN}, fixed before the quasi-Newton control was added",
           note=f"the jump from the state at k = {late['k']} against the one from z₀; a training-free quasi-Newton "
                f"step does the same with one layer call, and from late states lands closer than the student "
                f"({late['qn']:.4f} vs {late['cdeq']:.4f} at k = {late['k']}): on this affine-in-z layer the state's "
                "residual f(z_k) − z_k carries what the jump needs")
    # -- A3: keeps the teacher's performance within A3_NFE calls -----------------------------------------------------
    v.greater(f"digits teacher: best test accuracy within {A3_NFE} calls of f minus the exact equilibrium's "
              f"({digits.exact_accuracy:.3f})", st["a3_cdeq"], -A3_DROP, kind="not_specific", source="paper",
              tests="A3",
              control=[Control(f"the best truncated solver (Picard, Anderson, Broyden) within {A3_NFE} calls",
                               st["a3_solver"], why="the implicit DEQ at the same few-step budget — what the paper's "
                               "claim is about", tuned="Anderson memory 6 and Broyden as in torchdeq; the best of "
                               f"the three at each NFE ≤ {A3_NFE}"),
                       explicit("MLP regressing z* on x", st["a3_explicit"],
                                "distillation without the DEQ: does keeping the accuracy need the trajectory?"),
                       readout(f", within {A3_NFE} calls", st["a3_readout"]),
                       Control(f"quasi-Newton step from z₀ + Picard steps, within {A3_NFE} calls", st["a3_qn"],
                               why=why_qn + "; exact on this ungated layer (its Jacobian is W̄ for every input)",
                               tuned=tuned_qn),
                       logistic(st["a3_logistic"], "the simplest predictor of the digits")],
              basis=f"pilot: seeds 9001–9003 gave drops {_rng(P['a3_cdeq'])} for C-DEQ, {_rng(P['a3_solver'])} "
                    f"for the best solver and {_rng(P['a3_explicit'])} for explicit distillation; 'keeps' = within "
                    f"{A3_DROP:.0%} is our threshold (the paper states none)",
              note="on this teacher any learned or one-call predictor keeps the teacher's accuracy; the claim is "
                   "told only from the truncated solvers")
    # -- A4: multi-step trades compute for accuracy (trained with the paper's augmentation) -------------------------
    e1, e4 = st["a4_aug_rel"]
    r1, r4 = st["a4_refine_rel"]
    v.less(f"hard teacher, student trained with the paper's augmentation (each coordinate of a state replaced by "
           f"z*'s with probability {hard.config['augment']}): re-jump distance to z* at NFE {A4_NFE} ÷ at NFE 1",
           st["a4_aug"], 1.0, kind="not_specific", source="paper", tests="A4",
           control=[Control("the same student without the augmentation", st["a4_plain"],
                            why="the ablation of the paper's augmentation: is it what makes re-jumping pay?",
                            tuned=tuned_same),
                    Control(f"the same jump, then {A4_NFE - 1} Picard steps of the teacher's layer (no further "
                            "student call)", st["a4_refine"],
                            why="the simplest way to spend the extra calls without the student's multi-step "
                                "evaluation: the DEQ's own iteration from the jump (a standard extra local move)",
                            tuned=f"none needed: the row's student, its jump and the row's budget (NFE {A4_NFE} vs 1)"),
                    Control(f"chord iteration from z₀: {A4_NFE} quasi-Newton steps z ← z + M(f(z) − z), "
                            "M = (I − diag(s̄)W̄)⁻¹ (no student)", st["a4_chord"], why=why_qn, tuned=tuned_qn)],
           basis=f"paper: the claim itself (less error for more compute); pilot seeds 9001–9003 gave "
                 f"{_rng(P['a4_aug'])} with and {_rng(P['a4_plain'])} without the augmentation",
           note=f"distance {e1:.3f} at NFE 1 → {e4:.3f} at NFE {A4_NFE}: a thin gain ({1 - st['a4_aug']:.0%} less "
                f"error for {A4_NFE}× the calls); the same {A4_NFE - 1} extra calls spent on Picard steps after the "
                f"jump give {r1:.3f} → {r4:.3f} ({1 - st['a4_refine']:.0%} less), and the training-free chord "
                f"iteration {1 - st['a4_chord']:.1%} less: the test shows that re-jumping pays with the "
                "augmentation, not that the student's multi-step evaluation buys more than the layer's own calls")
    # -- S1: 1–8 evaluations instead of tens -----------------------------------------------------------------------
    v.less(f"hard teacher: least NFE (counted at every NFE) for C-DEQ to reach mean ‖ẑ − z*‖/‖z*‖ ≤ {S1_TARGET}",
           st["s1_cdeq"], FEW_STEPS, kind="not_specific", source="secondary", tests="S1",
           control=[Control("the best truncated solver (least over Picard / Anderson / Broyden)", st["s1_solver"],
                            shown=f"{st['s1_solver']} (Picard / Anderson / Broyden: "
                                  + " / ".join(str(k) for k in st["s1_solvers"]) + ")",
                            why="the 'tens' of the claim: the DEQ's own solvers at their best",
                            tuned="Anderson memory 6 and Broyden as in torchdeq; every NFE counted"),
                    readout("", st["s1_readout"]),
                    Control("quasi-Newton step from z₀ + Picard steps", st["s1_qn"], why=why_qn, tuned=tuned_qn),
                    Control("student-as-regressor + Picard steps", st["s1_regressor"],
                            why="the ablation of consistency training", tuned=tuned_same)],
           basis=f"paper: the [secondary] '1–8 NFE'; target {S1_TARGET} fixed before the run; pilot seeds "
                 f"9001–9003: C-DEQ {_rng(P['s1_cdeq'])}, best solver {_rng(P['s1_solver'])}, linear readout "
                 f"{_rng(P['s1_readout'])}",
           note=f"the solvers need {min(st['s1_solvers'])}–{max(st['s1_solvers'])} calls, not 'tens' for the best "
                "of them; any good 1-call map reaches the target within the budget")
    # -- the construction: the gate is what makes a linear readout miss z* ------------------------------------------
    ro, ro0 = _readout_misses(digits, hard)
    v.greater("construction: the linear readout of the student's 1-NFE input [f(0, x), x] misses the gated hard "
              "teacher's z* (test mean ‖ẑ − z*‖/‖z*‖)", ro, 0.05, kind="consistency", source="derived",
              control=Control("the same readout on the ungated hard teacher", ro0),
              basis=f"pilot: the gate (scale {hard.config['gate_scale']:g}, s_min {hard.config['s_min']}) was chosen "
                    f"on seeds 9001–9003 for a readout distance ≥ 0.05 with Picard still ≥ 0.3 from z* at NFE 8 "
                    f"(readout {_rng(P['readout'])})",
              note="without the gate z* = (I − W̄)⁻¹f(0, x) is a fixed linear map of the student's input")
    return v


def _readout_misses(digits: Run, hard: Run) -> tuple[float, float]:
    """The linear readout's test distance to z* on the hard teacher and on the same teacher without its gate."""
    ungated = hard_teacher(digits.teacher, hard.config["gain"], seed=hard.config["seed"] + 1)
    x = hard.split.x_test
    out = []
    for t in (hard.teacher, ungated):
        L = linear_readout(t, hard.split)
        with torch.no_grad():
            z, zs = readout_features(t, x) @ L, t.fixed_point(x)
            out.append(float(((z - zs).norm(dim=-1) / zs.norm(dim=-1)).mean()))
    return out[0], out[1]


def _rng(xs: Any) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.3g}–{hi:.3g}"


def chapter_table(digits: Run, hard: Run, seed: int) -> Verdicts:
    """The chapter's one table: :func:`headline`, then :func:`deterministic_verdicts` and :func:`seeded_verdicts`
    (``seed``), carrying :data:`PAPER_CLAIMS`."""
    v = Verdicts("C-DEQ — consistency distillation of a digits DEQ", claims=PAPER_CLAIMS)
    v.extend(headline(digits, hard))
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed))
    return v
