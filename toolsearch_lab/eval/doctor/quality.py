"""Description and name checks: the defects Anthropic's tool-use guidance and the tool-search issue threads
name as the usual reasons a model picks the wrong tool or a search cannot find the right one."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping

from toolsearch_lab.eval.doctor.report import Finding, plural
from toolsearch_lab.model import Tool
from toolsearch_lab.text.identifiers import split_identifiers
from toolsearch_lab.tokens import TokenCounter

# OpenAI function names and Anthropic tool names both must match this (the Tool model itself is more lenient:
# it also allows '.' and ':' and 128 characters, which MCP servers use).
PROVIDER_NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MIN_DESCRIPTION_WORDS = 5
# A Google/NumPy docstring section header on its own line, or a Sphinx field: the signs of a docstring pasted
# whole into the description (the parameters are then described twice, and the schema's text drifts).
DOCSTRING_SECTION = re.compile(
    r"^[ \t]*(?:(?P<google>Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields"
    r"|Keyword Args)[ \t]*:[ \t]*$|(?P<numpy>Parameters|Returns|Raises|Yields)[ \t]*\n[ \t]*-{3,}[ \t]*$"
    r"|(?P<sphinx>:(?:param|type|returns?|rtype|raises)\b[^:\n]*:))",
    re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset(
    ["a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "by", "with", "from", "this", "that", "it"]
    + ["its", "is", "are", "be"]
)


def words(text: str) -> list[str]:
    """Lower-case words of prose (``GitHub`` stays one word), without one-letter fragments (``user's``)."""
    return [w.lower() for w in _WORD.findall(text) if len(w) > 1]


def name_words(name: str) -> list[str]:
    """Lower-case words of an identifier (``getUserName`` gives get, user, name)."""
    return [w.lower() for part in split_identifiers(name) for w in _WORD.findall(part)]


def description_findings(tools: list[Tool], counter: TokenCounter) -> list[Finding]:
    out: list[Finding] = []
    for t in tools:
        out.extend(_description_checks(t, counter))
        undocumented = [path for path, sub in _properties(t.parameters) if not _documented(sub)]
        if undocumented:
            out.append(_undocumented(t, undocumented))
    out.extend(_duplicates(tools))
    return out


def _description_checks(t: Tool, counter: TokenCounter) -> Iterator[Finding]:
    text = t.description.strip()
    if not text:
        yield Finding(
            "error",
            "blank-description",
            t.name,
            "the description is blank: the vector index has nothing to embed, keyword search sees only the "
            "name, and the model cannot tell when to call it",
            "write what the tool does, when to use it and what it returns, in the words a user would use",
            1.0,
            [t.name],
        )
        return
    leak = DOCSTRING_SECTION.search(t.description)
    if leak:
        yield _leak(t, leak, counter)
    summary = text[: leak.start()].strip() if leak else text
    summary_words = words(summary)
    meaningful = [w for w in summary_words if w not in _STOP]
    if len(summary_words) < MIN_DESCRIPTION_WORDS:
        yield Finding(
            "warning",
            "short-description",
            t.name,
            f"the description is only {plural(len(summary_words), 'word')} ({summary[:60]!r}): too little "
            "text for a search to match and for the model to choose between similar tools",
            "say what it does, when to use it (and when not), and what it returns: two to four sentences",
            0.6,
            [t.name],
        )
    elif set(meaningful) <= set(name_words(t.name)):
        yield Finding(
            "warning",
            "name-echo",
            t.name,
            f"the description ({summary[:60]!r}) only repeats the name's words",
            "describe the capability in other words than the name: what it acts on, when to use it, "
            "what it returns",
            0.5,
            [t.name],
        )


def _leak(t: Tool, leak: re.Match, counter: TokenCounter) -> Finding:
    leaked = counter.count(t.description[leak.start() :])
    return Finding(
        "warning",
        "docstring-leak",
        t.name,
        f"a docstring section ({leak.group(0).strip()!r}) leaked into the description: {leaked} tokens that "
        "repeat the schema in every request and match every query about its argument names",
        "keep the summary as the description and move each argument's text into its parameter's "
        "'description' in the schema (toolsearch_lab's @tool does this for Python functions)",
        0.6,
        [t.name],
        {"section": leak.group(0).strip(), "leaked_tokens": leaked},
    )


def _properties(schema: Mapping, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Mapping]]:
    """(dotted path, schema) of every named property, nested objects and array items included."""
    props = schema.get("properties")
    if not isinstance(props, Mapping) or depth > 8:
        return
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        path = f"{prefix}{name}"
        yield path, sub
        yield from _properties(sub, path + ".", depth + 1)
        items = sub.get("items")
        if isinstance(items, Mapping):
            yield from _properties(items, path + "[].", depth + 1)


def _documented(sub: Mapping) -> bool:
    text = sub.get("description")
    return isinstance(text, str) and bool(text.strip())


def _undocumented(t: Tool, paths: list[str]) -> Finding:
    total = sum(1 for _ in _properties(t.parameters))
    shown = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
    return Finding(
        "warning",
        "undocumented-parameters",
        t.name,
        f"{len(paths)} of {plural(total, 'parameter')} {'has' if len(paths) == 1 else 'have'} no description "
        f"({shown}): the model guesses their "
        "format from the name alone, the most common cause of wrong arguments",
        "give each parameter a 'description' with its meaning, format and an example value",
        0.3 + 0.4 * len(paths) / total,
        [t.name],
        {"parameters": paths},
    )


def _duplicates(tools: list[Tool]) -> Iterator[Finding]:
    groups: dict[str, list[str]] = defaultdict(list)
    for t in tools:
        key = " ".join(t.description.split()).casefold()
        if key:
            groups[key].append(t.name)
    for key, names in groups.items():
        if len(names) > 1:
            yield Finding(
                "warning",
                "duplicate-description",
                names[0],
                f"{len(names)} tools share the same description ({key[:60]!r}): no search can rank one "
                "above the others, and the model picks between them by name alone",
                "say in each description what makes this tool different (its object, scope or side effect)",
                0.8,
                names,
            )


def name_findings(tools: list[Tool]) -> list[Finding]:
    """Names that break a provider's rules, and names that differ only by case or separators."""
    out = [_bad_name(t.name) for t in tools if not PROVIDER_NAME_RULE.match(t.name)]
    by_words: dict[str, list[str]] = defaultdict(list)
    for t in tools:
        by_words[" ".join(name_words(t.name))].append(t.name)
    for names in by_words.values():
        if len(names) > 1:
            out.append(
                Finding(
                    "warning",
                    "similar-names",
                    names[0],
                    f"names differ only by case or separators ({', '.join(names)}): usually one tool from "
                    "two servers; models mix them up and clients that normalise names merge them",
                    "keep one of them, or rename them so the words say how they differ",
                    0.7,
                    names,
                )
            )
    return out


def _bad_name(name: str) -> Finding:
    fixed = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"
    why = f"{len(name)} characters" if len(name) > 64 else "characters outside a-z A-Z 0-9 _ -"
    return Finding(
        "error",
        "provider-name",
        name,
        f"the name breaks OpenAI's and Anthropic's tool-name rule ^[a-zA-Z0-9_-]{{1,64}}$ ({why}): the "
        "request is rejected with a 400",
        f"rename it, e.g. {fixed!r}",
        1.0,
        [name],
        {"suggested": fixed},
    )
