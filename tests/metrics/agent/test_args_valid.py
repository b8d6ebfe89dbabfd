from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.metrics.agent.args_valid import ArgsValidMetric

from .helpers import measure, rules_of, trajectory

POLICY = {
    "tools": {
        "apply_discount": {
            "required": ["order_id"],
            "arguments": {
                "percent": {"type": "number", "min": 0, "max": 30},
                "order_id": {"type": "string", "pattern": "^ord_[0-9]+$"},
                "currency": {"enum": ["EUR", "USD"], "required": True},
            },
        },
        "search": {"arguments": {"limit": {"type": "integer", "min": 1}, "filters": {"type": "object"}}},
    }
}

POLICY_YAML = """\
version: "1.0"
name: payments
tools:
  apply_discount:
    required: [order_id]
    arguments:
      percent: {type: number, min: 0, max: 30}
      order_id: {type: string, pattern: "^ord_[0-9]+$"}
      currency: {enum: [EUR, USD], required: true}
  search:
    arguments:
      limit: {type: integer, min: 1}
      filters: {type: object}
"""

GOOD = ("apply_discount", {"percent": 20, "order_id": "ord_1", "currency": "EUR"})


def score_of(*calls: Any, **options: Any) -> Any:
    return measure(ArgsValidMetric(options={"policy": POLICY, **options}), trajectory(*calls))


def test_assay_example_percent_over_maximum() -> None:
    score = score_of(("apply_discount", {"percent": 50, "order_id": "ord_123", "currency": "EUR"}))
    assert score.value == 0.0 and not score.passed
    assert score.metadata["violations"] == [{
        "rule": "max", "tool": "apply_discount", "index": 0, "argument": "percent", "value": 50,
        "constraint": "max: 30", "message": "apply_discount (index 0): percent = 50: Value exceeds maximum (max: 30)",
    }]
    assert score.reason == ("1 of 1 checked call(s) invalid: apply_discount (index 0): percent = 50: Value exceeds "
                            "maximum (max: 30)")


def test_hand_computed_share_of_valid_calls() -> None:
    score = score_of(GOOD, ("search", {"limit": 5}), ("apply_discount", {"percent": -1, "currency": "GBP"}),
                     ("search", {"limit": 2.5, "filters": []}), ("unknown_tool", {"anything": 1}))
    # checked: 2 apply_discount + 2 search (unknown_tool is skipped without strict); valid: 2 -> 2/4
    assert score.value == 0.5
    assert score.metadata["calls_checked"] == 4 and score.metadata["calls_valid"] == 2
    assert [(v["rule"], v["index"], v.get("argument")) for v in score.metadata["violations"]] == [
        ("required", 2, "order_id"), ("min", 2, "percent"), ("enum", 2, "currency"),
        ("type", 3, "limit"), ("type", 3, "filters"),
    ]
    by_argument = {v["argument"]: v for v in score.metadata["violations"]}
    assert by_argument["limit"]["message"].endswith("Expected integer, got number")
    assert by_argument["filters"]["message"].endswith("Expected object, got array")
    assert by_argument["currency"]["constraint"] == 'enum: ["EUR", "USD"]'
    assert by_argument["order_id"]["constraint"] == "required" and "value" not in by_argument["order_id"]


@pytest.mark.parametrize(("arguments", "rule"), [
    ({"percent": "20"}, "type"), ({"percent": True}, "type"), ({"order_id": "ORD-1"}, "pattern"),
    ({"order_id": 7}, "type"), ({"currency": None}, "enum"), ({"percent": 30.5}, "max"),
])
def test_each_constraint(arguments: dict[str, Any], rule: str) -> None:
    score = score_of(("apply_discount", {**GOOD[1], **arguments}))
    assert rules_of(score) == [rule]


def test_integers_accept_whole_floats_and_json_text_arguments_are_parsed() -> None:
    assert score_of(("search", {"limit": 5.0})).value == 1.0
    assert score_of(("search", '{"limit": 3}')).value == 1.0
    assert rules_of(score_of(("search", "limit=3"))) == ["arguments_not_object"]


def test_strict_fails_unknown_tools_and_tools_filters_the_checked_calls() -> None:
    calls = (GOOD, ("delete_all", {}))
    assert score_of(*calls).value == 1.0
    strict = score_of(*calls, strict=True)
    assert strict.value == 0.5 and rules_of(strict) == ["unknown_tool"]  # 1 valid of 2 checked
    only_search = score_of(("apply_discount", {}), ("search", {"limit": 1}), tools=["sea*"])
    assert only_search.value == 1.0 and only_search.metadata["calls_checked"] == 1


def test_empty_trajectory_applies_and_scores_one() -> None:
    score = score_of()
    assert score.value == 1.0 and score.reason == "no tool call to check" and score.metadata["calls_checked"] == 0


def test_policy_file_is_read_at_config_load(tmp_path: Path) -> None:
    path = tmp_path / "payments.yaml"
    path.write_text(POLICY_YAML, encoding="utf-8")
    metric = ArgsValidMetric(options={"policy_file": str(path)})
    path.unlink()  # measuring never reads the file again
    assert measure(metric, trajectory(GOOD)).value == 1.0
    assert rules_of(measure(metric, trajectory(("apply_discount", {"percent": 99})))) == ["required", "required",
                                                                                         "max"]


def config_problems(options: dict[str, Any]) -> list[tuple[str, str]]:
    yaml_text = f"receivers: {{}}\nexporters: {{}}\nmetrics:\n  - kind: args_valid\n    options: {options!r}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(yaml_text.replace("'", '"'), "test", environ={})
    return list(info.value.problems)


def test_a_bad_policy_file_is_a_config_error_with_a_path(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("tools:\n  a:\n    arguments:\n      p: {type: strin}\n      q: {pattern: '('}\n"
                    "      r: {type: string, max: 3}\n", encoding="utf-8")
    problems = dict(config_problems({"policy_file": str(path)}))
    assert set(problems) == {
        "metrics[0].options.policy_file.tools.a.arguments.p.type",
        "metrics[0].options.policy_file.tools.a.arguments.q.pattern",
        "metrics[0].options.policy_file.tools.a.arguments.r",
    }
    assert "invalid regular expression" in problems["metrics[0].options.policy_file.tools.a.arguments.q.pattern"]
    assert "min/max apply to numbers" in problems["metrics[0].options.policy_file.tools.a.arguments.r"]


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read policy file"), ("tools: [a\n", "is not valid YAML at line 2"),
    ("- a\n", "must hold a mapping"), ("tools: {}\n", "a policy needs `tools`"),
])
def test_unreadable_or_malformed_policy_files(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "policy.yaml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    problems = config_problems({"policy_file": str(path)})
    assert len(problems) == 1 and problems[0][0].startswith("metrics[0].options.policy_file")
    assert message in problems[0][1]


def test_inline_policy_errors_and_exactly_one_policy(tmp_path: Path) -> None:
    problems = dict(config_problems({"policy": {"tools": {"a": {"arguments": {"p": {"min": 5, "max": 1}}}}}}))
    assert "min (5) is greater than max (1)" in problems["metrics[0].options.policy.tools.a.arguments.p"]
    with pytest.raises(ValidationError, match="exactly one"):
        ArgsValidMetric(options={})
    with pytest.raises(ValidationError, match="exactly one"):
        path = tmp_path / "policy.yaml"
        path.write_text(POLICY_YAML, encoding="utf-8")
        ArgsValidMetric(options={"policy": POLICY, "policy_file": str(path)})
    with pytest.raises(ValidationError, match="unknown|Extra inputs"):
        ArgsValidMetric(options={"policy": {"tools": {"a": {"argumnets": {}}}}})
