"""``bertscore_like``: greedy token matching, hand-computed with the hashing provider (distinct words are
orthogonal one-hot vectors) and with hand-picked fixed vectors."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase
from evald.metrics.remote import MetricUnavailable
from evald.metrics.similarity import bertscore_like
from evald.metrics.similarity.bertscore_like import BertscoreLikeMetric
from evald.metrics.similarity.embeddings import HashingEmbeddingConfig, HashingEmbeddingProvider, provider_for
from tests.metrics.similarity.providers import HASHING, Down, FixedVectors


async def measure(output: Any, expected: Any, **options: Any) -> tuple[float, dict[str, Any]] | None:
    metric = BertscoreLikeMetric(options={"provider": HASHING, **options})
    score = await metric.a_measure(EvalCase(output=output, expected=expected))
    return None if score is None else (score.value, dict(score.metadata))


async def test_hand_computed_f1_with_one_hot_tokens() -> None:
    # the/cat match themselves (cos 1), sat vs lay 0: P = (1 + 1 + 0) / 3, R = (1 + 1 + 0) / 3, F1 = 2/3
    result = await measure("The cat sat.", "the cat lay")
    assert result is not None
    value, metadata = result
    assert math.isclose(value, 2 / 3)
    assert math.isclose(metadata["precision"], 2 / 3) and math.isclose(metadata["recall"], 2 / 3)
    assert (metadata["candidate_tokens"], metadata["reference_tokens"], metadata["truncated"]) == (3, 3, False)


async def test_repeated_tokens_count_in_the_means() -> None:
    # candidate the, the, cat: each has an exact partner, P = 1; reference the, cat, sat, on: R = (1+1+0+0)/4 = 0.5
    # F1 = 2 * 1 * 0.5 / (1 + 0.5) = 2/3
    result = await measure("the the cat", "the cat sat on")
    assert result is not None and math.isclose(result[0], 2 / 3)
    assert (result[1]["precision"], result[1]["recall"]) == (1.0, 0.5)


async def test_partial_similarities_with_fixed_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = FixedVectors({"big": [1.0, 0.0], "large": [0.8, 0.6], "dog": [0.0, 1.0]})
    monkeypatch.setattr(bertscore_like, "provider_for", lambda config: fixed)
    # cos: big-large 0.8, big-dog 0, dog-large 0.6, dog-dog 1
    # P = (max(0.8, 0) + max(0.6, 1)) / 2 = 0.9; R = (max(0.8, 0.6) + max(0, 1)) / 2 = 0.9; F1 = 0.9
    score = await BertscoreLikeMetric(options={"provider": HASHING}).a_measure(
        EvalCase(output="big dog", expected="large dog"))
    assert score is not None and math.isclose(score.value, 0.9) and score.passed  # 0.9 >= 0.7
    assert fixed.calls == [["big", "dog", "large"]]  # every distinct token, one call


async def test_negative_cosines_do_not_go_below_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = FixedVectors({"yes": [1.0, 0.0], "no": [-1.0, 0.0]})
    monkeypatch.setattr(bertscore_like, "provider_for", lambda config: fixed)
    result = await measure("yes", "no")  # P = R = -1, clamped to 0: F1 = 0
    assert result is not None and result[0] == 0.0 and not result[1]["precision"]


async def test_pass_fail_and_the_best_of_several_references() -> None:
    metric = BertscoreLikeMetric(options={"provider": HASHING})
    good = await metric.a_measure(EvalCase(output="the cat sat", expected=["a dog barked", "the cat sat on"]))
    bad = await metric.a_measure(EvalCase(output="the cat sat", expected="a dog barked"))
    # vs "the cat sat on": P = 1, R = 3/4, F1 = 2 * 0.75 / 1.75 = 6/7 = 0.857 >= 0.7
    assert good is not None and math.isclose(good.value, 6 / 7) and good.passed
    assert good.metadata["best_reference"] == 1 and "best of 2 references: #1" in (good.reason or "")
    assert bad is not None and (bad.value, bad.passed) == (0.0, False)


async def test_every_distinct_token_is_embedded_once_in_one_call() -> None:
    provider = provider_for(HashingEmbeddingConfig(kind="hashing", dimensions=1024))
    assert isinstance(provider, HashingEmbeddingProvider)
    calls, embedded = provider.calls, provider.texts_embedded
    await measure("the cat the cat", ["the dog", "a cat"])
    assert (provider.calls - calls, provider.texts_embedded - embedded) == (1, 4)  # the, cat, dog, a


async def test_max_tokens_keeps_the_start_of_each_text() -> None:
    result = await measure("the cat sat", "the cat lay", max_tokens=2)  # "the cat" vs "the cat"
    assert result is not None and result[0] == 1.0 and result[1]["truncated"] is True


async def test_lowercase_off_keeps_the_case_of_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = FixedVectors({"Paris": [1.0, 0.0], "paris": [0.0, 1.0]})
    monkeypatch.setattr(bertscore_like, "provider_for", lambda config: fixed)
    result = await measure("Paris", "paris", lowercase=False)
    assert result is not None and result[0] == 0.0 and fixed.calls == [["Paris", "paris"]]


async def test_an_output_without_word_tokens_scores_zero() -> None:
    result = await measure("?!", "the cat")
    assert result is not None and result[0] == 0.0


@pytest.mark.parametrize(("output", "expected"), [(None, "cat"), ("cat", None), ("cat", "..."), ("cat", [])])
async def test_not_applicable_without_output_or_a_reference_with_words(output: Any, expected: Any) -> None:
    assert await measure(output, expected) is None


async def test_a_failing_provider_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bertscore_like, "provider_for", lambda config: Down())
    with pytest.raises(MetricUnavailable, match="embedding service down"):
        await measure("the cat", "the dog")


@pytest.mark.parametrize(
    "options", [{}, {"provider": HASHING, "max_tokens": 0}, {"provider": {"kind": "hashing", "size": 3}}]
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BertscoreLikeMetric(options=options)
