"""The newcomer's two commands, timed on a fresh clone: `make test`, then `make book` right after it.

Usage: python bench/make_times.py [--keep DIR]   → prints the table, writes bench/results/make_times.json

Clones the committed HEAD of this repository into a temporary directory (or DIR), runs the one-time set-up
(`make venv vendor`: virtual environment, pip installs, npm assets — excluded from the targets), then times
`make test` (unit tests, every chapter executed through the execution cache, the book build for the browser tests,
the browser tests) and `make book` immediately after (nothing changed: no chapter may execute again). It also
counts the chapters each command executed, from the execution cache's records, and greps both logs for kernel
ERROR lines. CI (`.ci/run`: `make test`, then `make book`) does the same work in the same order; its time is
estimated as set-up + the two commands. Then the quick check of a one-chapter change: a comment appended to
``src/theorybook/<--edit>/verdicts.py`` (colora by default), ``make test-changed`` timed (as a developer runs it:
``CI`` unset, so the chapter's stale seed audit is re-audited in full), counting the chapters it executed and the
seed-audit records it rewrote; the edit is undone afterwards. Targets (issue 58): `make test` ≤ 10 min, `make
book` after it ≤ 1 min, the quick check ≤ 3 min re-executing exactly that chapter and its audit, CI ≤ 20 min. Run
it on an idle machine; the machine is named in the JSON, and earlier runs are kept under ``earlier``.
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
QUICK = "make test-changed (one chapter's package edited)"
TARGETS_S = {"make test": 10 * 60, "make book (after make test)": 60, QUICK: 180, "CI estimate": 20 * 60}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _run(cmd: list[str], cwd: Path, log: Path, ci: bool = True) -> tuple[float, int, float]:
    """Wall seconds, exit status and CPU seconds of the command and every descendant that was waited for (the
    test processes, the kernels and their forks, Chromium): the CPU time sets the floor the cores allow."""
    env = {**os.environ, "CI": "1"} if ci else {k: v for k, v in os.environ.items() if k != "CI"}
    t0, c0 = time.perf_counter(), _children_cpu()
    with log.open("w") as fh:
        rc = subprocess.call(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    return time.perf_counter() - t0, rc, _children_cpu() - c0


def _executed(log: Path) -> int:
    text = log.read_text(errors="replace")
    # jupyter-book: "Executing notebook using ..."; tests/test_chapters.py prints "...: executed (…)"
    return len(re.findall(r"Executing notebook using|\.md: executed \(", text))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--keep", type=Path, default=None, help="clone into this directory and keep it")
    ap.add_argument("--edit", default="colora", help="the chapter package the quick check edits")
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
    edited = work / "src" / "theorybook" / args.edit / "verdicts.py"
    for name, cmd in (("set-up (make venv vendor)", ["make", "venv", "vendor"]),
                      ("make test", ["make", "test"]),
                      ("make book (after make test)", ["make", "book"]),
                      (QUICK, ["make", "test-changed"])):
        log = logs / (re.sub(r"\W+", "_", name) + ".log")
        if name == QUICK:
            edited.write_text(edited.read_text() + "\n# edited by bench/make_times.py\n")
        try:
            seconds, rc, cpu = _run(cmd, work, log, ci=name != QUICK)
        finally:
            if name == QUICK:
                audits = subprocess.check_output(["git", "status", "--porcelain", "tests/seed_audit"], cwd=work,
                                                 text=True).split()[1::2]
                undo = ["git", "checkout", "-q", "--", str(edited.relative_to(work)), "tests/seed_audit"]
                subprocess.check_call(undo, cwd=work)
        text = log.read_text(errors="replace")
        rows.append({"step": name, "seconds": round(seconds, 1), "cpu_s": round(cpu, 1), "rc": rc,
                     "chapters_executed": _executed(log),
                     "kernel_error_lines": len(re.findall(r"^.*\] ERROR \|.*$", text, re.M)),
                     "target_s": TARGETS_S.get(name)})
        if name == QUICK:
            rows[-1].update(edited=args.edit, audits_rewritten=audits)
        print(f"{name:<30} {seconds:8.1f} s  {cpu:8.1f} CPU s  rc={rc}  chapters executed: "
              f"{rows[-1]['chapters_executed']}", flush=True)
        if rc:
            print(f"  failed: see {log}", file=sys.stderr)
            break
    total = sum(r["seconds"] for r in rows if r["step"] != QUICK)
    rows.append({"step": "CI estimate", "seconds": round(total, 1), "target_s": TARGETS_S["CI estimate"]})
    for r in rows:
        r["within_target"] = None if r.get("target_s") is None else r["seconds"] <= r["target_s"]
    result = {"benchmark": "make_times", "commit": head, "machine": {"cpu": _cpu(), "cores": os.cpu_count(),
              "python": platform.python_version()}, "rows": rows,
              "note": "fresh clone of the commit; set-up excluded from the targets; CI estimate = set-up + make test + "
                      "make book; the quick check edits one chapter's package after them and is undone"}
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
