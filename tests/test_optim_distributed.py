"""Shampoo, POGO and the sweep engine under torch.distributed (gloo, 2 CPU processes via torch.multiprocessing)
vs one process.

Each rank trains a DDP-wrapped model on its half of a batch (DDP averages the gradients, so every rank holds the
full-batch mean gradient); Shampoo shards its stacked inverse roots across the ranks and POGO its stack of
matrices, both then ``all_gather``. The parameters must equal a single-process run on the full batch to float64
round-off. ``poly_sweep(..., distributed=True)`` splits the cells between the ranks and gathers the reductions:
equal to the one-process sweep. One spawn runs everything, to keep process start-up (the dominant cost) to one.
"""

from __future__ import annotations

import datetime
import os
import socket
import time

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from theorybook.dash_shampoo import Shampoo
from theorybook.pogo_orthogonal import POGO, random_orthonormal
from theorybook.sweep import poly_sweep

F64 = torch.float64
STEPS = 4
WORLD = 2


def _shampoo_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 11), torch.nn.Tanh(), torch.nn.Linear(11, 3)).to(F64)


def _data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 6, generator=g, dtype=F64), torch.randn(16, 3, generator=g, dtype=F64)


class _Stiefel(torch.nn.Module):
    """A stack of 5 row-orthonormal 3 × 4 matrices applied to a batch: y_b = X_b x."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(2)
        self.X = torch.nn.Parameter(random_orthonormal(5, 3, 4, generator=gen, dtype=F64, device="cpu"))
        self.head = torch.nn.Parameter(torch.randn(3, generator=gen, dtype=F64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bpn,kn->kbp", self.X, x) @ self.head


def _pogo_data():
    g = torch.Generator().manual_seed(3)
    return torch.randn(16, 4, generator=g, dtype=F64), torch.randn(16, 5, generator=g, dtype=F64)


def _train(model, opt, x, y, steps=STEPS):
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def _shampoo_opt(params, distributed):
    # the paper's Newton–DB roots, named: the default (EVD) is reproducible across ranks only to eigh's round-off
    return Shampoo(params, lr=0.05, block_size=4, inv_root_freq=2, weight_decay=0.01, method="ndb", iters=12,
                   distributed=distributed)


def _pogo_opt(model, distributed):
    return POGO([{"params": [model.X]}, {"params": [model.head], "orthogonal": False}], 0.05, base="vadam",
                lambda_every=2, distributed=distributed)


def _sweep(distributed: bool):
    """Adam on x⁴/4 over a 7 × 5 (lr, β₂) grid (35 cells: not a multiple of the world size, so a share is padded)."""
    st = poly_sweep("adam", 4, 40, x0=1.0, lr=torch.logspace(-3, 0.5, 7, dtype=F64)[:, None], beta1=0.9,
                    beta2=torch.tensor([0.5, 0.9, 0.99, 0.999, 0.9999], dtype=F64), threshold=1e-3, tail=5,
                    dtype=F64, device="cpu", distributed=distributed)
    return list(st[:5])


def _worker(rank: int, port: int, out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=120))
    try:
        results = {}
        x, y = _data()
        model = torch.nn.parallel.DistributedDataParallel(_shampoo_model())
        results["shampoo"] = _train(model, _shampoo_opt(model.parameters(), True), x[rank::WORLD], y[rank::WORLD])
        x, y = _pogo_data()
        inner = _Stiefel()
        model = torch.nn.parallel.DistributedDataParallel(inner)
        results["pogo"] = _train(model, _pogo_opt(inner, True), x[rank::WORLD], y[rank::WORLD])
        results["sweep"] = _sweep(True)
        torch.save(results, f"{out}/rank{rank}.pt")
        dist.barrier()
    except BaseException:
        dist.destroy_process_group()
        raise
    # Leave without running destructors: tearing down a gloo process group that a DDP Reducer still references
    # can deadlock (the group's worker thread waits for the GIL that the destructor holds). The results are on
    # disk and both ranks have passed the barrier, so nothing is lost.
    os._exit(0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="torch.distributed/gloo absent")
def test_two_gloo_processes_equal_one_process(tmp_path):
    ctx = mp.spawn(_worker, args=(_free_port(), str(tmp_path)), nprocs=WORLD, join=False, start_method="spawn")
    deadline = time.monotonic() + 300  # never hang the suite: a stuck rank fails the test instead
    while not ctx.join(timeout=2):
        if time.monotonic() > deadline:
            for p in ctx.processes:
                p.kill()
            pytest.fail("the distributed workers did not finish within 300 s")
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(WORLD)]

    x, y = _data()
    model = _shampoo_model()
    single_shampoo = _train(model, _shampoo_opt(model.parameters(), False), x, y)
    x, y = _pogo_data()
    inner = _Stiefel()
    single_pogo = _train(inner, _pogo_opt(inner, False), x, y)

    single_sweep = _sweep(False)
    for r, res in enumerate(ranks):
        for a, b in zip(res["sweep"], single_sweep, strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype, r
            assert torch.equal(a, b) or torch.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), r

    for name, single in (("shampoo", single_shampoo), ("pogo", single_pogo)):
        for r, res in enumerate(ranks):
            for a, b in zip(res[name], single, strict=True):
                assert torch.allclose(a, b, rtol=1e-10, atol=1e-12), (name, r, float((a - b).abs().max()))
        start = [p.detach() for p in (_shampoo_model().parameters() if name == "shampoo"
                                      else _Stiefel().parameters())]
        assert not all(torch.allclose(a, b) for a, b in zip(single, start, strict=True))  # it did move
