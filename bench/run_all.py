"""`make bench`: run every benchmark script in bench/ in turn, side by side tables printed by each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# Order: fast first. Each script prints its own table and writes bench/results/<name>.json.
SCRIPTS = ["widgets.py", "sweep.py", "dash.py", "pogo.py", "robust_lotteries.py", "chapter_times.py"]


def main() -> int:
    failed = []
    for name in SCRIPTS:
        path = BENCH / name
        if not path.exists():
            continue
        print(f"\n=== bench/{name}", flush=True)
        if subprocess.run([sys.executable, str(path)], cwd=BENCH.parent).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nbenchmarks that missed their target or failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
