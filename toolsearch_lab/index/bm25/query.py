"""Spring's ``buildQuery`` for the BM25 index (spec §4): four SHOULD clauses over the name and description
fields (phrase and terms on each, name boosted), or one terms-only clause over the whole tool text, after
Lucene's BooleanQuery rewrite merged identical clauses. :meth:`QueryShape.plan` spells a query out for
explanations; :meth:`QueryShape.compile` builds the same query as arrays for scoring."""

from __future__ import annotations

from dataclasses import dataclass

from toolsearch_lab.index.bm25.explain import PlanGroup, PlanItem
from toolsearch_lab.index.bm25.postings import FieldIndex, Postings
from toolsearch_lab.index.bm25.scoring import CompiledQuery, compile_leaves

NAME_FIELD = "toolName"
DESCRIPTION_FIELD = "toolDescription"
PARAMETERS_FIELD = "toolParameters"  # only with include_parameters=True; not a Spring field
FULL_FIELD = "toolText"  # only with fields="full": the whole tool text in one field

# Spring's clauses per field: (field, short label, phrase boost, terms boost).
_SPRING_FIELDS = ((DESCRIPTION_FIELD, "desc", 1.0, 1.0), (NAME_FIELD, "name", 4.0, 2.0))
_SHORT = {DESCRIPTION_FIELD: "desc", NAME_FIELD: "name", PARAMETERS_FIELD: "param", FULL_FIELD: "text"}

Clause = tuple[str, float | None, float]  # (field, phrase boost or None for terms only, terms boost)


@dataclass(frozen=True)
class QueryShape:
    """The clauses of one field layout and where each field's postings sit; ``terms_once`` counts each
    distinct query term once (the "full" layout) instead of once per repetition (Spring's)."""

    clauses: tuple[Clause, ...]
    field_pos: dict[str, int]
    terms_once: bool

    def term_counts(self, terms: list[str]) -> dict[str, int]:
        """Each distinct term and how often the query repeats it (a "full" query counts each once)."""
        counts: dict[str, int] = {}
        for t in terms:
            counts[t] = 1 if self.terms_once else counts.get(t, 0) + 1
        return counts

    def plan(self, phrase: list[str], terms: list[str]) -> list[PlanGroup]:
        """Spring's buildQuery, after Lucene's BooleanQuery rewrite merged duplicate SHOULD clauses.

        :meth:`compile` builds the same query as arrays for searching; this form is for explanations."""
        counts = self.term_counts(terms)
        single = len(phrase) == 1 and len(counts) == 1
        groups: list[PlanGroup] = []
        for fname, phrase_boost, terms_boost in self.clauses:
            short = _SHORT[fname]
            if phrase_boost is not None and single:
                # xPhrase and xTerms are the same TermQuery: Lucene merges them, boosts summed.
                label = (
                    f"{short}Phrase + {short}Terms (identical TermQuery, merged; "
                    f"boost {phrase_boost:g}+{terms_boost:g})"
                )
                item = PlanItem(fname, (phrase[0],), phrase_boost + terms_boost * counts[phrase[0]])
                groups.append(PlanGroup(label, (item,)))
                continue
            if phrase_boost is not None and phrase:
                kind = "TermQuery" if len(phrase) == 1 else "PhraseQuery"
                label = f"{short}Phrase ({kind}, boost {phrase_boost:g})"
                groups.append(PlanGroup(label, (PlanItem(fname, tuple(phrase), phrase_boost),)))
            spring = "" if fname in (NAME_FIELD, DESCRIPTION_FIELD) else "; not in Spring"
            label = f"{short}Terms (SHOULD TermQueries, boost {terms_boost:g}{spring})"
            groups.append(
                PlanGroup(label, tuple(PlanItem(fname, (t,), terms_boost * c) for t, c in counts.items()))
            )
        return groups

    def compile(
        self,
        postings: Postings,
        fields: dict[str, FieldIndex],
        phrase: list[str],
        terms: list[str],
        ids: dict[str, int],
    ) -> CompiledQuery:
        """:meth:`plan` as arrays, built without the per-item objects: one row per TermQuery leaf (same
        clause order, same boosts), terms without postings in a field left out; phrase leaves are matched
        right away."""
        counts = self.term_counts(terms)
        tids = [ids[t] for t in counts]
        cnts = list(counts.values())
        has, n_terms = postings.has_postings, postings.n_terms
        keys: list[int] = []
        boost: list[float] = []
        mult: list[float] = []
        group: list[int] = []
        g = 0
        single = len(phrase) == 1 and len(counts) == 1
        pending = []  # (group, field, boost) of PhraseQuery clauses
        for fname, phrase_boost, terms_boost in self.clauses:
            offset = self.field_pos[fname] * n_terms
            if phrase_boost is not None and single:  # xPhrase == xTerms: one TermQuery, boosts summed
                if tids[0] >= 0 and has[offset + tids[0]]:
                    b = phrase_boost + terms_boost * cnts[0]
                    keys.append(offset + tids[0])
                    boost.append(b)
                    mult.append(b / terms_boost)
                    group.append(g)
                g += 1
                continue
            if phrase_boost is not None and phrase:  # several tokens (one token, one term is merged above)
                pending.append((g, fname, phrase_boost))
                g += 1
            leaves = [(offset + t, c) for t, c in zip(tids, cnts, strict=True) if t >= 0 and has[offset + t]]
            keys += [key for key, _ in leaves]
            bs = [terms_boost * c for _, c in leaves]
            boost += bs
            mult += [b / terms_boost for b in bs]
            group += [g] * len(leaves)
            g += 1
        query = compile_leaves(postings, keys, boost, mult, group, g)
        self._add_phrases(postings, fields, query, pending, [ids[t] for t in phrase])
        return query

    def _add_phrases(
        self,
        postings: Postings,
        fields: dict[str, FieldIndex],
        query: CompiledQuery,
        pending: list[tuple[int, str, float]],
        phrase_ids: list[int],
    ) -> None:
        """Match the PhraseQuery clauses: only where the field has every one of the phrase's terms (checked
        on the posting lists before touching positions)."""
        if not pending or min(phrase_ids) < 0:
            return
        has, n_terms = postings.has_postings, postings.n_terms
        for grp, fname, phrase_boost in pending:
            offset = self.field_pos[fname] * n_terms
            if all(has[offset + t] for t in phrase_ids):
                hits = fields[fname].phrase_scores(phrase_ids, phrase_boost)
                if hits is not None:
                    query.phrases.append((grp, hits[0], hits[1]))
