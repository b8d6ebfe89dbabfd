"""``retrieval_mrr``: the reciprocal rank of the first relevant document within the top k."""

from __future__ import annotations

from typing import ClassVar

from evald.case import EvalCase, Score
from evald.metrics.retrieval.common import JudgedRanking, RankingMetric


class RetrievalMrrMetric(RankingMetric):
    """The reciprocal rank of the first relevant retrieved document (0 when none is in the top k).

    Reads ``context`` (the retrieved documents, in retrieval order) and the relevance labels, which resolve
    from the case's ``metadata["relevant_ids"]`` / ``metadata["relevance"]``, then ``expected`` when it is a
    mapping with those keys, then the options ``relevant_ids`` / ``relevance`` (a document is relevant when its
    grade is above 0). The cutoff k is the case's ``metadata["k"]``, else the option ``k``, else 5
    (``DEFAULT_K`` in ``evald/metrics/retrieval/common.py``, which documents the resolution in full).

    Value: 1 / rank of the first relevant document (rank 1 = first retrieved), or 0 when no relevant document
    is within the top k. Averaged over cases by the summary, this is the mean reciprocal rank. A document
    without an id is never relevant but still takes its rank.

    Not applicable when there are no retrieved documents, or no relevance labels (or none grades a document
    as relevant).
    """

    kind: ClassVar[str] = "retrieval_mrr"

    def rank(self, ranking: JudgedRanking, eval_case: EvalCase) -> Score:
        ranks = ranking.relevant_ranks
        if not ranks:
            return self.score(0.0, f"no relevant document in the top {ranking.k}", **ranking.summary())
        return self.score(1.0 / ranks[0], f"first relevant document at rank {ranks[0]}", **ranking.summary())
