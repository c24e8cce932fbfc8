"""`make bench`: run every benchmark script in bench/ in turn, side by side tables printed by each.

Exit status 1 when any script exits non-zero (missed target, failure) — including exit status 2, a peer row that
cannot run (e.g. bench/sweep.py without JAX): never a silent skip."""

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
        rc = subprocess.run([sys.executable, str(path)], cwd=BENCH.parent).returncode
        if rc == 2:  # bench convention: 2 = a peer row cannot run (its message says what to install)
            failed.append(f"{name} (a peer it compares against cannot run: pip install -e '.[bench]')")
        elif rc != 0:
            failed.append(name)
    if failed:
        print(f"\nbenchmarks that missed their target, failed or could not run a peer: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
