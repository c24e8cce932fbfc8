"""The context of every timing in bench/: CPU model, core count, torch's default threads, load average, CUDA."""

from __future__ import annotations

import math
import os
import platform
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
