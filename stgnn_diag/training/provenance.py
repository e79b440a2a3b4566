"""Where a result comes from: the versions, the machine, the commit of the package code and whether it had
uncommitted changes, stored with every run."""
from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional

import lightning as L
import torch

__all__ = ["COMMIT_ENV", "DIRTY_ENV", "environment", "git_commit", "git_dirty"]


#: What decides a result: uncommitted changes elsewhere (README, docs, results) do not make a run "dirty".
CODE_PATHS = ("stgnn_diag", "setup.cfg", "pyproject.toml")


def _git(*args: str) -> Optional[subprocess.CompletedProcess]:
    """``git *args`` in the package's checkout; None when git is missing or fails to run."""
    try:
        return subprocess.run(["git", *args], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                              text=True, timeout=10, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.SubprocessError):
        return None


#: For a copy of the source tree without ``.git`` (e.g. synced to a GPU machine): the commit it was copied
#: from and whether its package code had changes, as the copier knows them ("0" / "1").
COMMIT_ENV, DIRTY_ENV = "STGNN_DIAG_GIT_COMMIT", "STGNN_DIAG_GIT_DIRTY"


def git_commit() -> Optional[str]:
    proc = _git("rev-parse", "HEAD")
    if proc is not None and proc.returncode == 0:
        return proc.stdout.strip() or None
    return os.environ.get(COMMIT_ENV) or None


def git_dirty() -> Optional[bool]:
    """Whether the package code differs from the commit (``git diff --quiet HEAD -- CODE_PATHS``);
    outside a git checkout, ``$STGNN_DIAG_GIT_DIRTY``; None when neither tells."""
    proc = _git("diff", "--quiet", "HEAD", "--", *CODE_PATHS)
    if proc is not None and proc.returncode in (0, 1):
        return proc.returncode == 1
    return {"0": False, "1": True}.get(os.environ.get(DIRTY_ENV, ""))


def environment() -> Dict[str, Any]:
    """Versions and machine facts stored with every result (the commit and whether the package code
    had uncommitted changes, taken when this is called: :func:`train` calls it before training)."""
    return {"python": platform.python_version(), "torch": torch.__version__, "lightning": L.__version__,
            "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "threads": torch.get_num_threads(), "cuda": torch.cuda.is_available(), "git_commit": git_commit(),
            "git_dirty": git_dirty()}
