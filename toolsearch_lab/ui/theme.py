"""One look for every UI: palette, fonts, sizes and the small HTML helpers all views share.

Colour meaning is fixed across views so a room learns it once:
toolSearchTool = violet, tools found by search = teal, newly exposed in this request = amber,
"send everything" baseline = grey. Everything drawn from model or tool text goes through :func:`esc`, which
also hides every registered secret and key-shaped string (:func:`~toolsearch_lab.secrets.hide_keys`): a
widget is a display edge.
"""

from __future__ import annotations

import html
import math
import re

from toolsearch_lab.secrets import hide_keys

SEARCH = "#6D28D9"  # the meta-tool toolSearchTool
SEARCH_LIGHT = "#C4B5FD"
FOUND = "#0F766E"  # tools the search found and the loop exposed
FOUND_LIGHT = "#99F6E4"
NEW = "#F59E0B"  # newly exposed in this request
NEW_LIGHT = "#FEF3C7"
CALLED = "#111827"  # ring around a tool the model called
BASELINE = "#9CA3AF"  # all tools, every request
BASELINE_LIGHT = "#E5E7EB"
BAD = "#DC2626"  # evictions, errors, missing tools
GOOD = "#15803D"  # success, reuse
INK = "#111827"
MUTED = "#6B7280"
GRID = "#E5E7EB"
PAPER = "#FFFFFF"

# Unquoted family names: these strings go inside both single- and double-quoted style attributes.
FONT = "Inter, Segoe UI, Helvetica, Arial, sans-serif"
MONO = "JetBrains Mono, Fira Code, Menlo, Consolas, monospace"
FONT_SIZE = 15  # readable from the back of a room
TITLE_SIZE = 19

# Every figure and HTML sink has a fixed width (Voila squeezes flexible ones); boxes add 20 px. 940 + 20 fits
# JupyterLab's output area in a 1400 px window (968 px), where 980 + 20 was cut at the right edge.
FIG_WIDTH = 940
PANEL_WIDTH = FIG_WIDTH


# JupyterLab typesets LaTeX in HTML and Markdown outputs with MathJax: "$0.0133 … $0.0200" becomes italic math
# and swallows the text between. MathJax skips elements with this class (its default ignoreHtmlClass).
NO_MATH = "mathjax_ignore"
_DOLLAR = f'<span class="{NO_MATH}">&#36;</span>'
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.S)


def no_math(markdown: str) -> str:
    """Markdown whose every ``$`` outside code spans shows as a dollar sign, never as a math delimiter.

    JupyterLab reads ``$…$`` and ``$$…$$`` as LaTeX twice: in the Markdown source before the Markdown parser
    (where a math span also swallows line breaks, merging a list's items), and again in the rendered page.
    A backslash escape survives only the first pass, and the HTML entity only the second (both measured in
    JupyterLab 4 with Chromium); the entity inside an element MathJax ignores survives both. Code spans are
    left alone: neither pass looks inside them."""
    out, last = [], 0
    for span in _CODE_SPAN.finditer(markdown):
        out += [markdown[last : span.start()].replace("$", _DOLLAR), span.group(0)]
        last = span.end()
    out.append(markdown[last:].replace("$", _DOLLAR))
    return "".join(out)


def esc(text) -> str:
    """HTML-escape untrusted text (tool descriptions, model output, tool results), secrets hidden."""
    return html.escape(hide_keys("" if text is None else str(text)), quote=True)


def clip(text, limit: int = 400) -> str:
    """Shorten long text *before* escaping so an entity is never cut in half."""
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def base_layout(title: str, height: int, width: int = FIG_WIDTH, **extra) -> dict:
    """Plotly layout shared by every figure: fixed size, large fonts, quiet grid, legend above the plot."""
    layout = {
        # Pinned to the top of the figure, so a legend that wraps onto a second row never runs into it.
        "title": {
            "text": title,
            "x": 0.01,
            "xanchor": "left",
            "yref": "container",
            "y": 1.0,
            "yanchor": "top",
            "pad": {"t": 16},
            "font": {"size": TITLE_SIZE, "color": INK},
        },
        "width": width,
        "height": height,
        "font": {"family": FONT, "size": FONT_SIZE, "color": INK},
        "paper_bgcolor": PAPER,
        "plot_bgcolor": PAPER,
        "margin": {"l": 70, "r": 30, "t": 90, "b": 60},
        "legend": {
            "orientation": "h",
            "x": 0.0,
            "xanchor": "left",
            "y": 1.02,
            "yanchor": "bottom",
            "font": {"size": FONT_SIZE - 1},
        },
        "hoverlabel": {"font": {"family": FONT, "size": FONT_SIZE - 1}},
    }
    layout.update(extra)
    return layout


def axis(title: str, **extra) -> dict:
    out = {
        "title": {"text": title, "font": {"size": FONT_SIZE}},
        "gridcolor": GRID,
        "zeroline": False,
        "linecolor": BASELINE,
        "automargin": True,
    }
    out.update(extra)
    return out


def nice_range(top_value: float, ticks: int = 5, headroom: float = 0.06) -> dict:
    """Axis from 0 to a round number above ``top_value``, ticked at round steps (1, 2, 2.5, 5 ×10^k).

    Plotly's own ticks on a secondary axis follow the primary's grid and land on odd values (2,384 / 4,767);
    the headroom keeps the highest point off the plot's top edge.
    """
    if top_value <= 0:
        return {"rangemode": "tozero"}
    raw = top_value * (1 + headroom) / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    top = math.ceil(top_value * (1 + headroom) / step) * step
    return {"range": [0, top], "tick0": 0, "dtick": step}


def panel(body: str, width: int = PANEL_WIDTH) -> str:
    """Wrap HTML in the fixed-width panel style every text sink uses (never typeset as math: see
    :data:`NO_MATH`)."""
    return (
        f'<div class="{NO_MATH}" style="width:{width - 24}px;font-family:{FONT};font-size:{FONT_SIZE}px;'
        f'color:{INK};line-height:1.45;padding:8px 12px">{body}</div>'
    )


def chip(name: str, fg: str, bg: str, badge: str = "", bold: bool = False, ring: bool = False) -> str:
    """A tool-name pill. ``name`` is escaped here."""
    border = f"2px solid {CALLED}" if ring else f"1px solid {fg}"
    weight = "700" if bold else "500"
    tag = (
        (
            f'<span style="font-size:{FONT_SIZE - 3}px;font-weight:700;margin-left:6px;color:{INK}">'
            f"{esc(badge)}</span>"
        )
        if badge
        else ""
    )
    return (
        # nowrap: an identifier is never broken mid-word (``ph_a i_news_query``).
        f'<span style="display:inline-block;white-space:nowrap;margin:2px 4px 2px 0;padding:1px 9px;'
        f"border-radius:12px;"
        f"border:{border};background:{bg};color:{INK};font-family:{MONO};font-size:{FONT_SIZE - 1}px;"
        f'font-weight:{weight}">{esc(name)}{tag}</span>'
    )


def heading(text: str, size: int = FONT_SIZE + 2) -> str:
    return f'<div style="font-weight:700;font-size:{size}px;margin:8px 0 4px 0">{text}</div>'


def muted(text: str) -> str:
    return f'<span style="color:{MUTED}">{text}</span>'


def score_bar(score: float | None, best: float | None, colour: str = FOUND, width: int = 160) -> str:
    """A small horizontal bar, relative to the best score in the list, with the number beside it."""
    if score is None:
        return muted("no score")
    frac = 0.0 if not best else max(0.0, min(1.0, score / best))
    return (
        f'<span style="display:inline-block;vertical-align:middle;width:{width}px;height:10px;'
        f'background:{GRID};border-radius:5px;margin-right:8px">'
        f'<span style="display:block;width:{frac * width:.0f}px;height:10px;background:{colour};'
        f'border-radius:5px"></span></span><span style="font-family:{MONO}">{score:.3f}</span>'
    )


def fmt_int(n) -> str:
    return f"{int(n):,}"


def count(n: int, word: str, plural: str = "") -> str:
    """``n`` with ``word`` in the right number: "1 search", "2 searches", "1,024 tokens"."""
    if n == 1:
        return f"1 {word}"
    return f"{n:,} {plural or (word + 'es' if word.endswith(('s', 'sh', 'ch', 'x')) else word + 's')}"
