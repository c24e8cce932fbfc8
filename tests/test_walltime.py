"""``walltime.IdleMonitor`` (the chapter tests' stall detector) tells a process tree that waits from one that works."""

from __future__ import annotations

import subprocess
import sys

import pytest
from walltime import IdleMonitor

pytestmark = pytest.mark.skipif(not IdleMonitor.supported, reason="needs Linux /proc")


def test_a_child_that_waits_is_idle():
    with IdleMonitor() as mon:
        subprocess.run([sys.executable, "-c", "import threading; threading.Event().wait(2.0)"], check=True)
    assert 1.5 <= mon.result.idle_s <= mon.result.wall_s, mon.result


def test_a_child_that_computes_is_not_idle():
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass"
    with IdleMonitor() as mon:
        subprocess.run([sys.executable, "-c", busy], check=True)
    assert mon.result.idle_s <= 0.3, mon.result
    assert mon.result.cpu_s >= 1.0, mon.result
