from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.deterministic.ordinal_distance import OrdinalDistanceMetric

SCALE = ["bad", "ok", "good", "great"]


def measure(output: Any, expected: Any, scale: list[str] | None = None) -> Score | None:
    metric = OrdinalDistanceMetric(options={"scale": scale or SCALE})
    return metric.measure(EvalCase(output=output, expected=expected))


def test_same_label_scores_one() -> None:
    score = measure("good", "good")
    assert score is not None and score.value == 1.0 and score.passed
    assert score.reason == "output 'good' is the expected label"
    assert score.metadata == {"output_index": 2, "expected_index": 2, "distance": 0}


@pytest.mark.parametrize(
    ("output", "expected", "wanted"),
    [
        ("ok", "good", 1 - 1 / 3),  # 1 step on a 4-label scale: 1 - 1/3 = 0.667
        ("bad", "good", 1 - 2 / 3),  # 2 steps: 0.333
        ("bad", "great", 0.0),  # the two ends: 1 - 3/3
        ("great", "bad", 0.0),
    ],
)
def test_value_is_one_minus_the_normalized_distance(output: str, expected: str, wanted: float) -> None:
    score = measure(output, expected)
    assert score is not None and score.value == pytest.approx(wanted)


def test_default_threshold_passes_within_half_the_scale() -> None:
    assert (s := measure("ok", "good")) is not None and s.passed  # 0.667
    assert (s := measure("bad", "good")) is not None and not s.passed  # 0.333
    assert s.reason == "output 'bad' is 2 step(s) from expected 'good'"


def test_labels_are_trimmed_and_case_insensitive() -> None:
    assert (s := measure("  GOOD \n", "Good")) is not None and s.value == 1.0


def test_numbers_are_read_as_labels() -> None:
    # 5-label scale: |4 - 2| / 4 = 0.5 -> 0.5
    assert (s := measure(4, "2", scale=["1", "2", "3", "4", "5"])) is not None and s.value == 0.5


def test_output_off_the_scale_scores_zero_with_a_reason() -> None:
    score = measure("excellent", "good")
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.reason == "output 'excellent' is not a label of the scale ['bad', 'ok', 'good', 'great']"
    assert score.metadata["output_index"] is None
    long_score = measure("x" * 100, "good")
    assert long_score is not None and long_score.reason is not None and "…" in long_score.reason


@pytest.mark.parametrize(("output", "expected"), [(None, "good"), ("good", None), ("good", "superb")])
def test_not_applicable(output: Any, expected: Any) -> None:
    assert measure(output, expected) is None


@pytest.mark.parametrize(
    "options",
    [{}, {"scale": []}, {"scale": ["only"]}, {"scale": ["a", "A "]}, {"scale": ["a", " "]}, {"scale": ["a", ""]},
     {"scale": ["a", "b"], "strict": True}],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        OrdinalDistanceMetric(options=options)
