from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.similarity.bleu import BleuMetric, sentence_bleu


def measure(output: Any, expected: Any, **options: Any) -> Score | None:
    return BleuMetric(options=options).measure(EvalCase(output=output, expected=expected))


def test_hand_computed_bleu_4_with_smoothing() -> None:
    # candidate: the cat sat on the mat    reference: the cat is on the mat
    # p1 = 5/6 (the x2, cat, on, mat)       p2 = 3/5 (the cat, on the, the mat)
    # p3 = 1/4 (on the mat)                 p4 = 0/3 -> smoothed 0.1/3
    # BP = 1 (6 vs 6); BLEU = (5/6 * 3/5 * 1/4 * 0.1/3) ** (1/4) = (1/240) ** 0.25 = 0.25407
    # (NLTK's sentence_bleu with SmoothingFunction().method1 gives the same 0.25406637...)
    score = measure("The cat sat on the mat.", "the cat is on the mat")
    assert score is not None and score.value == pytest.approx((1 / 240) ** 0.25) and not score.passed
    assert score.value == pytest.approx(0.2540663740773)
    assert score.metadata == {
        "precisions": pytest.approx([5 / 6, 3 / 5, 1 / 4, 0.1 / 3]), "brevity_penalty": 1.0,
        "candidate_length": 6, "reference_length": 6,
    }
    assert score.reason == (
        "BLEU-4 0.254: precisions [0.833, 0.600, 0.250, 0.033], brevity penalty 1.000 (6 vs 6 words)"
    )


def test_identical_sentence_scores_one() -> None:
    assert (s := measure("the quick brown fox jumps", "the quick brown fox jumps")) is not None
    assert s.value == pytest.approx(1.0) and s.passed


def test_brevity_penalty_hand_computed() -> None:
    # "the cat" vs "the cat sat on the mat", BLEU-2: p1 = 2/2, p2 = 1/1, BP = exp(1 - 6/2) = exp(-2) = 0.1353
    score = measure("the cat", "the cat sat on the mat", max_n=2)
    assert score is not None and score.value == pytest.approx(math.exp(-2))
    assert score.metadata["brevity_penalty"] == pytest.approx(math.exp(-2))


def test_short_candidate_gets_epsilon_for_orders_it_cannot_have() -> None:
    # "the cat" vs "the cat": p1 = p2 = 1, p3 = p4 = 0.1/1 -> (0.1 * 0.1) ** (1/4) = 0.3162
    assert sentence_bleu(["the", "cat"], [["the", "cat"]]).value == pytest.approx(0.01**0.25)
    assert sentence_bleu(["the", "cat"], [["the", "cat"]], max_n=2).value == pytest.approx(1.0)


def test_counts_are_clipped_by_the_best_reference() -> None:
    # "the the the the": "the" appears at most 2 times in one reference -> p1 = 2/4; closest ref length 3 < 4, BP 1
    result = sentence_bleu(["the"] * 4, [["the", "cat"], ["the", "the", "dog"]], max_n=1)
    assert result.value == pytest.approx(0.5) and result.reference_length == 3


def test_closest_reference_length_prefers_the_shorter_on_a_tie() -> None:
    # candidate of 3 tokens, references of 2 and 4: both 1 away -> r = 2, so BP = 1
    result = sentence_bleu(["a", "b", "c"], [["a", "b"], ["a", "b", "c", "d"]], max_n=1)
    assert result.reference_length == 2 and result.brevity_penalty == 1.0 and result.value == 1.0


def test_several_references_from_expected_list() -> None:
    score = measure("the cat is on the mat", ["there is a cat on the mat", "the cat is on the mat"])
    assert score is not None and score.value == pytest.approx(1.0)


def test_no_unigram_match_scores_zero() -> None:
    assert (s := measure("completely unrelated", "the cat sat on the mat")) is not None and s.value == 0.0


def test_empty_candidate() -> None:
    assert (s := measure("", "the cat")) is not None and s.value == 0.0
    assert (s := measure("", "")) is not None and s.value == 1.0


def test_lowercase_and_epsilon_options() -> None:
    assert (s := measure("THE CAT", "the cat", max_n=2)) is not None and s.value == pytest.approx(1.0)
    assert (s := measure("THE CAT", "the cat", max_n=2, lowercase=False)) is not None and s.value == 0.0
    # p1 = 5/6, p2 = 3/5, p3 = 1/4, p4 = 0.01/3
    candidate, reference = ["the", "cat", "sat", "on", "the", "mat"], ["the", "cat", "is", "on", "the", "mat"]
    value = sentence_bleu(candidate, [reference], epsilon=0.01).value
    assert value == pytest.approx((5 / 6 * 3 / 5 * 1 / 4 * 0.01 / 3) ** 0.25)


@pytest.mark.parametrize(("output", "expected"), [(None, "a"), ("a", None), ("a", [])])
def test_not_applicable(output: Any, expected: Any) -> None:
    assert measure(output, expected) is None


@pytest.mark.parametrize("options", [{"max_n": 0}, {"max_n": 5}, {"epsilon": 0}, {"smoothing": "method2"}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        BleuMetric(options=options)
