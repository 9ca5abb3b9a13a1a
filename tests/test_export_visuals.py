"""`python tools/export_visuals.py --out DIR` writes each notebook's key visual as a PNG (the whole visual)
and an SVG per plot, drawn offline by headless Chromium. Two notebooks here (a plot and a widget with
controls); the browser tests cover drawing in JupyterLab itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from browser_support import missing_browser_reason

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import export_visuals  # noqa: E402  (tools/ is not a package)

pytestmark = pytest.mark.browser


def test_every_lesson_has_a_key_visual():
    lessons = sorted(p.name[:2] for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    missing = [n for n in lessons if n not in export_visuals.VISUALS]
    assert not missing, f"notebooks without a key visual in tools/export_visuals.py: {missing}"


@pytest.mark.slow
def test_exports_png_and_svg_offline(tmp_path):
    reason = missing_browser_reason()
    if reason:
        pytest.skip(reason)
    written = export_visuals.export(["06", "08"], tmp_path)
    names = sorted(p.name for p in written)
    assert names == sorted(
        ["06_eviction_simulator.png", "06_eviction_simulator-1.svg", "08_tokens_vs_catalog_size.png",
         "08_tokens_vs_catalog_size-1.svg"]
    )  # fmt: skip
    for path in written:
        data = path.read_bytes()
        if path.suffix == ".png":
            assert data.startswith(b"\x89PNG") and len(data) > 10_000, f"{path.name} looks empty"
        else:
            text = data.decode()
            assert text.startswith("<svg") and "scatterlayer" in text, path.name  # a plot, with its points
    svg = (tmp_path / "08_tokens_vs_catalog_size-1.svg").read_text()
    assert "Tool tokens per request vs catalog size" in svg and "10,000" in svg


def test_an_unknown_notebook_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        export_visuals.main(["--out", str(tmp_path), "42"])
    assert "no key visual for notebook(s) 42" in capsys.readouterr().err
