"""Exact models of the ten classes, solved by HiGHS (``scipy.optimize.milp`` with ``mip_rel_gap = 0``, or
``linprog``): the paper's formulations, DFJ subtour cuts for TSP and the arc-flow model for bin packing, with one
constraint family omitted or one extra constraint added on request.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sps
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

from ..validate import integer, memory_guard, number, one_of
from .spec import ADD, FORMULATIONS, OMIT, RTOL_FEAS, Solution, _arr, _dist, _problem, check_params

__all__ = ["held_karp", "knapsack_dp", "solve"]


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


# -- the specialised exact solvers (independent of HiGHS) --------------------------------------------------------
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
    memory_guard(8.0 * (C + 1) * 2, lower="capacity")
    f = np.zeros(C + 1)
    for wi, vi in zip(w.astype(int), v, strict=False):
        if wi <= C:
            f[wi:] = np.maximum(f[wi:], f[:-wi] + vi if wi > 0 else f + vi)
    return float(f[C])


