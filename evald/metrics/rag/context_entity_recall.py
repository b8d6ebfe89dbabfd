"""``context_entity_recall``: the share of the expected answer's entities found in the retrieved context."""

from __future__ import annotations

import re
import unicodedata
from typing import ClassVar

from evald.case import Dimension, EvalCase, Score
from evald.metrics.base import BaseMetric
from evald.metrics.text import as_text

#: entity candidates: runs of capitalised words (``New York``, ``Ada Lovelace``), acronyms and identifiers with
#: a digit or capital inside (``HTTP/2``, ``gpt-4o``, ``CVE-2024-1234``), numbers (``1969``, ``3.5``, ``42%``),
#: ISO dates, and quoted or backticked terms
_ENTITY = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"|`[^`\n]{1,60}`|\"[^\"\n]{1,60}\""
    r"|\b[A-Z][\w'.-]*[A-Z0-9][\w'./-]*\b"
    r"|\b[a-z][a-z0-9]*[-_][\w.-]*\d[\w.-]*\b"
    r"|\b\d+(?:[.,]\d+)*%?"
    r"|\b[A-Z][a-z\u00c0-\u024f'-]+(?:\s+(?:of|de|la|von|van|the)?\s*[A-Z][a-z\u00c0-\u024f'-]+)*"
)
#: capitalised words that start sentences rather than name things
_STOP = frozenset({
    "the", "a", "an", "it", "its", "this", "that", "these", "those", "there", "they", "he", "she", "we", "you", "i",
    "in", "on", "at", "of", "for", "and", "or", "but", "if", "when", "yes", "no", "is", "was", "are", "as", "to",
})


def entities(text: str) -> list[str]:
    """The entity candidates of ``text``, normalised (NFKC, case-folded, quotes dropped), without duplicates."""
    out: dict[str, None] = {}
    for match in _ENTITY.finditer(unicodedata.normalize("NFKC", text)):
        entity = match.group(0).strip("`\"").strip().rstrip(".,")
        folded = entity.casefold()
        if not folded or folded in _STOP:
            continue
        out[folded] = None
    return list(out)


class ContextEntityRecallMetric(BaseMetric):
    """The share of the entities in ``expected`` that occur in the retrieved ``context`` (deterministic).

    RAGAS' / harness-evals' ContextEntityRecall is |entities(expected) ∩ entities(context)| / |entities(expected)|;
    harness-evals extracts entities with an LLM. This implementation extracts them deterministically: runs of
    capitalised words (names, places, organisations), acronyms and identifiers (``CVE-2024-1234``, ``gpt-4o``),
    numbers and percentages, ISO dates, and quoted or backticked terms; sentence-initial function words are
    dropped. An expected entity is recalled when its case-folded text occurs in the case-folded text of the
    documents' ``content`` (so a multi-word name split differently still counts). Example: expected "Marie Curie
    won the Nobel Prize in 1903", context "In 1903 the Nobel Prize went to Pierre and Marie Curie": entities
    {marie curie, nobel prize, 1903}, all found: 1.0. Metadata: ``expected_entities``, ``matched_entities``,
    ``missing`` (up to 10).

    Not applicable when no document has content, or when ``expected`` holds no entity (harness-evals scores
    that 1).
    """

    kind: ClassVar[str] = "context_entity_recall"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("expected", "context")
    needs: ClassVar[tuple[str, ...]] = ("expected", "context")

    def measure(self, eval_case: EvalCase) -> Score | None:
        text = "\n".join(doc.content for doc in eval_case.context if doc.content)
        if not text or eval_case.expected is None:
            return None
        wanted = entities(as_text(eval_case.expected))
        if not wanted:
            return None
        haystack = unicodedata.normalize("NFKC", text).casefold()
        missing = [e for e in wanted if e not in haystack]
        matched = len(wanted) - len(missing)
        return self.score(matched / len(wanted), f"{matched} of {len(wanted)} expected entities in the context",
                          expected_entities=len(wanted), matched_entities=matched, missing=missing[:10])
