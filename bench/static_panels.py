"""Static explorers: what precomputing every chapter's panel costs (issues 36 and 47).

For every chapter panel (found as in ``bench/widgets.py``; each in its own process, as each chapter has its own
kernel in the build) the panel is built as the book build builds it (``THEORYBOOK_STATIC_PANELS=1``: every state
of ``derive_states``, on ``THEORYBOOK_STATIC_WORKERS`` forked processes, default all cores), and we report the
states, the values per control, the primaries, the CPU seconds (all processes) and wall seconds added, the frames
and the bytes the explorer adds to the chapter page, against the budgets of issue 47: ≥ 64 states (the declared
set, never cut), ≥ 4 values per control that is not live-only (a select: all its options), ≤ 2 MB per page. The
in-browser switch latency (≤ 50 ms) is measured by ``tests/test_site.py::test_chapter_page`` and, on bare pages of
every panel, by ``--browser`` here.

Usage: python bench/static_panels.py [--html DIR] [--browser] [chapter ...]
       → table + bench/results/static_panels.json
(``--html DIR``: also write each explorer as a bare page DIR/<chapter>.html, with DIR/_static copied, to try the
browser script on every panel without building the book; ``--browser``: drive every explorer there in headless
Chromium, file:// and http://, as ``tests/test_site.py::test_chapter_page`` does, and record the switch
latency.)
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import platform
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MIN_VALUES = 4


def _chapter_seconds() -> dict[str, float]:
    try:
        rows = json.loads((ROOT / "bench" / "results" / "chapter_times.json").read_text())["chapters"]
    except (OSError, KeyError, ValueError):
        return {}
    return {Path(r["chapter"]).stem: r["seconds"] for r in rows}


def _chapters() -> list[str]:
    import theorybook

    names = []
    for m in sorted(pkgutil.iter_modules(theorybook.__path__), key=lambda m: m.name):
        if m.ispkg and m.name != "kernels":
            try:
                mod = importlib.import_module(f"theorybook.{m.name}.widgets")
            except ModuleNotFoundError:
                continue
            if hasattr(mod, "explorer"):
                names.append(m.name)
    return names


def _bare_page(name: str, explorer_html: str) -> str:
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>" + name + "</title>"
            "<link rel='stylesheet' href='_static/static-panels.css'>"
            "<script src='_static/static-panels.js'></script></head>"
            f"<body><main><div class='cell_output'><div class='output text_html'>{explorer_html}</div></div></main>"
            "</body></html>")


def _row(name: str, html_dir: Path | None) -> dict:
    """Build chapter ``name``'s panel as the book build does and measure its static explorer."""
    import theorybook.widgets as tw

    mod = importlib.import_module(f"theorybook.{name}.widgets")
    os.environ[tw.STATIC_ENV] = "0"
    mod.explorer()  # warm-up (imports, first-call caches), as the chapter's earlier cells do
    plt.close("all")
    os.environ[tw.STATIC_ENV] = "1"  # build the panel as the book build does
    t0, c0 = time.perf_counter(), time.process_time()
    panel = mod.explorer()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    plt.close("all")
    ex = panel.static
    if ex is None:
        return {"chapter": name, "error": "no static explorer"}
    if html_dir is not None:
        (html_dir / f"{name}.html").write_text(_bare_page(name, ex.html()), encoding="utf-8")
    base = _chapter_seconds().get(name)
    m = ex.meta
    values = {a.name: len(a.values) for a in ex.axes}
    row = {"chapter": name, "states": len(ex.states), "frames": len(ex.frames), "failed_states": ex.failed,
           "primary": list(ex.primary), "values": values,
           "precompute_cpu_s": m["cpu_s"], "precompute_wall_s": m["wall_s"], "workers": m["workers"],
           "panel_cpu_s": round(cpu, 2), "panel_wall_s": round(wall, 2), "bytes": ex.nbytes, "chapter_s": base,
           "added_cpu_share": round(m["cpu_s"] / base, 3) if base else None}
    few = [a.name for a in ex.axes if not a.live_only and len(a.values) < MIN_VALUES and a.kind != "select"]
    row["within_budget"] = (row["states"] >= tw.MIN_STATES and row["bytes"] <= tw.PAGE_BYTES and not few)
    return row


def main(argv: list[str]) -> int:
    import shutil

    import theorybook.widgets as tw

    html_dir, browser = None, "--browser" in argv
    argv = [a for a in argv if a != "--browser"]
    if argv[:1] == ["--row"]:  # the child: one chapter
        name, rest = argv[1], argv[2:]
        row = _row(name, Path(rest[1]) if rest[:1] == ["--html"] else None)
        print("ROW " + json.dumps(row), flush=True)
        return 0
    if argv[:1] == ["--html"]:
        html_dir, argv = Path(argv[1]), argv[2:]
    if browser and html_dir is None:
        import tempfile

        html_dir = Path(tempfile.mkdtemp(prefix="theorybook-static-panels-"))
    if html_dir is not None:
        (html_dir / "_static").mkdir(parents=True, exist_ok=True)
        for f in ("static-panels.js", "static-panels.css"):
            shutil.copy(ROOT / "_static" / f, html_dir / "_static" / f)

    # One process per chapter, as the book build runs one kernel per chapter (chapters leave state behind:
    # torch threads, default dtype, caches).
    rows = []
    for name in _chapters():
        if argv and name not in argv:
            continue
        cmd = [sys.executable, str(Path(__file__).resolve()), "--row", name]
        if html_dir is not None:
            cmd += ["--html", str(html_dir)]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        line = next((x for x in proc.stdout.splitlines() if x.startswith("ROW ")), None)
        row = json.loads(line[4:]) if line else {"chapter": name, "error": proc.stderr[-2000:] or "no row"}
        rows.append(row)
        if "error" in row:
            print(f"{name:<22} ERROR {row['error'][-300:]}", flush=True)
            continue
        print(f"{name:<22} {row['states']:3d} states  {row['frames']:3d} frames  "
              f"{row['precompute_cpu_s']:6.2f} CPU s ({row['precompute_wall_s']:5.2f} wall on {row['workers']})  "
              f"{row['bytes'] / 1e3:7.1f} kB  values {row['values']}", flush=True)
    ok = [r for r in rows if "error" not in r]
    result = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "budgets": {"min_states": tw.MIN_STATES, "primary_values": tw.PRIMARY_VALUES,
                    "other_values": tw.OTHER_VALUES, "max_bytes_per_page": tw.PAGE_BYTES, "dpi": tw.DPI},
        "totals": {"states": sum(r["states"] for r in ok),
                   "precompute_cpu_s": round(sum(r["precompute_cpu_s"] for r in ok), 1),
                   "precompute_wall_s": round(sum(r["precompute_wall_s"] for r in ok), 1),
                   "max_bytes": max((r["bytes"] for r in ok), default=0),
                   "bytes": sum(r["bytes"] for r in ok),
                   "chapters_s": round(sum(r["chapter_s"] or 0 for r in ok), 1)},
        "panels": rows,
    }
    if browser:
        result["browser"] = _browser(html_dir, [r["chapter"] for r in ok])
        print(f"browser: {len(result['browser']['runs'])} runs, worst median switch "
              f"{result['browser']['worst_median_ms']} ms, worst switch {result['browser']['worst_ms']} ms; "
              f"failures: {result['browser']['failures'] or 'none'}")
    if not argv:  # the whole book measured
        (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
        (ROOT / "bench" / "results" / "static_panels.json").write_text(json.dumps(result, indent=2))
    ok_browser = not browser or not result["browser"]["failures"]
    return 0 if all(r.get("within_budget") for r in rows) and ok_browser else 1


def _browser(html_dir: Path, chapters: list[str]) -> dict:
    import functools
    import http.server
    import threading

    sys.path.insert(0, str(ROOT / "tests"))
    import test_site as ts

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(ts._Quiet, directory=str(html_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = ts.make_driver()
    runs, failures = [], []
    try:
        for name in chapters:
            page = html_dir / f"{name}.html"
            for via, url in (("file", page.as_uri()),
                             ("http", f"http://127.0.0.1:{server.server_address[1]}/{page.name}")):
                try:
                    runs += [{**r, "via": via} for r in ts.exercise_static_explorers(driver, url, name)]
                except AssertionError as err:
                    failures.append(f"{name} [{via}]: {err}")
    finally:
        ts.quit_driver(driver)
        server.shutdown()
    return {"runs": runs, "failures": failures, "budget_ms": ts.STATIC_SWITCH_MS,
            "worst_median_ms": max((r["median_ms"] for r in runs), default=None),
            "worst_ms": max((r["max_ms"] for r in runs), default=None)}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
