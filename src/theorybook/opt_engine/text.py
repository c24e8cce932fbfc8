"""The natural-language templates (ours) that print every number exactly, and the parser that reads them back.
"""

from __future__ import annotations

import re

import numpy as np

from .problems import _problem, check_params

__all__ = ["to_text", "from_text"]


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
