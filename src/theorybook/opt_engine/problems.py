"""Ten canonical optimisation classes of OPT-Engine (Chen et al., arXiv 2601.19924), rebuilt from the equations.

For each class: a seeded generator (parameter ranges of the paper's generators where the digest gives them,
[reconstruction] elsewhere), a natural-language template that prints every number exactly and a parser that reads
them back (``to_text``/``from_text``), an exact model solved by HiGHS through ``scipy.optimize.milp`` with
``mip_rel_gap = 0`` (the default 1e-4 is not exact) or ``linprog``, a transparent heuristic *stand-in* (the PTR
proxy), a feasibility check and the objective of any candidate solution.

Solutions ``x`` per class (what ``solve``/``stand_in`` return and ``is_feasible``/``objective`` read):

- ``tsp``: successor array ``succ`` (city ``i`` is followed by ``succ[i]``; a tour iff one cycle);
- ``knapsack``: 0/1 vector; ``bin_packing``: bin index per item; ``job_shop``: start times ``s[j, k]``;
- ``transportation``/``network_flow``/``pollution``: the flow matrix; ``inventory``: orders ``x_t``;
  ``production``/``portfolio``: the decision vector.

Grading is the paper's: a prediction is correct iff ``|pred − true| ≤ 0.002·|true|`` [paper].
"""

from __future__ import annotations

import math
import re
import time
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sps
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ..validate import integer, number, one_of

__all__ = [
    "CLASSES", "SIZE_RANGE", "MIP_CLASSES", "OMIT", "ADD", "Instance", "Solution", "generate", "solve",
    "FORMULATIONS", "stand_in", "is_feasible", "objective", "grade", "held_karp", "knapsack_dp", "to_text", "from_text",
]

#: The ten classes: five continuous LPs and NetworkFlow (an LP whose optimum is integral) and four MIPs [paper].
CLASSES = ("inventory", "pollution", "portfolio", "transportation", "production", "network_flow",
           "tsp", "knapsack", "bin_packing", "job_shop")
MIP_CLASSES = ("tsp", "knapsack", "bin_packing", "job_shop")
#: The size knob's range in C³-Bench [paper; production/network_flow ranges are our reconstruction].
SIZE_RANGE = {"inventory": (5, 20), "pollution": (3, 10), "portfolio": (5, 20), "transportation": (3, 10),
              "production": (3, 10), "network_flow": (3, 10), "tsp": (4, 19), "knapsack": (5, 30),
              "bin_packing": (10, 40), "job_shop": (3, 10)}
SENSE = {"portfolio": "max", "production": "max", "knapsack": "max"}
#: Constraint families a careless model may omit (``solve(..., omit=...)``) [reconstruction].
OMIT = {"tsp": ("mtz",), "knapsack": ("capacity",), "bin_packing": ("capacity",), "job_shop": ("disjunctive",),
        "transportation": ("supply",), "network_flow": ("arc_capacity",), "inventory": ("capacity",),
        "pollution": ("source_limit",), "portfolio": ("risk",), "production": ()}
#: One extra simple constraint per perturbed class (the paper perturbs Inventory, TSP, Knapsack) [reconstruction]:
#: TSP — travel directly between city 0 and the city farthest from it; knapsack — the two items of highest v/w
#: conflict; inventory — the order of the peak-demand period is capped at Qmin + ⌊(Qmax − Qmin)/4⌋.
ADD = {"tsp": ("forced_arc",), "knapsack": ("conflict",), "inventory": ("order_cap",)}
RTOL_FEAS = 1e-6
#: Exact formulations per class, the paper's first (see :func:`solve`).
FORMULATIONS = {p: ("default",) for p in CLASSES} | {"tsp": ("mtz", "dfj"), "bin_packing": ("assignment", "arcflow")}


class Instance(NamedTuple):
    """One benchmark record: the class, its size, the numeric parameters, the text, the exact answer, the sense."""

    problem: str
    size: int
    params: dict
    text: str
    answer: float
    sense: str
    status: str = "optimal"


class Solution(NamedTuple):
    """An exact solve: objective (``inf`` when infeasible/unbounded), solution ``x``, HiGHS status, seconds,
    branch-and-bound nodes (0 for an LP)."""

    objective: float
    x: Any
    status: str
    seconds: float
    nodes: int


# -- validation --------------------------------------------------------------------------------------------------
def _problem(problem: Any) -> str:
    if not isinstance(problem, str):
        raise TypeError(f"Invalid problem: {problem!r} (must be one of {', '.join(CLASSES)})")
    return one_of("problem", problem, CLASSES)


def _arr(name: str, value: Any, *, ndim: int, low: float = 0.0, integral: bool = False, min_len: int = 1,
         high: float = 1e9) -> np.ndarray:
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"Invalid {name}: {value!r} (must be an array of numbers)")
    try:
        a = np.asarray(value if not hasattr(value, "detach") else value.detach().cpu().tolist(), dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"Invalid {name}: {value!r} (must be an array of numbers)") from err
    if np.asarray(value).dtype == np.bool_:
        raise TypeError(f"Invalid {name}: booleans are not numbers")
    if a.ndim != ndim or a.shape[0] < min_len or (ndim == 2 and a.shape[1] < 1):
        raise ValueError(f"Invalid {name}: shape {a.shape} (must have {ndim} dimension(s), ≥ {min_len} rows)")
    if not np.all(np.isfinite(a)) or a.min() < low or a.max() > high:
        raise ValueError(f"Invalid {name}: values in [{a.min():g}, {a.max():g}] (must be finite and in "
                         f"[{low:g}, {high:g}])")
    if integral and not np.all(a == np.round(a)):
        raise ValueError(f"Invalid {name}: non-integer entries (must be integers)")
    return a


def _num(name: str, value: Any, low: float = 0.0, high: float = 1e9) -> float:
    return number(name, value, low, high)


def check_params(problem: str, params: Any) -> dict:
    """Validate and normalise a class's parameters (float64 arrays); raise ``ValueError`` naming the field."""
    p = _problem(problem)
    if not isinstance(params, dict):
        raise TypeError(f"Invalid params: {type(params).__name__} (must be a dict of the class's fields)")
    need = FIELDS[p]
    missing = [k for k in need if k not in params]
    if missing:
        raise ValueError(f"Invalid params: missing {missing} for {p} (needs {list(need)})")
    q: dict = {}
    if p == "tsp":
        q["coords"] = _arr("coords", params["coords"], ndim=2, integral=True, min_len=3, high=1e6)
        if q["coords"].shape[1] != 2:
            raise ValueError(f"Invalid coords: shape {q['coords'].shape} (must be (n, 2))")
        if q["coords"].shape[0] > 19:
            raise ValueError(f"Invalid coords: {q['coords'].shape[0]} cities (must be in [3, 19])")
    elif p == "knapsack":
        q["weights"] = _arr("weights", params["weights"], ndim=1, low=1, integral=True, high=1e6)
        q["values"] = _arr("values", params["values"], ndim=1, low=0, high=1e9)
        q["capacity"] = _num("capacity", params["capacity"], 0, 1e6)
        if q["weights"].size != q["values"].size or q["weights"].size > 200:
            raise ValueError(f"Invalid values: {q['values'].size} values for {q['weights'].size} weights "
                             "(must match, ≤ 200 items)")
        if q["capacity"] != int(q["capacity"]):
            raise ValueError(f"Invalid capacity: {q['capacity']} (must be an integer)")
    elif p == "bin_packing":
        q["capacity"] = _num("capacity", params["capacity"], 1, 1e6)
        q["sizes"] = _arr("sizes", params["sizes"], ndim=1, low=1e-9, high=q["capacity"])
        if q["sizes"].size > 60:
            raise ValueError(f"Invalid sizes: {q['sizes'].size} items (must be ≤ 60)")
    elif p == "job_shop":
        q["times"] = _arr("times", params["times"], ndim=2, low=0, high=1e6)
        q["machines"] = _arr("machines", params["machines"], ndim=2, integral=True, high=1e6)
        J, K = q["times"].shape
        if q["machines"].shape != (J, K) or J * K > 150:
            raise ValueError(f"Invalid machines: shape {q['machines'].shape} (must equal times' {(J, K)}, ≤ 150 ops)")
        if any(sorted(row) != list(range(K)) for row in q["machines"].astype(int).tolist()):
            raise ValueError("Invalid machines: each job must visit every machine 0..K−1 exactly once")
    elif p in ("transportation", "network_flow"):
        q["supply"] = _arr("supply", params["supply"], ndim=1, high=1e7)
        q["demand"] = _arr("demand", params["demand"], ndim=1, high=1e7)
        q["cost"] = _arr("cost", params["cost"], ndim=2, high=1e7)
        n, m = q["supply"].size, q["demand"].size
        if q["cost"].shape != (n, m) or n * m > 2500:
            raise ValueError(f"Invalid cost: shape {q['cost'].shape} (must be ({n}, {m}), ≤ 2500 cells)")
        if p == "network_flow":
            q["arc_capacity"] = _arr("arc_capacity", params["arc_capacity"], ndim=2, high=1e7)
            if q["arc_capacity"].shape != (n, m):
                raise ValueError(f"Invalid arc_capacity: shape {q['arc_capacity'].shape} (must be ({n}, {m}))")
    elif p == "inventory":
        q["demand"] = _arr("demand", params["demand"], ndim=1, high=1e7)
        if q["demand"].size > 200:
            raise ValueError(f"Invalid demand: {q['demand'].size} periods (must be ≤ 200)")
        for k in ("order_cost", "holding_cost", "shortage_cost", "capacity", "initial"):
            q[k] = _num(k, params[k], 0, 1e7)
        q["q_min"] = _num("q_min", params["q_min"], 0, 1e7)
        q["q_max"] = _num("q_max", params["q_max"], q["q_min"], 1e7)
        q["lead_time"] = float(integer("lead_time", params["lead_time"], 0, 50))
    elif p == "pollution":
        q["amount"] = _arr("amount", params["amount"], ndim=1, high=1e7)
        q["weight"] = _arr("weight", params["weight"], ndim=1, high=1e7)
        q["removal_pct"] = _arr("removal_pct", params["removal_pct"], ndim=1, high=100)
        q["cost"] = _arr("cost", params["cost"], ndim=2, high=1e7)
        q["target_pct"] = _num("target_pct", params["target_pct"], 0, 100)
        T, K = q["amount"].size, q["removal_pct"].size
        if q["weight"].size != T or q["cost"].shape != (T, K) or T * K > 2500:
            raise ValueError(f"Invalid cost: shape {q['cost'].shape}, weight {q['weight'].size} (must be ({T}, {K}), "
                             f"{T})")
    elif p == "portfolio":
        q["returns"] = _arr("returns", params["returns"], ndim=1, low=-1e6, high=1e6)
        n = q["returns"].size
        if n > 500:
            raise ValueError(f"Invalid returns: {n} assets (must be ≤ 500)")
        for k in ("risk", "lower", "upper", "liquid"):
            q[k] = _arr(k, params[k], ndim=1, high=1e6)
            if q[k].size != n:
                raise ValueError(f"Invalid {k}: {q[k].size} entries (must be {n})")
        if not np.all(np.isin(q["liquid"], (0, 1))):
            raise ValueError("Invalid liquid: entries must be 0 or 1")
        for k in ("max_risk", "min_return", "min_liquid"):
            q[k] = _num(k, params[k], -1e6, 1e6)
    elif p == "production":
        q["profit"] = _arr("profit", params["profit"], ndim=1, high=1e7)
        q["time"] = _arr("time", params["time"], ndim=2, high=1e7)
        q["available"] = _arr("available", params["available"], ndim=1, high=1e9)
        I, J = q["profit"].size, q["available"].size
        if q["time"].shape != (I, J) or I * J > 2500:
            raise ValueError(f"Invalid time: shape {q['time'].shape} (must be ({I}, {J}))")
        if np.any(q["time"].sum(1) <= 0):
            raise ValueError("Invalid time: every product must use some operation time (else unbounded)")
    return q


# -- generators ----------------------------------------------------------------------------------------------------
def _gen(problem: str, n: int, rng: np.random.Generator) -> dict:
    if problem == "tsp":
        while True:
            c = rng.integers(0, 201, size=(n, 2))
            if len({tuple(r) for r in c.tolist()}) == n:  # distinct cities
                return {"coords": c.astype(float)}
    if problem == "knapsack":
        w = rng.integers(1, 51, n).astype(float)
        return {"weights": w, "values": rng.integers(10, 301, n).astype(float),
                "capacity": float(math.floor(0.7 * w.sum()))}
    if problem == "bin_packing":
        big = rng.random(n) < 0.5
        s = np.where(big, rng.integers(66, 71, n), rng.integers(31, 35, n)).astype(float)
        return {"sizes": s, "capacity": 100.0}
    if problem == "job_shop":
        return {"times": rng.integers(1, 11, (n, n)).astype(float),
                "machines": np.array([rng.permutation(n) for _ in range(n)], dtype=float)}
    if problem == "transportation":
        while True:
            e, d = rng.integers(30, 81, n), rng.integers(10, 51, n)
            if e.sum() >= d.sum():
                return {"supply": e.astype(float), "demand": d.astype(float),
                        "cost": rng.integers(1, 21, (n, n)).astype(float)}
    if problem == "network_flow":
        F = rng.integers(0, 21, (n, n)) * (rng.random((n, n)) < 0.6)
        F[np.arange(n), rng.permutation(n)] += rng.integers(1, 11, n)  # every row and column ships something
        return {"supply": F.sum(1).astype(float), "demand": F.sum(0).astype(float),
                "cost": rng.integers(1, 21, (n, n)).astype(float),
                "arc_capacity": (F + rng.integers(0, 16, (n, n))).astype(float)}
    if problem == "inventory":
        cap = float(rng.integers(80, 121))
        return {"demand": rng.integers(10, 41, n).astype(float), "order_cost": float(rng.integers(1, 6)),
                "holding_cost": float(rng.integers(1, 4)), "shortage_cost": float(rng.integers(10, 21)),
                "capacity": cap, "initial": float(rng.integers(10, 31)), "q_min": float(rng.integers(0, 6)),
                "q_max": float(rng.integers(30, 61)), "lead_time": float(rng.integers(0, 3))}
    if problem == "pollution":
        K = int(rng.integers(2, 6))
        return {"amount": rng.integers(50, 201, n).astype(float), "weight": rng.integers(1, 6, n).astype(float),
                "removal_pct": np.round(rng.uniform(40.0, 95.0, K), 1),
                "cost": rng.integers(2, 21, (n, K)).astype(float),
                "target_pct": float(rng.integers(20, 41))}
    if problem == "production":
        J = int(rng.integers(2, 6))
        t = rng.integers(1, 11, (n, J)).astype(float)
        ref = rng.integers(5, 21, n)
        return {"profit": rng.integers(10, 51, n).astype(float), "time": t,
                "available": np.floor((ref @ t) * rng.uniform(1.0, 1.5, J))}
    if problem == "portfolio":
        while True:
            r = np.round(rng.uniform(1.0, 15.0, n), 1)
            v = rng.integers(1, 31, n).astype(float)
            u = np.full(n, 0.4)
            liquid = (rng.random(n) < 0.4).astype(float)
            if liquid.sum() < 2:
                continue
            order = np.argsort(v, kind="stable")
            lo = np.zeros(n)
            rem = 1.0
            for i in order:  # the least risky feasible portfolio (fills lowest-risk assets)
                lo[i] = min(u[i], rem)
                rem -= lo[i]
            vmax = float(np.round(v @ lo + rng.uniform(0.2, 0.8) * (v.mean() - v @ lo), 1))
            p = {"returns": r, "risk": v, "lower": np.zeros(n), "upper": u, "liquid": liquid, "max_risk": vmax,
                 "min_return": float(np.round(0.5 * r.mean(), 1)), "min_liquid": 0.2}
            if solve("portfolio", p).status == "optimal":
                return p
    raise AssertionError(problem)


def generate(problem: str, size: int, *, seed: int) -> Instance:
    """A seeded instance of ``problem`` with size knob ``size`` (in :data:`SIZE_RANGE`): params, the text from our
    template, the exact optimum (HiGHS, or Held–Karp for TSP ≤ 13 cities and the DP for knapsack — two independent
    exact methods, so the SIR proxy re-solving the parsed text with HiGHS is a real check), and the sense."""
    p = _problem(problem)
    lo, hi = SIZE_RANGE[p]
    n = integer("size", size, lo, hi)
    s = integer("seed", seed, 0, 2**63 - 1)
    rng = np.random.default_rng([s, CLASSES.index(p), n])
    params = _gen(p, n, rng)
    status = "optimal"
    if p == "tsp" and n <= 13:
        answer = held_karp(_dist(params["coords"]))
    elif p == "knapsack":
        answer = knapsack_dp(params["weights"], params["values"], params["capacity"])
    else:  # generation never resamples on a time-out: the record keeps the incumbent and its status
        sol = solve(p, params, formulation={"tsp": "dfj", "bin_packing": "arcflow"}.get(p))
        answer, status = sol.objective, sol.status
    return Instance(p, n, params, to_text(p, params), float(answer), SENSE.get(p, "min"), status)


# -- exact solvers -----------------------------------------------------------------------------------------------
def _dist(coords: np.ndarray) -> np.ndarray:
    return np.sqrt(((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1))


def held_karp(dist: Any) -> float:
    """Exact TSP tour length by the Held–Karp DP: ``g(S, j) = min_{k∈S∖{j}} g(S∖{j}, k) + d_kj`` over subsets
    ``S ⊆ {1..n−1}``, tour = ``min_j g(S_full, j) + d_j0``. O(2ⁿ n²) time; ``n ≤ 16``."""
    d = _arr("dist", dist, ndim=2, high=1e12)
    n = d.shape[0]
    if d.shape != (n, n) or n < 2 or n > 16:
        raise ValueError(f"Invalid dist: shape {d.shape} (must be square with 2 ≤ n ≤ 16)")
    m = n - 1
    full = 1 << m
    g = np.full((full, m), np.inf)
    D = d[1:, 1:]
    g[1 << np.arange(m), np.arange(m)] = d[0, 1:]
    subsets = np.arange(full)
    pop = np.array([bin(S).count("1") for S in range(full)])
    bit = 1 << np.arange(m)
    for k in range(2, m + 1):  # by subset size, vectorised over subsets S and last cities j
        Sk = subsets[pop == k]
        prev = Sk[:, None] ^ bit[None, :]  # S ∖ {j} (or S ∪ {j} where j ∉ S: masked below)
        cand = (g[prev] + D.T[None, :, :]).min(2)  # (|Sk|, m): min_k g(S∖{j}, k) + d_kj
        inS = (Sk[:, None] & bit[None, :]) > 0
        g[Sk[:, None], np.arange(m)[None, :]] = np.where(inS, cand, np.inf)
    return float((g[full - 1] + d[1:, 0]).min())


def knapsack_dp(weights: Any, values: Any, capacity: Any) -> float:
    """Exact 0/1 knapsack by the DP ``f_i(c) = max(f_{i−1}(c), f_{i−1}(c − w_i) + v_i)`` on integer weights."""
    w = _arr("weights", weights, ndim=1, low=1, integral=True, high=1e6)
    v = _arr("values", values, ndim=1, high=1e9)
    C = integer("capacity", capacity, 0, 10**7) if not isinstance(capacity, float) else integer(
        "capacity", capacity, 0, 10**7)
    if w.size != v.size:
        raise ValueError(f"Invalid values: {v.size} values for {w.size} weights (must match)")
    from ..validate import memory_guard

    memory_guard(8.0 * (C + 1) * 2, lower="capacity")
    f = np.zeros(C + 1)
    for wi, vi in zip(w.astype(int), v, strict=False):
        if wi <= C:
            f[wi:] = np.maximum(f[wi:], f[:-wi] + vi if wi > 0 else f + vi)
    return float(f[C])


def _status(res) -> str:
    return {0: "optimal", 1: "time_limit", 2: "infeasible", 3: "unbounded", 4: "error"}.get(int(res.status), "error")


def _run_milp(c, A, lo, hi, integrality, bounds, time_limit, sense=1.0):
    t0 = time.perf_counter()
    cons = [LinearConstraint(A, lo, hi)] if A is not None and A.shape[0] else []
    res = milp(sense * np.asarray(c, float), constraints=cons, integrality=integrality, bounds=bounds,
               options={"mip_rel_gap": 0.0, "time_limit": time_limit, "disp": False, "presolve": True})
    secs = time.perf_counter() - t0
    st = _status(res)
    x = res.x if res.x is not None else None
    obj = sense * float(res.fun) if res.x is not None else math.inf
    return obj, x, st, secs, int(getattr(res, "mip_node_count", 0) or 0)


def _run_lp(c, A_ub, b_ub, A_eq, b_eq, bounds, time_limit, sense=1.0):
    t0 = time.perf_counter()
    res = linprog(sense * np.asarray(c, float), A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                  method="highs", options={"time_limit": time_limit})
    secs = time.perf_counter() - t0
    st = _status(res)
    if res.x is None or st != "optimal":
        return (math.inf if sense > 0 else -math.inf), None, st, secs, 0
    return sense * float(res.fun), res.x, st, secs, 0


def _added(problem: str, q: dict) -> Any:
    """The data of the ADD constraint, derived deterministically from the parameters [reconstruction]."""
    if problem == "tsp":
        d = _dist(q["coords"])
        return 0, int(np.argmax(d[0]))
    if problem == "knapsack":
        order = np.argsort(-(q["values"] / q["weights"]), kind="stable")
        return int(order[0]), int(order[1])
    if problem == "inventory":
        t = int(np.argmax(q["demand"]))
        return t, q["q_min"] + math.floor((q["q_max"] - q["q_min"]) / 4)
    raise AssertionError(problem)


def solve(problem: str, params: dict, *, omit: str | None = None, add: str | None = None,
          time_limit: float = 30.0, formulation: str | None = None) -> Solution:
    """Solve the class's exact model with HiGHS (``mip_rel_gap = 0``); ``omit`` drops one constraint family
    (:data:`OMIT`), ``add`` appends one extra constraint (:data:`ADD`). On a time-out the best incumbent is returned
    with status ``"time_limit"`` (never resampled).

    ``formulation`` (:data:`FORMULATIONS`; default the paper's): TSP ``"mtz"`` (u_i − u_j + n x_ij ≤ n − 1) or
    ``"dfj"`` (assignment MILP, then subtour cuts Σ_{i,j∈S} x_ij ≤ |S| − 1 for every subtour found, re-solved in a
    loop until one tour remains); bin packing ``"assignment"`` (x_ij, y_j) or ``"arcflow"`` (integer flow of bins
    through capacity levels 0..C, one arc per item size — Valério de Carvalho's model)."""
    p = _problem(problem)
    q = check_params(p, params)
    if omit is not None:
        one_of("omit", omit, OMIT[p]) if OMIT[p] else one_of("omit", omit, (None,))
    if add is not None:
        one_of("add", add, ADD.get(p, ()) or (None,))
    tl = number("time_limit", time_limit, 0.0, 3600.0, low_open=True)
    form = FORMULATIONS[p][0] if formulation is None else one_of("formulation", formulation, FORMULATIONS[p])
    if p == "tsp" and form == "dfj":
        return _solve_tsp_dfj(q, omit, add, tl)
    if p == "bin_packing" and form == "arcflow":
        return _solve_bin_arcflow(q, omit, add, tl)
    return _SOLVERS[p](q, omit, add, tl)


def _solve_tsp(q, omit, add, tl):
    d = _dist(q["coords"])
    n = d.shape[0]
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    na = len(arcs)
    nv = na + (n - 1)  # x_ij, then u_1..u_{n−1}
    idx = {a: k for k, a in enumerate(arcs)}
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for i in range(n):  # out-degree and in-degree 1
        for j in range(n):
            if i != j:
                rows += [r, r + 1]
                cols += [idx[(i, j)], idx[(j, i)]]
                vals += [1.0, 1.0]
        lo += [1, 1]
        hi += [1, 1]
        r += 2
    if omit != "mtz":  # u_i − u_j + n x_ij ≤ n − 1 for i, j ≥ 1
        for i in range(1, n):
            for j in range(1, n):
                if i != j:
                    rows += [r, r, r]
                    cols += [na + i - 1, na + j - 1, idx[(i, j)]]
                    vals += [1.0, -1.0, float(n)]
                    lo.append(-np.inf)
                    hi.append(n - 1.0)
                    r += 1
    if add == "forced_arc":
        a, b = _added("tsp", q)
        rows += [r, r]
        cols += [idx[(a, b)], idx[(b, a)]]
        vals += [1.0, 1.0]
        lo.append(1)
        hi.append(1)
        r += 1
    A = sps.csr_array((vals, (rows, cols)), shape=(r, nv))
    c = np.concatenate([[d[i, j] for i, j in arcs], np.zeros(n - 1)])
    integ = np.concatenate([np.ones(na), np.zeros(n - 1)])
    bounds = Bounds(np.concatenate([np.zeros(na), np.ones(n - 1)]),
                    np.concatenate([np.ones(na), np.full(n - 1, n - 1)]))
    obj, x, st, secs, nodes = _run_milp(c, A, lo, hi, integ, bounds, tl)
    succ = None
    if x is not None:
        succ = np.full(n, -1)
        for k, (i, j) in enumerate(arcs):
            if x[k] > 0.5:
                succ[i] = j
    return Solution(obj, succ, st, secs, nodes)


def _solve_knapsack(q, omit, add, tl):
    w, v = q["weights"], q["values"]
    n = w.size
    A_rows, lo, hi = [], [], []
    if omit != "capacity":
        A_rows.append(w)
        lo.append(-np.inf)
        hi.append(q["capacity"])
    if add == "conflict":
        a, b = _added("knapsack", q)
        e = np.zeros(n)
        e[[a, b]] = 1
        A_rows.append(e)
        lo.append(-np.inf)
        hi.append(1)
    A = np.array(A_rows) if A_rows else None
    obj, x, st, secs, nodes = _run_milp(v, A, lo, hi, np.ones(n), Bounds(0, 1), tl, sense=-1.0)
    return Solution(obj, None if x is None else np.round(x).astype(int), st, secs, nodes)


def _first_fit(sizes: np.ndarray, cap: float, order: np.ndarray) -> np.ndarray:
    loads: list[float] = []
    assign = np.zeros(sizes.size, dtype=int)
    for i in order:
        for b, ld in enumerate(loads):
            if ld + sizes[i] <= cap + 1e-9:
                loads[b] += sizes[i]
                assign[i] = b
                break
        else:
            loads.append(sizes[i])
            assign[i] = len(loads) - 1
    return assign


def _solve_bin_packing(q, omit, add, tl):
    s, C = q["sizes"], q["capacity"]
    n = s.size
    if omit == "capacity":
        return Solution(1.0, np.zeros(n, dtype=int), "optimal", 0.0, 0)  # everything in one bin
    B = int(_first_fit(s, C, np.argsort(-s, kind="stable")).max() + 1)  # FFD bins: a valid upper bound
    # x_ij only for j ≤ i (symmetry breaking), y_j; Σ_j x_ij = 1; Σ_i s_i x_ij ≤ C y_j; y_j ≥ y_{j+1}
    pairs = [(i, j) for i in range(n) for j in range(min(i + 1, B))]
    nx = len(pairs)
    rows, cols, vals, lo, hi = [], [], [], [], []
    for k, (i, j) in enumerate(pairs):
        rows += [i, n + j]
        cols += [k, k]
        vals += [1.0, s[i]]
    lo += [1] * n + [-np.inf] * B
    hi += [1] * n + [0] * B
    for j in range(B):
        rows.append(n + j)
        cols.append(nx + j)
        vals.append(-C)
    r = n + B
    for j in range(B - 1):
        rows += [r, r]
        cols += [nx + j, nx + j + 1]
        vals += [1.0, -1.0]
        lo.append(0)
        hi.append(np.inf)
        r += 1
    A = sps.csr_array((vals, (rows, cols)), shape=(r, nx + B))
    c = np.concatenate([np.zeros(nx), np.ones(B)])
    obj, x, st, secs, nodes = _run_milp(c, A, lo, hi, np.ones(nx + B), Bounds(0, 1), tl)
    assign = None
    if x is not None:
        assign = np.zeros(n, dtype=int)
        for k, (i, j) in enumerate(pairs):
            if x[k] > 0.5:
                assign[i] = j
    return Solution(obj, assign, st, secs, nodes)


def _solve_job_shop(q, omit, add, tl):
    p, mach = q["times"], q["machines"].astype(int)
    J, K = p.shape
    nops = J * K
    big = float(p.sum())
    pairs = []
    if omit != "disjunctive":
        for m in range(K):
            ops = [(j, int(np.nonzero(mach[j] == m)[0][0])) for j in range(J)]
            pairs += [(a, b) for ia, a in enumerate(ops) for b in ops[ia + 1:]]
    ny = len(pairs)
    nv = nops + ny + 1  # s_{jk}, y_pair, C_max
    Cm = nv - 1
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for j in range(J):
        for k in range(K):
            a = j * K + k
            nxt = a + 1 if k + 1 < K else Cm
            rows += [r, r]
            cols += [nxt, a]
            vals += [1.0, -1.0]
            lo.append(p[j, k])
            hi.append(np.inf)
            r += 1
    for t, ((ja, ka), (jb, kb)) in enumerate(pairs):
        a, b, y = ja * K + ka, jb * K + kb, nops + t
        rows += [r, r, r]  # y = 1: a before b
        cols += [b, a, y]
        vals += [1.0, -1.0, -big]
        lo.append(p[ja, ka] - big)
        hi.append(np.inf)
        rows += [r + 1, r + 1, r + 1]  # y = 0: b before a
        cols += [a, b, y]
        vals += [1.0, -1.0, big]
        lo.append(p[jb, kb])
        hi.append(np.inf)
        r += 2
    A = sps.csr_array((vals, (rows, cols)), shape=(r, nv))
    c = np.zeros(nv)
    c[Cm] = 1.0
    integ = np.zeros(nv)
    integ[nops:nops + ny] = 1
    ub = np.full(nv, np.inf)
    ub[nops:nops + ny] = 1
    obj, x, st, secs, nodes = _run_milp(c, A, lo, hi, integ, Bounds(np.zeros(nv), ub), tl)
    return Solution(obj, None if x is None else x[:nops].reshape(J, K), st, secs, nodes)


def _solve_transport(q, omit, add, tl, arc_caps=False):
    e, d, C = q["supply"], q["demand"], q["cost"]
    n, m = C.shape
    Ar = np.kron(np.eye(n), np.ones((1, m)))  # Σ_j x_ij
    Ac = np.kron(np.ones((1, n)), np.eye(m))  # Σ_i x_ij
    if arc_caps:  # NetworkFlow: balanced, Σ_j x_ij = e_i, Σ_i x_ij = d_j, 0 ≤ x_ij ≤ u_ij
        A_eq, b_eq = np.vstack([Ar, Ac]), np.concatenate([e, d])
        ub = None if omit == "arc_capacity" else q["arc_capacity"].ravel()
        bounds = list(zip(np.zeros(n * m), ub if ub is not None else [None] * (n * m), strict=False))
        obj, x, st, secs, nodes = _run_lp(C.ravel(), None, None, A_eq, b_eq, bounds, tl)
    else:
        A_ub, b_ub = (None, None) if omit == "supply" else (Ar, e)
        obj, x, st, secs, nodes = _run_lp(C.ravel(), A_ub, b_ub, Ac, d, (0, None), tl)
    return Solution(obj, None if x is None else x.reshape(n, m), st, secs, nodes)


def _inventory_model(q, omit, add):
    D = q["demand"]
    T, ell = D.size, int(q["lead_time"])
    nv = 3 * T  # x, I, S
    X, I, S = 0, T, 2 * T
    A_eq = np.zeros((T, nv))
    b_eq = -D.copy()
    A_ub, b_ub = [], []
    for t in range(T):  # I_t − S_t − I_{t−1} − x_{t−ℓ} = −D_t
        A_eq[t, I + t], A_eq[t, S + t] = 1.0, -1.0
        row = np.zeros(nv)
        if t > 0:
            A_eq[t, I + t - 1] = -1.0
            row[I + t - 1] = 1.0
        else:
            b_eq[t] += q["initial"]
        if t - ell >= 0:
            A_eq[t, X + t - ell] = -1.0
            row[X + t - ell] = 1.0
        if omit != "capacity":  # I_{t−1} + x_{t−ℓ} ≤ C
            A_ub.append(row)
            b_ub.append(q["capacity"] - (q["initial"] if t == 0 else 0.0))
    ub = [q["q_max"]] * T + [None] * (2 * T)
    lb = [q["q_min"]] * T + [0.0] * (2 * T)
    if add == "order_cap":
        t, cap = _added("inventory", q)
        ub[t] = cap
    c = np.concatenate([np.full(T, q["order_cost"]), np.full(T, q["holding_cost"]), np.full(T, q["shortage_cost"])])
    bounds = list(zip(lb, ub, strict=True))
    return c, (np.array(A_ub) if A_ub else None), (np.array(b_ub) if b_ub else None), A_eq, b_eq, bounds


def _solve_inventory(q, omit, add, tl):
    c, A_ub, b_ub, A_eq, b_eq, bounds = _inventory_model(q, omit, add)
    obj, x, st, secs, nodes = _run_lp(c, A_ub, b_ub, A_eq, b_eq, bounds, tl)
    return Solution(obj, None if x is None else x[: q["demand"].size], st, secs, nodes)


def _inventory_cost(q: dict, x: np.ndarray) -> tuple[float, bool]:
    """Cost of orders ``x`` under the model's dynamics (the cheapest I, S for those orders) and capacity feasibility."""
    D, ell = q["demand"], int(q["lead_time"])
    T = D.size
    prev, cost, ok = q["initial"], q["order_cost"] * float(np.sum(x)), True
    for t in range(T):
        arr = x[t - ell] if t - ell >= 0 else 0.0
        if prev + arr > q["capacity"] * (1 + RTOL_FEAS) + RTOL_FEAS:
            ok = False
        net = prev + arr - D[t]
        cost += q["holding_cost"] * max(net, 0.0) + q["shortage_cost"] * max(-net, 0.0)
        prev = max(net, 0.0)
    return cost, ok


def _solve_pollution(q, omit, add, tl):
    a, w, s, C = q["amount"], q["weight"], q["removal_pct"] / 100.0, q["cost"]
    T, K = C.shape
    cover = -(w[:, None] * s[None, :]).ravel()  # Σ w_i s_j x_ij ≥ P Σ w_i p_i
    A_ub, b_ub = [cover], [-q["target_pct"] / 100.0 * float(w @ a)]
    if omit != "source_limit":
        A_ub += list(np.kron(np.eye(T), np.ones((1, K))))
        b_ub += list(a)
    obj, x, st, secs, nodes = _run_lp(C.ravel(), np.array(A_ub), np.array(b_ub), None, None, (0, None), tl)
    return Solution(obj, None if x is None else x.reshape(T, K), st, secs, nodes)


def _solve_portfolio(q, omit, add, tl):
    r, v = q["returns"], q["risk"]
    n = r.size
    A_ub, b_ub = [-r, -q["liquid"]], [-q["min_return"], -q["min_liquid"]]
    if omit != "risk":
        A_ub.append(v)
        b_ub.append(q["max_risk"])
    obj, x, st, secs, nodes = _run_lp(r, np.array(A_ub), np.array(b_ub), np.ones((1, n)), [1.0],
                                      list(zip(q["lower"], q["upper"], strict=False)), tl, sense=-1.0)
    return Solution(obj, x, st, secs, nodes)


def _solve_production(q, omit, add, tl):
    obj, x, st, secs, nodes = _run_lp(q["profit"], q["time"].T, q["available"], None, None, (0, None), tl, sense=-1.0)
    return Solution(obj, x, st, secs, nodes)


def _cycles(succ: np.ndarray) -> list[list[int]]:
    seen, out = np.zeros(succ.size, bool), []
    for s0 in range(succ.size):
        cyc, c = [], s0
        while not seen[c]:
            seen[c] = True
            cyc.append(c)
            c = int(succ[c])
        if cyc:
            out.append(cyc)
    return out


def _solve_tsp_dfj(q, omit, add, tl):
    d = _dist(q["coords"])
    n = d.shape[0]
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    na = len(arcs)
    idx = {a: k for k, a in enumerate(arcs)}
    rows, lo, hi = [], [], []
    for i in range(n):
        for out in (True, False):
            e = np.zeros(na)
            e[[idx[(i, j) if out else (j, i)] for j in range(n) if j != i]] = 1
            rows.append(e)
            lo.append(1)
            hi.append(1)
    if add == "forced_arc":
        a, b = _added("tsp", q)
        e = np.zeros(na)
        e[[idx[(a, b)], idx[(b, a)]]] = 1
        rows.append(e)
        lo.append(1)
        hi.append(1)
    c = np.array([d[i, j] for i, j in arcs])
    t0, nodes = time.perf_counter(), 0
    while True:
        left = tl - (time.perf_counter() - t0)
        if left <= 0:
            return Solution(math.inf, None, "time_limit", time.perf_counter() - t0, nodes)
        obj, x, st, _, nd = _run_milp(c, np.array(rows), lo, hi, np.ones(na), Bounds(0, 1), left)
        nodes += nd
        if x is None:
            return Solution(obj, None, st, time.perf_counter() - t0, nodes)
        succ = np.full(n, -1)
        for k, (i, j) in enumerate(arcs):
            if x[k] > 0.5:
                succ[i] = j
        cyc = _cycles(succ)
        if len(cyc) == 1 or omit == "mtz" or st != "optimal":
            return Solution(obj, succ, st, time.perf_counter() - t0, nodes)
        for S in cyc:  # Σ_{i,j∈S} x_ij ≤ |S| − 1
            e = np.zeros(na)
            e[[idx[(i, j)] for i in S for j in S if i != j]] = 1
            rows.append(e)
            lo.append(-np.inf)
            hi.append(len(S) - 1)


def _solve_bin_arcflow(q, omit, add, tl):
    s, C = q["sizes"], q["capacity"]
    if omit == "capacity":
        return Solution(1.0, np.zeros(s.size, dtype=int), "optimal", 0.0, 0)
    if not np.all(s == np.round(s)) or C != round(C) or C > 10_000:
        raise ValueError("Invalid sizes: the arc-flow model needs integer sizes and capacity ≤ 10000")
    types, counts = np.unique(s.astype(int), return_counts=True)
    types, counts = types[::-1], counts[::-1]  # decreasing sizes; a bin's items are taken in this order
    Ci = int(C)
    reach = {0: 0}  # node → smallest type index allowed next (non-increasing sizes along a path)
    arcs: list[tuple[int, int, int]] = []  # (tail, head, type or −1 for the loss arc to C)
    frontier = [0]
    start = {0: 0}
    while frontier:
        u = frontier.pop()
        for t in range(start[u], types.size):
            v = u + int(types[t])
            if v <= Ci:
                arcs.append((u, v, t))
                if v not in start or start[v] > t:
                    start[v] = t if v not in start else min(start[v], t)
                    frontier.append(v)
    reach = sorted(start)
    arcs = sorted(set(arcs))
    arcs += [(u, Ci, -1) for u in reach if u != Ci]
    nodes_ = {u: k for k, u in enumerate(sorted(set(reach) | {Ci}))}
    na = len(arcs)
    A = np.zeros((len(nodes_) + types.size, na + 1))  # flow conservation; type demand; z = flow out of 0
    for k, (u, v, t) in enumerate(arcs):
        A[nodes_[u], k] -= 1
        A[nodes_[v], k] += 1
        if t >= 0:
            A[len(nodes_) + t, k] = 1
    A[nodes_[0], na] = 1  # −out(0) + z = 0
    A[nodes_[Ci], na] = -1  # in(C) − z = 0
    lo = np.concatenate([np.zeros(len(nodes_)), counts])
    hi = np.concatenate([np.zeros(len(nodes_)), np.full(types.size, np.inf)])
    c = np.zeros(na + 1)
    c[na] = 1
    obj, x, st, secs, nd = _run_milp(c, A, lo, hi, np.ones(na + 1), Bounds(0, np.inf), tl)
    assign = None
    if x is not None:  # decompose the integer flow into bins (paths 0 → C), then hand out items by size
        flow = {k: int(round(x[k])) for k in range(na) if x[k] > 0.5}
        pools = {t: list(np.nonzero(s.astype(int) == types[t])[0]) for t in range(types.size)}
        assign = np.full(s.size, -1)
        b = 0
        while any(flow[k] > 0 for k in flow):
            u = 0
            while u != Ci:
                k = next(k for k in flow if flow[k] > 0 and arcs[k][0] == u)
                flow[k] -= 1
                t = arcs[k][2]
                if t >= 0 and pools[t]:
                    assign[pools[t].pop()] = b
                u = arcs[k][1]
            b += 1
        if np.any(assign < 0):
            raise AssertionError("arc-flow decomposition left items unassigned")
    return Solution(obj, assign, st, secs, nd)


_SOLVERS = {"tsp": _solve_tsp, "knapsack": _solve_knapsack, "bin_packing": _solve_bin_packing,
            "job_shop": _solve_job_shop, "transportation": _solve_transport,
            "network_flow": lambda q, o, a, t: _solve_transport(q, o, a, t, arc_caps=True),
            "inventory": _solve_inventory, "pollution": _solve_pollution, "portfolio": _solve_portfolio,
            "production": _solve_production}


# -- stand-ins (PTR proxies) ------------------------------------------------------------------------------------
def _tour_len(d: np.ndarray, tour: list[int]) -> float:
    return float(sum(d[tour[k], tour[(k + 1) % len(tour)]] for k in range(len(tour))))


def _nn_two_opt(d: np.ndarray) -> np.ndarray:
    n = d.shape[0]
    tour, left = [0], set(range(1, n))
    while left:  # nearest neighbour from city 0 (ties: lowest index)
        last = tour[-1]
        nxt = min(left, key=lambda j: (d[last, j], j))
        tour.append(nxt)
        left.remove(nxt)
    t = np.array(tour)
    if n >= 4:  # 2-opt, first improvement in scan order: reverse t[i..k] while an exchange gains > 1e-9
        I, K = np.triu_indices(n, 1)
        keep = (I >= 1) & (K <= n - 1)
        I, K = I[keep], K[keep]
        while True:
            a, b, c, e = t[I - 1], t[I], t[K], t[(K + 1) % n]
            delta = d[a, c] + d[b, e] - d[a, b] - d[c, e]
            best = int(np.argmax(delta < -1e-9))  # first improving exchange in scan order
            if delta[best] >= -1e-9:
                break
            i, k = I[best], K[best]
            t[i:k + 1] = t[i:k + 1][::-1].copy()
    tour = t.tolist()
    succ = np.empty(n, dtype=int)
    for k in range(n):
        succ[tour[k]] = tour[(k + 1) % n]
    return succ


def _spt_dispatch(p: np.ndarray, mach: np.ndarray) -> np.ndarray:
    J, K = p.shape
    nxt = np.zeros(J, dtype=int)
    job_ready, mach_ready = np.zeros(J), np.zeros(K)
    s = np.zeros((J, K))
    for _ in range(J * K):  # among the jobs' next operations, shortest processing time first (ties: job index)
        cand = [j for j in range(J) if nxt[j] < K]
        j = min(cand, key=lambda jj: (p[jj, nxt[jj]], jj))
        k = nxt[j]
        m = mach[j, k]
        s[j, k] = max(job_ready[j], mach_ready[m])
        job_ready[j] = mach_ready[m] = s[j, k] + p[j, k]
        nxt[j] += 1
    return s


def stand_in(problem: str, params: dict) -> np.ndarray:
    """The transparent heuristic that plays PTR: a classical constructive rule per class [reconstruction].

    tsp — nearest neighbour from city 0, then 2-opt (first improvement); knapsack — ratio greedy (stable sort
    by
    v/w descending, take each item that fits); bin_packing — first fit in the given order; job_shop — SPT
    dispatch; transportation —
    least-cost cell; network_flow — least-cost cell within arc capacities (may strand demand); inventory —
    lot-for-lot ordering of each arrival period's net demand; pollution — cheapest cost per unit of weighted
    removal first; production — best profit per share of the bottleneck operation first; portfolio — lower bounds,
    then highest return first (ignores risk and liquidity).
    """
    p = _problem(problem)
    q = check_params(p, params)
    if p == "tsp":
        return _nn_two_opt(_dist(q["coords"]))
    if p == "knapsack":
        w, v = q["weights"], q["values"]
        x, room = np.zeros(w.size, dtype=int), q["capacity"]
        for i in np.argsort(-(v / w), kind="stable"):
            if w[i] <= room:
                x[i], room = 1, room - w[i]
        return x
    if p == "bin_packing":
        return _first_fit(q["sizes"], q["capacity"], np.arange(q["sizes"].size))
    if p == "job_shop":
        return _spt_dispatch(q["times"], q["machines"].astype(int))
    if p in ("transportation", "network_flow"):
        C = q["cost"]
        e, d = q["supply"].copy(), q["demand"].copy()
        cap = q["arc_capacity"] if p == "network_flow" else np.full(C.shape, np.inf)
        x = np.zeros(C.shape)
        for cell in np.argsort(C, axis=None, kind="stable"):
            i, j = divmod(int(cell), C.shape[1])
            f = min(e[i], d[j], cap[i, j])
            x[i, j], e[i], d[j] = f, e[i] - f, d[j] - f
        return x
    if p == "inventory":
        D, ell, T = q["demand"], int(q["lead_time"]), q["demand"].size
        x = np.full(T, q["q_min"])
        prev = q["initial"]
        for t in range(T):  # arrival period t receives the order placed at t − ℓ
            if t - ell >= 0:
                room = max(q["capacity"] - prev, q["q_min"])
                x[t - ell] = float(np.clip(D[t] - prev, q["q_min"], min(q["q_max"], room)))
            arr = x[t - ell] if t - ell >= 0 else 0.0
            prev = max(prev + arr - D[t], 0.0)
        return x
    if p == "pollution":
        a, w, s, C = q["amount"], q["weight"], q["removal_pct"] / 100.0, q["cost"]
        need = q["target_pct"] / 100.0 * float(w @ a)
        best = np.argmin(C / s[None, :], axis=1)  # each source's cheapest method per unit removed
        ratio = C[np.arange(a.size), best] / (w * s[best])
        x = np.zeros(C.shape)
        for i in np.argsort(ratio, kind="stable"):
            if need <= 0:
                break
            per = w[i] * s[best[i]]
            amt = min(a[i], need / per)
            x[i, best[i]], need = amt, need - amt * per
        return x
    if p == "production":
        t, T = q["time"], q["available"].copy()
        score = q["profit"] / np.max(t / q["available"][None, :], axis=1)
        x = np.zeros(t.shape[0])
        for i in np.argsort(-score, kind="stable"):
            use = t[i] > 0
            x[i] = float(np.min(T[use] / t[i, use])) if use.any() else 0.0
            T = T - x[i] * t[i]
        return x
    if p == "portfolio":
        x = q["lower"].copy()
        rem = 1.0 - x.sum()
        for i in np.argsort(-q["returns"], kind="stable"):
            add = min(q["upper"][i] - x[i], max(rem, 0.0))
            x[i], rem = x[i] + add, rem - add
        return x
    raise AssertionError(p)


# -- feasibility and objective ------------------------------------------------------------------------------------
def _le(a: float, b: float) -> bool:
    return a <= b + RTOL_FEAS * max(1.0, abs(b))


def is_feasible(problem: str, params: dict, x: Any, *, add: str | None = None) -> bool:
    """Whether ``x`` satisfies every constraint of the class's full model (and of ``add`` if given), to 1e-6 rel."""
    p = _problem(problem)
    q = check_params(p, params)
    if add is not None:
        one_of("add", add, ADD.get(p, ()) or (None,))
    if x is None:
        return False
    if isinstance(x, (str, bytes, bool)):
        raise TypeError(f"Invalid x: {x!r} (must be an array)")
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        return False
    if p == "tsp":
        n = q["coords"].shape[0]
        if x.shape != (n,) or sorted(x.astype(int).tolist()) != list(range(n)):
            return False
        seen, c = 0, 0
        while True:
            c = int(x[c])
            seen += 1
            if c == 0:
                break
        ok = seen == n
        if add == "forced_arc":
            a, b = _added("tsp", q)
            ok = ok and (int(x[a]) == b or int(x[b]) == a)
        return ok
    if p == "knapsack":
        if x.shape != q["weights"].shape or not np.all(np.isin(x, (0, 1))):
            return False
        ok = _le(float(q["weights"] @ x), q["capacity"])
        if add == "conflict":
            a, b = _added("knapsack", q)
            ok = ok and x[a] + x[b] <= 1
        return ok
    if p == "bin_packing":
        if x.shape != q["sizes"].shape or np.any(x < 0) or np.any(x != np.round(x)):
            return False
        loads = np.bincount(x.astype(int), weights=q["sizes"])
        return bool(np.all(loads <= q["capacity"] + 1e-9))
    if p == "job_shop":
        pt, mach = q["times"], q["machines"].astype(int)
        if x.shape != pt.shape or np.any(x < -1e-9):
            return False
        if np.any(x[:, 1:] < x[:, :-1] + pt[:, :-1] - 1e-9):
            return False
        for m in range(pt.shape[1]):
            j, k = np.nonzero(mach == m)
            order = np.argsort(x[j, k])
            st, en = x[j, k][order], (x[j, k] + pt[j, k])[order]
            if np.any(st[1:] < en[:-1] - 1e-9):
                return False
        return True
    if p in ("transportation", "network_flow"):
        C = q["cost"]
        if x.shape != C.shape or np.any(x < -1e-9):
            return False
        rs, cs = x.sum(1), x.sum(0)
        if p == "transportation":
            return bool(all(_le(a, b) for a, b in zip(rs, q["supply"], strict=False))
                        and np.allclose(cs, q["demand"], rtol=RTOL_FEAS, atol=RTOL_FEAS))
        return bool(np.allclose(rs, q["supply"], rtol=RTOL_FEAS, atol=RTOL_FEAS)
                    and np.allclose(cs, q["demand"], rtol=RTOL_FEAS, atol=RTOL_FEAS)
                    and np.all(x <= q["arc_capacity"] + 1e-9))
    if p == "inventory":
        T = q["demand"].size
        if x.shape != (T,) or np.any(x < q["q_min"] - 1e-9) or np.any(x > q["q_max"] + 1e-9):
            return False
        ok = _inventory_cost(q, x)[1]
        if add == "order_cap":
            t, cap = _added("inventory", q)
            ok = ok and _le(x[t], cap)
        return ok
    if p == "pollution":
        w, s = q["weight"], q["removal_pct"] / 100.0
        if x.shape != q["cost"].shape or np.any(x < -1e-9):
            return False
        return bool(all(_le(a, b) for a, b in zip(x.sum(1), q["amount"], strict=False))
                    and _le(q["target_pct"] / 100.0 * float(w @ q["amount"]), float(w @ x @ s)))
    if p == "portfolio":
        if x.shape != q["returns"].shape:
            return False
        return bool(abs(x.sum() - 1) <= 1e-6 and np.all(x >= q["lower"] - 1e-9) and np.all(x <= q["upper"] + 1e-9)
                    and _le(float(q["risk"] @ x), q["max_risk"]) and _le(q["min_return"], float(q["returns"] @ x))
                    and _le(q["min_liquid"], float(q["liquid"] @ x)))
    if p == "production":
        if x.shape != q["profit"].shape or np.any(x < -1e-9):
            return False
        return bool(all(_le(a, b) for a, b in zip(x @ q["time"], q["available"], strict=False)))
    raise AssertionError(p)


def objective(problem: str, params: dict, x: Any) -> float:
    """The class's objective at candidate ``x`` (tour length, packed value, bins used, makespan, cost, return …)."""
    p = _problem(problem)
    q = check_params(p, params)
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("Invalid x: contains NaN or ±inf")
    if p == "tsp":
        d = _dist(q["coords"])
        s = x.astype(int)
        if x.shape != (d.shape[0],) or s.min() < 0 or s.max() >= d.shape[0]:
            raise ValueError(f"Invalid x: successor array of shape {x.shape} (must be ({d.shape[0]},) in 0..n−1)")
        return float(d[np.arange(s.size), s].sum())
    if p == "knapsack":
        return float(q["values"] @ x)
    if p == "bin_packing":
        return float(np.unique(x).size)
    if p == "job_shop":
        return float((x + q["times"]).max())
    if p in ("transportation", "network_flow", "pollution"):
        return float((q["cost"] * x).sum())
    if p == "inventory":
        return _inventory_cost(q, x)[0]
    if p == "portfolio":
        return float(q["returns"] @ x)
    if p == "production":
        return float(q["profit"] @ x)
    raise AssertionError(p)


def grade(pred: Any, truth: Any, *, rtol: float = 0.002) -> bool:
    """The paper's criterion: correct iff ``|pred − truth| ≤ rtol·|truth|`` (``rtol = 0.002``, i.e. 0.2 %) [paper].
    A non-finite prediction (no answer) is wrong."""
    t = number("truth", truth)
    r = number("rtol", rtol, 0.0, 1.0)
    if isinstance(pred, (str, bytes, bool, np.bool_)):
        raise TypeError(f"Invalid pred: {pred!r} (must be a number)")
    pv = float(pred) if pred is not None else math.nan
    if not math.isfinite(pv):
        return False
    return abs(pv - t) <= r * abs(t)


# -- text templates -----------------------------------------------------------------------------------------------
#: Per class: (field, sentence) — ``{}`` holds the comma-separated numbers, ``{i}`` a 1-based row index.
FIELDS: dict[str, dict[str, str]] = {
    "tsp": {"coords": "City {i} lies at the map coordinates {}."},
    "knapsack": {"weights": "The items weigh, in kilograms and in order, {}.",
                 "values": "Their values, in dollars and in the same order, are {}.",
                 "capacity": "The knapsack can hold at most {} kilograms."},
    "bin_packing": {"sizes": "The items have sizes {}.", "capacity": "Every bin has capacity {}."},
    "job_shop": {"machines": "Job {i} visits the machines in the order {}.",
                 "times": "Job {i} needs the processing times {} on those machines."},
    "transportation": {"supply": "The warehouses can ship at most {} units.",
                       "demand": "The stores require exactly {} units.",
                       "cost": "Shipping one unit from warehouse {i} to each store costs {}."},
    "network_flow": {"supply": "The warehouses must ship out exactly {} units.",
                     "demand": "The stores must receive exactly {} units.",
                     "cost": "Shipping one unit from warehouse {i} to each store costs {}.",
                     "arc_capacity": "At most this many units can move from warehouse {i} to each store: {}."},
    "inventory": {"demand": "The demand in each period is {}.", "order_cost": "Each unit ordered costs {}.",
                  "holding_cost": "Holding one unit for a period costs {}.",
                  "shortage_cost": "Each unit of unmet demand costs {}.",
                  "capacity": "The warehouse holds at most {} units on arrival.",
                  "initial": "The initial stock is {} units.", "q_min": "Each order must be at least {} units",
                  "q_max": "and at most {} units.", "lead_time": "Orders arrive after a lead time of {} periods."},
    "pollution": {"amount": "The sources emit {} tonnes of pollutant.",
                  "weight": "Their harm weights are {}.",
                  "removal_pct": "The treatment methods remove {} percent of the pollutant they treat.",
                  "cost": "Treating one tonne of source {i} with each method costs {}.",
                  "target_pct": "At least {} percent of the weighted emissions must be removed."},
    "portfolio": {"returns": "The expected returns, in percent, are {}.", "risk": "The risk scores are {}.",
                  "lower": "Each asset's share must be at least {}", "upper": "and at most {}.",
                  "liquid": "The liquidity flags (1 = liquid) are {}.",
                  "max_risk": "The average risk score may not exceed {}.",
                  "min_return": "The expected return must be at least {} percent.",
                  "min_liquid": "At least a share of {} must be in liquid assets."},
    "production": {"profit": "Each unit of the products earns {}.",
                   "time": "One unit of product {i} needs, on each operation, the hours {}.",
                   "available": "The operations have {} hours available."},
}
_INTRO = {
    "tsp": "A salesperson must visit every city exactly once and return home to city 1, travelling in straight lines."
           " What is the length of the shortest such tour?",
    "knapsack": "A hiker chooses which items to pack. What is the largest total value that fits?",
    "bin_packing": "Items must be packed into bins without exceeding any bin's capacity. What is the smallest number"
                   " of bins needed?",
    "job_shop": "Jobs are processed on machines; each machine handles one job at a time and each job visits the "
                "machines in its own order. What is the smallest possible makespan?",
    "transportation": "A company ships goods from warehouses to stores. What is the cheapest shipping plan's cost?",
    "network_flow": "A balanced distribution network ships goods from warehouses to stores along capacitated lanes."
                    " What is the minimum total cost?",
    "inventory": "A retailer plans orders over a horizon; unmet demand is lost. What is the minimum total cost?",
    "pollution": "A regulator chooses how much of each source's emissions to treat by each method. What is the "
                 "minimum treatment cost?",
    "portfolio": "An investor splits a budget of 1 across assets. What is the largest expected return?",
    "production": "A plant chooses how much of each product to make. What is the largest total profit?",
}


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def to_text(problem: str, params: dict) -> str:
    """The record's natural-language statement: our own template, which prints every number exactly."""
    p = _problem(problem)
    q = check_params(p, params)
    parts = [_INTRO[p]]
    for key, sent in FIELDS[p].items():
        val = q[key]
        if "{i}" in sent:
            parts += [sent.replace("{i}", str(i + 1)).format(", ".join(_fmt(v) for v in row))
                      for i, row in enumerate(np.atleast_2d(val))]
        else:
            parts.append(sent.format(", ".join(_fmt(v) for v in np.atleast_1d(val))))
    return " ".join(parts)


_NUMS = r"(-?\d+(?:\.\d+)?(?:e-?\d+)?(?:, -?\d+(?:\.\d+)?(?:e-?\d+)?)*)"


def from_text(problem: str, text: str) -> dict:
    """Parse a record's text back into parameters (regular expressions built from the template's sentences)."""
    p = _problem(problem)
    if not isinstance(text, str):
        raise TypeError(f"Invalid text: {type(text).__name__} (must be a string)")
    out: dict = {}
    for key, sent in FIELDS[p].items():
        pat = re.escape(sent).replace(r"\{i\}", r"(\d+)").replace(r"\{\}", _NUMS)
        found = re.findall(pat, text)
        if not found:
            raise ValueError(f"Invalid text: no sentence for {key!r} in the {p} template")
        if "{i}" in sent:
            rows = sorted(((int(i), [float(v) for v in nums.split(", ")]) for i, nums in found))
            out[key] = np.array([r for _, r in rows])
        else:
            vals = [float(v) for v in found[0].split(", ")]
            out[key] = vals[0] if key in _SCALARS.get(p, ()) else np.array(vals)
    return out


_SCALARS = {"knapsack": ("capacity",), "bin_packing": ("capacity",),
            "inventory": ("order_cost", "holding_cost", "shortage_cost", "capacity", "initial", "q_min", "q_max",
                          "lead_time"),
            "pollution": ("target_pct",), "portfolio": ("max_risk", "min_return", "min_liquid")}
