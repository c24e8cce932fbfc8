"""The natural-language templates (ours) that print every number exactly, and the parser that reads them back.
"""

from __future__ import annotations

import re

import numpy as np

from .spec import FIELDS, _problem, check_params

__all__ = ["to_text", "from_text"]


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
