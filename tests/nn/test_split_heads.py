"""split_heads against the plain permute/unbind: values, gradients, forward mode and vmap."""
import pytest
import torch
from torch.func import jacfwd, jacrev, vmap

from stgnn_diag.nn.split_heads import split_heads

SHAPE = (2, 4, 3, 3, 2, 5)  # b, t, n, 3, heads, dk


def reference(qkv):
    return tuple(p.contiguous() for p in qkv.permute(3, 0, 2, 4, 1, 5).unbind(0))


def test_values_and_layout():
    qkv = torch.randn(SHAPE, dtype=torch.float64)
    for got, ref in zip(split_heads(qkv), reference(qkv)):
        assert got.is_contiguous() and got.shape == (2, 3, 2, 4, 5)
        torch.testing.assert_close(got, ref, rtol=0, atol=0)


@pytest.mark.parametrize("used", [(0, 1, 2), (0, 2), (1,)])  # unused outputs get None gradients
def test_gradient_equals_autograd_of_the_reference(used):
    qkv = torch.randn(SHAPE, dtype=torch.float64, requires_grad=True)
    w = [torch.randn(2, 3, 2, 4, 5, dtype=torch.float64) for _ in range(3)]
    loss = lambda parts: sum((parts[j] * w[j]).sum() for j in used)  # noqa: E731
    (g,) = torch.autograd.grad(loss(split_heads(qkv)), qkv)
    (r,) = torch.autograd.grad(loss(reference(qkv)), qkv)
    torch.testing.assert_close(g, r, rtol=0, atol=0)
    assert torch.autograd.gradcheck(lambda z: split_heads(z), (qkv,))


def test_forward_mode_and_vmap():
    qkv = torch.randn(SHAPE, dtype=torch.float64)
    f = lambda z: torch.cat([p.flatten() for p in split_heads(z)])  # noqa: E731
    fr = lambda z: torch.cat([p.flatten() for p in reference(z)])  # noqa: E731
    torch.testing.assert_close(jacfwd(f)(qkv), jacfwd(fr)(qkv))
    torch.testing.assert_close(jacrev(f)(qkv), jacrev(fr)(qkv))
    batch = torch.randn(3, *SHAPE, dtype=torch.float64)
    torch.testing.assert_close(vmap(f)(batch), torch.stack([fr(b) for b in batch]))


def test_bad_shape():
    with pytest.raises(ValueError, match="3, heads, dk"):
        split_heads(torch.randn(2, 4, 3, 2, 2, 5))
