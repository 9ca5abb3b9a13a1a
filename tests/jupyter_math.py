"""What JupyterLab 4 typesets as LaTeX in a Markdown cell, a ``text/markdown`` output or a ``text/html``
output, read the way JupyterLab does it, for tests that fail on math nobody meant.

JupyterLab reads math twice. In Markdown, ``removeMath`` (``@jupyterlab/rendermime`` ``latex.ts``, ported
below line by line) takes ``$…$``, ``$$…$$``, the doubled-backslash parentheses and brackets, and
``\\begin{…}…\\end{…}`` out of the source before ``marked`` renders it (skipping code spans and fences);
then, for Markdown and HTML alike, MathJax 3 typesets the rendered page with JupyterLab's settings: inline
``$…$`` and ``\\(…\\)``, display ``$$…$$`` and ``\\[…\\]``, ``\\$`` an escaped dollar, nothing inside
``code``/``pre``/``script``/``style``/``textarea`` or an element of class ``mathjax_ignore``. Both passes
were checked against JupyterLab 4.6 in Chromium: "costs $1 and $2" is typeset in all three places, ``\\$``
in Markdown still is (marked removes the backslash before MathJax sees the page), and
``<span class="mathjax_ignore">&#36;</span>`` never is.

The second pass here joins an element's text across inline tags, which finds at least what MathJax finds.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt

INLINE = "$"
MATHSPLIT = re.compile(
    r"(\$\$?|\\(?:begin|end)\{[a-z]*\*?\}|\\[{}$]|[{}]|(?:\n\s*)+|@@\d+@@|\\\\(?:\(|\)|\[|\]))", re.I
)


def remove_math(text: str) -> tuple[str, list[str]]:
    """``removeMath`` of JupyterLab's latex.ts: (the text with math replaced by ``@@n@@``, the math)."""
    math: list[str] = []
    start = end = last = None
    braces = 0
    has_code = "`" in text or "~~~" in text
    if has_code:
        text = text.replace("~", "~T")
        text = re.sub(
            r"^(?P<fence>`{3,}|(?:~T){3,})[^`\n]*\n([\s\S]*?)^(?P=fence)`*$",
            lambda m: m.group(0).replace("$", "~D"),
            text,
            flags=re.M,
        )
        text = re.sub(
            r"(^|[^\\])(`+)([^\n]*?[^`\n])\2(?!`)", lambda m: m.group(0).replace("$", "~D"), text, flags=re.M
        )

    def de_tilde(s: str) -> str:
        return re.sub(r"~([TD])", lambda m: "~" if m.group(1) == "T" else INLINE, s) if has_code else s

    blocks = MATHSPLIT.split(text.replace("\r\n", "\n").replace("\r", "\n"))

    def process(i: int, j: int) -> None:
        block = "".join(blocks[i : j + 1]).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        for k in range(j, i, -1):
            blocks[k] = ""
        blocks[i] = f"@@{len(math)}@@"
        math.append(de_tilde(block))

    i = 1
    while i < len(blocks):
        block = blocks[i]
        if block.startswith("@"):
            blocks[i] = f"@@{len(math)}@@"
            math.append(block)
        elif start is not None:
            if block == end:
                if braces:
                    last = i
                else:
                    process(start, i)
                    start = end = last = None
            elif re.search(r"\n.*\n", block):
                if last is not None:
                    i = last
                    process(start, i)
                start = end = last = None
                braces = 0
            elif block == "{":
                braces += 1
            elif block == "}" and braces:
                braces -= 1
        elif block in (INLINE, "$$"):
            start, end, braces = i, block, 0
        elif block in ("\\\\(", "\\\\["):
            start, end, braces = i, "\\\\)" if block.endswith("(") else "\\\\]", 0
        elif block[1:6] == "begin":
            start, end, braces = i, "\\end" + block[6:], 0
        i += 2
    if start is not None and last is not None:
        process(start, last)
    return de_tilde("".join(blocks)), math


SKIPPED = {"code", "pre", "script", "style", "textarea", "noscript", "annotation", "svg"}
VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "col", "area", "base", "source", "embed"}
BLOCKS = {"p", "div", "li", "ul", "ol", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6",
          "blockquote", "section", "details", "summary", "dl", "dt", "dd"}  # fmt: skip
TEX = re.compile(
    r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S
)


class _Text(HTMLParser):
    """The text MathJax searches: per block element, outside skipped and ignored elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is its content hidden from MathJax?
        self.chunks: list[str] = [""]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        hidden = (bool(self.stack) and self.stack[-1]) or tag in SKIPPED or "mathjax_ignore" in classes
        self.stack.append(hidden)
        if tag in BLOCKS:
            self.chunks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.stack:
            self.stack.pop()
        if tag in BLOCKS:
            self.chunks.append("")

    def handle_data(self, data: str) -> None:
        if not (self.stack and self.stack[-1]):
            self.chunks[-1] += data


def html_math(html: str) -> list[str]:
    """The math MathJax would typeset in rendered HTML (JupyterLab's settings)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return [m.group(0) for chunk in parser.chunks for m in TEX.finditer(chunk)]


_MARKED = MarkdownIt("commonmark", {"html": True}).enable("table")


def replace_math(html: str, math: list[str]) -> str:
    """``replaceMath`` of latex.ts: the math put back where removeMath left ``@@n@@``."""

    def back(match: re.Match) -> str:
        group = math[int(match.group(1))]
        for opening, closing in (("\\\\(", "\\\\)"), ("\\\\[", "\\\\]")):
            if group.startswith(opening) and group.endswith(closing):
                group = opening[1:] + group[3:-3] + closing[1:]
        return group

    return re.sub(r"@@(\d+)@@", back, html)


def markdown_math(source: str) -> list[str]:
    """The math JupyterLab would typeset in Markdown: removeMath, marked, replaceMath, then MathJax on the
    page (an element of class ``mathjax_ignore`` hides the math removeMath found in it)."""
    text, math = remove_math(source)
    return html_math(replace_math(_MARKED.render(text), math))
