"""Optional integrations stay lazy, and a missing package gives an exact install instruction."""
from __future__ import annotations

import subprocess
import sys
import warnings
from importlib import metadata

import pytest
import torch

import stgnn_diag
from stgnn_diag.integrations import _require
from stgnn_diag.integrations._require import MissingDependencyError, require_pygt, require_tsl, wheel_index_url

LAZY = r"""
import sys
import stgnn_diag
names = stgnn_diag.list_models()
assert "tsl:GraphWaveNetModel" in names and "pygt:A3TGCN2" in names, names
import stgnn_diag.integrations, stgnn_diag.integrations.namespaces, stgnn_diag.integrations.pygt_layouts
import stgnn_diag.integrations.pygt_snapshots, stgnn_diag.integrations.pyg_batch
import stgnn_diag.integrations.calendar_codes
print(sorted({m.split(".")[0] for m in sys.modules} & {"tsl", "torch_geometric_temporal"}))
"""


def test_import_and_list_models_import_neither_tsl_nor_pygt():
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _expected_index() -> str:
    version = torch.__version__.split("+")[0]
    tag = "cpu" if torch.version.cuda is None else "cu" + torch.version.cuda.replace(".", "")
    return f"https://data.pyg.org/whl/torch-{version}+{tag}.html"


def test_missing_pygt_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch_geometric_temporal", None)  # makes the import fail
    with pytest.raises(MissingDependencyError) as err:
        stgnn_diag.create_model("pygt:A3TGCN2")
    msg = str(err.value)
    assert isinstance(err.value, ImportError)
    assert 'create_model("pygt:A3TGCN2")' in msg
    assert "torch-geometric-temporal==0.56.2" in msg
    assert 'pip install "stgnn-diag[pygt]"' in msg
    assert f"pip install torch-scatter torch-sparse -f {_expected_index()}" in msg
    assert "torch-${TORCH}+${CUDA}.html" in msg


def test_missing_tsl_or_torch_sparse_says_what_to_install(monkeypatch):
    torch_sparse = sys.modules["torch_sparse"]
    monkeypatch.setitem(sys.modules, "torch_sparse", None)
    with pytest.raises(MissingDependencyError) as err:
        stgnn_diag.create_model("tsl:DCRNNModel")
    assert "torch-sparse" in str(err.value) and 'pip install "stgnn-diag[tsl]"' in str(err.value)
    with pytest.raises(MissingDependencyError, match="torch-sparse"):
        require_pygt()
    monkeypatch.setitem(sys.modules, "torch_sparse", torch_sparse)
    monkeypatch.setitem(sys.modules, "tsl", None)
    with pytest.raises(MissingDependencyError, match=r"torch-spatiotemporal==0\.9\.5") as err:
        require_tsl()
    assert "unrelated" in str(err.value)  # the PyPI package named 'tsl' is another project


def test_impostor_tsl_package_is_detected(monkeypatch):
    real = metadata.version

    def version(name):
        if name == "torch-spatiotemporal":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(_require.metadata, "version", version)
    with pytest.raises(MissingDependencyError, match="torch-spatiotemporal"):
        require_tsl()


def test_wheel_index_follows_the_torch_build(monkeypatch):
    assert wheel_index_url() == _expected_index()
    monkeypatch.setattr(torch.version, "cuda", "12.1")
    assert wheel_index_url().endswith("+cu121.html")


def test_pandas_3_warns_for_tsl(monkeypatch):
    real = metadata.version
    monkeypatch.setattr(_require.metadata, "version", lambda n: "3.0.1" if n == "pandas" else real(n))
    with pytest.warns(UserWarning, match="pandas<3"):
        require_tsl()
    monkeypatch.setattr(_require.metadata, "version", real)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        require_tsl()  # pandas 2.x here: silent
