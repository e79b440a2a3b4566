"""The training loader's place in the epoch survives a checkpoint: a resumed epoch sees exactly the batches the
uninterrupted one would have, and the epochs after it keep the uninterrupted order."""
import torch
from torch.utils.data import RandomSampler

from stgnn_diag.training.data import _EpochBatchSampler


def _sampler(seed=0, n=50, batch=4):
    return _EpochBatchSampler(RandomSampler(range(n), generator=torch.Generator().manual_seed(seed)), batch, True)


def _epochs(sampler, count):
    return [list(sampler) for _ in range(count)]


def test_resume_mid_epoch_continues_the_same_order():
    reference = _epochs(_sampler(), 3)  # three uninterrupted epochs
    a = _sampler()
    first = list(a)
    partial = []
    for batch in a:  # epoch 1 interrupted after 5 batches (iterate, then abandon the iterator)
        partial.append(batch)
        if len(partial) == 5:
            break
    state = a.state(epoch=1, batches_done=5, epoch_complete=False)
    b = _sampler(seed=123)  # a fresh process: its own generator, whatever its seed
    b.resume(state)
    rest = list(b)
    assert first == reference[0] and partial + rest == reference[1]
    assert list(b) == reference[2]


def test_resume_after_a_complete_epoch_starts_the_next_one():
    reference = _epochs(_sampler(), 3)
    a = _sampler()
    _epochs(a, 2)
    b = _sampler(seed=7)
    b.resume(a.state(epoch=1, batches_done=12, epoch_complete=True))
    assert list(b) == reference[2]


def test_epochs_cut_short_by_a_batch_limit_resume_too():
    # limit_train_batches: Lightning stops iterating after k batches, the sampler never reaches its end
    def short_epochs(s, k, count):
        out = []
        for _ in range(count):
            it = iter(s)
            out.append([next(it) for _ in range(k)])
        return out

    reference = short_epochs(_sampler(), 3, 3)
    a = _sampler()
    short_epochs(a, 3, 1)
    it = iter(a)
    done = [next(it)]  # epoch 1: one batch, then interrupted
    b = _sampler(seed=5)
    b.resume(a.state(epoch=1, batches_done=1, epoch_complete=False))
    it = iter(b)
    assert done + [next(it), next(it)] == reference[1]
    assert short_epochs(b, 3, 1) == [reference[2]]
