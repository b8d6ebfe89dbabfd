"""``answer_similarity``: semantic (embedding) or lexical similarity of the answer to the expected answer."""

from __future__ import annotations

from typing import ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.similarity.embedding_cosine import reference_cosines
from evald.metrics.similarity.embeddings import EmbeddingProviderConfig, provider_for
from evald.metrics.similarity.text import references
from evald.metrics.text import as_text


class AnswerSimilarityOptions(ComponentConfig):
    provider: EmbeddingProviderConfig | None = Field(
        None, description="embedding provider {kind: openai|local|hashing, ...}; unset: lexical (bag-of-words "
        "cosine), no service called",
    )
    mapping: Literal["clamp", "affine"] = Field(
        "clamp", description="embedding cosine to [0,1]: clamp (negatives become 0) or affine ((cos + 1) / 2)"
    )


class AnswerSimilarityMetric(BaseMetric):
    """Cosine similarity of the answer (``output``) and the expected answer, by embeddings or by words.

    harness-evals' AnswerSimilarity (RAG) is the cosine of the two texts' embeddings. With ``provider`` set this
    metric is exactly that (the same computation as ``embedding_cosine``: both texts embedded in one call, cosine
    mapped by ``mapping``). Without a provider it is deterministic and offline: the cosine of the two texts'
    word-count vectors (case-folded word tokens), e.g. "the cat sat" vs "the cat ran" = 2/3. When ``expected`` is a
    list, the best-matching reference counts. Identical texts score 1 and an empty text 0 without any call.

    Not applicable when ``output`` or ``expected`` is missing. A failing provider is an error outcome, never 0.
    """

    kind: ClassVar[str] = "answer_similarity"
    family: ClassVar[str] = "rag"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = AnswerSimilarityOptions

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(AnswerSimilarityOptions, self.options)
        refs = [ref.strip() for ref in references(eval_case.expected)]
        if eval_case.output is None or not refs:
            return None
        output = as_text(eval_case.output).strip()
        provider = None if opts.provider is None else provider_for(opts.provider)
        values = await reference_cosines(output, refs, provider)
        best = max(range(len(values)), key=values.__getitem__)
        cosine = values[best]
        value = max(0.0, cosine) if opts.mapping == "clamp" or opts.provider is None else (cosine + 1.0) / 2.0
        method = "lexical" if opts.provider is None else opts.provider.kind
        return self.score(min(1.0, value), f"{method} cosine {cosine:.3f}", cosine=cosine, method=method,
                          best_reference=best)
