"""The chapter's control panel: class, size, instances, perturbation (omit a family / forget an added constraint),
tolerance → accuracy and feasibility bars for the exact model (SIR proxy), the stand-in (PTR proxy) and the
perturbed model, plus one drawn instance.

Live solves only where the whole update costs < 0.15 s of compute (:data:`LIVE_COST`, seconds per instance measured
on the 2-core CPU, and :data:`BUDGET_S`); otherwise the panel reads the chapter's cached study
(``explorer(records=..., omissions=...)``), and without a cache it caps the instances so that the update stays
cheap. The status line says which.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number, one_of
from ..widgets import live_panel
from .experiment import FAST, LADDER, Omission, Record
from .problems import (
    ADD,
    CLASSES,
    OMIT,
    Instance,
    _dist,
    _gen,
    generate,
    grade,
    is_feasible,
    objective,
    solve,
    stand_in,
)

__all__ = ["Panel", "panel_summary", "render", "explorer", "LIVE_COST"]

#: Approximate seconds per instance at each class's largest ladder size (2-core CPU): generation (which includes
#: the exact answer) and one further exact solve (a perturbed model).
LIVE_COST = {"tsp": (0.01, 0.045), "knapsack": (0.003, 0.015), "bin_packing": (0.06, 0.05),
             "job_shop": (0.3, 0.3), "inventory": (0.004, 0.004), "pollution": (0.004, 0.004),
             "portfolio": (0.01, 0.004), "transportation": (0.004, 0.004), "production": (0.004, 0.004),
             "network_flow": (0.004, 0.004)}
BUDGET_S = 0.15  # compute budget of one update (the figure takes the rest of the 0.25 s)
PERTURB = ("none", "omit family", "forget added constraint")
_CACHE: dict = {"records": None, "omissions": None}


class Panel(NamedTuple):
    """What one setting shows."""

    problem: str
    size: int
    n: int
    bars: dict  # name → (feasibility, accuracy)
    instance: dict
    mode: str
    label: str
    gaps: tuple = ()  # the stand-in's relative gap |value − optimum|/|optimum| on each graded instance
    rung: int = 0  # the ladder rung asked for (the size is the ladder's last when the class has fewer)


def panel_summary(problem: str = "tsp", size_rank: int = 5, instances: int = 6, perturb: str = "none",
              rtol: float = 0.002) -> Panel:
    """Grade ``instances`` records of ``problem`` at the ``size_rank``-th size of its ladder (clipped)."""
    p = one_of("problem", problem, CLASSES)
    lad = LADDER[p]
    rung = integer("size_rank", size_rank, 1, 10)
    n = lad[min(rung, len(lad)) - 1]
    k = integer("instances", instances, 1, 40)
    pert = one_of("perturb", perturb, PERTURB)
    r = number("rtol", rtol, 0.0, 0.5)
    fam = (OMIT[p][0] if OMIT[p] else None) if pert == "omit family" else (
        ADD[p][0] if p in ADD else None) if pert == "forget added constraint" else None
    gen_s, solve_s = LIVE_COST[p]
    per = gen_s + solve_s * (0 if fam is None else 1 if pert == "omit family" else 2)
    live = k * per <= BUDGET_S
    cached = _CACHE["records"] is not None and any(x.problem == p and x.size == n for x in _CACHE["records"])
    bars: dict = {}
    if not live and not cached and per > BUDGET_S:
        # not even one exact solve fits the budget and there is no cached study: the stand-in's feasibility only
        # (it needs no exact answer); accuracy needs the solves, so it is left out and the label says why
        feas = []
        for s in range(k):
            params = _gen(p, n, np.random.default_rng([s, CLASSES.index(p), n]))
            feas.append(is_feasible(p, params, stand_in(p, params)))
        inst = Instance(p, n, params, "", 0.0, "min")
        bars["stand-in (PTR proxy)"] = (float(np.mean(feas)), float("nan"))
        mode = (f"feasibility only: one exact solve takes ≈ {per:.2f} s here; pass the chapter's study to "
                "explorer() for accuracy")
        label = f"{p}, size {n}, {k} instances — stand-in feasible {np.mean(feas):.2f} [{mode}]"
        return Panel(p, n, k, bars, inst.params, mode, label, (), rung)
    if live or not cached:
        kk = k if live else max(1, int(BUDGET_S / per))
        mode = "live" if live else f"live, capped at {kk} instances (no cache)"
        feas, acc, pf, pa, gaps = [], [], [], [], []
        for s in range(kk):
            inst = generate(p, n, seed=s)
            x = stand_in(p, inst.params)
            feas.append(is_feasible(p, inst.params, x))
            acc.append(grade(objective(p, inst.params, x), inst.answer, rtol=r))
            gaps.append(_gap(objective(p, inst.params, x), inst.answer))
            if fam is not None:
                kw = {"omit": fam} if pert == "omit family" else {}
                truth = inst.answer if pert == "omit family" else solve(p, inst.params, add=fam,
                                                                       formulation=FAST.get(p)).objective
                sol = solve(p, inst.params, formulation=FAST.get(p), **kw)
                pf.append(is_feasible(p, inst.params, sol.x, add=None if pert == "omit family" else fam))
                pa.append(grade(sol.objective, truth, rtol=r))
        k = kk
    else:
        mode = "cached (the chapter's study)"
        avail = [x for x in _CACHE["records"] if x.problem == p and x.size == n]
        rs = avail[:k]  # the first k of the study's instances (all it has when k is larger)
        if k > len(avail):
            mode += f"; the study has {len(avail)} instances here"
        k = len(rs)
        feas = [x.standin_feasible for x in rs]
        acc = [grade(x.standin, x.answer, rtol=r) for x in rs]
        gaps = [_gap(x.standin, x.answer) for x in rs]
        pf, pa = [], []
        om = [o for o in (_CACHE["omissions"] or []) if o.problem == p and o.family == fam and o.size == n]
        om = om[:k]
        pf, pa = [o.feasible for o in om], [grade(o.relaxed, o.answer, rtol=r) for o in om]
        if fam is not None and not om:
            mode += "; perturbed models are cached only at the largest size"
        inst = Instance(p, n, _gen(p, n, np.random.default_rng([0, CLASSES.index(p), n])), "", 0.0, "min")
    bars["exact (SIR proxy)"] = (1.0, 1.0)
    bars["stand-in (PTR proxy)"] = (float(np.mean(feas)), float(np.mean(acc)))
    if fam is not None and pf:
        bars[f"{'without' if pert == 'omit family' else 'forgot'} {fam}"] = (float(np.mean(pf)), float(np.mean(pa)))
    note = "" if fam is not None or pert == "none" else f" ({pert}: none defined for {p})"
    label = (f"{p}, size {n}, {k} instances, tolerance {r:g} — " + " · ".join(
        f"{name}: feasible {f:.2f}, accurate {a:.2f}" for name, (f, a) in bars.items()) + f" [{mode}]{note}")
    return Panel(p, n, k, bars, inst.params, mode, label, tuple(gaps), rung)


def _gap(pred, truth) -> float:
    """|pred − truth| / |truth| (inf without a finite prediction): graded against the tolerance."""
    pv = float(pred) if pred is not None else float("nan")
    return abs(pv - float(truth)) / max(abs(float(truth)), 1e-300) if np.isfinite(pv) else float("inf")


def _draw_instance(ax, p: str, params: dict) -> None:
    if p == "tsp":
        c = params["coords"]
        succ = stand_in("tsp", params)
        for i, j in enumerate(succ):
            ax.plot(*c[[i, j]].T, color=COLORS[1], lw=1)
        best = solve("tsp", params, formulation="dfj").x
        for i, j in enumerate(best):
            ax.plot(*c[[i, j]].T, color="black", ls="--", lw=1)
        ax.scatter(*c.T, color=COLORS[0], zorder=3, s=15)
        d = _dist(c)
        label_axes(ax, "x", "y", f"stand-in {d[np.arange(len(succ)), succ].sum():.1f} (orange)\nvs optimum (dashed)",
                   legend=False)
    elif p == "knapsack":
        x = stand_in("knapsack", params)
        ax.scatter(params["weights"], params["values"], c=[COLORS[2] if b else COLORS[7] for b in x], s=15)
        label_axes(ax, "weight", "value", "items (green: taken by the ratio greedy)", legend=False)
    elif p == "bin_packing":
        a = stand_in("bin_packing", params)
        for b in range(a.max() + 1):
            bottom = 0.0
            for i in np.nonzero(a == b)[0]:
                ax.bar(b, params["sizes"][i], bottom=bottom, color=COLORS[int(params["sizes"][i] > 50)],
                       edgecolor="white")
                bottom += params["sizes"][i]
        ax.axhline(params["capacity"], color="black", ls="--", lw=1)
        label_axes(ax, "bin (first fit in given order)", "load", "one instance", legend=False)
    else:
        vals = [np.asarray(v, float).ravel() for v in params.values()]
        v = np.concatenate(vals)
        ax.hist(v, bins=20, color=COLORS[0])
        label_axes(ax, "parameter value", "count", f"one {p} instance: all numbers in its text", legend=False)


def render(problem: str = "tsp", size_rank: int = 5, instances: int = 6, perturb: str = "none",
           rtol: float = 0.002):
    """Draw the bars and one instance; returns ``(fig, panel)``."""
    s = panel_summary(problem, size_rank, instances, perturb, rtol)
    fig, (ax, ax3, ax2) = figure(3, width=3.6, height=3.1)
    names = list(s.bars)
    x = np.arange(len(names))
    ax.bar(x - 0.2, [s.bars[k][0] for k in names], width=0.4, color=COLORS[0], label="feasible")
    ax.bar(x + 0.2, [s.bars[k][1] for k in names], width=0.4, color=COLORS[3], label="accurate (within tolerance)")
    ax.set_xticks(x, [k.replace(" (", "\n(") for k in names], fontsize=8)
    ax.set_ylim(0, 1.5)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    lad = LADDER[s.problem]
    rung = f"rung {s.rung} of {len(lad)}" if s.rung <= len(lad) else f"rung {s.rung} asked: {len(lad)} rungs"
    label_axes(ax, "", "fraction of instances", f"{s.problem}, size {s.size}\n({rung})")
    # the tolerance against what it grades: the stand-in's relative gap on each instance (0 drawn at the floor)
    floor = 1e-6
    g = np.asarray(s.gaps, dtype=float)
    if g.size:
        ax3.plot(np.arange(g.size), np.clip(np.where(np.isfinite(g), g, 1.0), floor, 1.0), "o", color=COLORS[3],
                 ms=4, label="stand-in (0 at 10⁻⁶)")
    ax3.axhline(rtol, color="black", ls="--", lw=1, label=f"tolerance {rtol:g}")
    ax3.set_yscale("log")
    # the legend sits above 1, where no gap is drawn (gaps ≥ 1 are drawn at 1): it never hides a dot
    ax3.set_ylim(floor / 2, 3e3)
    ax3.set_yticks([1e-6, 1e-4, 1e-2, 1.0])
    label_axes(ax3, "instance", "relative gap", "stand-in vs\nthe tolerance", legend=False)
    ax3.legend(loc="upper left")
    _draw_instance(ax2, s.problem, s.instance)
    return fig, s


def explorer(records: list[Record] | None = None, omissions: list[Omission] | None = None):
    """The panel. Pass the chapter's ``accuracy_study`` records and ``omission_study`` results to use them where a
    live solve would cost more than 0.2 s."""
    import ipywidgets as w

    _CACHE["records"], _CACHE["omissions"] = records, omissions
    style = {"description_width": "initial"}
    controls = {
        "problem": w.Dropdown(options=list(CLASSES), value="tsp", description="class", style=style),
        "size_rank": w.IntSlider(value=5, min=1, max=6, description="size (ladder rung)", style=style),
        "instances": w.IntSlider(value=6, min=1, max=20, description="instances", style=style),
        "perturb": w.Dropdown(options=list(PERTURB), value="none", description="constraint", style=style),
        "rtol": w.FloatLogSlider(value=0.002, base=10, min=-4, max=-1, description="tolerance", style=style),
    }
    return live_panel(controls, render, rows=[["problem", "size_rank", "instances"], ["perturb", "rtol"]])
