"""The data layer of OPT-Engine's ten classes: names, size ranges, constraint families, result types and parameter
validation. Every other module of the package imports from here; this module imports none of them, so the
imports run one way: ``spec`` ← ``solvers`` ← ``standins``; ``spec`` ← ``text``; all of them ← ``problems`` (the
generators and the one public import path).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..validate import integer, number, one_of

__all__ = ["ADD", "CLASSES", "FIELDS", "FORMULATIONS", "Instance", "MIP_CLASSES", "OMIT", "RTOL_FEAS", "SENSE",
           "SIZE_RANGE", "Solution", "check_params"]

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



def _dist(coords: np.ndarray) -> np.ndarray:
    return np.sqrt(((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1))


