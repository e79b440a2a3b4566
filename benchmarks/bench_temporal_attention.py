"""Forward+backward time of TemporalAttention vs a torch.nn.MultiheadAttention layer (tsl's way).

The baseline mirrors ``tsl.nn.layers.MultiHeadAttention(axis='time')``: rearrange
``[b, t, n, f] -> [t, (b n), f]``, call ``nn.MultiheadAttention`` (tsl's default
``need_weights=True``), rearrange back, add the residual. The diagonal regularizers are passed
to it as a float ``attn_mask``. Both layers run in the same process, interleaved, at the METR-LA
shape (batch 16, T=12, N=207, d=64, 4 heads), timed round-robin so load drift hits all alike;
the script prints medians and ratios.

Usage: ``python benchmarks/bench_temporal_attention.py [--repeats 20] [--threads 2]``
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

from stgnn_diag.nn import TemporalAttention, diagonal_logit_bias


class MHATemporalAttention(nn.Module):
    """Temporal attention on ``[b, t, n, d]`` through ``nn.MultiheadAttention``, as tsl builds it."""

    def __init__(self, dim, heads, diag="none", diag_p=0.0, diag_penalty=0.0, need_weights=True):
        super().__init__()
        self.mha = nn.MultiheadAttention(dim, heads, batch_first=False)
        self.diag, self.diag_p, self.diag_penalty, self.need_weights = diag, diag_p, diag_penalty, need_weights

    def forward(self, x):
        b, t, n, d = x.shape
        seq = x.permute(1, 0, 2, 3).reshape(t, b * n, d)
        mask, _ = diagonal_logit_bias(t, self.diag, diag_p=self.diag_p, diag_penalty=self.diag_penalty,
                                      training=self.training, dtype=x.dtype)
        out, _ = self.mha(seq, seq, seq, attn_mask=mask, need_weights=self.need_weights)
        return x + out.reshape(t, b, n, d).permute(1, 0, 2, 3)


MODES = {"none": {}, "mask": {}, "dropout": {"diag_p": 0.1}, "penalty": {"diag_penalty": -0.05}}


def time_interleaved(layers, x, repeats):
    """Median fwd+bwd seconds per layer, timed round-robin (one call of each per round) so that
    machine-load drift hits every layer alike."""
    for layer in layers.values():  # warm-up
        for _ in range(3):
            layer(x).sum().backward()
    times = {k: [] for k in layers}
    for _ in range(repeats):
        for k, layer in layers.items():
            t0 = time.perf_counter()
            layer(x).sum().backward()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--nodes", type=int, default=207)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x = torch.randn(a.batch, a.steps, a.nodes, a.dim, requires_grad=True)
    print(f"shape [b={a.batch}, t={a.steps}, n={a.nodes}, d={a.dim}], heads={a.heads}, "
          f"threads={a.threads}, torch {torch.__version__}; median of {a.repeats} fwd+bwd (train mode)")
    print(f"{'mode':8s} {'ours ms':>9s} {'MHA ms':>9s} {'MHA(nw=F)':>10s} {'MHA/ours':>9s} "
          f"{'MHA(nw=F)/ours':>15s} {'ours vs none':>13s}")
    layers = {}
    for mode, kw in MODES.items():
        layers[(mode, "ours")] = TemporalAttention(a.dim, a.heads, diag=mode, **kw).train()
        layers[(mode, "mha")] = MHATemporalAttention(a.dim, a.heads, diag=mode, **kw).train()
        layers[(mode, "mha_nw")] = MHATemporalAttention(a.dim, a.heads, diag=mode, need_weights=False, **kw).train()
    t = time_interleaved(layers, x, a.repeats)
    base = t[("none", "ours")]
    for mode in MODES:
        ours, mha, nw = t[(mode, "ours")], t[(mode, "mha")], t[(mode, "mha_nw")]
        print(f"{mode:8s} {1e3 * ours:9.2f} {1e3 * mha:9.2f} {1e3 * nw:10.2f} {mha / ours:8.2f}x "
              f"{nw / ours:14.2f}x {100 * (ours / base - 1):+12.1f}%")


if __name__ == "__main__":
    main()
