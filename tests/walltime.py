"""Wall time against work done: how long a chapter's execution sat idle — nobody computing, everyone waiting.

A chapter that runs long because it computes shows it in CPU time; one that runs long because the runner and the
kernel wait for each other (a message that never comes, a timeout that finally fires) does not. Comparing wall
time with CPU time alone cannot tell a stall from a busy machine: on a shared 2-core runner a process waits for a
core a good part of the time. So :class:`IdleMonitor` samples the threads of this process and of every process it
started (the kernel, anything the kernel forked) a few times a second, and counts a sample as *idle* when none of
them is running or waiting for a core (state ``R``) or in uninterruptible I/O (``D``). Waiting for a core is work
delayed, not a stall; the idle seconds are the stall. It also reads how long each process's main thread waited for a
core (``/proc/<pid>/schedstat``), so that a time limit can discount a machine that other jobs keep busy.

Linux only (``/proc``); elsewhere :attr:`IdleMonitor.supported` is false and nothing is measured.
"""

from __future__ import annotations

import os
import resource
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass
class Execution:
    """One measured execution: ``wall_s``; ``cpu_s`` of this process and of the children it reaped meanwhile (the
    kernel and what it forked); ``idle_s``, the sampled time in which no thread of the process tree was running or
    runnable; ``longest_idle_s``, the longest such stretch; ``queued_s``, the longest time one process's main thread
    (the kernel's runs the cells) spent runnable but waiting for a core — time the machine's other load added."""

    wall_s: float
    cpu_s: float
    idle_s: float
    longest_idle_s: float
    stretches: list[tuple[float, float]]  # (start, seconds) of each idle stretch ≥ 1 s, from the start
    queued_s: float = 0.0

    def __str__(self) -> str:
        where = ", ".join(f"{d:.1f} s from t = {t:.1f} s" for t, d in self.stretches) or "none ≥ 1 s"
        return (f"wall {self.wall_s:.1f} s, CPU {self.cpu_s:.1f} s (this process + kernel + its children), "
                f"waiting for a core {self.queued_s:.1f} s, idle {self.idle_s:.1f} s (stretches: {where})")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            pass
    return out


def _states(pid: int, skip: int | None = None) -> list[str]:
    states = []
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return states
    for task in tasks:
        if skip is not None and task.name == str(skip):
            continue
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        states.append(stat.rsplit(")", 1)[1].split()[0])
    return states


def _queued_ns(pid: int) -> int | None:
    """Nanoseconds the main thread of ``pid`` has spent runnable but not running (``/proc/<pid>/schedstat``)."""
    try:
        return int((PROC / str(pid) / "schedstat").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None


def queued_s(pid: int | None = None) -> float | None:
    """Seconds the main thread of ``pid`` (this process by default) has spent runnable but waiting for a core;
    ``None`` without ``/proc``."""
    ns = _queued_ns(os.getpid() if pid is None else pid)
    return None if ns is None else ns / 1e9


def _rusage_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class IdleMonitor:
    """``with IdleMonitor() as m: ...`` then ``m.result`` (an :class:`Execution`). Samples every ``interval``
    seconds the threads of this process (except the sampler's own) and of all its descendants."""

    supported = (PROC / "self" / "task").is_dir() and (PROC / "self" / "task" / str(os.getpid()) / "children").exists()

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self.result: Execution | None = None
        self._stop = threading.Event()
        self._idle = 0.0
        self._longest = 0.0
        self._stretches: list[tuple[float, float]] = []
        self._queued: dict[int, int] = {}  # pid → last schedstat wait (ns), since the start
        self._queued0 = {os.getpid(): _queued_ns(os.getpid()) or 0}

    def _busy(self, me: int) -> bool:
        todo, seen, busy = [os.getpid()], set(), False
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            q = _queued_ns(pid)
            if q is not None:
                self._queued[pid] = q - self._queued0.get(pid, 0)
            busy = busy or any(s in "RD" for s in _states(pid, skip=me if pid == os.getpid() else None))
            todo += _children(pid)
        return busy

    def _run(self) -> None:
        me = threading.get_native_id()
        last = time.perf_counter()
        stretch = 0.0
        while not self._stop.wait(self.interval):
            busy = self._busy(me)
            now = time.perf_counter()
            dt, last = now - last, now
            if busy:
                self._close(stretch, now)
                stretch = 0.0
            else:
                # Only the time around this sample counts: when the monitor itself waited for a core (a gap of many
                # intervals), what happened in the gap is unknown. A real stall leaves the machine free, so the
                # monitor samples it on time and every interval of it counts.
                seen = min(dt, 3 * self.interval)
                self._idle += seen
                stretch += seen
                self._longest = max(self._longest, stretch)
        self._close(stretch, time.perf_counter())

    def _close(self, stretch: float, now: float) -> None:
        if stretch >= 1.0:
            self._stretches.append((now - stretch - self._t0, stretch))

    def __enter__(self) -> IdleMonitor:
        self._t0, self._c0 = time.perf_counter(), _rusage_cpu()
        if self.supported:
            self._thread = threading.Thread(target=self._run, name="idle-monitor", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.supported:
            self._thread.join()
        self.result = Execution(time.perf_counter() - self._t0, _rusage_cpu() - self._c0, self._idle, self._longest,
                                self._stretches, max(self._queued.values(), default=0) / 1e9)
