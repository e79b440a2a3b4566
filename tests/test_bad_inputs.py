"""The command line's answers to bad input: one line naming the cause, a non-zero exit, nothing written."""
import pytest

from stgnn_diag.cli import main

#: (argv, what the one line must say)
CASES = [
    (["train", "--model", "tts_attn_none", "--batch-size", "0"], "batch_size must be a positive integer, got 0"),
    (["train", "--model", "tts_attn_none", "--lr", "-1"], "lr must be a positive finite number"),
    (["train", "--model", "tts_attn_none", "--accelerator", "gpu"], "torch sees no CUDA device"),
    (["train", "--model", "tts_attn_none", "--set", "hiden_size=8"], "did you mean 'hidden_size'"),
    (["train", "--model", "tts_attn_none", "--max-steps", "0"], "--max-steps must be a positive integer"),
    (["train", "--model", "tts_attn_none", "--checkpoint-every", "0"], "--checkpoint-every must be a positive integer"),
    (["bench", "--models", "no_such_*", "--dry-run"], "matches no zoo model"),
    (["bench", "--models", "tts_attn_none", "--set", "hiden_size=8", "--dry-run"], "did you mean 'hidden_size'"),
    (["sensitivity", "--model", "tas_attn_none", "--budget-mb", "0"], "--budget-mb must be a positive number"),
]


@pytest.mark.parametrize("argv, message", CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_one_line_and_exit_2(argv, message, tmp_path, capsys, metr_la_root):
    out = tmp_path / "run"
    extra = ["--out", str(out)] if argv[0] == "train" else ["--results", str(tmp_path / "r")] if argv[0] == "bench" \
        else ["--out", str(tmp_path / "s")]
    assert main(argv + extra + ["--data-root", str(metr_la_root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in err[0], err
    assert not (out / "config.json").exists()  # nothing left behind that would need --overwrite
