"""Every link in the repository's markdown resolves: relative links point at a file inside the repository, and
a ``#fragment`` names a heading of the page it points to (GitHub's and MyST's anchors). Web links are allowed
but not fetched (the test runs offline)."""
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SKIP_DIRS = {".git", ".venv", ".ci-venv", "build", "dist", "runs", "lightning_logs", "node_modules", "_generated"}

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMG = re.compile(r"<img\s[^>]*src=\"([^\"]+)\"", re.I)
REF_DEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
EXTERNAL = ("http://", "https://", "mailto:")


def markdown_files():
    out = []
    for p in sorted(REPO.rglob("*.md")):
        rel = p.relative_to(REPO)
        if not SKIP_DIRS.intersection(rel.parts[:-1]):
            out.append(p)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen, out = {}, set()
    for h in HEADING.findall(text):
        s = slug(h)
        n = seen.get(s, 0)
        out.add(s if n == 0 else f"{s}-{n}")
        seen[s] = n + 1
    return out


def links(path: Path):
    text = INLINE_CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return [m for rx in (LINK, IMG, REF_DEF) for m in rx.findall(text)]


def broken_links(path: Path, root: Path = REPO):
    bad = []
    for target in links(path):
        if target.startswith(EXTERNAL):
            continue
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        try:
            dest.relative_to(root)
        except ValueError:
            bad.append(f"{target}: outside the repository")
            continue
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            bad.append(f"{target}: no heading #{fragment} in {dest.relative_to(root)}")
    return bad


def test_the_link_checker_catches_what_it_should(tmp_path):
    (tmp_path / "a.md").write_text("# Top\n\n## A `code` heading, with (punctuation)\n\n"
                                   "[ok](b.md#b-part) [ok](#a-code-heading-with-punctuation) [web](https://x.org) "
                                   "[gone](c.md) [frag](b.md#nope) [out](../x.md)\n\n```\n[in a fence](zzz.md)\n```\n")
    (tmp_path / "b.md").write_text("# B part\n")
    assert sorted(broken_links(tmp_path / "a.md", tmp_path)) == [
        "../x.md: outside the repository", "b.md#nope: no heading #nope in b.md", "c.md: no such file"]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_markdown_link_resolves(path):
    assert broken_links(path) == []
