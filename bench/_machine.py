"""The context of every timing in bench/: CPU model, core count, torch's default threads, load average, CUDA."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

import torch


def machine_info() -> dict:
    """CPU model, core count, torch's default threads and the load average: the context of every timing."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {"cpu": model, "cores": os.cpu_count(), "torch_default_threads": torch.get_num_threads(),
            "platform": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
            "load_avg_1_5_15_start": [round(x, 2) for x in load],
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def provenance(root: Path, package: str) -> tuple[str | None, bool | None]:
    """The commit a result was computed at and whether ``package`` (a path under ``root``) had uncommitted changes
    then; ``(None, None)`` outside a git checkout."""
    try:
        head = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=root, text=True).strip()
        dirty = bool(subprocess.check_output(["git", "status", "--porcelain", package], cwd=root, text=True).strip())
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return head, dirty


def write_results(out: dict, path: str | Path, t_start: float) -> Path:
    """Close a bench's result: the load average at the end, its wall and process CPU seconds, written as JSON to
    ``path`` (parents made); prints where it went."""
    out["machine"]["load_avg_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()]
    out["wall_s"] = round(time.time() - t_start, 1)
    out["cpu_s_process"] = round(time.process_time(), 1)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {path} ({out['wall_s']} s wall, {out['cpu_s_process']} s CPU)")
    return path


def interleaved_medians(plan: dict, reps: int, sync=None) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds per entry of ``plan`` (name → zero-argument callable): one warm call each, then ``reps``
    rounds in which every entry runs once, in turn, so load from other processes hits all of them alike.

    Returns (wall-clock medians, calling-thread CPU-time medians). With one intra-op thread torch computes on
    the calling thread, so its CPU time is the operation's own cost and is not inflated when other processes
    take the cores; with more threads only the wall clock is meaningful."""
    sync = sync or (lambda: None)
    for fn in plan.values():
        fn()
    sync()
    wall: dict[str, list[float]] = {k: [] for k in plan}
    cpu: dict[str, list[float]] = {k: [] for k in plan}
    for _ in range(reps):
        for name, fn in plan.items():
            t0, c0 = time.perf_counter(), time.thread_time()
            fn()
            sync()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.thread_time() - c0)
    return ({k: statistics.median(v) for k, v in wall.items()}, {k: statistics.median(v) for k, v in cpu.items()})
