"""The contract types: Score derives `passed`, clamps float overshoot, refuses out-of-range values and NaN."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import pytest

from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall, new_score


@pytest.mark.parametrize(("value", "threshold", "passed"), [(0.5, 0.5, True), (0.49, 0.5, False), (1, 1.0, True),
                                                             (0.0, 0.0, True)])
def test_passed_is_derived_from_value_and_threshold(value: float, threshold: float, passed: bool) -> None:
    score = Score("m", value, threshold)
    assert score.passed is passed and isinstance(score.value, float)


def test_tiny_float_overshoot_is_clamped() -> None:
    assert Score("m", 1 + 1e-9, 1.0).value == 1.0
    assert Score("m", -1e-9, 0.0).value == 0.0


@pytest.mark.parametrize("value", [float("nan"), 1.01, -0.01, float("inf")])
def test_values_outside_0_1_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        Score("m", value, 0.5)


def test_threshold_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        Score("m", 0.5, 1.5)


def test_passed_cannot_be_set_by_hand_and_scores_are_immutable() -> None:
    with pytest.raises(TypeError):
        Score("m", 0.2, 0.5, passed=True)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Score("m", 0.2, 0.5).value = 1.0  # type: ignore[misc]


def test_score_and_case_serialise_to_json() -> None:
    score = Score("pii_leak", 0.0, 1.0, "found: email", {"count": 1}, Dimension.SAFETY)
    assert json.loads(json.dumps(score.to_dict()))["dimension"] == "safety"
    case = EvalCase(input="q", output="a", context=(Document(id="d1", score=0.5),),
                    messages=(Message("user", "q"),), tool_calls=(ToolCall("search", {"q": "x"}, "r", id="c1"),),
                    trace_id="a" * 32, span_id="b" * 16, scope="trace")
    data = json.loads(json.dumps(case.to_dict()))
    assert data["tool_calls"][0]["arguments"] == {"q": "x"} and data["context"][0]["id"] == "d1"
    assert data["scope"] == "trace" and data["expected"] is None


@pytest.mark.parametrize(("value", "threshold"), [(0.5, 0.5), (0.49, 0.5), (1, 1.0), (0.0, 0.0), (1.0, 0), (True, 0.5),
                                                  (1 + 1e-9, 1.0), (-1e-9, 0.0), (0.7, 1)])
def test_new_score_builds_what_the_class_builds(value: float, threshold: float) -> None:
    """``new_score`` (the metrics' constructor) sets ``passed`` itself for a usual score: the same record."""
    built, called = new_score("m", value, threshold, "why", {"k": 1}, Dimension.SAFETY), \
        Score("m", value, threshold, "why", {"k": 1}, Dimension.SAFETY)
    assert type(built) is Score and built == called and built.passed is called.passed
    assert type(built.value) is type(called.value) and dataclasses.astuple(built) == dataclasses.astuple(called)
    assert new_score("m", value, threshold).metadata == {} and Score("m", value, threshold).metadata == {}
    assert new_score("m", 0.5, 0.5).metadata is not new_score("m", 0.5, 0.5).metadata  # a dict per score
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.passed = not built.passed  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(built)) == built and copy.copy(built) == built


@pytest.mark.parametrize(("value", "threshold"), [(float("nan"), 0.5), (1.01, 0.5), (-0.01, 0.5), (0.5, 1.5),
                                                  (0.5, -0.1), (0.5, float("nan"))])
def test_new_score_refuses_what_the_class_refuses(value: float, threshold: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        new_score("m", value, threshold)
    with pytest.raises(ValueError, match="outside"):
        Score("m", value, threshold)
