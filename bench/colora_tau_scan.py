"""CoLoRA, the needs-similarity row's τ scan on the pilot seeds (issue 57: a regime claim is scanned).

    python bench/colora_tau_scan.py [N]      # N pilot seeds (default 10); ≈ 5–40 s a seed on a loaded CPU

The scan τ ∈ SCAN_TAUS = (0.1, 0.3, 1.0) — a decade around the chapter's τ = 0.3, fixed before any scan was run —
at n = 128 with the chapter's k, d, r, σ, rounds and 3 replicates; per seed the worst-replicate per-client / CoLoRA
error at each τ, their max (the row's statistic) and the control's (the same ratio at τ = 0). Pilot seeds 9001–9010
(theorybook.check.PILOT_SEEDS); writes bench/results/colora_tau_scan.json.
"""

from __future__ import annotations

import json
import pathlib

from theorybook.check import PILOT_SEEDS
from theorybook.colora.experiment import ITERS, METHODS, N_REPS, RANK, SIGMA, D, K, _recovery
from theorybook.colora.verdicts import SCAN_TAUS

OUT = pathlib.Path(__file__).parent / "results" / "colora_tau_scan.json"


def one(seed: int) -> dict:
    taus = (0.0, *SCAN_TAUS)
    st = _recovery([(t, 128, m) for t in taus for m in ("colora", "independent")], (128,), taus, k=K, d=D, r=RANK,
                   sigma=SIGMA, iters=ITERS, reps=N_REPS, seed=seed, device=None, oracle_fit=False)
    ci, ii = METHODS.index("colora"), METHODS.index("independent")
    r = [float((st.errors[a, ii, 0] / st.errors[a, ci, 0]).max()) for a in range(len(taus))]
    return {"ctrl": r[0], "per_tau": dict(zip(map(str, SCAN_TAUS), r[1:], strict=True)), "scan_max": max(r[1:])}


def main(n: int = 10) -> dict:
    seeds = tuple(PILOT_SEEDS)[:n]
    per = {}
    for s in seeds:
        per[str(s)] = one(s)
        print(s, per[str(s)], flush=True)
    out = {"script": "bench/colora_tau_scan.py", "scan_taus": list(SCAN_TAUS), "seeds": [seeds[0], seeds[-1]],
           "per_seed": per, "scan_max": max(v["scan_max"] for v in per.values()),
           "ctrl_min": min(v["ctrl"] for v in per.values())}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print({k: out[k] for k in ("scan_max", "ctrl_min")})
    return out


if __name__ == "__main__":
    import sys

    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
