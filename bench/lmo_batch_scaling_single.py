"""The LMO batch-scaling chapter's single-sample control, uncensored: does α* move when only the budget changes?

    python bench/lmo_batch_scaling_single.py   # both norms (two worker processes, one thread each), ≈ 2 min

The control (``theorybook.lmo_batch_scaling.experiment.single_map``): the chapter's ℓ2 and ℓ∞ maps (least squares
n = 1024, d = 16, the method's α, γ grids, ε and τ = 1 … 1024) with a single-sample gradient at every τ, still
charged τ samples per step, half the method's seeds, seed ``SINGLE_SEED`` (+1 for ℓ∞). Its settings were fixed
before this ran (``single_settings``): no 2·best rule, and a budget in steps — budget/τ₁ = 2¹³ steps at every τ,
the method's τ = 1 budget — since its steps to ε do not shrink with τ and the method's rule, in samples, would
censor it from τ = 4 on. Writes bench/results/lmo_batch_scaling_single.json (every map's α*, N*, best-over-γ and
full counts, its settings, the commit and the machine), which the chapter reads (``load_single``); a test re-runs
two τ of it.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, provenance  # noqa: E402

from theorybook.lmo_batch_scaling.experiment import (  # noqa: E402
    SINGLE_RESULTS,
    ridge_record,
    single_map,
    single_settings,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _one(norm: str) -> dict:
    t = time.perf_counter()
    r = single_map(norm)
    rec = ridge_record(0, r)
    rec.pop("seed")
    rec["grad0"] = float(r.grad0)
    print(f"{norm}: α* = {rec['alpha_star']}, N* = {rec['n_star']} ({time.perf_counter() - t:.0f} s)", flush=True)
    return rec


def main() -> None:
    info = machine_info()
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2) as ex:
        maps = dict(zip(("l2", "linf"), ex.map(_one, ("l2", "linf")), strict=True))
    head, dirty = provenance(ROOT, "src/theorybook/lmo_batch_scaling")
    out = {"benchmark": "lmo_batch_scaling_single", "commit": head, "chapter_code_uncommitted": dirty,
           "settings": single_settings("chapter"), "maps": maps, "wall_s": time.perf_counter() - t0, "machine": info}
    SINGLE_RESULTS.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {SINGLE_RESULTS} ({out['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
