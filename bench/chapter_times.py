"""Per-chapter execution time under nbmake on this machine (the contract: ≤ 60 s each on a 2-core CPU).

Usage: python bench/chapter_times.py [--repeat N]   → prints a table, writes bench/results/chapter_times.json
Each chapter is executed in its own pytest process, as `pytest --nbmake` does in CI; the median of N runs is
reported (N = 1 by default: a chapter is long enough that one run is representative).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 60.0


def chapters() -> list[str]:
    """The chapters of ``_toc.yml`` (back matter excluded), as ``scripts/chapter_cache.py`` lists them."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from chapter_cache import chapters as toc_chapters

    return [str(p.relative_to(ROOT)) for p in toc_chapters(ROOT)]


def time_chapter(path: str) -> tuple[float, bool]:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "pytest", "--nbmake", "-q", "-p", "no:cacheprovider", path],
                         cwd=ROOT, capture_output=True, text=True)
    return time.perf_counter() - t0, res.returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    rows = []
    for ch in chapters():
        runs = [time_chapter(ch) for _ in range(args.repeat)]
        med = statistics.median(t for t, _ in runs)
        ok = all(p for _, p in runs)
        rows.append({"chapter": ch, "seconds": round(med, 2), "passed": ok, "within_limit": med <= LIMIT_S})
    width = max(len(r["chapter"]) for r in rows)
    print(f"{'chapter':<{width}}  seconds  passed  ≤{LIMIT_S:.0f}s")
    for r in rows:
        print(f"{r['chapter']:<{width}}  {r['seconds']:7.1f}  {str(r['passed']):>6}  {str(r['within_limit']):>5}")
    out = ROOT / "bench" / "results" / "chapter_times.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"limit_s": LIMIT_S, "chapters": rows}, indent=2))
    return 0 if all(r["passed"] and r["within_limit"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
