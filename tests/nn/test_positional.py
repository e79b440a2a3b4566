import math

import pytest
import torch

from stgnn_diag.nn import PositionalEncoding


def test_tape_closed_form():
    pe = PositionalEncoding(4, 12, "tape")
    x = torch.zeros(1, 12, 1, 4)
    y = pe(x)[0, :, 0]
    for t in (0, 5, 11):
        for i in range(2):
            w = math.exp(-2 * i * math.log(10000.0) / 4) * 4 / 12
            assert y[t, 2 * i].item() == pytest.approx(math.sin(t * w), abs=1e-6)
            assert y[t, 2 * i + 1].item() == pytest.approx(math.cos(t * w), abs=1e-6)


@pytest.mark.parametrize("kind", ["sinusoidal", "tape", "learned"])
def test_too_long_sequence_is_refused(kind):
    pe = PositionalEncoding(8, 12, kind)
    assert pe(torch.zeros(2, 7, 3, 8)).shape == (2, 7, 3, 8)
    with pytest.raises(ValueError, match="max_len=12"):
        pe(torch.zeros(2, 13, 3, 8))


def test_unknown_kind():
    with pytest.raises(ValueError, match="Unknown positional"):
        PositionalEncoding(8, 12, "rotary")
