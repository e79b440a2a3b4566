"""Windows of different lengths scored on identical targets (``make_splits(..., align_window=T)``)."""
import numpy as np
import pytest

from stgnn_diag.datasets import make_splits

WINDOWS = (12, 24, 48, 96, 288)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["dcrnn", "paper"])
def test_every_window_has_the_same_targets_and_scaler(metr_la, protocol):
    ref = make_splits(metr_la, protocol, window=288, horizon=12)
    for t in WINDOWS:
        s = make_splits(metr_la, protocol, window=t, horizon=12, align_window=288)
        assert s.window == t and s.align_window == 288
        for split in ("train", "val", "test"):
            # target steps, recomputed here from the starts: s + window .. s + window + horizon
            np.testing.assert_array_equal(s[split].starts + t, ref[split].starts + 288)
        np.testing.assert_array_equal(s.test.targets(), ref.test.targets())
        assert s.scaler.mean == pytest.approx(ref.scaler.mean) and s.fit_stop == ref.fit_stop
        # each input is the `t` readings just before its targets
        batch = s.test[[0, len(s.test) - 1]]
        inputs = metr_la.speed[s.test.starts[[0, -1]][:, None] + np.arange(t)]
        np.testing.assert_array_equal(batch["x_mask"][..., 0].numpy(), inputs != 0)
        np.testing.assert_array_equal(s.test.raw_inputs()[:, -1], ref.test.raw_inputs()[:, -1])


def test_without_alignment_the_targets_differ(metr_la):
    """The control: each window's own protocol moves the split points, so the test targets are not the same."""
    a = make_splits(metr_la, window=12, horizon=12)
    b = make_splits(metr_la, window=288, horizon=12)
    assert len(a.test) != len(b.test)
    assert not np.array_equal(a.test.starts + 12, b.test.starts + 288)


def test_alignment_to_its_own_window_is_the_protocol(metr_la):
    a = make_splits(metr_la, window=48, horizon=12)
    b = make_splits(metr_la, window=48, horizon=12, align_window=48)
    for split in ("train", "val", "test"):
        np.testing.assert_array_equal(a[split].starts, b[split].starts)


def test_a_window_longer_than_the_alignment_is_refused(metr_la):
    with pytest.raises(ValueError, match="align_window=24 is shorter than window=48"):
        make_splits(metr_la, window=48, horizon=12, align_window=24)
    with pytest.raises(ValueError, match="align_window must be an integer"):
        make_splits(metr_la, window=12, horizon=12, align_window=0)
