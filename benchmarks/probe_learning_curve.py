"""Learning-curve probe: train one zoo model with a plain loop and print test MAE every few steps.

A budget-design tool, not the engine: no Lightning, no checkpoints, no validation split. It trains on
shuffled canonical (DCRNN) training windows with AdamW, a linear warm-up then cosine decay over
``--steps``, gradient clipping 5 and the masked MAE in mph, and every ``--eval-every`` steps scores
every 5th test window (1,370 of 6,850) at steps 3 / 6 / 12 and pooled. It also prints the training
throughput (windows/s of the timed training steps only). Used to choose the ``cpu-15min`` budget's
model settings (models/results/probes.md).

Usage::

    python benchmarks/probe_learning_curve.py tas_attn_none --ov '{"hidden_size": 32}' --steps 900 \\
        --eval-every 150 --threads 1
    python benchmarks/probe_learning_curve.py pygt:TGCN2 --steps 300 --eval-every 100 --threads 1 \
        --graph self-loops      # the same model with the sensor graph reduced to self-loops
"""
import argparse
import json
import math
import time

import numpy as np
import torch

from stgnn_diag import create_model
from stgnn_diag.datasets import MetrLA, make_splits
from stgnn_diag.metrics import masked_mae
from stgnn_diag.training.malloc import keep_freed_memory


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--ov", default="{}", help="model overrides as JSON")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--bs", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--cov", type=int, default=8, help="covariate columns passed (8: time of day + weekday)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warm", type=int, default=50, help="warm-up steps")
    p.add_argument("--wd", type=float, default=1e-4)
    p.add_argument("--graph", choices=("sensor", "self-loops"), default="sensor",
                   help="self-loops: replace the sensor graph by one self-loop per node (ablates the message passing)")
    p.add_argument("--data-root", default=None)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    keep_freed_memory()
    torch.manual_seed(a.seed)
    sp = make_splits(MetrLA(a.data_root, progress=False), "dcrnn", window=12, horizon=12)
    m = create_model(a.model, **{**dict(n_nodes=sp.n_nodes, exog_size=a.cov), **json.loads(a.ov)})
    print("params", sum(q.numel() for q in m.parameters()), flush=True)
    ei, ew = sp.edge_index, sp.edge_weight.float()
    if a.graph == "self-loops":
        ei, ew = torch.arange(sp.n_nodes).repeat(2, 1), torch.ones(sp.n_nodes)
    mean, std = float(sp.scaler.mean), float(sp.scaler.std)
    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, weight_decay=a.wd)

    def lam(s):
        if s < a.warm:
            return (s + 1) / a.warm
        return 0.5 * (1 + math.cos(math.pi * min(1, (s - a.warm) / max(1, a.steps - a.warm)))) + 1e-3

    sch = torch.optim.lr_scheduler.LambdaLR(opt, lam)
    tr, te = sp.train, sp.test
    tidx = np.arange(0, len(te), 5)
    g = torch.Generator().manual_seed(a.seed)

    def fwd(b):
        u = b["u"][..., :a.cov] if a.cov else None
        return m(b["x"], ei, ew, u=u) * std + mean

    def evaluate():
        m.eval()
        with torch.no_grad():
            P, Y = [], []
            for i in range(0, len(tidx), 128):
                b = te[tidx[i:i + 128]]
                P.append(fwd(b))
                Y.append(b["y"])
            P, Y = torch.cat(P), torch.cat(Y)
            r = [float(masked_mae(P[:, s - 1], Y[:, s - 1])) for s in (3, 6, 12)] + [float(masked_mae(P, Y))]
        m.train()
        return r

    step, tt = 0, 0.0
    while step < a.steps:
        perm = torch.randperm(len(tr), generator=g)
        for i in range(0, len(perm) - a.bs + 1, a.bs):
            b = tr[perm[i:i + a.bs].numpy()]
            t1 = time.time()
            loss = masked_mae(fwd(b), b["y"])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 5.0)
            opt.step()
            sch.step()
            tt += time.time() - t1
            step += 1
            if step % a.eval_every == 0 or step == a.steps:
                r = evaluate()
                print(f"step {step} loss {loss.item():.3f} train {tt:.0f}s ({step * a.bs / tt:.1f} win/s) "
                      f"test MAE {r[0]:.3f}/{r[1]:.3f}/{r[2]:.3f} avg {r[3]:.3f}", flush=True)
            if step >= a.steps:
                break


if __name__ == "__main__":
    main()
