"""Distributed speed on CPU: Shampoo, POGO and the sweep engine on 2 gloo processes against one process.

    python bench/distributed.py              # 2 processes × 1 thread vs 1 process × 1 thread and × 2 threads
    python bench/distributed.py --quick      # fewer steps

What is timed (each a median over ``--repeats`` rounds after one warm round; the ranks start a round together
after a barrier and the round's time is the slowest rank's):

* **Shampoo** (`theorybook.dash_shampoo.Shampoo`, block 64, roots every step, NDB): one DDP training step of a
  4-layer 256-wide MLP on a batch of 256 — each rank has half the batch, DDP averages the gradients, and with
  ``distributed=True`` each rank computes half of the stacked inverse roots and ``all_gather`` assembles them;
* **POGO** (`theorybook.pogo_orthogonal.POGO`): one step on a stack of 512 orthonormal 32 × 64 matrices, the stack
  split across ranks (``distributed=True``);
* **sweep**: ``poly_sweep("adam", 4, 2000)`` over a 128 × 128 (β₁, β₂) grid, cells split across ranks
  (``distributed=True``), torch reference path (``THEORYBOOK_CPU_FUSED=0``, so the comparison is of sharding, not of
  the compiled loop).

One process runs the same work (full batch, whole stack, whole grid) at 1 thread and at 2 threads: on a 2-core
machine, 2 processes × 1 thread and 1 process × 2 threads use the same cores, so the ratio says whether sharding
beats intra-op threading there. Writes bench/results/distributed.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import socket
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

WORLD = 2


def _workloads(rank: int, world: int, steps_sweep: int):
    """name → zero-argument callable doing one unit of work for this rank (world = 1: the whole of it)."""
    os.environ["THEORYBOOK_CPU_FUSED"] = "0"
    from theorybook.dash_shampoo import Shampoo
    from theorybook.pogo_orthogonal import POGO, random_orthonormal
    from theorybook.sweep import poly_sweep

    distributed = world > 1
    gen = torch.Generator().manual_seed(0)
    X, Y = torch.randn(256, 256, generator=gen), torch.randn(256, 256, generator=gen)
    torch.manual_seed(0)
    net = torch.nn.Sequential(*[m for _ in range(3) for m in (torch.nn.Linear(256, 256), torch.nn.Tanh())],
                              torch.nn.Linear(256, 256))
    model = torch.nn.parallel.DistributedDataParallel(net) if distributed else net
    sh = Shampoo(net.parameters(), lr=1e-3, block_size=64, inv_root_freq=1, method="ndb", iters=10,
                 distributed=distributed)
    xs, ys = X[rank::world], Y[rank::world]

    def shampoo():
        sh.zero_grad()
        torch.nn.functional.mse_loss(model(xs), ys).backward()
        sh.step()

    W = torch.nn.Parameter(random_orthonormal(512, 32, 64, generator=torch.Generator().manual_seed(1),
                                              dtype=torch.float32, device="cpu"))
    G = torch.randn(512, 32, 64, generator=torch.Generator().manual_seed(2))
    po = POGO([W], 1e-2, distributed=distributed)

    def pogo():
        W.grad = G.clone()
        po.step()

    b = torch.linspace(0.02, 0.98, 128, dtype=torch.float64)

    def sweep():
        poly_sweep("adam", 4, steps_sweep, x0=1.0, lr=1e-3, beta1=b[:, None], beta2=b[None, :], threshold=1e-100,
                   tail=steps_sweep // 5, dtype=torch.float64, device="cpu", distributed=distributed)

    return {"Shampoo step": shampoo, "POGO step": pogo, "sweep 128² × steps": sweep}


def _timed_rounds(work: dict, repeats: int, barrier) -> dict[str, float]:
    out = {}
    for name, fn in work.items():
        fn()  # warm
        ts = []
        for _ in range(repeats):
            barrier()
            t0 = time.perf_counter()
            fn()
            barrier()
            ts.append(time.perf_counter() - t0)
        out[name] = statistics.median(ts)
    return out


def _worker(rank: int, port: int, out: str, repeats: int, steps_sweep: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=300))
    res = _timed_rounds(_workloads(rank, WORLD, steps_sweep), repeats, dist.barrier)
    if rank == 0:
        pathlib.Path(out).write_text(json.dumps(res))
    dist.barrier()
    os._exit(0)  # leave without tearing down gloo under a DDP reducer (see tests/test_optim_distributed.py)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "distributed.json"))
    a = ap.parse_args(argv)
    steps_sweep = 200 if a.quick else 2000
    reps = 2 if a.quick else a.repeats
    if not (dist.is_available() and dist.is_gloo_available()):
        print("torch.distributed with gloo is not available: nothing to time")
        return 0
    info = machine_info()
    single = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        single[threads] = _timed_rounds(_workloads(0, 1, steps_sweep), reps, lambda: None)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rank0.json")
        ctx = mp.spawn(_worker, args=(_free_port(), path, reps, steps_sweep), nprocs=WORLD, join=False,
                       start_method="spawn")
        deadline = time.monotonic() + 900
        while not ctx.join(timeout=2):
            if time.monotonic() > deadline:
                for p in ctx.processes:
                    p.kill()
                print("the distributed workers did not finish within 900 s")
                return 1
        multi = json.loads(pathlib.Path(path).read_text())
    rows = []
    print(f"{'work':<22}{'1 proc × 1 thr':>16}{'1 proc × 2 thr':>16}{'2 procs × 1 thr':>17}{'vs 1×1':>9}{'vs 1×2':>9}")
    for name in multi:
        r = {"work": name, "one_process_1_thread_s": single[1][name], "one_process_2_threads_s": single[2][name],
             "two_processes_1_thread_s": multi[name],
             "speedup_vs_1x1": single[1][name] / multi[name], "speedup_vs_1x2": single[2][name] / multi[name]}
        rows.append(r)
        print(f"{name:<22}{1e3 * single[1][name]:>14.1f}ms{1e3 * single[2][name]:>14.1f}ms"
              f"{1e3 * multi[name]:>15.1f}ms{r['speedup_vs_1x1']:>8.2f}×{r['speedup_vs_1x2']:>8.2f}×")
    info["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    res = {"benchmark": "distributed (gloo, 2 CPU processes) vs one process", "machine": info, "repeats": reps,
           "sweep_steps": steps_sweep, "rows": rows}
    if not a.quick:
        pathlib.Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(a.out).write_text(json.dumps(res, indent=1) + "\n")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
