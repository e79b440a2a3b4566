"""Run inside a fresh virtual environment holding only the built wheel (no checkout on sys.path): the quick
start, the CLI, the cards, and every shipped tag scored on the first test windows of METR-LA.

Usage: python wheel_smoke.py   (with $STGNN_DIAG_DATA pointing at the folder holding metr_la/)
"""
import math
import subprocess
import sys
import sysconfig
from pathlib import Path

import stgnn_diag
from stgnn_diag.training import evaluate
from stgnn_diag.zoo.pretrained import pretrained_tags

WINDOWS = 64
site = Path(sysconfig.get_paths()["purelib"]).resolve()
where = Path(stgnn_diag.__file__).resolve()
assert site in where.parents, f"stgnn_diag imported from {where}, not from the venv's {site}"
print(f"ok  stgnn_diag {stgnn_diag.__version__} from {where.parent}")

# the README's quick start
from stgnn_diag.datasets import get_dataset, make_splits  # noqa: E402

data = get_dataset("metr_la")
splits = make_splits(data, "dcrnn")
batch = splits.test[0:8]
model = stgnn_diag.create_model("tas_attn_penalty", n_nodes=data.n_nodes)
y_hat = model(batch["x"], data.edge_index, data.edge_weight, u=batch["u"])
assert tuple(y_hat.shape) == (8, 12, 207, 1), y_hat.shape
print("ok  quick start: forward pass", tuple(y_hat.shape))

cli = [sys.executable, "-m", "stgnn_diag.cli"]
out = subprocess.run([*cli, "models"], capture_output=True, text=True, check=True).stdout
assert "tas_attn_none" in out and "paper_tas" in out, out
card = subprocess.run([*cli, "models", "--card", "tas_attn_none"], capture_output=True, text=True, check=True).stdout
assert "metr_la_cpu15" in card and "stgnn_diag/zoo/weights/" in card, card[:500]
print("ok  stgnn-diag models, stgnn-diag models --card")

# the tsl: / pygt: namespaces reach the zoo through the wheel's entry points (no tsl installed here: names only)
foreign = stgnn_diag.list_models(native=False)
assert "tsl:GraphWaveNetModel" in foreign and "pygt:A3TGCN2" in foreign, foreign
print(f"ok  {len(foreign)} tsl: / pygt: entries declared by the wheel's entry points")

shipped = stgnn_diag.list_models(pretrained=True)
assert len(shipped) == 21, shipped
base = evaluate("last_value", max_windows=WINDOWS, progress=False)["metrics"]
tags = [(name, tag) for name in shipped for tag in pretrained_tags(name)]
for name, tag in tags:
    m = evaluate(name, pretrained=tag, max_windows=WINDOWS, progress=False)["metrics"]
    assert math.isfinite(m["mae@12"]) and m["mae@12"] < base["mae@12"], (name, tag, m["mae@12"], base["mae@12"])
print(f"ok  {len(tags)} tags of {len(shipped)} entries load and beat last_value at step 12 on {WINDOWS} test "
      f"windows (last_value {base['mae@12']:.3f})")

run = subprocess.run(["stgnn-diag", "evaluate", "--model", "tas_attn_none", "--pretrained", "--max-windows",
                      str(WINDOWS), "--no-progress"], capture_output=True, text=True)
assert run.returncode == 0 and "mae" in run.stdout.lower(), run.stdout + run.stderr
print("ok  stgnn-diag evaluate --model tas_attn_none --pretrained")
