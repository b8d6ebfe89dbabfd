"""``embedding_cosine`` with the offline hashing provider (word-count vectors) and hand-picked fixed vectors."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.metrics.remote import MetricUnavailable
from evald.metrics.similarity import embedding_cosine
from evald.metrics.similarity.embedding_cosine import EmbeddingCosineMetric
from evald.metrics.similarity.embeddings import HashingEmbeddingConfig, HashingEmbeddingProvider, provider_for
from tests.metrics.similarity.providers import HASHING, Down, FixedVectors


def hashing_provider() -> HashingEmbeddingProvider:
    provider = provider_for(HashingEmbeddingConfig(kind="hashing", dimensions=1024))
    assert isinstance(provider, HashingEmbeddingProvider)
    return provider


async def measure(output: Any, expected: Any, **options: Any) -> tuple[float, dict[str, Any]] | None:
    metric = EmbeddingCosineMetric(options={"provider": HASHING, **options})
    score = await metric.a_measure(EvalCase(output=output, expected=expected))
    return None if score is None else (score.value, dict(score.metadata))


async def test_hand_computed_cosine_of_word_count_vectors() -> None:
    # "the cat sat" = e_the + e_cat + e_sat, "the cat lay" = e_the + e_cat + e_lay (distinct buckets):
    # cos = 2 / (sqrt(3) * sqrt(3)) = 2/3
    result = await measure("the cat sat", "the cat lay")
    assert result is not None and math.isclose(result[0], 2 / 3) and math.isclose(result[1]["cosine"], 2 / 3)
    assert result[1]["mapping"] == "clamp" and result[1]["provider"] == "hashing"


async def test_pass_and_fail_against_the_default_threshold() -> None:
    metric = EmbeddingCosineMetric(options={"provider": HASHING})
    # "the cat sat on the mat" = 2 e_the + cat + sat + on + mat (norm sqrt 8), "the cat sat on a mat": one "the"
    # becomes "a" (norm sqrt 6): dot = 2*1 + 1 + 1 + 1 + 1 = 6, cos = 6 / sqrt(48) = 0.866 >= 0.8
    close = await metric.a_measure(EvalCase(output="the cat sat on the mat", expected="the cat sat on a mat"))
    far = await metric.a_measure(EvalCase(output="a dog barked", expected="the cat sat"))
    assert close is not None and math.isclose(close.value, 6 / math.sqrt(48)) and close.passed
    assert far is not None and (far.value, far.passed) == (0.0, False)


async def test_a_list_of_references_takes_the_best_in_one_provider_call() -> None:
    provider = hashing_provider()
    calls, embedded = provider.calls, provider.texts_embedded
    result = await measure("the cat sat", ["a dog", "the cat lay", "a dog"])
    assert result is not None and math.isclose(result[0], 2 / 3) and result[1]["best_reference"] == 1
    assert (provider.calls - calls, provider.texts_embedded - embedded) == (1, 3)  # "a dog" embedded once


async def test_identical_and_empty_texts_need_no_provider() -> None:
    provider = hashing_provider()
    calls = provider.calls
    assert await measure(" Paris ", "Paris") == (1.0, {"cosine": 1.0, "mapping": "clamp", "best_reference": 0,
                                                      "provider": "hashing"})
    assert await measure({"city": "Paris"}, {"city": "Paris"}) is not None  # structured: compared as JSON text
    result = await measure("", "Paris")
    assert result is not None and result[0] == 0.0
    assert provider.calls == calls


@pytest.mark.parametrize(
    ("mapping", "expected_value"),
    [("clamp", 0.0), ("affine", 0.2)],  # cos = 1 * -0.6 + 0 * 0.8 = -0.6: clamp -> 0, affine (-0.6 + 1) / 2 = 0.2
)
async def test_negative_cosines_are_mapped(
    monkeypatch: pytest.MonkeyPatch, mapping: str, expected_value: float
) -> None:
    fixed = FixedVectors({"yes": [1.0, 0.0], "no": [-0.6, 0.8]})
    monkeypatch.setattr(embedding_cosine, "provider_for", lambda config: fixed)
    result = await measure("yes", "no", mapping=mapping)
    assert result is not None and math.isclose(result[0], expected_value) and math.isclose(result[1]["cosine"], -0.6)
    assert fixed.calls == [["yes", "no"]]


async def test_affine_mapping_of_unrelated_texts_is_one_half() -> None:
    result = await measure("a dog barked", "the cat sat", mapping="affine")  # cos 0 -> (0 + 1) / 2
    assert result is not None and result[0] == 0.5


@pytest.mark.parametrize(("output", "expected"), [(None, "Paris"), ("Paris", None), ("Paris", []), ("Paris", [None])])
async def test_missing_output_or_expected_is_not_applicable(output: Any, expected: Any) -> None:
    assert await measure(output, expected) is None


async def test_a_failing_provider_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_cosine, "provider_for", lambda config: Down())
    with pytest.raises(MetricUnavailable, match="embedding service down"):
        await measure("Paris", "Lyon")


@pytest.mark.parametrize(
    "options",
    [{}, {"provider": {"kind": "nope"}}, {"provider": HASHING, "mapping": "sigmoid"}, {"provider": HASHING, "x": 1}],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        EmbeddingCosineMetric(options=options)
