"""``torch.compile`` on the zoo: does every entry compile as one graph, and what does it buy on this machine?

Two parts, printed as tables:

1. **Capture** (every native zoo entry, a 6-node toy graph, hidden 8, training mode): the number of graphs
   and graph breaks ``torch._dynamo.explain`` finds (1 and 0 mean ``torch.compile(fullgraph=True)`` works).
2. **Speed** (``--models``, real METR-LA training windows, batch ``--batch``, the real sensor graph): median
   seconds of one training step (forward, masked MAE, backward, AdamW) in eager mode and under
   ``torch.compile`` (``--backend``, default inductor), measured side by side in one process, with the
   one-off compile time. On the CPU the eager path uses sparse CSR supports and hand-written autograd
   Functions (split heads, short-row softmax) that the compiled graph replaces by dense / plain ops.

Usage::

    STGNN_DIAG_DATA=../shared/data python benchmarks/bench_compile.py
    python benchmarks/bench_compile.py --models tts_attn_penalty --batch 32 --steps 5 --device cuda
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch


def capture_table() -> list:
    import torch._dynamo as dynamo

    from stgnn_diag import create_model, list_models

    n = 6
    edges = torch.tensor([[0, 1, 2, 3, 4, 5, 0, 2, 3], [0, 1, 2, 3, 4, 5, 1, 3, 4]])
    rows = []
    for name in list_models(native=True):
        torch.manual_seed(0)
        model = create_model(name, n_nodes=n, hidden_size=8).train()
        u = torch.zeros(2, 12, 8)
        u[..., 0], u[..., 1] = 0.3, 1.0
        u = u[..., :model.exog_size] if model.exog_size else None
        ex = dynamo.explain(model)(torch.randn(2, 12, n, 1), edges, None, u)
        rows.append((name, ex.graph_count, ex.graph_break_count))
        dynamo.reset()
    return rows


def speed_rows(models, batch: int, steps: int, backend: str, device: str, data_root) -> list:
    from stgnn_diag import create_model
    from stgnn_diag.datasets import get_dataset, make_splits
    from stgnn_diag.metrics import masked_mae

    splits = make_splits(get_dataset("metr_la", data_root, download=False, progress=False), "dcrnn")
    b = {k: v.to(device) for k, v in splits.train.get_batch(torch.arange(batch)).items()}
    ei = splits.edge_index.to(device)
    ew = None if splits.edge_weight is None else splits.edge_weight.to(device)
    mean, std = float(splits.scaler.mean), float(splits.scaler.std)
    rows = []
    for name in models:
        torch.manual_seed(0)
        model = create_model(name, n_nodes=splits.n_nodes, hidden_size=32).to(device).train()
        u = b["u"][..., :model.exog_size] if model.exog_size else None
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def step(fn):
            opt.zero_grad(set_to_none=True)
            pred = fn(b["x"], ei, ew, u) * std + mean
            loss = masked_mae(pred, b["y"])
            loss.backward()
            opt.step()
            if device == "cuda":
                torch.cuda.synchronize()

        compiled = torch.compile(model, backend=backend, fullgraph=True)
        t0 = time.perf_counter()
        step(compiled)  # compiles (forward and backward graphs)
        compile_s = time.perf_counter() - t0
        step(model)
        times = {"eager": [], "compiled": []}
        for _ in range(steps):  # interleaved: load drift hits both alike
            for label, fn in (("eager", model), ("compiled", compiled)):
                t0 = time.perf_counter()
                step(fn)
                times[label].append(time.perf_counter() - t0)
        e, c = statistics.median(times["eager"]), statistics.median(times["compiled"])
        rows.append((name, e, c, e / c, compile_s))
        torch._dynamo.reset()
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=["tts_attn_penalty", "tas_attn_penalty"])
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--backend", default="inductor")
    p.add_argument("--device", default="cpu")
    p.add_argument("--data-root")
    p.add_argument("--no-capture", action="store_true", help="skip the capture table")
    args = p.parse_args(argv)
    print(f"torch {torch.__version__}, device {args.device}, threads {torch.get_num_threads()}")
    if not args.no_capture:
        print("\n| entry | graphs | graph breaks |\n|---|---|---|")
        for name, graphs, breaks in capture_table():
            print(f"| `{name}` | {graphs} | {breaks} |")
    print(f"\nTraining step, batch {args.batch}, hidden 32, METR-LA (median of {args.steps}, interleaved):\n")
    print(f"| model | eager s | compiled ({args.backend}) s | speed-up | compile s |\n|---|---|---|---|---|")
    for name, e, c, r, cs in speed_rows(args.models, args.batch, args.steps, args.backend, args.device,
                                        args.data_root):
        print(f"| `{name}` | {e:.3f} | {c:.3f} | {r:.2f}x | {cs:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
