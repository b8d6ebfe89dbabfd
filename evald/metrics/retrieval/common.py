"""Shared resolution for the retrieval metrics: the cutoff k, the relevance judgments and the judged top-k ranking.

Every retrieval metric reads the same inputs the same way, so they live here once:

* **The ranking** is ``EvalCase.context``: the retrieved ``Document``\\ s in retrieval order (rank 1 first).
* **The cutoff k** resolves, first match wins: the case's ``metadata["k"]`` (a positive int; anything else is
  ignored), the metric option ``k``, then :data:`DEFAULT_K`.
* **The relevance judgments** resolve from the first of these levels that holds a usable value:

  1. the case's ``metadata["relevant_ids"]`` (a list of ids, or one id) and/or ``metadata["relevance"]``
     (a mapping id -> grade);
  2. ``EvalCase.expected`` when it is a mapping with ``relevant_ids`` and/or ``relevance`` keys;
  3. the metric options ``relevant_ids`` / ``relevance``.

  When a level has both keys they are merged: the grades of ``relevance``, plus grade 1 for every id of
  ``relevant_ids`` that ``relevance`` does not grade. A document is relevant when its grade is above 0 (negative
  grades count as 0). Ids are compared as exact strings; integer ids are turned into strings. A value of the
  wrong shape (e.g. a number for ``relevant_ids``, a grade that is not a number) makes its key count as absent.
  A level whose keys are present but grade nothing as relevant (e.g. ``relevant_ids: []``) is still the level
  that wins: the case then has no relevant document and the ranking metrics do not apply to it.
* **Judging the ranking** gives each top-k position a gain: the document's grade, or 0 when the document has
  no id (it cannot be judged by id, so it is never relevant, but it still occupies its rank), is not judged,
  or repeats an id already seen at a better rank (a document is credited once, as trec_eval does).

The formulas are a few lines each and are written out here rather than taken from an IR library (ranx,
pytrec_eval, scikit-learn's ``ndcg_score``): those pull in numba/numpy/C extensions for arithmetic on a handful
of numbers, and scikit-learn's ideal DCG only sees the scored items, whereas nDCG here must count the relevant
documents that were not retrieved at all.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, Document, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric

#: The rank cutoff used when neither the case (``metadata["k"]``) nor the metric option ``k`` sets one.
DEFAULT_K = 5

RELEVANT_IDS_KEY = "relevant_ids"
RELEVANCE_KEY = "relevance"
K_KEY = "k"


class CutoffOptions(ComponentConfig):
    """Options of the retrieval metrics that look at the top k documents."""

    k: int | None = Field(
        None, ge=1, description=f"rank cutoff when the case's metadata has no 'k'; unset: {DEFAULT_K}"
    )


class RelevanceOptions(CutoffOptions):
    """Options of the retrieval metrics that judge the ranking against relevance labels."""

    relevant_ids: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, description="relevant document ids, used when neither the case's metadata nor expected has labels"
    )
    relevance: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] | None = Field(
        None, description="graded labels (document id -> grade, 0 = not relevant), same fallback as relevant_ids"
    )


@dataclass(frozen=True, slots=True)
class Judgments:
    """Relevance labels of one case: ``grades`` holds the relevant ids only (grade > 0)."""

    grades: Mapping[str, float]
    source: str  # "metadata", "expected" or "options"

    @property
    def relevant_ids(self) -> frozenset[str]:
        return frozenset(self.grades)


@dataclass(frozen=True, slots=True)
class JudgedRanking:
    """The top-k documents of a case with one gain per position (0 = not relevant at that rank)."""

    k: int
    top_k: tuple[Document, ...]
    gains: tuple[float, ...]
    judgments: Judgments

    @property
    def relevant_ranks(self) -> list[int]:
        """1-based ranks of the relevant documents within the top k."""
        return [rank for rank, gain in enumerate(self.gains, start=1) if gain > 0]

    @property
    def found_ids(self) -> frozenset[str]:
        """Ids of the relevant documents within the top k."""
        return frozenset(
            doc.id for doc, gain in zip(self.top_k, self.gains, strict=True) if gain > 0 and doc.id is not None
        )

    def summary(self) -> dict[str, Any]:
        """Score metadata shared by the ranking metrics."""
        return {
            "k": self.k,
            "retrieved": len(self.top_k),
            "relevant": len(self.judgments.grades),
            "relevant_ranks": self.relevant_ranks,
            "labels_from": self.judgments.source,
        }


def resolve_k(eval_case: EvalCase, option_k: int | None) -> int:
    """The cutoff: ``metadata["k"]`` (positive int), else the option, else :data:`DEFAULT_K`."""
    case_k = eval_case.metadata.get(K_KEY) if isinstance(eval_case.metadata, Mapping) else None
    if isinstance(case_k, int) and not isinstance(case_k, bool) and case_k >= 1:
        return case_k
    return option_k if option_k is not None else DEFAULT_K


def top_k(eval_case: EvalCase, option_k: int | None) -> tuple[int, tuple[Document, ...]]:
    k = resolve_k(eval_case, option_k)
    return k, tuple(eval_case.context[:k])


def resolve_judgments(eval_case: EvalCase, options: RelevanceOptions) -> Judgments | None:
    """The relevance labels of the first level that has any (see the module docstring), or None."""
    levels: list[tuple[str, Any, Any]] = []
    if isinstance(eval_case.metadata, Mapping):
        levels.append(("metadata", eval_case.metadata.get(RELEVANT_IDS_KEY), eval_case.metadata.get(RELEVANCE_KEY)))
    if isinstance(eval_case.expected, Mapping):
        levels.append(("expected", eval_case.expected.get(RELEVANT_IDS_KEY), eval_case.expected.get(RELEVANCE_KEY)))
    levels.append(("options", options.relevant_ids, options.relevance))
    for source, raw_ids, raw_grades in levels:
        grades = _merge_labels(_parse_ids(raw_ids), _parse_grades(raw_grades))
        if grades is not None:
            return Judgments({doc_id: g for doc_id, g in grades.items() if g > 0}, source)
    return None


def judge_ranking(eval_case: EvalCase, options: RelevanceOptions) -> JudgedRanking | None:
    """The judged top-k ranking, or None (not applicable) without retrieved documents or relevant labels."""
    if not eval_case.context:
        return None
    judgments = resolve_judgments(eval_case, options)
    if judgments is None or not judgments.grades:
        return None
    k, docs = top_k(eval_case, options.k)
    seen: set[str] = set()
    gains: list[float] = []
    for doc in docs:
        doc_id = _document_id(doc)
        gains.append(judgments.grades.get(doc_id, 0.0) if doc_id is not None and doc_id not in seen else 0.0)
        if doc_id is not None:
            seen.add(doc_id)
    return JudgedRanking(k, docs, tuple(gains), judgments)


class RankingMetric(BaseMetric):
    """The shared body of the metrics that score the judged top-k ranking: ``measure`` judges it (not
    applicable without retrieved documents or relevant labels) and hands it to ``rank``."""

    family: ClassVar[str] = "retrieval"
    dimension: ClassVar[Dimension] = Dimension.GROUNDEDNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("context", "expected", "metadata")
    needs: ClassVar[tuple[str, ...]] = ("context",)  # relevance comes from expected ids or the documents' labels
    Options: ClassVar[type[ComponentConfig]] = RelevanceOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        ranking = judge_ranking(eval_case, cast(RelevanceOptions, self.options))
        return None if ranking is None else self.rank(ranking, eval_case)

    def rank(self, ranking: JudgedRanking, eval_case: EvalCase) -> Score:
        """The score of a judged ranking (``eval_case`` for what the ranking does not carry)."""
        raise NotImplementedError


def discounted_gain(gains: Sequence[float]) -> float:
    """DCG: the sum of ``gain / log2(rank + 1)`` over 1-based ranks."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


_WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFC, case-folded, whitespace runs collapsed to one space and trimmed: the form text is compared in."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip()


def _document_id(doc: Document) -> str | None:
    return doc.id if isinstance(doc.id, str) and doc.id else None


def _as_id(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _parse_ids(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    if isinstance(raw, (str, int)) and not isinstance(raw, bool):
        single = _as_id(raw)
        return [single] if single is not None else None
    if isinstance(raw, (list, tuple, set, frozenset)):
        ids = [_as_id(v) for v in raw]
        return None if any(i is None for i in ids) else [i for i in ids if i is not None]
    return None


def _parse_grades(raw: Any) -> dict[str, float] | None:
    if not isinstance(raw, Mapping):
        return None
    grades: dict[str, float] = {}
    for key, grade in raw.items():
        doc_id = _as_id(key)
        if doc_id is None or isinstance(grade, bool) or not isinstance(grade, (int, float)) or not math.isfinite(grade):
            return None
        grades[doc_id] = max(0.0, float(grade))
    return grades


def _merge_labels(ids: list[str] | None, grades: dict[str, float] | None) -> dict[str, float] | None:
    if ids is None and grades is None:
        return None
    merged = dict(grades or {})
    for doc_id in ids or ():
        merged.setdefault(doc_id, 1.0)
    return merged
