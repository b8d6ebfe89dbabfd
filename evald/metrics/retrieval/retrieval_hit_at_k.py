"""``retrieval_hit_at_k``: at least one relevant document is among the first k retrieved."""

from __future__ import annotations

from typing import ClassVar

from evald.case import EvalCase, Score
from evald.metrics.retrieval.common import JudgedRanking, RankingMetric


class RetrievalHitAtKMetric(RankingMetric):
    """Whether any relevant document is among the first k retrieved documents.

    Reads ``context`` (the retrieved documents, in retrieval order) and the relevance labels, which resolve
    from the case's ``metadata["relevant_ids"]`` / ``metadata["relevance"]``, then ``expected`` when it is a
    mapping with those keys, then the options ``relevant_ids`` / ``relevance`` (a document is relevant when its
    grade is above 0). The cutoff k is the case's ``metadata["k"]``, else the option ``k``, else 5
    (``DEFAULT_K`` in ``evald/metrics/retrieval/common.py``, which documents the resolution in full).

    Value: 1 when a relevant document id is within the top k, else 0. A document without an id is never
    relevant (it still takes its rank). ``metadata`` holds k, the counts and the 1-based ranks of the hits.

    Not applicable when there are no retrieved documents, or no relevance labels (or none grades a document
    as relevant).
    """

    kind: ClassVar[str] = "retrieval_hit_at_k"
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True

    def rank(self, ranking: JudgedRanking, eval_case: EvalCase) -> Score:
        ranks = ranking.relevant_ranks
        if ranks:
            reason = f"first relevant document at rank {ranks[0]} (k={ranking.k})"
        else:
            reason = f"no relevant document in the top {ranking.k} of {len(eval_case.context)} retrieved"
        return self.score(float(bool(ranks)), reason, **ranking.summary())
