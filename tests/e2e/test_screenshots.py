"""scripts/screenshots.py, which makes the docs' screenshots from a real demo, runs (here one
page at one size, into tmp_path) and leaves nothing running; the screenshots the docs show are
there, small, and of the sizes their names say."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from test_demo import ChildWatch, clean_env

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
SIZES = {"desktop": (1366, 900), "phone": (390, 844)}
MAX_BYTES = 200_000


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_script_makes_a_screenshot_from_a_real_demo_and_stops_it(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "screenshots.py"), "--out", str(tmp_path / "shots"),
         "--pages", "overview", "--sizes", "desktop", "--bots", "3", "--players", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env(), cwd=tmp_path)
    with ChildWatch(process.pid) as watch:
        out, _ = process.communicate(timeout=110)
    assert process.returncode == 0, out
    assert sorted(p.name for p in (tmp_path / "shots").iterdir()) == ["overview-desktop.png"], out
    shot = tmp_path / "shots" / "overview-desktop.png"
    assert png_size(shot) == SIZES["desktop"]
    assert shot.stat().st_size <= MAX_BYTES
    assert re.search(r"^1 screenshots in \d+ s$", out, re.M), out
    assert [p.cmdline for p in watch.seen.values() if p.alive()] == []  # the demo and its parts stopped


def test_the_docs_show_small_screenshots_of_their_named_sizes() -> None:
    shown = set()
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        found = re.findall(r'(?:\]\(|src=")([^)"]*screenshots/[^)"]+\.png)', doc.read_text())
        shown |= {(doc.parent / m).resolve() for m in found}
    assert len(shown) >= 10, shown
    assert shown == set(SHOTS.glob("*.png"))  # every one made is shown, every one shown is made
    for shot in shown:
        assert shot.stat().st_size <= MAX_BYTES, shot
        assert png_size(shot) == SIZES[shot.stem.rsplit("-", 1)[1]], shot
