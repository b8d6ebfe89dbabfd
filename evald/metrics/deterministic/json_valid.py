"""``json_valid``: the output is valid JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import STRICT_DECODER


class JsonValidOptions(ComponentConfig):
    require_object: bool = Field(False, description="pass only when the top-level value is a JSON object")


class JsonValidMetric(BaseMetric):
    """Whether the output is valid JSON (1 or 0).

    Reads ``output``. A string must parse as strict JSON (``NaN`` and ``Infinity`` are rejected); a dict,
    list, number or bool output is already a JSON value. With ``require_object``, the top-level value must
    be an object. The reason gives the parse error's line and column.

    Not applicable when ``output`` is missing.
    """

    kind: ClassVar[str] = "json_valid"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("output",)
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = JsonValidOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(JsonValidOptions, self.options)
        output = eval_case.output
        if output is None:
            return None
        if isinstance(output, str):
            if (start := _not_a_json_start(output)) is not None:  # the usual failure: prose, decided without a parse
                line, column = output.count("\n", 0, start) + 1, start - output.rfind("\n", 0, start)
                return self.score(0.0, f"not valid JSON: Expecting value at line {line} column {column}")
            try:
                value = STRICT_DECODER.decode(output)
            except json.JSONDecodeError as err:
                return self.score(0.0, f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}")
            except (ValueError, RecursionError) as err:
                return self.score(0.0, f"not valid JSON: {err}")
        else:
            value = output
        if opts.require_object and not isinstance(value, Mapping):
            return self.score(0.0, f"valid JSON, but the top-level value is {_type_name(value)}, not an object")
        return self.score(1.0, f"valid JSON ({_type_name(value)})")


_JSON_WHITESPACE = " \t\n\r"
_JSON_STARTS = frozenset('{["-0123456789tfnNI')  # N, I: NaN and Infinity, which the decoder refuses by name


def _not_a_json_start(text: str) -> int | None:
    """The index of the first non-whitespace character when no JSON value can start there (the decoder would fail
    with "Expecting value" at that index), else None (the decoder decides)."""
    start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
    return start if start < len(text) and text[start] not in _JSON_STARTS else None


def _type_name(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return "a literal"
    return "a number" if isinstance(value, (int, float)) else "a value"
