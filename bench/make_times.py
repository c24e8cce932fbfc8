"""The newcomer's two commands, timed on a fresh clone: `make test`, then `make book` right after it.

Usage: python bench/make_times.py [--keep DIR]   → prints the table, writes bench/results/make_times.json

Clones the committed HEAD of this repository into a temporary directory (or DIR), runs the one-time set-up
(`make venv vendor`: virtual environment, pip installs, npm assets — excluded from the targets), then times
`make test` (unit tests, every chapter executed through the execution cache, the book build for the browser tests,
the browser tests) and `make book` immediately after (nothing changed: no chapter may execute again). It also
counts the chapters each command executed, from the execution cache's records, and greps both logs for kernel
ERROR lines. CI (`.ci/run`: `make book`, then `make test`) does the same work in the other order; its time is
estimated as set-up + the two commands. Targets (issue "A newcomer's two commands"): `make test` ≤ 15 min,
`make book` after it ≤ 1 min, CI ≤ 25 min. Run it on an idle machine; the machine is named in the JSON, and
earlier runs are kept under ``earlier``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "make_times.json"
TARGETS_S = {"make test": 15 * 60, "make book (after make test)": 60, "CI estimate": 25 * 60}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _run(cmd: list[str], cwd: Path, log: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    with log.open("w") as fh:
        rc = subprocess.call(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "CI": "1"})
    return time.perf_counter() - t0, rc


def _executed(log: Path) -> int:
    text = log.read_text(errors="replace")
    # jupyter-book: "Executing notebook using ..."; tests/test_chapters.py prints "...: executed (…)"
    return len(re.findall(r"Executing notebook using|\.md: executed \(", text))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--keep", type=Path, default=None, help="clone into this directory and keep it")
    args = ap.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="theorybook-clone-"))
    head = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=ROOT, text=True).strip()
    if not (work / ".git").exists():
        subprocess.check_call(["git", "clone", "-q", str(ROOT), str(work)])
    else:
        subprocess.check_call(["git", "fetch", "-q", str(ROOT), "main"], cwd=work)
    subprocess.check_call(["git", "checkout", "-q", head], cwd=work)
    logs = work / "_timing_logs"
    logs.mkdir(exist_ok=True)
    rows = []
    for name, cmd in (("set-up (make venv vendor)", ["make", "venv", "vendor"]),
                      ("make test", ["make", "test"]),
                      ("make book (after make test)", ["make", "book"])):
        log = logs / (re.sub(r"\W+", "_", name) + ".log")
        seconds, rc = _run(cmd, work, log)
        text = log.read_text(errors="replace")
        rows.append({"step": name, "seconds": round(seconds, 1), "rc": rc, "chapters_executed": _executed(log),
                     "kernel_error_lines": len(re.findall(r"^.*\] ERROR \|.*$", text, re.M)),
                     "target_s": TARGETS_S.get(name)})
        print(f"{name:<30} {seconds:8.1f} s  rc={rc}  chapters executed: {rows[-1]['chapters_executed']}", flush=True)
        if rc:
            print(f"  failed: see {log}", file=sys.stderr)
            break
    total = sum(r["seconds"] for r in rows)
    rows.append({"step": "CI estimate", "seconds": round(total, 1), "target_s": TARGETS_S["CI estimate"]})
    for r in rows:
        r["within_target"] = None if r.get("target_s") is None else r["seconds"] <= r["target_s"]
    result = {"benchmark": "make_times", "commit": head, "machine": {"cpu": _cpu(), "cores": os.cpu_count(),
              "python": platform.python_version()}, "rows": rows,
              "note": "fresh clone of the commit; set-up excluded from the targets; CI estimate = the sum"}
    # Earlier runs stay in the record (the machine differs between sessions: a target can hold on one and not on
    # another, and both are worth seeing).
    try:
        before = json.loads(OUT.read_text())
    except (OSError, ValueError):
        before = None
    if isinstance(before, dict) and before.get("benchmark") == "make_times":
        result["earlier"] = [{k: v for k, v in before.items() if k != "earlier"}, *before.get("earlier", [])]
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0 if all(r.get("rc", 0) == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
