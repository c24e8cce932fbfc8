"""Widget latency: every chapter panel's callback must re-run in ≤ 0.25 s on a CPU.

Every chapter package with ``widgets.explorer()`` (built on :func:`theorybook.widgets.live_panel`) is found
automatically. For each panel we time its ``render`` at the default setting and at every control's extremes
(min and max of each slider, every option of a dropdown, one control moved at a time from the defaults), and
report the default and the slowest setting: median of warm repeats, interleaved (one repeat of each setting per
round), torch's intra-op threads stated. Settings over budget are marked; a setting that raises counts as an
error only if it is not a clear ValueError/TypeError shown in the panel.

Usage: python bench/widgets.py [--repeats N]   → table + bench/results/widgets.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import platform
import statistics
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 0.25


def _panels():
    import theorybook

    for m in sorted(pkgutil.iter_modules(theorybook.__path__), key=lambda m: m.name):
        if not m.ispkg or m.name == "kernels":
            continue
        try:
            mod = importlib.import_module(f"theorybook.{m.name}.widgets")
        except ModuleNotFoundError:
            continue
        if hasattr(mod, "explorer"):
            panel = mod.explorer()
            plt.close("all")
            if hasattr(panel, "render"):
                yield m.name, panel


def _settings(panel) -> list[tuple[str, dict]]:
    base = {n: c.value for n, c in panel.controls.items()}
    out = [("default", base)]
    for n, c in panel.controls.items():
        values = []
        if hasattr(c, "options") and c.options:
            opts = [o[1] if isinstance(o, tuple) else o for o in c.options]
            values = [v for v in opts if v != base[n]]
        elif hasattr(c, "min") and hasattr(c, "max"):
            values = [v for v in (c.min, c.max) if v != base[n]]
        elif isinstance(c.value, bool):
            values = [not c.value]
        for v in values:
            out.append((f"{n}={v!r}", {**base, n: v}))
    return out


def _run(render, kwargs) -> tuple[float, str | None]:
    t0 = time.perf_counter()
    try:
        fig, _ = render(**kwargs)
        plt.close(fig)
    except (ValueError, TypeError):
        pass  # shown in the panel as a status line, as designed
    except Exception as err:  # noqa: BLE001 - reported
        return time.perf_counter() - t0, f"{type(err).__name__}: {err}"
    return time.perf_counter() - t0, None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import torch

    rows = []
    for name, panel in _panels():
        settings = _settings(panel)
        for _, kw in settings:  # warm-up
            _run(panel.render, kw)
        times: dict[str, list[float]] = {label: [] for label, _ in settings}
        errors: dict[str, str] = {}
        for _ in range(args.repeats):  # interleaved repeats
            for label, kw in settings:
                dt, err = _run(panel.render, kw)
                times[label].append(dt)
                if err:
                    errors[label] = err
        med = {label: statistics.median(t) for label, t in times.items()}
        slowest = max(med, key=med.get)
        rows.append({"chapter": name, "settings": len(settings), "default_s": round(med["default"], 4),
                     "slowest_setting": slowest, "slowest_s": round(med[slowest], 4),
                     "within_budget": med[slowest] <= BUDGET_S, "errors": errors})
    w = max(len(r["chapter"]) for r in rows)
    print(f"torch threads: {torch.get_num_threads()}; budget {BUDGET_S} s; median of {args.repeats} warm repeats")
    print(f"{'chapter':<{w}}  default s  slowest s  slowest setting")
    for r in rows:
        flag = "" if r["within_budget"] else "  OVER BUDGET"
        print(f"{r['chapter']:<{w}}  {r['default_s']:9.3f}  {r['slowest_s']:9.3f}  {r['slowest_setting']}{flag}")
        for label, err in r["errors"].items():
            print(f"    error at {label}: {err}")
    result = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
              "torch_threads": torch.get_num_threads(), "budget_s": BUDGET_S, "repeats": args.repeats,
              "panels": rows}
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / "widgets.json").write_text(json.dumps(result, indent=2))
    return 0 if all(r["within_budget"] and not r["errors"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
