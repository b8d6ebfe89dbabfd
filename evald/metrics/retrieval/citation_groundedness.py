"""``citation_groundedness``: the output's citations point at retrieved documents (and its quotes appear in them)."""

from __future__ import annotations

import re
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, Document, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.options import Pattern
from evald.metrics.retrieval.common import normalize_text

#: ``[1]``, ``[kb-001]``, ``[doc_3#p2]``, ``[1, 3]`` (two references); not markdown links ``[text](url)``.
DEFAULT_CITATION_PATTERN = r"\[\s*([A-Za-z0-9][\w.:#/-]*(?:\s*,\s*[A-Za-z0-9][\w.:#/-]*)*)\s*\](?!\()"
#: Text between straight or curly double quotes, on one line.
_QUOTED = re.compile(r"\"([^\"\n]+)\"|\u201c([^\u201d\n]+)\u201d")
_TRAILING_PUNCTUATION = ".,;:!?\u2026 "
_MAX_LISTED = 5


class CitationOptions(ComponentConfig):
    pattern: Pattern = Field(
        DEFAULT_CITATION_PATTERN,
        description="regex of a citation marker; group 1 (else the whole match) is a comma-separated reference list",
    )
    required: bool = Field(True, description="an output without any citation scores 0 (false: not applicable)")
    evidence_spans: bool = Field(
        False, description="also check that double-quoted spans of the output appear in some document's content"
    )
    min_span_length: int = Field(8, ge=1, description="evidence_spans: ignore quoted spans shorter than this")


class CitationGroundednessMetric(BaseMetric):
    """The share of the output's citations that are grounded in the retrieved documents.

    Reads ``output`` (text) and ``context`` (all retrieved documents, in retrieval order; no cutoff applies).

    Citations: every match of ``pattern`` (default: ``[1]``, ``[kb-001]``, ``[1, 3]``-style markers, but not
    markdown links ``[text](url)``) yields the references listed in its first group (the whole match when the
    pattern has no group), split on commas and trimmed. A reference is grounded when it equals the id of a
    retrieved document, or is an integer n with 1 <= n <= the number of retrieved documents (a 1-based index).
    With ``evidence_spans: true``, every double-quoted span (``"..."`` or curly quotes) of at least
    ``min_span_length`` characters (after trimming trailing punctuation) is also a citation, grounded when it
    occurs in some document's content (NFC, case-folded, whitespace-collapsed comparison). Each distinct
    reference and each distinct span counts once, however often it is repeated.

    Value: grounded citations / citations. With no citation at all the value is 0 when ``required`` (the
    default), and the metric is not applicable otherwise. ``metadata`` lists the ungrounded citations.

    When no retrieved document carries content, quoted spans cannot be checked: they are left out of the count
    (``metadata["unjudged_spans"]`` says how many) and only the markers are scored.

    Not applicable when ``output`` is not a string or no document was retrieved; also when the only citations
    are quoted spans that could not be checked.
    """

    kind: ClassVar[str] = "citation_groundedness"
    family: ClassVar[str] = "retrieval"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("output", "context")
    needs: ClassVar[tuple[str, ...]] = ("output", "context")
    Options: ClassVar[type[ComponentConfig]] = CitationOptions

    def setup(self) -> None:
        self._pattern = re.compile(cast(CitationOptions, self.options).pattern)

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(CitationOptions, self.options)
        output, docs = eval_case.output, eval_case.context
        if not isinstance(output, str) or not docs:
            return None
        references = cited_references(output, self._pattern)
        spans = quoted_spans(output, opts.min_span_length) if opts.evidence_spans else []
        contents = [normalize_text(d.content) for d in docs if d.content]
        unjudged_spans = 0 if contents else len(spans)
        if not contents:
            spans = []
        total = len(references) + len(spans)
        if total == 0:
            if unjudged_spans or not opts.required:
                return None
            return self.score(0.0, "no citation found, but citations are required", citations=0, grounded=0)
        ungrounded = [f"[{r}]" for r in references if not _reference_resolves(r, docs)]
        ungrounded += [f'"{s}"' for s in spans if not any(normalize_text(s) in c for c in contents)]
        grounded = total - len(ungrounded)
        if ungrounded:
            more = f" and {len(ungrounded) - _MAX_LISTED} more" if len(ungrounded) > _MAX_LISTED else ""
            listed = ", ".join(ungrounded[:_MAX_LISTED])
            reason = f"{grounded} of {total} citation(s) grounded; not found: {listed}{more}"
        else:
            reason = f"all {total} citation(s) grounded"
        return self.score(grounded / total, reason, citations=total, grounded=grounded, references=len(references),
                          spans=len(spans), ungrounded=ungrounded, unjudged_spans=unjudged_spans)


def cited_references(output: str, pattern: re.Pattern[str]) -> list[str]:
    """Distinct references of the output's citation markers, in order of first appearance."""
    references: dict[str, None] = {}
    for match in pattern.finditer(output):
        listed = match.group(1) if pattern.groups else match.group(0)
        for reference in (listed or "").split(","):
            if reference.strip():
                references.setdefault(reference.strip(), None)
    return list(references)


def quoted_spans(output: str, min_length: int) -> list[str]:
    """Distinct double-quoted spans of the output (trailing punctuation trimmed) of at least ``min_length``."""
    spans: dict[str, None] = {}
    for match in _QUOTED.finditer(output):
        span = (match.group(1) or match.group(2)).strip().rstrip(_TRAILING_PUNCTUATION)
        if len(span) >= min_length:
            spans.setdefault(span, None)
    return list(spans)


def _reference_resolves(reference: str, docs: tuple[Document, ...]) -> bool:
    if any(doc.id == reference for doc in docs):
        return True
    return reference.isdecimal() and 1 <= int(reference) <= len(docs)
