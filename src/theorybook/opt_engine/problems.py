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

import numpy as np

from ..validate import integer
from .solvers import _cycles, held_karp, knapsack_dp, solve  # noqa: F401
from .spec import (  # noqa: F401
    ADD,
    CLASSES,
    FORMULATIONS,
    MIP_CLASSES,
    OMIT,
    RTOL_FEAS,
    SENSE,
    SIZE_RANGE,
    Instance,
    Solution,
    _dist,
    _problem,
    check_params,
)
from .standins import (  # noqa: F401
    _nn_two_opt,
    _spt_dispatch,
    _tour_len,
    grade,
    is_feasible,
    objective,
    rival_search,
    stand_in,
    strong_stand_in,
)
from .text import from_text, to_text  # noqa: F401

__all__ = [
    "CLASSES", "SIZE_RANGE", "MIP_CLASSES", "OMIT", "ADD", "Instance", "Solution", "generate", "solve",
    "FORMULATIONS", "stand_in", "strong_stand_in", "rival_search",
    "is_feasible", "objective", "grade", "held_karp", "knapsack_dp",
    "to_text",
    "from_text", "check_params",
]

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


