"""``answer_containment_at_k``: the expected answer appears in the text of one of the first k documents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, cast

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.retrieval.common import CutoffOptions, normalize_text, top_k

ANSWER_KEY = "answer"


class AnswerContainmentAtKMetric(BaseMetric):
    """Whether an expected answer is contained in the content of at least one of the first k retrieved documents.

    Reads ``context`` (the retrieved documents, in retrieval order, and their ``content``) and ``expected``:
    a string, a list of acceptable strings, or a mapping whose ``answer`` key holds one of those (so the same
    mapping can carry ``relevant_ids``). Text is compared Unicode-NFC-normalized, case-folded and with
    whitespace runs collapsed to one space. The cutoff k is the case's ``metadata["k"]``, else the option
    ``k``, else 5 (``DEFAULT_K`` in ``evald/metrics/retrieval/common.py``).

    Value: 1 when some acceptable answer occurs in the content of some top-k document, else 0. Documents
    without content are skipped; ``metadata["rank"]`` is the 1-based rank of the first document that contains
    an answer.

    Not applicable when ``expected`` holds no non-empty answer text, or when none of the top-k documents has
    content (conventions that record only ids and scores cannot answer the question).
    """

    kind: ClassVar[str] = "answer_containment_at_k"
    family: ClassVar[str] = "retrieval"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("context", "expected", "metadata")
    needs: ClassVar[tuple[str, ...]] = ("context", "expected")
    Options: ClassVar[type[ComponentConfig]] = CutoffOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        answers = [a for a in (normalize_text(t) for t in _expected_answers(eval_case.expected)) if a]
        k, docs = top_k(eval_case, cast(CutoffOptions, self.options).k)
        contents = [(rank, normalize_text(d.content)) for rank, d in enumerate(docs, start=1) if d.content]
        if not answers or not contents:
            return None
        for rank, content in contents:
            if any(answer in content for answer in answers):
                return self.score(1.0, f"expected answer found in the document at rank {rank}", k=k, rank=rank,
                                  searched=len(contents))
        return self.score(0.0, f"expected answer in none of the {len(contents)} top-{k} document(s) with content",
                          k=k, rank=None, searched=len(contents))


def _expected_answers(expected: Any) -> list[str]:
    if isinstance(expected, Mapping):
        expected = expected.get(ANSWER_KEY)
    if isinstance(expected, str):
        return [expected]
    if isinstance(expected, (list, tuple)):
        return [v for v in expected if isinstance(v, str)]
    return []
