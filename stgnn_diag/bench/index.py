"""The index of a folder of experiments: one line per experiment page, with its headline row.

::

    python -m stgnn_diag.bench.index models/results      # rewrites models/results/README.md

An experiment is a sub-folder with a ``README.md``; a bench experiment also has a ``tables.csv``, whose best
trained row (lowest mean MAE at the last step of its first table) is the headline. A markdown file directly in
the folder (a summary page) is listed too. The index keeps the text between the notes markers of the existing
``README.md`` (see :mod:`.page`).
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Union

from .page import NOTES_END, NOTES_START, read_notes

__all__ = ["headline", "index_markdown", "main", "page_summary", "write_index"]


def page_summary(page: Path) -> tuple:
    """``(title, first paragraph)`` of a page: its first ``#`` heading and the paragraph under it."""
    text = read_notes(page) if page.name == "README.md" and read_notes(page) else page.read_text()
    title, para, lines = page.parent.name if page.name == "README.md" else page.stem, "", text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            title = line[2:].strip()
            rest = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("#") or (not nxt.strip() and rest):
                    break
                if nxt.strip():
                    rest.append(nxt.strip())
            para = re.sub(r"^\*\*Question\.\*\*\s*", "", " ".join(rest))
            break
    return title, para


def _steps(row: dict) -> List[str]:
    return sorted({k.split("@")[1].split("_")[0] for k in row if k.startswith("mae@") and k.endswith("_mean")
                   and not k.startswith("mae@avg")}, key=int)


def headline(tables_csv: Path) -> Optional[str]:
    """``"`tas_attn_none` (n = 3, budget `cpu-15min`, horizon 12): MAE 2.815 / 3.181 / 3.622 at steps 3 / 6 / 12"``:
    the trained row of ``tables.csv`` with the lowest mean MAE at the last step (over the tables of the first
    trained row's horizon); a baseline only when nothing was trained; ``None`` for an empty file."""
    rows = [r for r in csv.DictReader(open(tables_csv)) if r.get("source") == "run here"]
    if not rows:
        return None
    trained = [r for r in rows if r["kind"] == "model"] or rows
    horizon = trained[0]["horizon"]
    trained = [r for r in trained if r["horizon"] == horizon]
    steps = _steps(trained[0])
    best = min(trained, key=lambda r: float(r[f"mae@{steps[-1]}_mean"]))
    values = " / ".join(f"{float(best[f'mae@{s}_mean']):.3f}" for s in steps)
    return (f"`{best['model']}` (n = {best['n']}, budget `{best['budget_label']}`, horizon {best['horizon']}): "
            f"MAE {values} at steps {' / '.join(steps)}")


def index_markdown(root: Union[str, Path], notes: Optional[str] = None) -> str:
    """The index page of ``root``."""
    root = Path(root)
    if notes is None:
        notes = "# Results\n\nThe experiments, one folder each."
    out = [NOTES_START, notes.strip("\n"), NOTES_END, "",
           f"<!-- written by `python -m stgnn_diag.bench.index {root.as_posix()}`; edit the notes above -->", "",
           "| experiment | what it asks | headline (its best trained row at the last step) |", "|---|---|---|"]
    for d in sorted(p for p in root.iterdir() if p.is_dir() and (p / "README.md").is_file()):
        title, para = page_summary(d / "README.md")
        line = headline(d / "tables.csv") if (d / "tables.csv").is_file() else None
        out.append(f"| [{title}]({d.name}/README.md) | {_cell(para)} | {line or '—'} |")
    for f in sorted(p for p in root.glob("*.md") if p.name != "README.md"):
        title, para = page_summary(f)
        out.append(f"| [{title}]({f.name}) | {_cell(para)} | — |")
    return "\n".join(out) + "\n"


def _cell(text: str, limit: int = 220) -> str:
    text = re.sub(r"\s+", " ", text).replace("|", "\\|")
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def write_index(root: Union[str, Path]) -> Path:
    """Rewrite ``<root>/README.md`` (its notes kept); returns its path."""
    path = Path(root) / "README.md"
    path.write_text(index_markdown(root, read_notes(path)))
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stgnn_diag.bench.index", description=__doc__.split("\n\n")[0])
    p.add_argument("root", type=Path, help="the folder of experiment folders, e.g. models/results")
    args = p.parse_args(argv)
    if not args.root.is_dir():
        print(f"error: no folder {args.root}", file=sys.stderr)
        return 2
    print(f"wrote {write_index(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
