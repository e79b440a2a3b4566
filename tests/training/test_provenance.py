"""Provenance stored with every run: the commit, and whether the *package code* was uncommitted."""
import shutil
import subprocess

import pytest

from stgnn_diag.training import provenance as train_mod


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A throwaway git repository laid out like ours, with provenance.py's root pointing at it."""
    if shutil.which("git") is None:
        pytest.fail("git is needed for the provenance test")
    root = tmp_path / "repo"
    (root / "stgnn_diag" / "training").mkdir(parents=True)
    (root / "stgnn_diag" / "code.py").write_text("x = 1\n")
    (root / "README.md").write_text("readme\n")
    run = lambda *a: subprocess.run(["git", *a], cwd=root, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    fake = root / "stgnn_diag" / "training" / "provenance.py"
    monkeypatch.setattr(train_mod, "__file__", str(fake))
    return root


def test_docs_changes_are_not_dirty_code_changes_are(repo):
    assert train_mod.git_dirty() is False
    (repo / "README.md").write_text("edited\n")
    assert train_mod.git_dirty() is False      # a README edit does not touch a result
    (repo / "stgnn_diag" / "code.py").write_text("x = 2\n")
    assert train_mod.git_dirty() is True
    env = train_mod.environment()
    assert env["git_dirty"] is True and env["git_commit"] is not None


def test_tree_without_git_takes_the_commit_from_the_environment(tmp_path, monkeypatch):
    """A copy of the tree with no ``.git`` (synced to a GPU machine): the copier's commit and dirty flag."""
    copy = tmp_path / "copy" / "stgnn_diag" / "training"
    copy.mkdir(parents=True)
    monkeypatch.setattr(train_mod, "__file__", str(copy / "provenance.py"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no enclosing repository is found
    monkeypatch.delenv(train_mod.COMMIT_ENV, raising=False)
    monkeypatch.delenv(train_mod.DIRTY_ENV, raising=False)
    assert train_mod.git_commit() is None and train_mod.git_dirty() is None
    monkeypatch.setenv(train_mod.COMMIT_ENV, "0123abc")
    monkeypatch.setenv(train_mod.DIRTY_ENV, "0")
    env = train_mod.environment()
    assert env["git_commit"] == "0123abc" and env["git_dirty"] is False
    monkeypatch.setenv(train_mod.DIRTY_ENV, "1")
    assert train_mod.git_dirty() is True
