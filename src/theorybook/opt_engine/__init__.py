"""OPT-Engine (Chen et al., arXiv 2601.19924, ICML 2026) at CPU scale: a benchmark you can regenerate — seeded
generators for the ten canonical classes, templates that print every number, exact solving with HiGHS
(``scipy.optimize.milp``/``linprog``, ``mip_rel_gap = 0``), transparent heuristic stand-ins for pure-text reasoning,
and the paper's 0.2 % grading. No LLM is called and no C³-Bench data are used.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``CLASSES``, ``SIZE_RANGE``; ``generate(problem, size, *, seed) -> Instance`` (params, text, answer, sense);
``solve(problem, params, *, omit=None, add=None, time_limit=30.0, formulation=None) -> Solution``
(objective, x, status, seconds, nodes); ``stand_in(problem, params)``; ``is_feasible(problem, params, x)``;
``objective(problem, params, x)``; ``grade(pred, truth, *, rtol=0.002)``; ``strong_stand_in(problem, params)`` (the
decay rows' multi-start 2-opt and greedy + local search); ``rival_search(problem, params, *, seed=0)`` (their rivals:
Or-opt moves added, restarts); ``held_karp(dist)``;
``knapsack_dp(weights, values, capacity)``; ``to_text``/``from_text``.
Studies: :mod:`theorybook.opt_engine.experiment` (``accuracy_study``, ``omission_study``, ``pollution_audit``,
``decay_test``; ``CHAPTER_SEEDS``); verdict rows: :mod:`theorybook.opt_engine.verdicts` (``load_bench()``,
``deterministic_verdicts()``, ``study_verdicts``, ``bench_verdicts``, ``PAPER_CLAIMS``). Modules, imported one way:
``spec`` (class names, ranges, result types, validation) ← ``solvers`` (HiGHS models, Held–Karp, knapsack DP) ←
``standins`` (PTR proxies, feasibility, grading); ``spec`` ← ``text`` (templates); all ← ``problems`` (generators and
the one public import path).
Sympy: :mod:`theorybook.opt_engine.theory`. Widget: :func:`theorybook.opt_engine.widgets.explorer`.
"""

import numpy as _np
import sympy as _sp

from .experiment import (
    CHAPTER_SEEDS,
    accuracy_study,
    decay_test,
    omission_study,
    pollution_audit,
    summarize,
)
from .problems import (
    ADD,
    CLASSES,
    OMIT,
    SIZE_RANGE,
    Instance,
    Solution,
    from_text,
    generate,
    grade,
    held_karp,
    is_feasible,
    knapsack_dp,
    objective,
    rival_search,
    solve,
    stand_in,
    strong_stand_in,
    to_text,
)
from .verdicts import PAPER_CLAIMS, bench_verdicts, deterministic_verdicts, load_bench, study_verdicts

__all__ = [
    "ADD", "CHAPTER_SEEDS", "PAPER_CLAIMS", "CLASSES", "OMIT", "SIZE_RANGE", "Instance", "Solution",
    "accuracy_study", "bench_verdicts", "decay_test",
    "deterministic_verdicts", "from_text", "generate", "grade", "held_karp", "is_feasible", "knapsack_dp",
    "objective", "omission_study", "pollution_audit", "load_bench", "rival_search", "solve",
    "stand_in", "strong_stand_in",
    "study_verdicts",
    "summarize", "to_text",
]

_KN = {"weights": [3, 4, 5], "values": [30, 50, 60], "capacity": 8}
_D3 = _np.array([[0.0, 3.0, 4.0], [3.0, 0.0, 5.0], [4.0, 5.0, 0.0]])
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "generate": {"problem": "knapsack", "size": 5, "seed": 0},
    "solve": {"problem": "knapsack", "params": _KN},
    "stand_in": {"problem": "knapsack", "params": _KN},
    "is_feasible": {"problem": "knapsack", "params": _KN, "x": [1, 0, 1]},
    "objective": {"problem": "knapsack", "params": _KN, "x": [1, 0, 1]},
    "grade": {"pred": 1.0, "truth": 1.0},
    "held_karp": {"dist": _D3},
    "knapsack_dp": _KN,
    "to_text": {"problem": "knapsack", "params": _KN},
    "from_text": {"problem": "knapsack", "text": ("The items weigh, in kilograms and in order, 3, 4. Their values, in "
                                                  "dollars and in the same order, are 1, 2. The knapsack can hold at "
                                                  "most 5 kilograms.")},
    "accuracy_study": {"seed": 1, "classes": ("knapsack",), "ladder": {"knapsack": (5,)}, "counts": {"knapsack": 1}},
    "omission_study": {"seed": 1, "count": 1},
    "pollution_audit": {"seed": 1, "count": 1},
    "decay_test": {"seed": 1, "problem": "knapsack", "sizes": (5, 6), "count": 3, "sir_count": 1},
    "strong_stand_in": {"problem": "knapsack", "params": _KN},
    "rival_search": {"problem": "knapsack", "params": _KN},
    "bench_verdicts": {"results": {"tsp": {"problem": "tsp", "sizes": [4, 5, 6], "acc": [1.0, 0.5, 0.5], "n": 10,
                                           "z": 5.0, "acc_repeat": 1.0, "z_repeat": 0.0, "sir": [1.0, 1.0],
                                           "n_sir": 2, "z_sir": 0.0, "rival": [1.0, 1.0, 1.0],
                                           "z_rival": 0.0}}},
    "deterministic_verdicts": {"per_size": 1},
    "summarize": {"records": []},
    "binomial_se": {"p": 0.5, "n": 10},
    "derive_mtz": {"max_subtour": 3, "max_n": 4},
    "derive_greedy_bound": {"instances": 2},
    "minors_in_unit_set": {"A": _sp.Matrix([[1, 1, 0], [0, 1, 1]])},
    "transport_matrix": {"n": 2, "m": 2},
    "study_verdicts": {"records": [], "omissions": [], "audit": None},
    "render": {"problem": "knapsack", "size_rank": 1, "instances": 1},
    "summarize_panel": {},
}
