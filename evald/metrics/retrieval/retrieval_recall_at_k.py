"""``retrieval_recall_at_k``: the share of the relevant documents found among the first k retrieved."""

from __future__ import annotations

from typing import ClassVar

from evald.case import EvalCase, Score
from evald.metrics.retrieval.common import JudgedRanking, RankingMetric


class RetrievalRecallAtKMetric(RankingMetric):
    """The fraction of the relevant documents that are among the first k retrieved documents.

    Reads ``context`` (the retrieved documents, in retrieval order) and the relevance labels, which resolve
    from the case's ``metadata["relevant_ids"]`` / ``metadata["relevance"]``, then ``expected`` when it is a
    mapping with those keys, then the options ``relevant_ids`` / ``relevance`` (a document is relevant when its
    grade is above 0). The cutoff k is the case's ``metadata["k"]``, else the option ``k``, else 5
    (``DEFAULT_K`` in ``evald/metrics/retrieval/common.py``, which documents the resolution in full).

    Value: |relevant ∩ top-k ids| / |relevant|. A document retrieved twice counts once; a document without an
    id is never relevant. With more relevant documents than k the value cannot reach 1 (standard recall@k).
    The reason lists up to five relevant ids that were missed.

    Not applicable when there are no retrieved documents, or no relevance labels (or none grades a document
    as relevant).
    """

    kind: ClassVar[str] = "retrieval_recall_at_k"

    def rank(self, ranking: JudgedRanking, eval_case: EvalCase) -> Score:
        relevant = ranking.judgments.relevant_ids
        found = ranking.found_ids
        missed = sorted(relevant - found)
        reason = f"{len(found)} of {len(relevant)} relevant document(s) in the top {ranking.k}"
        if missed:
            reason += "; missed: " + ", ".join(missed[:5]) + (f" and {len(missed) - 5} more" if len(missed) > 5 else "")
        return self.score(len(found) / len(relevant), reason, **ranking.summary())
