"""Where each optimizer wins (issue 60 item 4): DASH (ours) against pytorch_optimizer's DASH, SOAP and Shampoo,
torch's Adam, AdamW and Muon (+ AdamW for the non-matrix parameters), side by side, at defaults and lr-tuned.

    python bench/optim_where_it_wins.py            # three tasks, 3 seeds, pilot + race (≈ 10 min of CPU)
    python bench/optim_where_it_wins.py --quick    # seconds: the same code on 1 seed, short caps (smoke test)
    python bench/optim_where_it_wins.py --tasks digits-mlp --seeds 0,1
    # the committed run: one process per task side by side (each one thread), then merged
    for t in digits-mlp digits-cnn sort-transformer; do
        python bench/optim_where_it_wins.py --tasks $t --out /tmp/part_$t.json & done; wait
    python bench/optim_where_it_wins.py --merge /tmp/part_digits-mlp.json /tmp/part_digits-cnn.json \
        /tmp/part_sort-transformer.json

**Tasks (growing size; data shipped with scikit-learn or generated), fixed before measuring:**

* ``digits-mlp`` — sklearn's bundled 8×8 digits, standardised (``digits_problem``); 597 held out (permutation
  seed 0), minibatches of 128 of the other 1,200; 64 → 64 → 10, tanh (4,810 parameters). Target: held-out
  cross-entropy ≤ 0.15 (bench/optim_dash_defaults.py's race), evaluated every 5 steps, at most 600 steps.
* ``digits-cnn`` — the same data as 1 × 8 × 8 images; conv 3×3 (1 → 16), ReLU, conv 3×3 (16 → 32), ReLU, 2×2 max
  pool, linear 512 → 10 (9,930 parameters). The conv filters are 2-D parameters (out × in·3·3) reshaped in the
  forward, as the README advises for POGO, so every optimizer (Muon too) sees matrices. Target held-out CE ≤ 0.15,
  every 5 steps, at most 600 steps.
* ``sort-transformer`` — sort 8 tokens from a vocabulary of 10 (generated: uniform tokens, the target at each
  position is the sorted sequence's token there); a 2-layer post-norm encoder, d = 32, 4 heads, feed-forward 64,
  no dropout, learned positions, linear head (17,994 parameters); batches of 64 drawn fresh each step from the
  run's seed; 1,024 held-out sequences (seed 12345). Target: held-out per-token cross-entropy ≤ 0.05 (set from
  one Adam pilot on seed 9001 before measuring: 0.30 was reached in 90 steps, too easy), every 10 steps, at
  most 1,000 steps.

**Optimizers.** ``ours`` = ``theorybook.optim.DASH()`` (block 64, EVD roots every 10 steps, eps 1e-4);
``pto.DASH``, ``pto.SOAP``, ``pto.Shampoo`` = pytorch_optimizer 4.1.0's; ``Adam``, ``AdamW`` = torch.optim's;
``Muon+AdamW`` = ``torch.optim.Muon`` on every hidden 2-D weight (not the embeddings, not the output layer) and
``torch.optim.AdamW`` on the rest, as Muon's authors use it. Defaults = each constructor's own (lr 1e-3 for all
but SOAP's 3e-3).

**Tuning, the same rule for every optimizer:** lr = default × m, m ∈ {0.3, 1, 3, 10, 30, 100} (Muon+AdamW: both
lrs × m), one pilot run per m on pilot seed 9001 (data order and init; 9001 is not a measuring seed), chosen by the
fewest steps to the task's target (ties → the m nearest 1); a pilot run stops once it is past the best count so
far (it cannot win). No m reaching the target → the default is kept and marked ``tuned: none reached``.

**Measuring:** seeds 0, 1, 2 (init and data order); for each task and seed, every (optimizer, defaults|tuned) arm
runs once in turn (interleaved, so load from other processes hits all alike). Clock: the calling thread's CPU
time of the training steps only (zero_grad, forward, backward, step; held-out evaluation and data generation
excluded), torch on one intra-op thread (``torch.set_num_threads(1)``). Reported per arm: steps to target (exact,
median over seeds; ``None`` if it never got there within the cap — a seed that misses counts as ∞), median CPU
seconds to target, and both as ratios to ``ours`` in the same setting. The machine is a shared, loaded 2-core
CPU: step counts are exact, CPU times are medians and carry noise of ~10 %.

Writes bench/results/optim_where_it_wins.json with the settings, seeds, thread count and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import statistics
import sys
import time

import torch
from _machine import machine_info, write_results  # bench/ is on sys.path when a bench script runs

from theorybook.dash_shampoo.experiment import digits_problem
from theorybook.optim import DASH

ARMS = ("ours", "pto.DASH", "pto.SOAP", "pto.Shampoo", "Adam", "AdamW", "Muon+AdamW")
DEFAULT_LR = {"ours": 1e-3, "pto.DASH": 1e-3, "pto.SOAP": 3e-3, "pto.Shampoo": 1e-3, "Adam": 1e-3,
              "AdamW": 1e-3, "Muon+AdamW": 1e-3}
GRID = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
PILOT_SEED = 9001
SEEDS = (0, 1, 2)
HOLDOUT = 597


# ------------------------------------------------------------------------------------------------------ tasks
class Conv2dMat(torch.nn.Module):
    """3×3 conv, padding 1, whose filters are a 2-D parameter (out × in·9) viewed as (out, in, 3, 3)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        conv = torch.nn.Conv2d(cin, cout, 3, padding=1)
        self.weight = torch.nn.Parameter(conv.weight.detach().reshape(cout, -1).clone())
        self.bias = torch.nn.Parameter(conv.bias.detach().clone())
        self.shape = tuple(conv.weight.shape)

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.weight.view(self.shape), self.bias, padding=1)


class SortNet(torch.nn.Module):
    def __init__(self, vocab=10, length=8, d=32, heads=4, ff=64, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(0.02 * torch.randn(length, d))
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x) + self.pos))


class Task:
    """A task: model factory, per-step batches for a seed, held-out set, loss, target, caps."""

    def __init__(self, name: str, quick: bool = False):
        self.name = name
        if name in ("digits-mlp", "digits-cnn"):
            X, y = digits_problem()
            perm = torch.randperm(X.shape[0], generator=torch.Generator().manual_seed(0))
            self.Xh, self.yh = X[perm[:HOLDOUT]], y[perm[:HOLDOUT]]
            self.Xt, self.yt = X[perm[HOLDOUT:]], y[perm[HOLDOUT:]]
            if name == "digits-cnn":
                self.Xh, self.Xt = self.Xh.view(-1, 1, 8, 8), self.Xt.view(-1, 1, 8, 8)
            self.target, self.eval_every, self.max_steps = 0.15, 5, 600
        elif name == "sort-transformer":
            gen = torch.Generator().manual_seed(12345)
            self.Xh = torch.randint(0, 10, (1024, 8), generator=gen)
            self.yh = self.Xh.sort(-1).values
            self.target, self.eval_every, self.max_steps = 0.05, 10, 1000
        else:
            raise ValueError(name)
        if quick:
            self.max_steps = 20

    def model(self, seed: int) -> torch.nn.Module:
        torch.manual_seed(seed)
        if self.name == "digits-mlp":
            return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 10))
        if self.name == "digits-cnn":
            return torch.nn.Sequential(Conv2dMat(1, 16), torch.nn.ReLU(), Conv2dMat(16, 32), torch.nn.ReLU(),
                                       torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(512, 10))
        return SortNet()

    def batches(self, seed: int):
        """An iterator of training batches for this seed (data order)."""
        gen = torch.Generator().manual_seed(10_000 + seed)
        if self.name.startswith("digits"):
            while True:
                perm = torch.randperm(self.Xt.shape[0], generator=gen)
                for i in range(0, self.Xt.shape[0] - 127, 128):
                    idx = perm[i:i + 128]
                    yield self.Xt[idx], self.yt[idx]
        while True:
            x = torch.randint(0, 10, (64, 8), generator=gen)
            yield x, x.sort(-1).values

    @staticmethod
    def loss(net, x, y):
        out = net(x)
        return torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))

    def heldout(self, net) -> float:
        with torch.no_grad():
            return float(self.loss(net, self.Xh, self.yh))


def hidden_matrices(net: torch.nn.Module) -> set[int]:
    """ids of the 2-D weights Muon takes: every 2-D parameter except embeddings, positions and the output layer."""
    last = [m for m in net.modules() if isinstance(m, torch.nn.Linear)][-1]
    skip = {id(last.weight)}
    for m in net.modules():
        if isinstance(m, torch.nn.Embedding):
            skip.add(id(m.weight))
    if isinstance(net, SortNet):
        skip.add(id(net.pos))
    return {id(p) for p in net.parameters() if p.ndim == 2 and id(p) not in skip}


class Pair:
    """Muon on the hidden matrices, AdamW on the rest, stepped together."""

    def __init__(self, net, lr_mult: float):
        mats = hidden_matrices(net)
        self.opts = [torch.optim.Muon([p for p in net.parameters() if id(p) in mats], lr=1e-3 * lr_mult),
                     torch.optim.AdamW([p for p in net.parameters() if id(p) not in mats], lr=1e-3 * lr_mult)]

    def zero_grad(self, set_to_none=True):
        for o in self.opts:
            o.zero_grad(set_to_none=set_to_none)

    def step(self):
        for o in self.opts:
            o.step()


def make_optimizer(arm: str, net, lr_mult: float):
    import pytorch_optimizer as pto
    lr = DEFAULT_LR[arm] * lr_mult
    ps = list(net.parameters())
    if arm == "ours":
        return DASH(ps, lr=lr)
    if arm == "pto.DASH":
        return pto.DASH(ps, lr=lr)
    if arm == "pto.SOAP":
        return pto.SOAP(ps, lr=lr)
    if arm == "pto.Shampoo":
        return pto.Shampoo(ps, lr=lr)
    if arm == "Adam":
        return torch.optim.Adam(ps, lr=lr)
    if arm == "AdamW":
        return torch.optim.AdamW(ps, lr=lr)
    if arm == "Muon+AdamW":
        return Pair(net, lr_mult)
    raise ValueError(arm)


def run(task: Task, arm: str, lr_mult: float, seed: int, stop_after: int | None = None) -> dict:
    """Train until held-out CE ≤ target (checked every eval_every steps), the cap, divergence, or ``stop_after``.
    Returns steps (None if not reached), CPU seconds of the training steps, last held-out CE."""
    net = task.model(seed)
    opt = make_optimizer(arm, net, lr_mult)
    data = task.batches(seed)
    cap = task.max_steps if stop_after is None else min(task.max_steps, stop_after)
    cpu, ce = 0.0, task.heldout(net)
    for t in range(cap + 1):
        if t % task.eval_every == 0:
            ce = task.heldout(net)
            if not math.isfinite(ce):
                return {"steps": None, "cpu_s": cpu, "ce": ce, "diverged": True}
            if ce <= task.target:
                return {"steps": t, "cpu_s": cpu, "ce": ce}
        if t == cap:
            break
        x, y = next(data)
        c0 = time.thread_time()
        try:
            opt.zero_grad(set_to_none=True)
            task.loss(net, x, y).backward()
            opt.step()
        except RuntimeError:  # e.g. pytorch_optimizer.Shampoo's SVD of non-finite statistics at a large lr
            return {"steps": None, "cpu_s": cpu, "ce": math.nan, "diverged": True}
        cpu += time.thread_time() - c0
    return {"steps": None, "cpu_s": cpu, "ce": ce}


def tune(task: Task, arm: str, grid) -> dict:
    """Pilot on PILOT_SEED: fewest steps to target over the lr grid (ties → m nearest 1); prunes hopeless runs."""
    best, trials = None, {}
    for m in sorted(grid, key=lambda m: (abs(math.log(m)), m)):  # nearest-1 first, so ties keep it
        r = run(task, arm, m, PILOT_SEED, stop_after=None if best is None else trials[best]["steps"] - 1)
        trials[m] = r
        if r["steps"] is not None and (best is None or r["steps"] < trials[best]["steps"]):
            best = m
    return {"lr_mult": best if best is not None else 1.0, "reached": best is not None,
            "lr": DEFAULT_LR[arm] * (best if best is not None else 1.0),
            "pilot_steps": {str(m): trials[m]["steps"] for m in trials}}


def med_steps(xs):
    vals = [math.inf if x is None else x for x in xs]
    m = statistics.median(vals)
    return None if math.isinf(m) else m


def summarise(runs: dict, arms) -> dict:
    rows = {}
    for setting in ("defaults", "tuned"):
        for arm in arms:
            rs = runs[setting][arm]
            steps = med_steps([r["steps"] for r in rs])
            cpu = statistics.median([r["cpu_s"] for r in rs if r["steps"] is not None]) if steps is not None else None
            rows.setdefault(setting, {})[arm] = {"steps_median": steps, "cpu_s_median": cpu,
                                                 "reached": sum(r["steps"] is not None for r in rs),
                                                 "per_seed": rs}
        ours = rows[setting]["ours"]
        for arm in arms:
            r = rows[setting][arm]
            ok = r["steps_median"] is not None and ours["steps_median"] is not None
            r["steps_over_ours"] = r["steps_median"] / ours["steps_median"] if ok else None
            r["cpu_over_ours"] = r["cpu_s_median"] / ours["cpu_s_median"] if ok else None
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 seed, 20-step caps, grid {1, 3}: a smoke run")
    ap.add_argument("--tasks", default="digits-mlp,digits-cnn,sort-transformer")
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "optim_where_it_wins.json"))
    ap.add_argument("--merge", nargs="+", default=None,
                    help="combine the task results of these JSON files (one process per task, run side by side "
                         "on the shared machine) into --out")
    args = ap.parse_args(argv)
    if args.merge:
        parts = [json.loads(pathlib.Path(f).read_text()) for f in args.merge]
        out = parts[0]
        out["parts"] = [{"tasks": list(q["tasks"]), "machine": q["machine"], "wall_s": q["wall_s"],
                         "cpu_s_process": q["cpu_s_process"]} for q in parts]
        for q in parts[1:]:
            out["tasks"].update(q["tasks"])
        pathlib.Path(args.out).write_text(json.dumps(out, indent=1, default=str))
        print(f"merged {len(parts)} parts into {args.out}")
        return 0
    torch.set_num_threads(1)
    arms = args.arms.split(",")
    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    grid = (1.0, 3.0) if args.quick else GRID
    out = {"machine": machine_info(), "threads": torch.get_num_threads(),
           "clock": "calling thread's CPU time (time.thread_time) of the training steps only",
           "load_note": "shared 2-core CPU, load average ≈ 12–15 from other users during the run; arms interleaved "
                        "per seed; step counts exact, CPU times medians over seeds",
           "quick": args.quick, "grid_lr_multipliers": grid, "default_lr": DEFAULT_LR, "pilot_seed": PILOT_SEED,
           "seeds": seeds, "settings": __doc__.split("**Tasks")[1].split("Writes bench")[0].strip(), "tasks": {}}
    t_start = time.time()
    for name in args.tasks.split(","):
        task = Task(name, quick=args.quick)
        tuned = {}
        for arm in arms:
            tuned[arm] = tune(task, arm, grid)
            print(f"[{name}] tune {arm:<11} m={tuned[arm]['lr_mult']:<4} pilot {tuned[arm]['pilot_steps']}",
                  flush=True)
        runs = {"defaults": {a: [] for a in arms}, "tuned": {a: [] for a in arms}}
        for seed in seeds:
            for arm in arms:
                for setting, m in (("defaults", 1.0), ("tuned", tuned[arm]["lr_mult"])):
                    if setting == "tuned" and m == 1.0:  # same run: reuse it (exact same steps; time re-measured
                        r = dict(runs["defaults"][arm][-1])  # would only add noise)
                    else:
                        r = run(task, arm, m, seed)
                    r["seed"] = seed
                    runs[setting][arm].append(r)
                    print(f"[{name}] seed {seed} {setting:<8} {arm:<11} steps {str(r['steps']):>5} "
                          f"cpu {r['cpu_s']:.2f}s ce {r['ce']:.3f}", flush=True)
        rows = summarise(runs, arms)
        out["tasks"][name] = {"target_heldout_ce": task.target, "eval_every": task.eval_every,
                              "max_steps": task.max_steps,
                              "parameters": sum(p.numel() for p in task.model(0).parameters()),
                              "tuning": tuned, **rows}
        for setting in ("defaults", "tuned"):
            for arm in arms:
                r = rows[setting][arm]
                so = "—" if r["steps_over_ours"] is None else f"{r['steps_over_ours']:.2f}"
                co = "—" if r["cpu_over_ours"] is None else f"{r['cpu_over_ours']:.2f}"
                print(f"  {name} {setting:<8} {arm:<11} steps {str(r['steps_median']):>6} ({so}) "
                      f"cpu {r['cpu_s_median']} ({co})", flush=True)
    write_results(out, args.out, t_start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
