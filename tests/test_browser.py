"""Real-browser tests: JupyterLab and Voila on 127.0.0.1, driven by Debian Chromium through Playwright.

Every notebook is opened in JupyterLab and Run All: each must show at least one plot, widget or table, no
error output, and make no request to a host other than 127.0.0.1 (requests elsewhere are aborted and fail the
test). The stepper (04), the retrieval explorer (07) and the Voila app are driven with keyboard and dropdowns.

They skip (with the reason) when Chromium or Playwright is missing, except under CI=true, where a missing
browser is a failure: CI installs Chromium, so a skip there would hide a broken setup.
Screenshots go to the test's tmp dir (printed at the end of each test; see `pytest -rA -s`), or to
``$TOOLSEARCH_LAB_SCREENSHOTS`` when it is set, to look at every notebook as a learner sees it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from browser_support import (
    NOTEBOOKS,
    ConsoleLog,
    RequestLog,
    chromium,
    copy_notebooks,
    error_outputs,
    jupyter_lab,
    lab_open_notebook,
    lab_run_all,
    lab_wait_executed,
    missing_browser_reason,
    press_slider_right,
    scroll_all_outputs,
    shutdown_kernels,
    slider_readout,
    voila,
    widget_failures,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
UI_WAIT_MS = (
    90_000  # generous: on a loaded 2-core machine a redraw can take seconds; a broken one never comes
)


@pytest.fixture(scope="module", autouse=True)
def _require_browser():
    reason = missing_browser_reason()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the browser tests cannot run: {reason}")
        pytest.skip(reason)


# --------------------------------------------------------------------------------------------------------
# Infrastructure check on a trivial notebook: an ipywidgets slider + dropdown driving a plotly FigureWidget.
# If this fails, the problem is the server/browser setup (kernel, widget manager, plotly extension), not the
# project's UI. The Voila path is exercised by test_voila_app_stepper.
# --------------------------------------------------------------------------------------------------------
TRIVIAL_CODE = """\
import ipywidgets as w
import plotly.graph_objects as go
slider = w.IntSlider(value=1, min=0, max=10, description="n")
choice = w.Dropdown(options=["alpha", "beta"], value="alpha", description="pick")
label = w.HTML("<b>value: 1 / alpha</b>")
fig = go.FigureWidget(data=[go.Bar(x=["a", "b", "c"], y=[1, 1, 1])],
                      layout=dict(title=dict(text="n = 1"), width=480, height=300))
def redraw(_=None):
    fig.data[0].y = [slider.value] * 3
    fig.layout.title.text = f"n = {slider.value} ({choice.value})"
    label.value = f"<b>value: {slider.value} / {choice.value}</b>"
slider.observe(redraw, "value")
choice.observe(redraw, "value")
w.VBox([slider, choice, label, w.Box([fig], layout=w.Layout(width="500px"))])
"""


def _trivial_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        # Math on purpose: the notebooks' check that nothing is typeset must see math when there is some.
        nbformat.v4.new_markdown_cell("# Trivial widgets\n\nMath on purpose: $e^{i\\pi} + 1 = 0$"),
        nbformat.v4.new_code_cell(TRIVIAL_CODE),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trivial.ipynb"
    nbformat.write(nb, path)
    return path


def _plot_title(page) -> str:
    return page.locator(".js-plotly-plot .gtitle").first.text_content() or ""


def _assert_clean(page, console: ConsoleLog, requests: RequestLog | None = None) -> None:
    assert not widget_failures(page), f"widget failed to render: {widget_failures(page)}"
    assert not error_outputs(page), f"error output in the page: {error_outputs(page)}"
    assert not console.unexpected(), f"browser errors: {console.unexpected()}"
    if requests is not None:
        assert not requests.non_local, f"requests to non-local hosts: {requests.non_local}"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One Chromium for the module: Playwright's sync API allows one running instance per thread."""
    with chromium(tmp_path_factory.mktemp("profile")) as first_page:
        yield first_page.context


@pytest.fixture
def page(browser):
    page = browser.new_page()
    page.set_default_timeout(60_000)
    yield page
    page.close()


def test_lab_trivial_widgets(tmp_path, page):
    root = tmp_path / "root"
    _trivial_notebook(root)
    with jupyter_lab(root, tmp_path / "jupyter") as server:
        console = ConsoleLog(page)
        lab_open_notebook(page, server, "trivial.ipynb")
        lab_run_all(page)
        lab_wait_executed(page)
        page.wait_for_selector(".widget-slider .noUi-handle", timeout=UI_WAIT_MS)
        page.wait_for_selector(".js-plotly-plot .gtitle", timeout=UI_WAIT_MS)
        assert _plot_title(page) == "n = 1 (alpha)" or _plot_title(page) == "n = 1"
        slider = page.locator(".widget-slider").first
        press_slider_right(page, slider, times=2)
        page.wait_for_function(
            "() => document.querySelector('.js-plotly-plot .gtitle').textContent.startsWith('n = 3')",
            timeout=UI_WAIT_MS,
        )
        assert slider_readout(slider) == "3"
        page.locator(".widget-dropdown select").first.select_option(label="beta")
        page.wait_for_function(
            "() => document.querySelector('.js-plotly-plot .gtitle').textContent === 'n = 3 (beta)'",
            timeout=UI_WAIT_MS,
        )
        # The label is set after the title in the same callback; its update may reach the page a moment later.
        page.wait_for_function(
            "() => document.body.innerText.includes('value: 3 / beta')", timeout=UI_WAIT_MS
        )
        assert "value: 3 / beta" in page.inner_text("body")
        page.wait_for_selector(".jp-NotebookPanel mjx-container", timeout=UI_WAIT_MS)  # the math cell typeset
        _assert_clean(page, console)
        page.screenshot(path=str(tmp_path / "lab_trivial.png"), full_page=True)
    print(f"screenshot: {tmp_path / 'lab_trivial.png'}")


# --------------------------------------------------------------------------------------------------------
# The project's notebooks: 04_the_loop_and_accumulation in JupyterLab and the app_stepper Voila app.
# --------------------------------------------------------------------------------------------------------
def _stepper(page, scope):
    """The first IterationStepper in ``scope``: (root, its Iteration slider, its Scenario <select>)."""
    root = scope.locator(".widget-vbox").filter(has=page.locator(".widget-label", has_text="Iteration")).first
    slider = (
        root.locator(".widget-slider").filter(has=page.locator(".widget-label", has_text="Iteration")).first
    )
    scenario = root.locator(".widget-dropdown").filter(has=page.locator("label", has_text="Scenario"))
    return root, slider, scenario.locator("select").first


def _plots_svg(root) -> list[str]:
    plots = root.locator(".js-plotly-plot .main-svg")
    return [plots.nth(i).inner_html() for i in range(plots.count())]


def _drive_stepper(page, scope, shot) -> None:
    """Move the Iteration slider with the keyboard and switch the scenario dropdown: text and plots follow."""
    root, slider, scenario = _stepper(page, scope)
    root.scroll_into_view_if_needed()
    page.wait_for_function(
        "el => el.querySelectorAll('.js-plotly-plot .main-svg').length >= 2",
        arg=root.element_handle(),
        timeout=UI_WAIT_MS,
    )
    text0 = root.text_content() or ""
    match = re.search(r"Iteration 1 of (\d+)", text0)
    assert match, f"the details panel does not show iteration 1: {text0[:400]}"
    last = int(match.group(1))
    assert last >= 2, "the demo run should take several iterations"
    assert "success" in text0 and "index lucene" in text0, text0[:400]
    svg0 = _plots_svg(root)

    press_slider_right(page, slider)
    root.get_by_text("Iteration 2 of", exact=False).first.wait_for(timeout=UI_WAIT_MS)
    assert slider_readout(slider) == "2"
    page.wait_for_function(
        "([el, before]) => [...el.querySelectorAll('.js-plotly-plot .main-svg')].map(s => s.innerHTML)"
        ".some((h, i) => h !== before[i])",
        arg=[root.element_handle(), svg0],
        timeout=UI_WAIT_MS,
    )
    shot("after_slider")

    svg1 = _plots_svg(root)
    scenario.select_option(label="github")
    root.get_by_text("octo-org/widgets", exact=False).first.wait_for(timeout=UI_WAIT_MS)
    page.wait_for_function(
        "([el, before]) => [...el.querySelectorAll('.js-plotly-plot .main-svg')].map(s => s.innerHTML)"
        ".some((h, i) => h !== before[i])",
        arg=[root.element_handle(), svg1],
        timeout=UI_WAIT_MS,
    )
    # The status, the figures and the details panel arrive as separate widget messages: wait for the last.
    page.wait_for_function(
        "el => !el.textContent.includes('Landsmeer') && el.textContent.includes('of 117 tools')",
        arg=root.element_handle(),
        timeout=UI_WAIT_MS,
    )
    text2 = root.text_content() or ""
    assert "Landsmeer" not in text2 and "of 117 tools" in text2, text2[:400]
    shot("after_dropdown")


NOTEBOOK_NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
VISUALS = ".js-plotly-plot, .jupyter-widgets, table"  # a lesson shows a plot, a widget or a table


@pytest.fixture(scope="module")
def lab(tmp_path_factory, browser):
    """One JupyterLab over a copy of every notebook, shared by the notebook tests."""
    base = tmp_path_factory.mktemp("lab")
    root_dir = copy_notebooks(base / "root", NOTEBOOK_NAMES)
    with jupyter_lab(root_dir, base / "jupyter") as server:
        yield server, browser


def _drive_retrieval_explorer(page, scope, shot) -> None:
    """Press ArrowRight on the k slider: the legend follows (recall at the new k)."""
    slider = scope.locator(".widget-slider").filter(
        has=page.locator(".widget-label", has_text=re.compile(r"^k$"))
    )
    slider.first.scroll_into_view_if_needed()
    press_slider_right(page, slider.first)
    assert slider_readout(slider.first) == "6"
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot .legendtext')]"
        ".some(e => e.textContent.includes('at k=6'))",
        timeout=UI_WAIT_MS,
    )
    shot("after_k_slider")


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_lab_notebook_run_all(lab, name, tmp_path):
    """Run All in JupyterLab: at least one plot, widget or table, no error output, no off-machine request, and
    nothing typeset as LaTeX (a dollar amount read as math)."""
    server, context = lab
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.set_viewport_size({"width": 1400, "height": 3600})  # tall: a whole output fits in one screenshot
    stem = name.removesuffix(".ipynb")
    shots = []
    if os.environ.get("TOOLSEARCH_LAB_SCREENSHOTS"):
        tmp_path = Path(os.environ["TOOLSEARCH_LAB_SCREENSHOTS"])
        tmp_path.mkdir(parents=True, exist_ok=True)

    def shot(label):
        path = tmp_path / f"lab_{stem}_{label}.png"
        page.screenshot(path=str(path))
        shots.append(path)

    try:
        console, requests = ConsoleLog(page), RequestLog(page)
        lab_open_notebook(page, server, name)
        lab_run_all(page)
        lab_wait_executed(page)
        scroll_all_outputs(page)
        outputs = page.locator(".jp-OutputArea-output").filter(has=page.locator(VISUALS))
        outputs.first.wait_for(timeout=120_000)
        for i in range(min(outputs.count(), 6)):
            output = outputs.nth(i)
            output.scroll_into_view_if_needed()
            # A drawn figure has traces or a title; an empty default figure (axes only) has neither.
            page.wait_for_function(
                "el => [...el.querySelectorAll('.js-plotly-plot')]"
                ".every(p => p.querySelector('.trace, .gtitle'))",
                arg=output.element_handle(),
                timeout=UI_WAIT_MS,
            )
            path = tmp_path / f"lab_{stem}_visual{i + 1}.png"
            output.screenshot(path=str(path))
            shots.append(path)
        # Dollar amounts stay dollar amounts: shoot the outputs that show one, and find no typeset math.
        dollars = page.locator(".jp-OutputArea-output").filter(has_text="$")
        for i in range(min(dollars.count(), 3)):
            dollars.nth(i).scroll_into_view_if_needed()
            path = tmp_path / f"lab_{stem}_dollars{i + 1}.png"
            dollars.nth(i).screenshot(path=str(path))
            shots.append(path)
        typeset = page.locator(".jp-NotebookPanel mjx-container, .jp-NotebookPanel .MathJax")
        assert typeset.count() == 0, f"{name}: JupyterLab typeset math: {typeset.first.inner_text()[:200]}"
        if stem.startswith("04"):
            stepper = outputs.filter(has=page.locator(".widget-label", has_text="Iteration")).first
            _drive_stepper(page, stepper, shot)
        if stem.startswith("07"):
            _drive_retrieval_explorer(page, page.locator(".jp-NotebookPanel"), shot)
        scroll_all_outputs(page)
        _assert_clean(page, console, requests)
    finally:
        page.close()
        shutdown_kernels(server)
    print("screenshots:", *shots, sep="\n  ")


def test_voila_app_stepper(tmp_path, page):
    notebook = copy_notebooks(tmp_path / "root", ["app_stepper.ipynb"]) / "app_stepper.ipynb"
    shots = []

    def shot(label):
        path = tmp_path / f"voila_app_{label}.png"
        page.screenshot(path=str(path), full_page=True)
        shots.append(path)

    with voila(notebook, tmp_path / "jupyter") as server:
        console, requests = ConsoleLog(page), RequestLog(page)
        page.goto(server.url + "/", wait_until="domcontentloaded", timeout=120_000)
        page.wait_for_selector(".widget-slider .noUi-handle", timeout=120_000)
        assert page.locator("h1", has_text="Tool search, step by step").count() == 1
        _drive_stepper(page, page.locator("body"), shot)
        # The play button's icon comes from the Font Awesome bundled with Voila, not from a CDN.
        assert page.locator(".widget-play button i.fa-play").count() >= 1
        _assert_clean(page, console, requests)
    print("screenshots:", *shots, sep="\n  ")
