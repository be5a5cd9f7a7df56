"""The README and docs/ point only at what a clone has, and write commands as the README runs
them: every relative link names a file (and heading) of the repository, nothing lives "in
../shared", and a command line run from the repository is ``.venv/bin/atout-arena ...`` (or
``atout-bot``), as the README's two commands are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "sdk" / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text())
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:|#|/", t)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_name_files_and_headings_of_the_repository(doc: Path) -> None:
    assert "../shared" not in doc.read_text()
    broken = []
    for target in relative_links(doc):
        file, _, anchor = target.partition("#")
        found = (doc.parent / file).resolve()
        if not found.exists() or (anchor and found.suffix == ".md" and anchor not in anchors(found)):
            broken.append(target)
    assert broken == []


SHELL_FENCE = re.compile(r"^```(bash|sh|shell|console|)\n(.*?)^```", re.S | re.M)


def bare_commands(text: str) -> list[str]:
    """Lines of the shell blocks (a plain block's ``$ `` lines) that run ``atout-arena`` or
    ``atout-bot`` without the README's ``.venv/bin/`` (in a container, ``docker-compose exec``,
    the image's own: not bare)."""
    found = []
    for kind, block in SHELL_FENCE.findall(text):
        for line in block.splitlines():
            if not kind and not line.startswith("$ "):
                continue  # a drawing, or a command's output
            if re.match(r"(\$ )?(atout-arena|atout-bot)\b", line.strip()):
                found.append(line)
    return found


def test_bare_commands_are_found() -> None:
    text = ("```bash\natout-arena up\n.venv/bin/atout-arena up\n```\n"
            "```\n$ atout-bot run x\n atout-bot run\n```\n")
    assert bare_commands(text) == ["atout-arena up", "$ atout-bot run x"]


# sdk/README.md speaks to who installs the SDK alone (pip install atout, in an environment of
# their own): its atout-bot is on their PATH
@pytest.mark.parametrize("doc", [d for d in DOCS if d != ROOT / "sdk" / "README.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_commands_are_written_as_the_readme_runs_them(doc: Path) -> None:
    assert bare_commands(doc.read_text()) == []
