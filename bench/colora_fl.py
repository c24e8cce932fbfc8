"""CoLoRA against the federated-LoRA baselines run as federated algorithms, at equal communicated parameters.

    python bench/colora_fl.py     # the chapter seed, then pilot seeds 9001–9003 (≈ 10–20 CPU-minutes, one thread)

Every method — federated CoLoRA (shared A, B averaged, personal cores R_i), FedAvg-LoRA, FFA-LoRA (rank 2r, the
down-projection frozen), the personalised FedSA-LoRA (shared U of rank 2r averaged, personal V_i) and per-client
LoRA — runs ``FL_ROUNDS`` rounds of ``LOCAL_STEPS`` local full-batch gradient steps from the same initialisation,
the server averaging the shared block each round; each method's step size is chosen per replicate from ``FL_GRID``
by its own validation MSE on ``N_VAL`` held-out samples per client
(:func:`theorybook.colora.federated.fl_cell`). Cells: ``FL_CELLS`` (the claim's world and the two control worlds).
The chapter's seed gives the headline row's numbers; the pilot seeds 9001–9003 give its basis. Writes
bench/results/colora_fl.json with the machine.
"""

from __future__ import annotations

import json
import pathlib
import sys
import time

import torch
from _machine import machine_info  # bench/ is on sys.path when a bench script runs

from theorybook.colora import CHAPTER_SEEDS
from theorybook.colora.federated import FL_CELLS, fl_cell, fl_ratio

OUT = pathlib.Path(__file__).parent / "results" / "colora_fl.json"
PILOT = (9001, 9002, 9003)


def main() -> None:
    torch.set_num_threads(1)
    t0 = time.process_time()
    res: dict = {"machine": machine_info(), "cells": {}, "pilot": {}}
    for seed in (CHAPTER_SEEDS[0], *PILOT):
        cells = {}
        for name, (eta, tau, n) in FL_CELLS.items():
            cells[name] = fl_cell(eta, tau, n, seed=seed)
            print(seed, name, {m: cells[name][m]["error"] for m in cells[name] if isinstance(cells[name][m], dict)},
                  round(fl_ratio(cells[name]), 4), file=sys.stderr, flush=True)
        if seed == CHAPTER_SEEDS[0]:
            res["cells"] = cells
        else:
            res["pilot"][str(seed)] = {name: {"ratio": fl_ratio(c), **c} for name, c in cells.items()}
        res["cpu_s"] = time.process_time() - t0
        OUT.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
