"""``context_precision``: average precision of the top-k ranking against relevance labels (RAGAS, with labels)."""

from __future__ import annotations

from typing import ClassVar

from evald.case import EvalCase, Score
from evald.metrics.retrieval.common import JudgedRanking, RankingMetric

_MAX_LISTED = 10


class ContextPrecisionMetric(RankingMetric):
    """Average precision of the top-k ranking against relevance labels (RAGAS' context precision with labels).

    Reads ``context`` (the retrieved documents, in retrieval order) and the relevance labels, which resolve
    from the case's ``metadata["relevant_ids"]`` / ``metadata["relevance"]``, then ``expected`` when it is a
    mapping with those keys, then the options ``relevant_ids`` / ``relevance`` (a document is relevant when its
    grade is above 0; grades are otherwise ignored). The cutoff k is the case's ``metadata["k"]``, else the
    option ``k``, else 5 (``DEFAULT_K`` in ``evald/metrics/retrieval/common.py``).

    Value: the mean, over the ranks i (1..k) that hold a relevant document, of precision@i = (relevant
    documents in the first i) / i; 0 when no relevant document is in the top k. This is RAGAS' context
    precision with reference labels in place of an LLM's verdicts (its denominator is the number of relevant
    documents retrieved in the top k, not all relevant documents: recall is ``retrieval_recall_at_k``'s job).
    A document without an id, or repeating an id seen at a better rank, is not relevant.

    Not applicable when there are no retrieved documents, or no relevance labels (or none grades a document
    as relevant).
    """

    kind: ClassVar[str] = "context_precision"

    def rank(self, ranking: JudgedRanking, eval_case: EvalCase) -> Score:
        ranks = ranking.relevant_ranks
        if not ranks:
            return self.score(0.0, f"no relevant document in the top {ranking.k}", **ranking.summary())
        precisions = [hits / rank for hits, rank in enumerate(ranks, start=1)]
        value = sum(precisions) / len(precisions)
        listed = ", ".join(f"P@{rank}={p:.3g}" for rank, p in zip(ranks[:_MAX_LISTED], precisions, strict=False))
        more = f" and {len(ranks) - _MAX_LISTED} more" if len(ranks) > _MAX_LISTED else ""
        return self.score(value, f"mean of {listed}{more}", **ranking.summary())
