"""``exact_match``: the output equals the expected answer."""

from __future__ import annotations

import json
import unicodedata
from typing import Any, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import json_equal

_MISSING = object()


class ExactMatchOptions(ComponentConfig):
    case_sensitive: bool = Field(True, description="compare text case-sensitively")
    strip_whitespace: bool = Field(True, description="ignore leading and trailing whitespace")
    normalize: bool = Field(False, description="collapse every whitespace run to one space and apply Unicode NFC")


class ExactMatchMetric(BaseMetric):
    """Whether the output equals the expected answer (1 or 0).

    Reads ``output`` and ``expected``. Two strings are compared after the text options are applied. When
    either side is structured (dict, list, number, bool), both are compared by value after JSON
    normalisation: key order is ignored, tuples equal lists, ``true`` never equals ``1``, and a string on
    the other side is parsed as JSON first (text options do not apply).

    Not applicable when ``output`` or ``expected`` is missing (``None``); an empty string is a value.
    """

    kind: ClassVar[str] = "exact_match"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = ExactMatchOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        output, expected = eval_case.output, eval_case.expected
        if output is None or expected is None:
            return None
        if isinstance(output, str) and isinstance(expected, str):
            return self._compare_text(output, expected)
        actual, wanted = _json_value(output), _json_value(expected)
        if actual is _MISSING:
            return self.score(0.0, "output is not valid JSON; expected a structured value", compared="json")
        if wanted is _MISSING:
            return self.score(0.0, "expected is text that is not JSON; output is structured", compared="json")
        if json_equal(actual, wanted):
            return self.score(1.0, "output equals expected (structured)", compared="json")
        return self.score(0.0, "output differs from expected (structured)", compared="json")

    def _compare_text(self, output: str, expected: str) -> Score:
        opts = cast(ExactMatchOptions, self.options)
        actual, wanted = self._prepare(output, opts), self._prepare(expected, opts)
        if actual == wanted:
            return self.score(1.0, "output equals expected", compared="text")
        at = next((i for i, (a, b) in enumerate(zip(actual, wanted, strict=False)) if a != b),
                  min(len(actual), len(wanted)))
        return self.score(
            0.0, f"output differs from expected at character {at} (length {len(actual)} vs {len(wanted)})",
            compared="text", first_difference=at,
        )

    @staticmethod
    def _prepare(text: str, opts: ExactMatchOptions) -> str:
        if opts.normalize:
            text = " ".join(unicodedata.normalize("NFC", text).split())
        elif opts.strip_whitespace:
            text = text.strip()
        return text if opts.case_sensitive else text.casefold()


def _json_value(value: Any) -> Any:
    """The JSON form of a value (tuples become lists, keys strings); a string is parsed; ``_MISSING`` if not."""
    try:
        if isinstance(value, str):
            return json.loads(value.strip())
        return json.loads(json.dumps(value, default=str))
    except (ValueError, TypeError, RecursionError):
        return _MISSING
