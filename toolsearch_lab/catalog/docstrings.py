"""Docstrings read for tool descriptions: Google style (``Args:``), NumPy style (``Parameters`` + dashes) and
Sphinx ``:param x:`` lines. The text before the first section is the description; each documented parameter
gets its own (:mod:`toolsearch_lab.catalog.functions` builds tools from them)."""

from __future__ import annotations

import dataclasses
import inspect
import re

__all__ = ["ParsedDocstring", "parse_docstring"]


_GOOGLE_PARAM_SECTIONS = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "attributes",
    "fields",
}
_GOOGLE_OTHER_SECTIONS = {
    "returns",
    "return",
    "yields",
    "raises",
    "examples",
    "example",
    "notes",
    "note",
    "see also",
    "references",
    "warnings",
    "warning",
    "todo",
    "other parameters",
}
_GOOGLE_HEADER = re.compile(r"^\s*([A-Za-z][A-Za-z ]*):\s*$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\*{0,2}\w+)\s*:\s*(.*)$")


@dataclasses.dataclass
class ParsedDocstring:
    description: str
    params: dict[str, str]


def _join(lines: list[str]) -> str:
    """Paragraphs kept, lines inside a paragraph joined with spaces."""
    paragraphs, current = [], []
    for line in lines:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(paragraphs)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Description (text before the first section) and parameter descriptions of a Google, NumPy or Sphinx
    docstring."""
    if not doc:
        return ParsedDocstring("", {})
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, list[str]] = {}
    section: str | None = None  # None = description; "params" or "other"
    current: str | None = None
    param_indent = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        stripped = line.strip()
        sphinx = _SPHINX_PARAM.match(line)
        if _NUMPY_UNDERLINE.match(nxt) and stripped:  # NumPy header: "Parameters" then "----------"
            section = "params" if stripped.lower() in _GOOGLE_PARAM_SECTIONS else "other"
            current, i = None, i + 2
            continue
        header = _GOOGLE_HEADER.match(line)
        if header and header.group(1).strip().lower() in _GOOGLE_PARAM_SECTIONS | _GOOGLE_OTHER_SECTIONS:
            section = "params" if header.group(1).strip().lower() in _GOOGLE_PARAM_SECTIONS else "other"
            current, i = None, i + 1
            continue
        if sphinx:
            section, current = "sphinx", sphinx.group(1).lstrip("*")
            params[current] = [sphinx.group(2)]
        elif stripped.startswith(":") and section == "sphinx":
            current = None  # :returns:, :raises: ... end the previous :param:
        elif section is None:
            description.append(line)
        elif section == "params" and stripped:
            indent = len(line) - len(line.lstrip())
            if current is None or indent <= param_indent:
                # "name (type): text" (Google) or "name : type" (NumPy) or "name: text"
                m = re.match(r"^\s*\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*(:)?\s*(.*)$", line)
                if m and (m.group(3) or m.group(2) is not None or not m.group(4)):
                    current, param_indent = m.group(1), indent
                    numpy_style = m.group(3) and re.match(r"^\s*\w+\s+:", line)
                    params[current] = [] if numpy_style else [m.group(4)]
                    i += 1
                    continue
            if current is not None:
                params[current].append(stripped)
        elif section in ("params", "sphinx") and current is not None and stripped:
            params[current].append(stripped)
        i += 1
    return ParsedDocstring(_join(description), {k: _join(v) for k, v in params.items()})
