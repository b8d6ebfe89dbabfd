from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.deterministic.json_diff import JsonDiffMetric, leaves, render_path


def measure(output: Any, expected: Any, **options: Any) -> Score | None:
    return JsonDiffMetric(options=options).measure(EvalCase(output=output, expected=expected))


def value_of(output: Any, expected: Any, **options: Any) -> float:
    score = measure(output, expected, **options)
    assert score is not None
    return score.value


def test_identical_json_passes() -> None:
    score = measure('{"a": 1, "b": [true, null]}', {"b": [True, None], "a": 1})
    assert score is not None and score.value == 1.0 and score.passed
    assert score.reason == "all 3 leaf value(s) match"


def test_hand_computed_share_of_matching_leaves() -> None:
    expected = {"name": "Ada", "age": 36, "tags": ["a", "b"]}
    output = {"name": "Ada", "age": 37, "tags": ["a"], "extra": True}
    # expected leaves: $.name $.age $.tags[0] $.tags[1]; output leaves: $.name $.age $.tags[0] $.extra
    # union = 5 paths; equal at $.name and $.tags[0] -> 2 / 5 = 0.4
    score = measure(output, expected)
    assert score is not None and score.value == pytest.approx(0.4) and not score.passed
    assert score.metadata["matched"] == 2 and score.metadata["total"] == 5
    assert score.metadata["differences"] == [
        {"path": "$.age", "kind": "changed"},
        {"path": "$.tags[1]", "kind": "missing"},
        {"path": "$.extra", "kind": "extra"},
    ]
    assert score.reason == "2 of 5 leaf path(s) match; differs at $.age (changed), $.tags[1] (missing), $.extra (extra)"


def test_one_wrong_field_in_ten_passes_the_default_threshold() -> None:
    expected = {f"k{i}": i for i in range(10)}
    score = measure({**expected, "k9": -1}, expected)  # 9 / 10 = 0.9
    assert score is not None and score.value == pytest.approx(0.9) and score.passed


def test_list_order_matters_by_default() -> None:
    # [0] a/c, [1] b/a, [2] c/x: nothing equal -> 0 / 3
    assert value_of(["c", "a", "x"], ["a", "b", "c"]) == 0.0


def test_ignore_list_order_pairs_equal_elements_first() -> None:
    # a-a and c-c pair, then b/x: 2 of 3 leaves -> 2 / 3
    assert value_of(["c", "a", "x"], ["a", "b", "c"], ignore_list_order=True) == pytest.approx(2 / 3)
    assert value_of([3, 1, 2], [1, 2, 3], ignore_list_order=True) == 1.0
    # extra element: union 4 leaves, 3 equal -> 0.75
    assert value_of([3, 1, 2, 4], [1, 2, 3], ignore_list_order=True) == pytest.approx(0.75)


def test_ignore_list_order_aligns_nested_objects() -> None:
    expected = [{"id": 1, "v": "x"}, {"id": 2, "v": "y"}]
    output = [{"id": 2, "v": "y"}, {"id": 1, "v": "z"}]
    # {"id": 2} pairs exactly; then {"id": 1, "v": "x"} vs {"id": 1, "v": "z"}: 3 of 4 leaves equal
    score = measure(output, expected, ignore_list_order=True)
    assert score is not None and score.value == pytest.approx(0.75)
    assert score.metadata["differences"] == [{"path": "$[1].v", "kind": "changed"}]
    assert value_of({"l": [[2, 1], [3]]}, {"l": [[3], [1, 2]]}, ignore_list_order=True) == 1.0


def test_ignore_keys_at_every_depth() -> None:
    expected = {"id": "abc", "items": [{"id": 1, "name": "x"}]}
    output = {"id": "xyz", "items": [{"id": 2, "name": "x"}]}
    assert value_of(output, expected) == pytest.approx(1 / 3)  # only $.items[0].name is equal
    assert value_of(output, expected, ignore_keys=["id"]) == 1.0


@pytest.mark.parametrize(
    ("output", "expected", "wanted"),
    [
        ("5", 5, 1.0),  # text is parsed
        (1.0, 1, 1.0),  # JSON numbers
        (True, 1, 0.0),  # a bool never equals a number
        ('"x"', "\"x\"", 1.0),
        ({}, {}, 1.0),  # empty containers are leaves
        ({}, [], 0.0),
        ({"a": {}}, {"a": {"b": 1}}, 0.0),  # $.a vs $.a.b: 0 of 2
        ({"a": {"0": 1}}, {"a": [1]}, 0.0),  # an object key "0" is not an array index
        ([1, [2, 3]], [1, [2, 4]], 2 / 3),
    ],
)
def test_edge_cases(output: Any, expected: Any, wanted: float) -> None:
    assert value_of(output, expected) == pytest.approx(wanted)


def test_output_text_that_is_not_json_scores_zero() -> None:
    score = measure("{'single': 'quotes'}", {"single": "quotes"})
    assert score is not None and score.value == 0.0
    assert score.reason is not None and score.reason.startswith("output is not valid JSON")


@pytest.mark.parametrize(("output", "expected"), [(None, {"a": 1}), ({"a": 1}, None), ({"a": 1}, "not json")])
def test_not_applicable(output: Any, expected: Any) -> None:
    assert measure(output, expected) is None


def test_differences_are_capped_in_metadata_and_reason() -> None:
    score = measure({f"k{i}": 0 for i in range(20)}, {f"k{i}": 1 for i in range(20)}, max_differences=4)
    assert score is not None and score.value == 0.0
    assert score.metadata["difference_count"] == 20 and len(score.metadata["differences"]) == 4
    assert score.reason is not None and score.reason.endswith("and 15 more")


def test_leaves_and_paths() -> None:
    assert leaves({"a": [1, {"b c": None}], "d": []}) == {("a", 0): 1, ("a", 1, "b c"): None, ("d",): []}
    assert render_path(("a", 0, "b c", "_x1")) == '$.a[0]["b c"]._x1'
    assert render_path(()) == "$"


@pytest.mark.parametrize("options", [{"ignore_keys": [""]}, {"max_differences": 0}, {"ignore_order": True}])
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        JsonDiffMetric(options=options)
