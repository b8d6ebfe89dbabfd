from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evald.case import EvalCase, Score
from evald.metrics.deterministic.json_schema import JsonSchemaMetric

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


def measure(output: Any, **options: Any) -> Score | None:
    options.setdefault("schema", PERSON)
    return JsonSchemaMetric(options=options).measure(EvalCase(output=output))


def test_valid_text_output_passes() -> None:
    score = measure('{"name": "Ada", "age": 36, "tags": ["math"]}')
    assert score is not None and score.passed and score.value == 1.0
    assert score.reason == "output matches the schema" and score.metadata == {"error_count": 0, "errors": []}


def test_structured_output_is_validated_as_is() -> None:
    assert (s := measure({"name": "Ada", "age": 36, "tags": ("a", "b")})) is not None and s.value == 1.0


def test_invalid_output_lists_the_errors_with_paths() -> None:
    score = measure({"name": 7, "age": -1, "tags": ["ok", 3]})
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.metadata["error_count"] == 3
    assert score.metadata["errors"] == [
        {"path": "/age", "message": "-1 is less than the minimum of 0"},
        {"path": "/name", "message": "7 is not of type 'string'"},
        {"path": "/tags/1", "message": "3 is not of type 'string'"},
    ]
    assert score.reason is not None and score.reason.startswith("3 schema error(s): /age: -1 is less than")


def test_missing_required_field_is_reported_at_the_root() -> None:
    score = measure({"name": "Ada"})
    assert score is not None and score.value == 0.0
    assert score.metadata["errors"] == [{"path": "/", "message": "'age' is a required property"}]


def test_errors_are_capped() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    score = measure(list("abcdefghijkl"), schema=schema, max_errors=3)
    assert score is not None and score.metadata["error_count"] == 12 and len(score.metadata["errors"]) == 3
    assert [e["path"] for e in score.metadata["errors"]] == ["/0", "/1", "/2"]  # numeric order
    assert score.reason is not None and score.reason.endswith("(and 9 more)")


def test_text_that_is_not_json_scores_zero() -> None:
    score = measure("Ada is 36")
    assert score is not None and score.value == 0.0
    assert score.reason is not None and score.reason.startswith("output is not valid JSON: Expecting value")


def test_missing_output_is_not_applicable() -> None:
    assert measure(None) is None


def test_formats_are_checked_only_on_request() -> None:
    schema = {"type": "string", "format": "date"}
    assert (s := measure('"not a date"', schema=schema)) is not None and s.value == 1.0
    assert (s := measure('"not a date"', schema=schema, check_formats=True)) is not None and s.value == 0.0
    assert (s := measure('"2024-02-29"', schema=schema, check_formats=True)) is not None and s.value == 1.0


def test_draft_comes_from_dollar_schema() -> None:
    # draft 4: exclusiveMaximum is a boolean modifier of maximum
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": True}
    assert (s := measure("5", schema=schema)) is not None and s.value == 0.0
    assert (s := measure("4", schema=schema)) is not None and s.value == 1.0


def test_local_refs_resolve_and_ref_keys_in_data_are_not_references() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}, "not": {"enum": [{"$ref": "x"}]}}
    score = measure('[1, "x"]', schema=schema)
    assert score is not None and score.metadata["errors"] == [{"path": "/1", "message": "'x' is not of type 'integer'"}]


def test_schema_file_json_and_yaml(tmp_path: Path) -> None:
    json_file = tmp_path / "person.json"
    json_file.write_text(json.dumps(PERSON), encoding="utf-8")
    yaml_file = tmp_path / "person.yaml"
    yaml_file.write_text("type: object\nrequired: [name]\n", encoding="utf-8")
    metric = JsonSchemaMetric(options={"schema_file": str(json_file)})
    assert (s := metric.measure(EvalCase(output={"name": "Ada", "age": 1}))) is not None and s.value == 1.0
    metric = JsonSchemaMetric(options={"schema_file": str(yaml_file)})
    assert (s := metric.measure(EvalCase(output={"age": 1}))) is not None and s.value == 0.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "set exactly one of"),
        ({"schema": {"type": "string"}, "schema_file": "x.json"}, "set exactly one of"),
        ({"schema": {"type": "strng"}}, "invalid JSON Schema at type"),
        ({"schema": {"minimum": "zero"}}, "invalid JSON Schema at minimum"),
        ({"schema_file": "/nonexistent/schema.json"}, "cannot read schema_file"),
        ({"schema": {"type": "string"}, "max_errors": 0}, "greater than or equal to 1"),
        ({"schema_": {"type": "string"}}, "Extra inputs are not permitted"),
        ({"schema": {"properties": {"a": {"$ref": "https://example.com/a.json"}}}}, "is not local"),
    ],
)
def test_invalid_config_fails_at_load(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        JsonSchemaMetric.Options.model_validate(options)


def test_schema_file_that_is_not_a_json_object_fails_at_load(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValidationError, match="is not valid JSON"):
        JsonSchemaMetric.Options.model_validate({"schema_file": str(broken)})
    array = tmp_path / "array.json"
    array.write_text("[]", encoding="utf-8")
    with pytest.raises(ValidationError, match="must hold a JSON object"):
        JsonSchemaMetric.Options.model_validate({"schema_file": str(array)})
