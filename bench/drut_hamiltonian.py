"""D-RUT benchmark: the displaced, twirled Hamiltonian and its vacuum constant for a batch of β, batched torch vs a
qutip loop; the evolution e^{−iH_eff t} for a batch of times, batched torch ``matrix_exp`` vs qutip ``expm``; RPE
throughput.

    python bench/drut_hamiltonian.py                 # N ∈ {20, 40, 80}, 64 β, 64 t, 5 repeats: ≈ 4 min
    python bench/drut_hamiltonian.py --repeats 3     # fewer repeats (a loaded machine)
    python bench/drut_hamiltonian.py --sizes 20,40   # a sub-grid

Every cell is timed at one torch thread (``--threads`` to change it): one warm call of each method, then
``--repeats`` rounds in which each method runs once, in turn (interleaved, so load from other processes hits them
alike); medians of the calling thread's CPU time (robust to a shared machine: torch and qutip compute on the calling
thread at one thread) and of the wall clock. Max differences between the two implementations are recorded. The JSON
records the machine (CPU model, cores, load average before and after). Writes bench/results/drut_hamiltonian.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import time

import numpy as np
import torch
from _machine import interleaved_medians, machine_info  # bench/ is on sys.path when a bench script runs

from theorybook.device import to_numpy
from theorybook.drut_hamiltonian import CHAPTER_COEFFS, displaced_twirled, rpe, rpe_schedule, vacuum_constant
from theorybook.drut_hamiltonian.experiment import KERR, LAM, OMEGA, G


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="timed rounds per cell (default 5)")
    ap.add_argument("--sizes", default="20,40,80", help="comma-separated Fock cutoffs N")
    ap.add_argument("--betas", type=int, default=64, help="number of displacements β")
    ap.add_argument("--times", type=int, default=64, help="number of evolution times t")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "drut_hamiltonian.json"))
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    import qutip

    torch.set_num_threads(args.threads)
    machine = machine_info()
    sizes = [int(x) for x in args.sizes.split(",")]
    t_start = time.perf_counter()
    print(f"D-RUT bench — torch {torch.__version__}, qutip {qutip.__version__}, {args.threads} thread(s), "
          f"complex128, {args.betas} β, {args.times} t, {args.repeats} repeats\nmachine: {machine['cpu']}, "
          f"{machine['cores']} cores, load average {machine['load_avg_1_5_15_start']}")
    gen = torch.Generator().manual_seed(0)
    r = 0.15 + 0.5 * torch.rand(args.betas, generator=gen, dtype=torch.float64)
    phi = 2 * math.pi * torch.rand(args.betas, generator=gen, dtype=torch.float64)
    beta = torch.polar(r, phi)
    betas = [complex(b) for b in beta]
    ts = torch.linspace(0.1, 20.0, args.times, dtype=torch.float64)
    rows = []
    header = ("N", "H_eff torch", "H_eff qutip", "ratio", "max|Δ|", "expm torch", "expm qutip", "ratio", "max|Δ|")
    print("\nms per batch (median thread-CPU time of interleaved warm repeats):")
    print(" ".join(f"{h:>12}" for h in header))
    for N in sizes:
        a = qutip.destroy(N)
        Hq = (OMEGA * a.dag() * a + KERR / 2 * a.dag() ** 2 * a**2 + G * a.dag() + np.conj(G) * a + LAM * a**2
              + np.conj(LAM) * a.dag() ** 2)

        def ours(N=N):
            H = displaced_twirled(CHAPTER_COEFFS, beta, n_fock=N, device="cpu")
            return H, H[:, 0, 0].real

        def peer(N=N, Hq=Hq):
            out = []
            for b in betas:
                D = qutip.displace(N, b)
                Hd = (D.dag() * Hq * D).full()
                out.append(np.diag(np.diag(Hd)))
            return np.stack(out)

        # the evolution under the M = 4 twirl at the outermost β (not diagonal: a real matrix exponential)
        H4 = displaced_twirled(CHAPTER_COEFFS, beta[int(r.argmax())], n_fock=N, n_phases=4, device="cpu")
        H4q = qutip.Qobj(to_numpy(H4))

        def ours_expm(H4=H4):
            return torch.linalg.matrix_exp(-1j * ts[:, None, None] * H4)

        def peer_expm(H4q=H4q):
            return np.stack([(-1j * float(t) * H4q).expm().full() for t in ts])

        plan = {"ours": ours, "peer": peer, "ours_expm": ours_expm, "peer_expm": peer_expm}
        t_wall, t_cpu = interleaved_medians(plan, args.repeats)
        H, C = ours()
        dH = float(np.abs(to_numpy(H) - peer()).max())
        dC = float((C - vacuum_constant(CHAPTER_COEFFS, beta)).abs().max())
        dU = float(np.abs(to_numpy(ours_expm()) - peer_expm()).max())
        row = {"N": N, "ms_cpu": {k: 1e3 * v for k, v in t_cpu.items()}, "ms_wall": {k: 1e3 * v for k, v in
                                                                                   t_wall.items()},
               "ratio_heff": t_cpu["peer"] / t_cpu["ours"], "ratio_expm": t_cpu["peer_expm"] / t_cpu["ours_expm"],
               "max_diff_heff": dH, "max_diff_C_vs_formula": dC, "max_diff_expm": dU}
        rows.append(row)
        ms = row["ms_cpu"]
        print(" ".join(f"{x:>12}" for x in (
            N, f"{ms['ours']:.1f}", f"{ms['peer']:.1f}", f"{row['ratio_heff']:.1f}×", f"{dH:.1e}",
            f"{ms['ours_expm']:.1f}", f"{ms['peer_expm']:.1f}", f"{row['ratio_expm']:.1f}×", f"{dU:.1e}")))
        sys.stdout.flush()

    C27 = vacuum_constant(CHAPTER_COEFFS, beta[:27])
    S = rpe_schedule(12)

    def run_rpe():
        return rpe(C27, 12, S, seed=1, reps=256)

    w, c = interleaved_medians({"rpe": run_rpe}, args.repeats)
    runs = 27 * 256
    rpe_row = {"J": 12, "runs_per_call": runs, "ms_cpu": 1e3 * c["rpe"], "ms_wall": 1e3 * w["rpe"],
               "runs_per_s_cpu": runs / c["rpe"], "runs_per_s_wall": runs / w["rpe"]}
    print(f"\nRPE (J = 12, S_j = 16 + 8(J − j), {runs} runs per call): {rpe_row['runs_per_s_cpu']:.3g} runs/s "
          f"(thread CPU), {rpe_row['runs_per_s_wall']:.3g} runs/s (wall)")
    elapsed = time.perf_counter() - t_start
    machine["load_avg_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    print(f"wall time {elapsed:.1f} s")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "machine": machine,
        "config": {"sizes": sizes, "betas": args.betas, "times": args.times, "repeats": args.repeats,
                   "threads": args.threads, "dtype": "complex128", "qutip": qutip.__version__,
                   "timing": "median of interleaved warm repeats (one warm call each), calling-thread CPU time",
                   "heff": "ours: one batched displaced_twirled call (expm of the truncated generator, D†HD, exact "
                           "twirl) for all β; qutip: a loop of displace, D†HD, keep the diagonal",
                   "expm": "ours: one batched torch.linalg.matrix_exp over t; qutip: a loop of Qobj.expm (M = 4 "
                           "twirl, outermost β)"},
        "rows": rows, "rpe": rpe_row, "wall_s": elapsed}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
