"""answer_similarity: the lexical (bag-of-words cosine) value by hand, and the embedding path against harness-evals'
AnswerSimilarityMetric with the same embedding vectors."""

from __future__ import annotations

import asyncio
import math

import pytest
from harness_evals.llm.embedding import BaseEmbedding
from harness_evals.metrics.rag.answer_similarity import AnswerSimilarityMetric as HAnswerSimilarity

from evald.case import EvalCase
from evald.metrics.harness_case import to_harness_case
from evald.metrics.rag.answer_similarity import AnswerSimilarityMetric
from evald.metrics.similarity.embeddings import HashingEmbeddingConfig, HashingEmbeddingProvider


def _value(output: str, expected: object, **options: object) -> float:
    score = asyncio.run(AnswerSimilarityMetric(options=options).a_measure(EvalCase(output=output, expected=expected)))
    assert score is not None
    return score.value


def test_lexical_cosine_by_hand() -> None:
    # counts {the, cat, sat} vs {the, cat, ran}: dot 2, norms sqrt(3) each: 2/3
    assert _value("The cat sat", "the cat ran") == pytest.approx(2 / 3)
    # {a: 2, b: 1} vs {a: 1}: dot 2, norms sqrt(5) and 1
    assert _value("a a b", "a") == pytest.approx(2 / math.sqrt(5))
    assert _value("Paris", ["London", "paris!"]) == pytest.approx(1.0)
    assert _value("same", "same") == 1.0


def test_not_applicable_without_expected() -> None:
    assert asyncio.run(AnswerSimilarityMetric().a_measure(EvalCase(output="x"))) is None


class _Hashing(BaseEmbedding):
    """harness-evals' embedding interface over evald's offline hashing provider: both sides see the same vectors."""

    def __init__(self) -> None:
        self._provider = HashingEmbeddingProvider(HashingEmbeddingConfig(kind="hashing").dimensions)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in await self._provider.embed(texts)]


def test_embedding_path_matches_harness_evals() -> None:
    case = EvalCase(output="the capital of France is Paris", expected="Paris is France's capital city")
    ours = asyncio.run(AnswerSimilarityMetric(options={"provider": {"kind": "hashing"}}).a_measure(case))
    theirs = asyncio.run(HAnswerSimilarity(embedding=_Hashing()).a_measure(to_harness_case(case)))
    assert ours is not None
    assert ours.value == pytest.approx(theirs.value, abs=1e-6)
