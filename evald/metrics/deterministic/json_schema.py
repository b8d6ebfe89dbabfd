"""``json_schema``: the output validates against a JSON Schema (with the ``jsonschema`` library)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, cast

import jsonschema
import yaml
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from pydantic import Field, PrivateAttr, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import NotJsonError, json_value

_MAX_MESSAGE_CHARS = 200
#: keywords whose values are data, not subschemas: a "$ref" key inside them is not a reference
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


class JsonSchemaOptions(ComponentConfig):
    schema_: dict[str, Any] | None = Field(
        None, alias="schema", description="the JSON Schema, inline (written `schema:`); or use schema_file"
    )
    schema_file: str | None = Field(
        None, min_length=1, description="path of a JSON or YAML file holding the schema (relative to the cwd)"
    )
    check_formats: bool = Field(False, description="also check `format` keywords (date-time, email, ...)")
    max_errors: int = Field(5, ge=1, le=100, description="how many validation errors the reason and metadata list")
    _resolved_schema: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _load_and_check_schema(self) -> JsonSchemaOptions:
        if (self.schema_ is None) == (self.schema_file is None):
            raise ValueError("set exactly one of `schema` (inline) and `schema_file`")
        schema = self.schema_ if self.schema_ is not None else _read_schema_file(self.schema_file or "")
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except SchemaError as err:
            where = "/".join(str(p) for p in err.absolute_path) or "(root)"
            raise ValueError(f"invalid JSON Schema at {where}: {_shorten(err.message)}") from err
        remote = _first_remote_ref(schema)
        if remote is not None:
            raise ValueError(
                f"$ref {remote!r} is not local: metrics do no I/O while scoring, so put the referenced schema "
                "under $defs and point to it with '#/$defs/...'"
            )
        self._resolved_schema = schema
        return self

    @property
    def resolved_schema(self) -> dict[str, Any]:
        """The checked schema: the inline one or the file's content."""
        return self._resolved_schema


def _read_schema_file(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"cannot read schema_file {path!r}: {err.strerror or err}") from err
    is_yaml = path.endswith((".yaml", ".yml"))
    try:
        schema = yaml.safe_load(text) if is_yaml else json.loads(text)
    except (ValueError, yaml.YAMLError) as err:
        raise ValueError(f"schema_file {path!r} is not valid {'YAML' if is_yaml else 'JSON'}: {err}") from err
    if not isinstance(schema, dict):
        raise ValueError(f"schema_file {path!r} must hold a JSON object (a JSON Schema)")
    return schema


def _first_remote_ref(schema: Any) -> str | None:
    """The first ``$ref``/``$dynamicRef`` that does not point inside the schema (``#...``), if any."""
    if isinstance(schema, list):
        return next((ref for item in schema if (ref := _first_remote_ref(item)) is not None), None)
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        if key in ("$ref", "$dynamicRef") and isinstance(value, str) and not value.startswith("#"):
            return value
        if key not in _DATA_KEYWORDS and (ref := _first_remote_ref(value)) is not None:
            return ref
    return None


class JsonSchemaMetric(BaseMetric):
    """Whether the output validates against a JSON Schema (1 or 0).

    Reads ``output``: text is parsed as strict JSON (text that is not JSON scores 0), a structured output is
    validated as is. The schema is given inline (``schema``) or as a JSON/YAML file (``schema_file``); its
    draft comes from its ``$schema`` (default: 2020-12). Validation uses the ``jsonschema`` library; with
    ``check_formats``, ``format`` keywords are checked too. The schema is read and checked when the config
    is loaded: a missing file, an invalid schema or a ``$ref`` that is not local (``#/$defs/...``; a metric
    does no I/O, so remote references are not fetched) is a config error, never a score.

    The value is 1 when there is no validation error, else 0; the reason and the ``errors`` metadata list
    the first ``max_errors`` errors as ``{"path": "/items/0/name", "message": ...}``, with ``error_count``.

    Not applicable when ``output`` is missing.
    """

    kind: ClassVar[str] = "json_schema"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("output",)
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = JsonSchemaOptions

    def setup(self) -> None:
        opts = cast(JsonSchemaOptions, self.options)
        schema = opts.resolved_schema
        validator_class = jsonschema.validators.validator_for(schema)
        format_checker = jsonschema.FormatChecker() if opts.check_formats else None
        self._validator: Validator = validator_class(schema, format_checker=format_checker)

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(JsonSchemaOptions, self.options)
        if eval_case.output is None:
            return None
        try:
            instance = json_value(eval_case.output)
        except NotJsonError as err:
            return self.score(0.0, f"output is not valid JSON: {err}", error_count=1, errors=[])
        errors = sorted(self._validator.iter_errors(instance), key=_path_order)
        if not errors:
            return self.score(1.0, "output matches the schema", error_count=0, errors=[])
        listed = [
            {"path": "/" + "/".join(str(p) for p in err.absolute_path), "message": _shorten(err.message)}
            for err in errors[: opts.max_errors]
        ]
        more = f" (and {len(errors) - len(listed)} more)" if len(errors) > len(listed) else ""
        summary = "; ".join(f"{e['path']}: {e['message']}" for e in listed)
        return self.score(
            0.0, f"{len(errors)} schema error(s): {summary}{more}", error_count=len(errors), errors=listed,
        )


def _path_order(error: ValidationError) -> list[tuple[bool, Any]]:
    """Sort errors by instance path; array indexes sort numerically, before object keys."""
    return [(isinstance(part, str), part) for part in error.absolute_path]


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE_CHARS else message[: _MAX_MESSAGE_CHARS - 1] + "…"
