"""The PTR proxies (one transparent heuristic per class), the feasibility check and the objective of any candidate
solution, and the paper's 0.2 % grading rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..validate import integer, number, one_of
from .solvers import _added, _first_fit, _inventory_cost
from .spec import ADD, RTOL_FEAS, _dist, _problem, check_params

__all__ = ["stand_in", "strong_stand_in", "rival_search", "is_feasible", "objective", "grade"]


# -- stand-ins (PTR proxies) ------------------------------------------------------------------------------------
def _tour_len(d: np.ndarray, tour: list[int]) -> float:
    return float(sum(d[tour[k], tour[(k + 1) % len(tour)]] for k in range(len(tour))))


def _nn_tour(d: np.ndarray, start: int = 0) -> list[int]:
    """Nearest-neighbour tour from ``start`` (ties: lowest index)."""
    n = d.shape[0]
    tour, left = [start], set(range(n)) - {start}
    while left:
        last = tour[-1]
        nxt = min(left, key=lambda j: (d[last, j], j))
        tour.append(nxt)
        left.remove(nxt)
    return tour


def _two_opt(d: np.ndarray, tour: list[int]) -> np.ndarray:
    """2-opt, first improvement in scan order: reverse t[i..k] while an exchange gains > 1e-9 (the position of
    the tour's first city is kept)."""
    n = d.shape[0]
    t = np.array(tour)
    if n >= 4:
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
    return t


def _succ(tour: list[int]) -> np.ndarray:
    n = len(tour)
    succ = np.empty(n, dtype=int)
    for k in range(n):
        succ[tour[k]] = tour[(k + 1) % n]
    return succ


def _nn_two_opt(d: np.ndarray) -> np.ndarray:
    """The single-start PTR proxy: nearest neighbour from city 0, then 2-opt (successor array)."""
    return _succ(_two_opt(d, _nn_tour(d, 0)).tolist())


def _multi_start_two_opt(d: np.ndarray) -> np.ndarray:
    """The stronger stand-in: nearest neighbour from *every* city, each followed by 2-opt; the shortest tour
    (successor array). n restarts, so its effort grows with the size knob."""
    best, best_len = None, math.inf
    for s0 in range(d.shape[0]):
        t = _two_opt(d, _nn_tour(d, s0)).tolist()
        L = _tour_len(d, t)
        if L < best_len - 1e-12:
            best, best_len = t, L
    return _succ(best)


def _ratio_greedy(w: np.ndarray, v: np.ndarray, capacity: float) -> np.ndarray:
    x, room = np.zeros(w.size, dtype=int), capacity
    for i in np.argsort(-(v / w), kind="stable"):
        if w[i] <= room:
            x[i], room = 1, room - w[i]
    return x


def _knapsack_local_search(w: np.ndarray, v: np.ndarray, capacity: float) -> np.ndarray:
    """The stronger stand-in: the better of the ratio greedy and the most valuable single item, then best-improvement
    local search over adding one item or swapping one packed item for one unpacked item, until no move gains."""
    x = _ratio_greedy(w, v, capacity)
    fits = np.where(w <= capacity)[0]
    if fits.size and v[fits].max() > v @ x:
        x = np.zeros(w.size, dtype=int)
        x[fits[np.argmax(v[fits])]] = 1
    while True:
        room = capacity - w @ x
        add = np.where((x == 0) & (w <= room))[0]
        if add.size:
            x[add[np.argmax(v[add])]] = 1
            continue
        ins, outs = np.where(x == 0)[0], np.where(x == 1)[0]
        if not ins.size or not outs.size:
            break
        gain = v[ins][:, None] - v[outs][None, :]
        ok = (w[ins][:, None] - w[outs][None, :] <= room) & (gain > 0)
        if not ok.any():
            break
        a, b = np.unravel_index(np.argmax(np.where(ok, gain, -np.inf)), gain.shape)
        x[ins[a]], x[outs[b]] = 1, 0
    return x


def _or_opt(d: np.ndarray, tour: list[int]) -> list[int]:
    """Or-opt, first improvement: move a segment of 1–3 consecutive cities (either orientation) to the edge between
    two other consecutive cities while a move gains > 1e-9."""
    t, n = list(tour), len(tour)
    improved = True
    while improved and n >= 5:
        improved = False
        for L in (1, 2, 3):
            for i in range(n):
                seg = [t[(i + j) % n] for j in range(L)]
                rest = [t[(i + L + j) % n] for j in range(n - L)]  # rest[0] follows the segment, rest[-1] precedes
                gain = d[rest[-1], seg[0]] + d[seg[-1], rest[0]] - d[rest[-1], rest[0]]
                for k in range(n - L - 1):  # insert between rest[k] and rest[k + 1] (not back where it was)
                    a, b = rest[k], rest[k + 1]
                    fwd = d[a, seg[0]] + d[seg[-1], b] - d[a, b]
                    rev = d[a, seg[-1]] + d[seg[0], b] - d[a, b]
                    if min(fwd, rev) < gain - 1e-9:
                        t = rest[:k + 1] + (seg if fwd <= rev else seg[::-1]) + rest[k + 1:]
                        improved = True
                        break
                if improved:
                    break
            if improved:
                break
    return t


def _multi_start_or_opt(d: np.ndarray) -> np.ndarray:
    """The rival of the TSP decay row: the method's multi-start 2-opt (nearest neighbour from every city, then 2-opt)
    with Or-opt moves added — 2-opt and Or-opt alternate until neither gains; the shortest tour (successor array)."""
    best, best_len = None, math.inf
    for s0 in range(d.shape[0]):
        t = _nn_tour(d, s0)
        while True:
            t = _two_opt(d, t).tolist()
            L0 = _tour_len(d, t)
            t = _or_opt(d, t)
            if _tour_len(d, t) >= L0 - 1e-9:
                break
        L = _tour_len(d, t)
        if L < best_len - 1e-12:
            best, best_len = t, L
    return _succ(best)


def _random_restart_search(w: np.ndarray, v: np.ndarray, capacity: float, rng: np.random.Generator) -> np.ndarray:
    """The rival of the knapsack decay row: the method's local search (best-improvement add / 1-swap moves until none
    gains) from n random feasible starts (items taken in a random order while they fit), plus the method's own start;
    the best packing. The n + 1 searches run side by side (one row of ``X`` each)."""
    n = w.size
    X = np.zeros((n + 1, n), dtype=int)
    for r in range(n):
        room = capacity
        for i in rng.permutation(n):
            if w[i] <= room:
                X[r, i], room = 1, room - w[i]
    X[n] = _knapsack_local_search(w, v, capacity)
    rows = np.arange(n + 1)
    while True:
        room = capacity - X @ w
        can_add = (X == 0) & (w[None, :] <= room[:, None])
        add_val = np.where(can_add, v[None, :], -np.inf)
        a = np.argmax(add_val, axis=1)
        adding = np.isfinite(add_val[rows, a])
        # 1-swap: put i in, take j out; gain v_i − v_j > 0, fits
        gain = v[None, :, None] - v[None, None, :]
        ok = ((X == 0)[:, :, None] & (X == 1)[:, None, :] & (gain > 0)
              & (w[None, :, None] - w[None, None, :] <= room[:, None, None]))
        g = np.where(ok, gain, -np.inf).reshape(n + 1, -1)
        best = np.argmax(g, axis=1)
        swapping = ~adding & np.isfinite(g[rows, best])
        if not (adding.any() or swapping.any()):
            break
        X[rows[adding], a[adding]] = 1
        si, so = np.unravel_index(best[swapping], (n, n))
        X[rows[swapping], si] = 1
        X[rows[swapping], so] = 0
    return X[int(np.argmax(X @ v))].copy()


def strong_stand_in(problem: str, params: dict) -> np.ndarray:
    """The stronger heuristics of the decay rows (TSP and knapsack only) [reconstruction]: multi-start 2-opt
    (nearest neighbour from every city, then 2-opt; the best tour) and greedy + local search (the better of the ratio
    greedy and the best single item, then add/1-swap moves until none gains)."""
    p = one_of("problem", _problem(problem), ("tsp", "knapsack"))
    q = check_params(p, params)
    if p == "tsp":
        return _multi_start_two_opt(_dist(q["coords"]))
    return _knapsack_local_search(q["weights"], q["values"], q["capacity"])


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
        return _ratio_greedy(q["weights"], q["values"], q["capacity"])
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


def rival_search(problem: str, params: dict, *, seed: int = 0) -> np.ndarray:
    """The stronger searches that the decay rows name as their rival [reconstruction]: for TSP the multi-start 2-opt
    of :func:`strong_stand_in` with Or-opt moves added (segments of 1–3 cities moved, either orientation); for the
    knapsack the same add/1-swap local search from n random feasible starts (drawn from ``seed``) and from the
    method's own start, the best packing."""
    p = one_of("problem", _problem(problem), ("tsp", "knapsack"))
    q = check_params(p, params)
    s = integer("seed", seed, 0, 2**63 - 1)
    if p == "tsp":
        return _multi_start_or_opt(_dist(q["coords"]))
    return _random_restart_search(q["weights"], q["values"], q["capacity"], np.random.default_rng(s))
