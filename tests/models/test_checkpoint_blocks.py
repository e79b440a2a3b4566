"""``checkpoint_blocks=True`` changes memory, not the result: same outputs and gradients as keeping activations."""
import pytest
import torch

from stgnn_diag.models import TASAttentionModel, TTSAttentionModel
from stgnn_diag.zoo.entry import LARGE_GRAPH_NODES

import stgnn_diag


@pytest.mark.parametrize("cls,layers", [(TASAttentionModel, dict(n_layers=2)),
                                        (TTSAttentionModel, dict(temporal_layers=2, spatial_layers=2))])
def test_the_same_outputs_and_gradients_as_plain_autograd(cls, layers):
    n = 6
    kw = dict(input_size=1, horizon=3, n_nodes=n, hidden_size=8, heads=2, window=5, dropout=0.2, diag="dropout",
              diag_p=0.3, attn_dropout=0.1, **layers)
    torch.manual_seed(0)
    plain = cls(**kw).train()
    ckpt = cls(**kw, checkpoint_blocks=True).train()
    ckpt.load_state_dict(plain.state_dict())
    ei = torch.tensor([list(range(n)), [(i + 1) % n for i in range(n)]])
    x = torch.randn(2, 5, n, 1)
    outs, grads = [], []
    for model in (plain, ckpt):
        torch.manual_seed(1)  # the same dropout masks in both
        y = model(x, ei)
        y.square().mean().backward()
        outs.append(y.detach())
        grads.append({k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None})
    torch.testing.assert_close(outs[0], outs[1])
    assert grads[0].keys() == grads[1].keys() and grads[0]
    for k in grads[0]:
        torch.testing.assert_close(grads[0][k], grads[1][k], msg=k)


def test_paper_tas_checkpoints_its_blocks_on_large_graphs_only():
    small = stgnn_diag.create_model("paper_tas", n_nodes=LARGE_GRAPH_NODES - 1, hidden_size=8)
    large = stgnn_diag.create_model("paper_tas", n_nodes=LARGE_GRAPH_NODES, hidden_size=8)
    assert not small.checkpoint_blocks and large.checkpoint_blocks
    assert large.config["model_kwargs"]["checkpoint_blocks"] is True
