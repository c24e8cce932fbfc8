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
from typing import Any, NamedTuple

import numpy as np

from ..validate import integer, number, one_of

__all__ = [
    "CLASSES", "SIZE_RANGE", "MIP_CLASSES", "OMIT", "ADD", "Instance", "Solution", "generate", "solve",
    "FORMULATIONS", "stand_in", "is_feasible", "objective", "grade", "held_karp", "knapsack_dp", "to_text",
    "from_text", "check_params",
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


# The solvers, the stand-ins and the templates live in their own modules (each imports the data layer above); they
# are re-exported here so that ``theorybook.opt_engine.problems`` stays the one import path for the ten classes.
from .solvers import _cycles, solve  # noqa: E402, F401
from .standins import _nn_two_opt, _spt_dispatch, _tour_len, grade, is_feasible, objective, stand_in  # noqa: E402, F401
from .text import FIELDS, from_text, to_text  # noqa: E402, F401
