"""The semantic agent's knowledge of everyday words: what people say ("ticket", "land PR 7", "kick off")
mapped to the words tool catalogs use ("issue", "merge pull request", "trigger run").

A language model knows that a ticket is an issue; a small embedding model does not (MiniLM puts "ticket"
nearer to "comment" than to "issue"). The simulated agent therefore reads every need through a fixed
glossary, the shipped ``data/agent/glossary.json``; ``data/agent/PROVENANCE.md`` says how it was written
(blind to the scenarios it is measured on). Reading replaces each phrase the glossary knows, longest
first, by its meaning; words it does not know, and the step's own data (names, values), stay as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import cast

from toolsearch_lab.datafiles import data_path

WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def glossary_words(text: str) -> list[str]:
    """The words a glossary matches on: lower-case letters and digits, with an inner apostrophe kept
    ("what's"); everything else separates words."""
    return WORD.findall((text or "").lower().replace("\u2019", "'"))


@dataclass(frozen=True)
class Glossary:
    """``entries`` maps a phrase (its words joined by one space) to the catalog words it means."""

    entries: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @cached_property
    def longest(self) -> int:
        return max((p.count(" ") + 1 for p in self.entries), default=0)

    @classmethod
    def from_entries(
        cls, entries: Iterable[tuple[Iterable[str], Iterable[str]]], where: str = "glossary"
    ) -> Glossary:
        """A glossary from ``(phrases, meaning words)`` pairs; a phrase given twice is an error."""
        out: dict[str, tuple[str, ...]] = {}
        for number, (phrases, meaning) in enumerate(entries, start=1):
            means = tuple(w for part in meaning for w in glossary_words(part))
            if not means:
                raise ValueError(f"{where}: entry {number} means nothing (expected at least one word)")
            for phrase in phrases:
                key = " ".join(glossary_words(phrase))
                if not key:
                    raise ValueError(f"{where}: entry {number} has an empty phrase {phrase!r}")
                if key in out:
                    raise ValueError(f"{where}: entry {number} repeats the phrase {key!r} (one entry each)")
                out[key] = means
        return cls(out)

    @classmethod
    def load(cls, path: str | Path) -> Glossary:
        """A glossary file: ``{"entries": [{"say": [phrases], "means": [words]}, ...]}``."""
        where = str(path)
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{where}: cannot read the glossary ({exc})") from exc
        if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
            raise ValueError(f'{where}: expected an object with an "entries" list')
        pairs: list[tuple[list[str], list[str]]] = []
        for number, entry in enumerate(raw["entries"], start=1):
            if not isinstance(entry, dict):
                raise ValueError(f"{where}: entry {number} is {type(entry).__name__}, expected an object")
            say, means = entry.get("say"), entry.get("means")
            for key, value in (("say", say), ("means", means)):
                if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
                    raise ValueError(f'{where}: entry {number}: "{key}" must be a non-empty list of strings')
            pairs.append((cast(list[str], say), cast(list[str], means)))
        return cls.from_entries(pairs, where)

    def extended(self, entries: Iterable[tuple[Iterable[str], Iterable[str]]]) -> Glossary:
        """This glossary plus ``(phrases, meaning words)`` pairs (your users' jargon); a phrase it already
        knows takes the new meaning."""
        return Glossary({**self.entries, **Glossary.from_entries(entries, "extended glossary").entries})

    def read(self, text: str, keep: Collection[str] = ()) -> str:
        """``text`` in the catalogs' words: each known phrase (longest first) replaced by its meaning. A
        phrase with a word of ``keep`` (a name, a value) is left as written: "fix-issue-42" is a branch."""
        return " ".join(" ".join(meaning or (phrase,)) for phrase, meaning in self.segments(text, keep))

    def readings(self, text: str, keep: Collection[str] = ()) -> list[tuple[str, str]]:
        """The (phrase, meaning) pairs :meth:`read` used on ``text``, in order: what the agent understood."""
        return [(phrase, " ".join(meaning)) for phrase, meaning in self.segments(text, keep) if meaning]

    def segments(self, text: str, keep: Collection[str] = ()) -> list[tuple[str, tuple[str, ...] | None]]:
        """``text`` cut into known phrases (with their meaning) and other words (meaning None)."""
        words = glossary_words(text)
        out: list[tuple[str, tuple[str, ...] | None]] = []
        i = 0
        while i < len(words):
            for n in range(min(self.longest, len(words) - i), 0, -1):
                phrase = words[i : i + n]
                meaning = self.entries.get(" ".join(phrase))
                if meaning is not None and not any(w in keep for w in phrase):
                    out.append((" ".join(phrase), meaning))
                    i += n
                    break
            else:
                out.append((words[i], None))
                i += 1
        return out


@cache
def default_glossary() -> Glossary:
    """The shipped glossary (``data/agent/glossary.json``), read once."""
    return Glossary.load(data_path("agent", "glossary.json"))
