"""``retrieval_ndcg_at_k``: normalized discounted cumulative gain of the top k, binary or graded."""

from __future__ import annotations

from typing import ClassVar, Literal, cast

from pydantic import Field

from evald.case import EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.retrieval.common import JudgedRanking, RankingMetric, RelevanceOptions, discounted_gain


class NdcgOptions(RelevanceOptions):
    gain: Literal["linear", "exponential"] = Field(
        "linear", description="linear: a document's gain is its grade; exponential: 2**grade - 1"
    )


class RetrievalNdcgAtKMetric(RankingMetric):
    """Normalized discounted cumulative gain (nDCG@k) of the retrieved ranking, with binary or graded labels.

    Reads ``context`` (the retrieved documents, in retrieval order) and the relevance labels, which resolve
    from the case's ``metadata["relevant_ids"]`` (binary: grade 1) / ``metadata["relevance"]`` (graded: a
    mapping id -> grade), then ``expected`` when it is a mapping with those keys, then the options
    ``relevant_ids`` / ``relevance``. The cutoff k is the case's ``metadata["k"]``, else the option ``k``,
    else 5 (``DEFAULT_K`` in ``evald/metrics/retrieval/common.py``, which documents the resolution in full).

    Value: DCG@k / IDCG@k with DCG@k = sum over ranks i = 1..k of gain_i / log2(i + 1). With the default
    ``gain: linear`` a document's gain is its grade (binary labels: 1 or 0); ``gain: exponential`` uses
    2**grade - 1 (the same as linear for binary labels). The ideal DCG sorts the grades of ALL judged relevant
    documents, retrieved or not, in decreasing order and keeps the best k, so a relevant document that was never
    retrieved lowers the value. A document without an id, not judged, or repeating an id seen at a better rank
    has gain 0.

    Not applicable when there are no retrieved documents, or no relevance labels (or none grades a document
    as relevant).
    """

    kind: ClassVar[str] = "retrieval_ndcg_at_k"
    Options: ClassVar[type[ComponentConfig]] = NdcgOptions

    def rank(self, ranking: JudgedRanking, eval_case: EvalCase) -> Score:
        opts = cast(NdcgOptions, self.options)
        exponential = opts.gain == "exponential"

        def gain(grade: float) -> float:
            return 2.0**grade - 1.0 if exponential else grade

        dcg = discounted_gain([gain(g) for g in ranking.gains])
        ideal_grades = sorted(ranking.judgments.grades.values(), reverse=True)[: ranking.k]
        idcg = discounted_gain([gain(g) for g in ideal_grades])
        value = dcg / idcg  # idcg > 0: judge_ranking guarantees at least one grade above 0
        reason = f"DCG {dcg:.4g} of an ideal {idcg:.4g} at k={ranking.k} ({opts.gain} gains)"
        return self.score(value, reason, dcg=dcg, idcg=idcg, gain=opts.gain, **ranking.summary())
