"""Every verdict row of the OPT-Engine chapter.

No language model is called here, so the paper's findings about PTR, tools and SIR are *quoted* claims
(:data:`PAPER_CLAIMS`, ``quoted_only``). What the chapter can test is the benchmark's premise — one size knob
controls how hard the instances are — with fixed, non-LLM methods (the heuristic stand-ins) against a stronger
search on the same records and a control that ignores the knob. Everything else is a consistency check of our own
machinery: exact solvers against each other, the templates' round trip, total unimodularity, the omission mechanism
and the Pollution audit.

Builders: :func:`derivation_verdicts` (sympy results passed in by the chapter), :func:`deterministic_verdicts`,
:func:`study_verdicts` (the chapter's seed-fixed studies), :func:`bench_verdicts` (the TSP and knapsack decay rows,
from committed bench results at the record counts the rivals need; tests re-compute one entry of each) and
:func:`headline` (the chapter's one table, carrying :data:`PAPER_CLAIMS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from ..check import Control, PaperClaim, Scan, Verdicts, z_threshold
from ..validate import integer
from .experiment import (
    Audit,
    Omission,
    Record,
    _list_of,
)
from .problems import generate, grade, solve

__all__ = ["PAPER_CLAIMS", "Z_DECAY", "bench_verdicts", "deterministic_verdicts", "load_bench", "study_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("scaling", "OPT-Engine generates optimisation problems whose complexity is controlled by one size knob, "
               "with exact ground truth and grading at 0.2 %, so difficulty can be scaled.", where="abstract",
               regime="size knob n"),
    PaperClaim("ptr_collapse", "Pure-text reasoning (PTR) accuracy collapses as the problem grows, while "
               "solver-integrated reasoning (SIR) stays roughly flat.", where="abstract", quoted_only=True,
               headline=True, reason_class="language model",
               why="no language model is called; a classical heuristic is not pure-text reasoning, and HiGHS on the "
                   "parsed text is a perfect modeller by construction"),
    PaperClaim("tools", "Tools fix local arithmetic, not global structure (CompPTR vs PTR).", where="abstract",
               quoted_only=True, reason_class="language model",
               why="needs a language model with and without a calculator"),
    PaperClaim("constraint_bottleneck", "One extra simple constraint hurts SIR most: constraint formulation is SIR's "
               "primary bottleneck.", where="abstract", quoted_only=True, reason_class="language model",
               why="needs a language model writing solver models; the omission study only shows the mechanism "
                   "(a forgotten constraint gives feasible-looking, wrong answers)"),
)

#: The decay row's threshold: one-sided P(z ≥ 3.29) = 5e-4 for the control (no size change, z ~ N(0, 1)).
Z_DECAY = z_threshold(1e-3)


def derivation_verdicts(*, mtz: Any, tu: Any, gb: Any) -> Verdicts:
    """The chapter's sympy/exact-arithmetic rows (results of :mod:`theorybook.opt_engine.theory`)."""
    v = Verdicts("OPT-Engine — derivations", display=False)
    v.true("MTZ: summed rows around a subtour of length k give RHS − LHS = −k (k = 2..6, symbolic n)",
           all(sp.simplify(e + k) == 0 for k, e in mtz.subtour_slack.items()), kind="consistency",
           source="derived", measured=str(list(mtz.subtour_slack.values())),
           note="sympy telescoping: why the paper's MTZ model is exact")
    v.equal(f"MTZ: every tour of n = 3..6 cities ({mtz.tours_checked}) satisfies every row (max LHS − RHS)",
            mtz.max_violation, 0, kind="consistency", source="derived", note="exact integers, positions u = t")
    v.equal(f"transportation 3×3: all {tu.n_minors} square minors in {{−1, 0, 1}}; with arc bounds "
            f"(2×2, {tu.n_minors_bounded})", sorted(tu.values | tu.values_bounded), [-1, 0, 1],
            kind="consistency", source="reconstruction", note="exact Bareiss determinants")
    v.less(f"ratio greedy within v_max of the LP bound ({gb.n_instances} instances; max (LP − greedy)/v_max)",
           gb.worst_ratio, 1.0, kind="consistency", source="derived",
           basis="exact: the derived inequality LP − greedy = δ v_k/w_k < v_k ≤ v_max",
           note="LP bound by HiGHS linprog, greedy by our code")
    return v


def deterministic_verdicts(per_size: int = 2) -> Verdicts:
    """Exactness cross-checks without randomness beyond fixed seeds: HiGHS (MTZ model) = Held–Karp for TSP ≤ 9,
    HiGHS (DFJ) = Held–Karp up to 12; HiGHS = DP for knapsack; transportation / NetworkFlow LP optima integral."""
    k = integer("per_size", per_size, 1, 50)
    v = Verdicts("OPT-Engine — exact solvers agree", display=False)
    worst_mtz = worst_dfj = worst_dp = 0.0
    n_mtz = n_dfj = n_dp = 0
    for n in range(4, 13):
        for r in range(k):
            inst = generate("tsp", n, seed=90_000 + r)
            if n <= 9:
                worst_mtz = max(worst_mtz, abs(solve("tsp", inst.params).objective - inst.answer) / inst.answer)
                n_mtz += 1
            worst_dfj = max(worst_dfj, abs(solve("tsp", inst.params, formulation="dfj").objective - inst.answer)
                            / inst.answer)
            n_dfj += 1
    for n in (5, 10, 15, 20, 25, 30):
        for r in range(2 * k):
            inst = generate("knapsack", n, seed=90_000 + r)
            worst_dp = max(worst_dp, abs(solve("knapsack", inst.params).objective - inst.answer) / inst.answer)
            n_dp += 1
    exact = ("model: both methods are exact; HiGHS runs with mip_rel_gap = 0 and feasibility tolerance 1e-7 on "
             "integer data ≤ 10⁴, so optima agree to ≤ 1e-9 relative")
    v.less(f"TSP: HiGHS on the MTZ model = Held–Karp, 4–9 cities ({n_mtz} instances), max rel. difference",
           worst_mtz, 1e-9, kind="consistency", source="derived", basis=exact,
           note="two exact methods: the ground truth does not depend on the formulation")
    v.less(f"TSP: HiGHS DFJ cut loop = Held–Karp, 4–12 cities ({n_dfj} instances), max rel. difference",
           worst_dfj, 1e-9, kind="consistency", source="derived", basis=exact, note="two exact methods")
    v.less(f"knapsack: HiGHS = dynamic programme, 5–30 items ({n_dp} instances), max rel. difference", worst_dp, 1e-9,
           kind="consistency", source="derived", basis=exact, note="two exact methods")
    frac, cnt = 0.0, 0
    for c in ("transportation", "network_flow"):
        for n in (3, 5, 7, 10):
            for r in range(k):
                sol = solve(c, generate(c, n, seed=90_000 + r).params)
                frac = max(frac, float(np.max(np.abs(sol.x - np.round(sol.x)))))
                cnt += 1
    v.less(f"transportation / NetworkFlow: HiGHS LP optimum is integral on integral data ({cnt} instances), "
           "max |x − round(x)|", frac, 1e-9, kind="consistency", source="reconstruction",
           basis="model: a simplex vertex of a totally unimodular system is integral; HiGHS's primal feasibility "
                 "tolerance 1e-7 on flows ≤ 10³ leaves ≤ 1e-9 of round-off",
           note="predicted by total unimodularity (sympy, above): why the paper can count NetworkFlow as a MIP")
    return v


def study_verdicts(records: list[Record], omissions: list[Omission], audit: Audit) -> Verdicts:
    """Rows from the chapter's (deterministic, seed-fixed) studies: the text round trip, the SIR proxy against an
    independent exact method, the omission mechanism and the Pollution audit."""
    records = _list_of("records", records, Record)
    omissions = _list_of("omissions", omissions, Omission)
    if not isinstance(audit, Audit):
        raise TypeError(f"Invalid audit: {type(audit).__name__} (must be an Audit from pollution_audit)")
    if not records or not omissions:
        raise ValueError("Invalid records/omissions: must be non-empty (run accuracy_study and omission_study)")
    v = Verdicts("OPT-Engine — SIR proxy, omitted constraints, Pollution audit", display=False)
    ident = np.array([r.identical_parse for r in records])
    v.equal(f"templates lose no digit: parameters parsed back from the text are bit-identical ({ident.size} records, "
            "fraction)", float(ident.mean()), 1.0, kind="consistency", source="reconstruction",
            note="the premise of the paper's integrity check, for our templates; with it, HiGHS on the parsed text "
                 "(the SIR proxy) equals the generator's HiGHS answer by construction on 8 of the 10 classes — that "
                 "is not counted as a check")
    indep = [r for r in records if r.problem in ("tsp", "knapsack")]
    v.equal(f"SIR proxy (HiGHS on the parsed text) vs an independent exact method (Held–Karp, knapsack DP) on the "
            f"{len(indep)} TSP and knapsack records: accuracy", float(np.mean([grade(r.sir, r.answer) for r in indep])),
            1.0, kind="consistency", source="derived",
            note="two exact methods on the same text; the only classes whose ground truth does not come from the "
                 "solver the proxy runs")
    mtz = [o for o in omissions if o.problem == "tsp" and o.family == "mtz"]
    below = all(o.relaxed <= o.answer * (1 + 1e-9) for o in mtz)
    iff = all((o.relaxed < o.answer * (1 - 1e-9)) == (o.subtours > 1) for o in mtz)
    v.true(f"TSP without MTZ: objective ≤ optimum on all {len(mtz)} instances, strictly below exactly when the "
           "solution has subtours", below and iff, kind="consistency", source="derived",
           measured=f"≤: {below}; strict ⇔ subtours: {iff}; with subtours: {sum(o.subtours > 1 for o in mtz)}")
    add = [o for o in omissions if o.kind == "add"]
    acc = [grade(o.relaxed, o.answer) for o in add]
    mech = all(a == f for a, f in zip(acc, (o.feasible for o in add), strict=True))
    base = all(o.feasible_base for o in add)
    v.true(f"a forgotten extra constraint ({len(add)} records: forced arc, conflicting pair, order cap): the answer "
           "is feasible for the problem without it on every record, and wrong exactly when it violates the extra "
           "constraint", base and mech, kind="consistency", source="reconstruction",
           measured=f"feasible without it: {base}; wrong ⇔ violates it: {mech}; accuracy {np.mean(acc):.2f}",
           note="the mechanism of 'feasible-looking but wrong'. The accuracy itself is a property of our choice of "
                "binding constraints, not a measurement of SIR (the paper's ≈0.9 → 0.5–0.7 needs a language model)")
    ok = np.isfinite(audit.literal)
    rel_lit = np.where(ok, np.abs(audit.literal - audit.answer) / audit.answer, np.inf)
    rel_int = np.abs(audit.intended - audit.answer) / audit.answer
    v.equal(f"Pollution audit: the literal reading of 'reduces pollution by (1−s)%' misses 0.2 % on every record "
            f"({audit.answer.size}; fraction missed)", float(np.mean(rel_lit > 0.002)), 1.0, kind="consistency",
            source="derived", note="[derived] recipe of the digest on our instances: the literal reading is right "
                                   "only if s = 50 % exactly; infeasible counts as a miss")
    v.less("Pollution audit: intended reading (removal = 100 − printed %), max rel. error from whole-percent rounding",
           float(rel_int.max()), 0.5 / (40 - 0.5), kind="consistency", source="derived",
           basis="model: rounding moves a removal rate s ≥ 40 % by ≤ 0.5 point, a relative change ≤ 0.5/39.5; the "
                 "LP's cost scales at most by the same factor",
           note="so even the intended reading can miss the 0.2 % rule (the digest's re-solve of C³-Bench items: "
                "0.2–1.8 %)")
    return v


_RIVAL_WHY = ("the alternative a sceptic in the field would pick: the same search with the standard extra local move "
              "(Or-opt) or restarts, graded the same way against the same exact answers on the same records. If the "
              "decay came from the ground truth, the templates or the 0.2 % grading at large sizes — or if the "
              "instances got harder for local search in general — it would decay too")
_RIVAL = {
    "tsp": ("multi-start 2-opt + Or-opt (the method's n nearest-neighbour starts and 2-opt, with Or-opt moves of "
            "1–3-city segments added; 2-opt and Or-opt alternate until neither gains)",
            "the method's starts and 2-opt unchanged; Or-opt adds no parameter (segments of 1–3 cities, either "
            "orientation, first improvement)"),
    "knapsack": ("random-restart local search (the method's add/1-swap local search from n random feasible starts "
                 "and from the method's own start; the best packing)",
                 "the method's neighbourhood and stopping rule unchanged; n random starts (one per item, as the TSP "
                 "search's one start per city), so its effort grows with the size knob like the method's"),
}
_REPEAT_WHY = "the null: no size change at all, the same distribution sampled twice"
_DECAY_PILOT = {
    "knapsack": "pilot: PILOT_SEEDS 9001–9013 gave z = 4.8–9.6 (mean 7.2) at 600 records and repeat-sample z within "
                "±2.3; the rival's z on 9001–9006 at 600 records was 0.45–3.27 (it loses ≈ 1 %: 0.996 → 0.985), so "
                "the count was raised to 5000 per size, where a rival decaying as on the pilots has expected "
                "z ≥ 3.29 + 3.09 (bench/opt_engine_decay_knapsack.py, decided before its run)",
    "tsp": "pilot: the decay at 1000 records per size was sized from PILOT_SEEDS 9001 (1.00 → 0.973 at 12 cities on "
           "150 records: z ≈ 0.17·√records, so ≥ 1000 records put z near 5); threshold z(1e-3) = 3.29",
}
#: The registered outcome of each decay row (from the committed benches): on knapsack the restarted search also decays
#: at 5000 records (z ≈ 6); on TSP the Or-opt search misses the threshold at 1000 records (z = 2.0) but passes it
#: pooled over 8 unseen seeds (8000 records per size, z = 4.24; the sceptic's review, bench/opt_engine_decay_seeds.py).
#: Both rows are "holds, not specific": the knob makes these instances harder for local search more generally.
_KIND = {"tsp": "not_specific", "knapsack": "not_specific"}
_METHOD = {"tsp": "multi-start 2-opt (nearest neighbour from every city, then 2-opt)",
           "knapsack": "greedy + local search (better of ratio greedy and best single item, then add / 1-swap moves)"}


def _pooled_rival(scan: dict) -> tuple[float, int, list[int], list[float], list[float]]:
    """The unseen-seed scan of the TSP row (``bench/results/opt_engine_decay_seeds.json``): the rival's z pooled over
    the seeds (every seed's streams are fresh instances, so k seeds = k·1000 records per size), the number of seeds,
    the rival's misses at the larger sizes per seed, and the method's and the rival's z per seed."""
    runs = list(scan["seeds"].values())
    k, sizes = int(scan["design"]["count"]), scan["design"]["sizes"]
    m = k * (len(sizes) - 1)
    miss = [round(m * (1 - float(np.mean(r["rival"][1:])))) for r in runs]
    acc0 = float(np.mean([r["rival"][0] for r in runs]))
    big = 1 - sum(miss) / (m * len(runs))
    from .experiment import _z

    return (_z(acc0, k * len(runs), big, m * len(runs)), len(runs), miss, [r["z"] for r in runs],
            [r["z_rival"] for r in runs])


def _decay_row(v: Verdicts, d: Any, where: str, scan: dict | None = None) -> None:
    """Record one class's decay row (``d`` a :class:`~.experiment.Decay` or its dict; ``scan`` the TSP row's
    unseen-seed scan, whose pooled rival is a control)."""
    g = d._asdict() if hasattr(d, "_asdict") else dict(d)
    c, sizes, acc, n = g["problem"], tuple(g["sizes"]), tuple(g["acc"]), int(g["n"])
    riv = tuple(g["rival"])
    unit = "cities" if c == "tsp" else "items"
    rival, rival_tuned = _RIVAL[c]
    who = (f"multi-start 2-opt at {sizes[0]}–{sizes[-1]} cities" if c == "tsp" else
           f"greedy + add/1-swap local search at {sizes[0]}–{sizes[-1]} items")
    per = ", ".join(f"{x:.3f}" for x in riv)
    pooled, seeds_note, fold = [], "", ""
    if scan is not None and scan.get("seeds"):
        zp, ks, miss, zm, zr = _pooled_rival(scan)
        rec = ks * int(scan["design"]["count"])
        rate = sum(miss) / (ks * int(scan["design"]["count"]) * (len(sizes) - 1))
        mm = sum(round(int(scan["design"]["count"]) * (len(sizes) - 1) * (1 - float(np.mean(r["acc"][1:]))))
                 for r in scan["seeds"].values())
        fold = f"{mm / max(sum(miss), 1):.0f}×"
        need = (Z_DECAY + 3.09) ** 2 / rate / (len(sizes) - 1)
        pooled = [Control(f"the same Or-opt search with more records: pooled over {ks} unseen seeds ({rec} records "
                          f"per size; misses at 6–12 cities per seed {', '.join(map(str, miss))})", zp,
                          why=f"the rival does decay — it is exact at 4 cities (2-opt reaches all three 4-city tours) "
                              f"and misses {100 * rate:.2f} % of the larger instances — but at 1000 records per size "
                              f"its z is ≈ √(misses), so the row's rival control had little power; the knapsack row "
                              f"was re-sized so that a rival decaying as on its pilots has expected z ≥ 3.29 + 3.09, "
                              f"a rule that asks here for ≈ {need:,.0f} records per size. Added by the sceptic's "
                              "review",
                          tuned="the identical rival (same starts, 2-opt, Or-opt segments 1–3) on the streams "
                                "decay_test(seed, 'tsp') draws for each unseen seed; only the record count differs "
                                "(bench/opt_engine_decay_seeds.py)")]
        seeds_note = (f" Unseen seeds (bench/opt_engine_decay_seeds.py, the row's own test at 1000 records per size "
                      f"on {', '.join(scan['seeds'])}): the method's z {min(zm):.2f}–{max(zm):.2f} (≥ 3.29 on "
                      f"{sum(z >= Z_DECAY for z in zm)} of {ks}), the rival's {min(zr):.2f}–{max(zr):.2f} (≥ 3.29 on "
                      f"{sum(z >= Z_DECAY for z in zr)} of {ks}); the rival's single-seed failure is a matter of "
                      f"power (it passes iff it misses ≥ 11 of the 4000 larger instances; it misses "
                      f"{min(miss)}–{max(miss)}), and pooled over the seeds its z is {zp:.2f}.")
    zp_pass = bool(pooled) and pooled[0].value >= Z_DECAY
    if g["z_rival"] >= Z_DECAY:
        scope = ("Scope: the stronger search also loses accuracy with size (its z passes the same test), so the decay "
                 "is not this method's alone: the knob makes these instances harder for local search more generally, "
                 "though less for the stronger search")
    elif zp_pass:
        scope = (f"Scope: the stronger search also loses accuracy with size — it misses {fold} fewer of the larger "
                 "instances, below what 1000 records per size resolve, but pooled over the unseen seeds it passes the "
                 "same test — "
                 "so the decay is not 2-opt's alone: the knob makes these instances harder for local search more "
                 "generally, though far less for the stronger search")
    else:
        scope = ("Scope: the stronger search does not pass the same test, so the row shows that the knob makes these "
                 "instances harder for this fixed, bounded-neighbourhood search, not for local search in general")
    v.greater(f"the size knob makes instances harder for {who} ({c}): its accuracy at {sizes[0]} {unit} minus "
              f"at {', '.join(map(str, sizes[1:]))} {unit} (pooled), {n} records per size, in s.e.", g["z"], Z_DECAY,
              kind=_KIND[c], source="paper", tests="scaling",
              control=[Control(f"{rival}: accuracy per size {per}", g["z_rival"], why=_RIVAL_WHY,
                               tuned=rival_tuned),
                       Control(f"size knob ignored: a second sample at {sizes[0]} {unit} (accuracy "
                               f"{g['acc_repeat']:.3f})", g["z_repeat"], why=_REPEAT_WHY,
                               tuned="none needed: the same stand-in and record count",
                               weak="a null by construction: the same distribution twice, so z ~ N(0, 1)" + (
                                   "; on TSP exactly 0, as 2-opt is exact at 4 cities" if c == "tsp" else "")),
                       *pooled],
              basis=_DECAY_PILOT[c] + "; the threshold z(1e-3) = 3.29 gives a null a one-sided false-pass rate 5e-4; "
                    "the rival is put through the same z on the same records (decided before it was run on the "
                    "chapter's seed)",
              scan=Scan(f"{c} size n ({unit})", sizes, tuple(round(x, 4) for x in acc)),
              note=f"{_METHOD[c]}; exact answers by {'Held–Karp' if c == 'tsp' else 'the knapsack DP'} (= HiGHS, see "
                   f"the consistency rows); accuracy per size {', '.join(f'{x:.3f}' for x in acc)}; the rival's "
                   f"{per} (z = {g['z_rival']:.2f}). {where} {scope}; not the paper's PTR collapse "
                   f"(language models, quoted only). The SIR proxy (HiGHS on the parsed text, first {g['n_sir']} "
                   f"records at {sizes[0]} and {sizes[-1]} {unit}: {g['sir'][0]:.3f} → {g['sir'][1]:.3f}) is exact by "
                   "construction and is reported, not counted as a control." + seeds_note + (
                       "" if c == "tsp" else
                       " Sceptic review (independent numpy, its own generator, seed 7001, 600 records per size): "
                       "with 1-for-2 and 2-for-1 swaps added the decay remains (z = 3.8), so the decay is not the "
                       "1-swap neighbourhood's alone."))


def load_bench() -> dict:
    """The committed decay results: ``bench/results/opt_engine_decay.json`` (TSP) and
    ``bench/results/opt_engine_decay_knapsack.json`` (knapsack) of the repository, as one dict (key per class,
    ``runs`` per class for the machine and seed)."""
    import json
    from pathlib import Path

    root = Path(__file__).parents[3] / "bench" / "results"
    out: dict = {"runs": {}}
    for c, f in (("tsp", "opt_engine_decay.json"), ("knapsack", "opt_engine_decay_knapsack.json")):
        r = json.loads((root / f).read_text())
        out[c] = r[c]
        out["runs"][c] = {k: r.get(k) for k in ("machine", "seed", "cpu_seconds", "design")}
    seeds = root / "opt_engine_decay_seeds.json"
    if seeds.exists():
        out["tsp_seeds"] = json.loads(seeds.read_text())
    return out


def bench_verdicts(results: dict) -> Verdicts:
    """The TSP and knapsack decay rows from the committed bench results (:func:`load_bench`; written by
    ``bench/opt_engine_decay.py`` and ``bench/opt_engine_decay_knapsack.py`` on the chapter's seed)."""
    if not isinstance(results, dict) or not isinstance(results.get("tsp"), dict):
        raise TypeError("Invalid results: must be the dict of load_bench() (keys 'tsp' and optionally 'knapsack')")
    v = Verdicts("OPT-Engine — the size knob controls difficulty (bench)", display=False)
    script = {"tsp": "bench/opt_engine_decay.py", "knapsack": "bench/opt_engine_decay_knapsack.py"}
    for c in ("tsp", "knapsack"):
        if c not in results:
            continue
        r = results.get("runs", {}).get(c, {})
        m = r.get("machine") or {}
        _decay_row(v, results[c], f"From {script[c]} (seed {r.get('seed')}, {m.get('cpu', '?')}, "
                                  f"{r.get('cpu_seconds')} s CPU).", results.get("tsp_seeds") if c == "tsp" else None)
    return v


def headline(*, derivations: dict, records: list[Record], omissions: list[Omission], audit: Audit,
             bench: dict, display: bool = True) -> Verdicts:
    """The chapter's one table (it carries :data:`PAPER_CLAIMS`)."""
    v = Verdicts("OPT-Engine — regenerated benchmark claims", display=display, claims=PAPER_CLAIMS)
    v.extend(derivation_verdicts(**derivations))
    v.extend(deterministic_verdicts())
    v.extend(study_verdicts(records, omissions, audit))
    v.extend(bench_verdicts(bench))
    return v
