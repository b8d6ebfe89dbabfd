from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.similarity.rouge_l import RougeLMetric, rouge_l


def measure(output: Any, expected: Any, **options: Any) -> Score | None:
    return RougeLMetric(options=options).measure(EvalCase(output=output, expected=expected))


def test_hand_computed_f1() -> None:
    # output:    the cat lay on the mat   (6 tokens)
    # reference: the cat sat on the mat   (6 tokens)
    # LCS = "the cat on the mat" = 5; P = 5/6, R = 5/6, F1 = 2PR / (P + R) = 5/6
    score = measure("The cat lay on the mat.", "the cat sat on the mat")
    assert score is not None and score.value == pytest.approx(5 / 6) and score.passed
    assert score.metadata == {
        "precision": pytest.approx(5 / 6), "recall": pytest.approx(5 / 6), "lcs": 5, "reference_index": 0,
    }
    assert score.reason == "LCS of 5 word(s): precision 0.833, recall 0.833, F(beta=1) 0.833"


def test_hand_computed_with_unequal_lengths_and_beta() -> None:
    # output "the cat sat" (3) vs reference "the cat sat on the mat" (6): LCS 3, P = 1, R = 0.5
    # F1 = 2 * 1 * 0.5 / (0.5 + 1) = 2/3
    output, reference = "the cat sat", "the cat sat on the mat"
    assert (s := measure(output, reference)) is not None and s.value == pytest.approx(2 / 3)
    # beta = 2 weighs recall: (1 + 4) * 1 * 0.5 / (0.5 + 4 * 1) = 2.5 / 4.5 = 0.5556
    assert (s := measure(output, reference, beta=2)) is not None and s.value == pytest.approx(2.5 / 4.5)
    # beta = 0.5 weighs precision: 1.25 * 0.5 / (0.5 + 0.25) = 0.8333
    assert (s := measure(output, reference, beta=0.5)) is not None and s.value == pytest.approx(0.625 / 0.75)


def test_subsequence_not_substring() -> None:
    # LCS skips gaps: "a b c d" vs "a x b y c z d" -> LCS 4; P = 4/7, R = 4/4; F1 = 2*(4/7)/(4/7 + 1) = 8/11
    f_measure, precision, recall, lcs = rouge_l(["a", "x", "b", "y", "c", "z", "d"], ["a", "b", "c", "d"])
    assert (lcs, precision, recall) == (4, 4 / 7, 1.0) and f_measure == pytest.approx(8 / 11)


def test_unrelated_text_fails() -> None:
    score = measure("completely different words", "the cat sat on the mat")
    assert score is not None and score.value == 0.0 and not score.passed


def test_word_order_matters() -> None:
    # "mat the on sat cat the" vs "the cat sat on the mat": LCS is 3 ("the sat the" or "the on the"),
    # P = R = 3/6, F1 = 0.5 although every word is shared
    assert (s := measure("mat the on sat cat the", "the cat sat on the mat")) is not None
    assert s.value == pytest.approx(0.5) and s.metadata["lcs"] == 3


def test_lowercase_option() -> None:
    assert (s := measure("THE CAT", "the cat")) is not None and s.value == 1.0
    assert (s := measure("THE CAT", "the cat", lowercase=False)) is not None and s.value == 0.0


def test_best_of_several_references() -> None:
    score = measure("the cat sat", ["a dog ran", "the cat sat"])
    assert score is not None and score.value == 1.0 and score.metadata["reference_index"] == 1


def test_empty_token_lists() -> None:
    assert (s := measure("", "")) is not None and s.value == 1.0
    assert (s := measure("...", "the cat")) is not None and s.value == 0.0
    assert (s := measure("the cat", "")) is not None and s.value == 0.0


@pytest.mark.parametrize(("output", "expected"), [(None, "a"), ("a", None), ("a", [])])
def test_not_applicable(output: Any, expected: Any) -> None:
    assert measure(output, expected) is None


@pytest.mark.parametrize("options", [{"beta": 0}, {"beta": -1}, {"tokenizer": "chars"}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RougeLMetric(options=options)
