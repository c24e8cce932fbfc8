"""`make bench`: run every benchmark script in bench/ in turn, side by side tables printed by each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# Order: widgets first, chapter times last, every other bench/*.py in between (new chapters' benches are picked up).
# Each script prints its own table and writes bench/results/<name>.json.
FIRST, LAST = ["widgets.py", "sweep.py"], ["chapter_times.py"]
SCRIPTS = FIRST + sorted(p.name for p in BENCH.glob("*.py")
                         if p.name not in {*FIRST, *LAST, "run_all.py"} and not p.name.startswith("_")) + LAST


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
