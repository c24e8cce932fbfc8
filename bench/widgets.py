"""Widget latency: each chapter panel's callback must re-run in ≤ 0.25 s on a CPU (median of warm repeats).

Usage: python bench/widgets.py   → table + bench/results/widgets.json
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 0.25


def _adam_cases():
    from theorybook.adam_degenerate.widgets import render

    for args in [(4, 0.9, 0.93, 1e-3, 10_000), (6, 0.9, 0.895, 1e-3, 30_000), (2, 0.9, 0.99, 1e-3, 30_000)]:
        yield f"adam_degenerate {args}", (lambda a=args: plt.close(render(*a)[0]))


CASES = [_adam_cases]


def measure(fn, repeat: int = 5) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    rows = []
    for gen in CASES:
        for name, fn in gen():
            med = measure(fn)
            rows.append({"case": name, "median_s": round(med, 4), "within_budget": med <= BUDGET_S})
    w = max(len(r["case"]) for r in rows)
    print(f"{'widget update':<{w}}  median s  ≤{BUDGET_S}s")
    for r in rows:
        print(f"{r['case']:<{w}}  {r['median_s']:8.3f}  {r['within_budget']}")
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / "widgets.json").write_text(json.dumps(rows, indent=2))
    return 0 if all(r["within_budget"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
