"""`train --window T --align-window A` end to end: the checkpoint remembers both, and its evaluation scores the
same target windows as a baseline evaluated at another window on the same alignment."""
import json

import numpy as np
import pytest

from stgnn_diag.cli import main
from stgnn_diag.training import CheckpointError, evaluate

from .test_engine import TINY


def test_a_long_window_trains_and_scores_on_the_aligned_targets(tmp_path, metr_la_root, capsys):
    out = tmp_path / "run"
    argv = ["train", "--model", TINY["model"], "--window", "24", "--align-window", "48", "--out", str(out),
            "--data-root", str(metr_la_root), "--max-windows", "64", "--max-epochs", "1",
            "--limit-train-batches", "2", "--batch-size", "8", "--set", "hidden_size=8", "--set", "heads=2", "--no-baselines", "--no-progress"]
    assert main(argv) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["window"], metrics["align_window"]) == (24, 48)
    ckpt = out / "checkpoints" / "last.ckpt"
    a = evaluate(checkpoint=ckpt, data_root=metr_la_root, max_windows=64, progress=False,
                 save_predictions=tmp_path / "model.npz")
    assert (a["window"], a["align_window"]) == (24, 48)
    b = evaluate("last_value", data_root=metr_la_root, max_windows=64, progress=False, window=12, align_window=48,
                 save_predictions=tmp_path / "baseline.npz")
    # window starts differ by the input lengths; the targets they lead to are the same steps
    np.testing.assert_array_equal(np.load(tmp_path / "model.npz")["window_starts"] + 24,
                                  np.load(tmp_path / "baseline.npz")["window_starts"] + 12)
    with pytest.raises(CheckpointError, match="reads 24 input steps"):
        evaluate(checkpoint=ckpt, data_root=metr_la_root, window=12, progress=False)
