"""The zoo models compile as one graph (``torch.compile(fullgraph=True)``): no data-dependent checks and no
custom autograd Functions inside a compiled graph; compiled and eager give the same forward and gradients.

One entry per family and arrangement here (each capture costs ~1.5 s); ``benchmarks/bench_compile.py``
captures every entry and times the CPU steps."""
from __future__ import annotations

import pytest
import torch

from stgnn_diag import create_model

N = 6
EDGES = torch.tensor([[0, 1, 2, 3, 4, 5, 0, 2, 3], [0, 1, 2, 3, 4, 5, 1, 3, 4]])


def _inputs(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 12, N, 1, generator=g)
    u = torch.zeros(2, 12, 8)
    u[..., 0], u[..., 1] = 0.3, 1.0
    return x, (u[..., :model.exog_size] if model.exog_size else None)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("name", ["paper_tas", "tas_attn_dropout", "tts_attn_mask", "tts_template_none"])
def test_one_graph_in_training_and_evaluation(name):
    torch.manual_seed(0)
    model = create_model(name, n_nodes=N, hidden_size=8)
    x, u = _inputs(model)
    compiled = torch.compile(model, fullgraph=True, backend="eager")  # raises on any graph break
    model.train()
    compiled(x, EDGES, None, u).sum().backward()
    model.eval()
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, EDGES, None, u), model(x, EDGES, None, u))


def test_compiled_gradients_match_eager():
    """Through AOTAutograd (the compiler's own backward): the plain split and softmax that replace the custom
    Functions give the gradients the eager model gets from them."""
    torch.manual_seed(0)
    model = create_model("tas_attn_mask", n_nodes=N, hidden_size=8).double().train()
    x, u = _inputs(model)
    x, u = x.double(), u.double()
    model(x, EDGES, None, u).square().sum().backward()
    eager = {k: p.grad.clone() for k, p in model.named_parameters()}
    model.zero_grad()
    torch.compile(model, fullgraph=True, backend="aot_eager")(x, EDGES, None, u).square().sum().backward()
    for k, p in model.named_parameters():
        torch.testing.assert_close(p.grad, eager[k], msg=k)


@pytest.mark.parametrize("diag,kw", [("mask", {"causal": True}), ("dropout", {"diag_p": 0.3})])
def test_the_fused_attention_path_compiles(diag, kw):
    """The GPU path of TemporalAttention (``F.scaled_dot_product_attention`` with the regularizer as a float
    mask; ``backend="sdpa"`` takes it on the CPU too) in one graph, equal to eager (evaluation mode)."""
    from stgnn_diag.nn import TemporalAttention

    torch.manual_seed(0)
    layer = TemporalAttention(8, 2, diag=diag, backend="sdpa", **kw)
    x = torch.randn(2, 12, 3, 8)
    compiled = torch.compile(layer, fullgraph=True, backend="eager")
    layer.train()
    compiled(x).sum().backward()
    layer.eval()
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), layer(x))
