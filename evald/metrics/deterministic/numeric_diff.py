"""``numeric_diff``: the number in the output is close to the expected number."""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric

#: A decimal number not glued to a word or a dot on its left: optional sign, an integer part with or without
#: thousands separators ("1,234"), optional fraction and exponent, or a bare fraction (".5").
#: "3-5" yields 3 and 5; "v2" and "H2O" yield nothing.
_NUMBER_RE = re.compile(
    r"""(?<![\w.]) [-+]?
        (?: (?: \d{1,3} (?:,\d{3})+ (?!\d) | \d+ ) (?:\.\d+)? | \.\d+ )
        (?: [eE] [-+]? \d+ )?""",
    re.VERBOSE,
)


class NumericDiffOptions(ComponentConfig):
    expected: float | None = Field(
        None, allow_inf_nan=False, description="the expected number; unset: use the case's expected"
    )
    extract: Literal["first", "last"] = Field(
        "last", description="which number to take from a text output that is not just a number"
    )
    abs_tol: float = Field(0.0, ge=0, allow_inf_nan=False, description="absolute tolerance (math.isclose abs_tol)")
    rel_tol: float = Field(1e-9, ge=0, allow_inf_nan=False, description="relative tolerance (math.isclose rel_tol)")
    mode: Literal["binary", "graded"] = Field(
        "binary", description="binary: 1 within tolerance else 0; graded: max(0, 1 - |diff| / scale) outside it"
    )
    scale: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="graded mode's scale; unset: |expected| (1 when expected is 0)"
    )
    no_number: Literal["skip", "fail"] = Field(
        "skip", description="when the output holds no number: skip (not applicable) or fail (score 0)"
    )


class NumericDiffMetric(BaseMetric):
    """Whether the number in the output is within tolerance of the expected number.

    Reads ``output`` and ``expected`` (a number, or a string that is a number; the ``expected`` option wins).
    A numeric output is used as is; a text output that is just a number (thousands separators allowed, e.g.
    ``"1,234.5"``) is parsed; otherwise the first or last number in the text is taken (``extract``, default
    ``last``: step-by-step answers usually end with the result). Booleans are not numbers.

    The value is 1 when ``math.isclose(actual, expected, rel_tol=rel_tol, abs_tol=abs_tol)``. Outside the
    tolerance it is 0 in ``binary`` mode, and ``max(0, 1 - |actual - expected| / scale)`` in ``graded`` mode,
    where ``scale`` defaults to ``|expected|`` (so the value is 1 minus the relative error), or 1 when the
    expected number is 0. Metadata: ``actual``, ``expected``, ``diff``, ``within_tolerance``.

    Not applicable when ``output`` is missing, when there is no finite expected number, or (by default,
    ``no_number: skip``) when the output holds no number; with ``no_number: fail`` that case scores 0.
    """

    kind: ClassVar[str] = "numeric_diff"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")

    def required_fields(self) -> tuple[str, ...]:
        """With ``expected`` configured as an option no golden ``expected`` is needed."""
        return ("output",) if cast(NumericDiffOptions, self.options).expected is not None else self.needs
    Options: ClassVar[type[ComponentConfig]] = NumericDiffOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(NumericDiffOptions, self.options)
        if eval_case.output is None:
            return None
        expected = opts.expected if opts.expected is not None else _as_number(eval_case.expected)
        if expected is None or not math.isfinite(expected):
            return None
        actual = _output_number(eval_case.output, opts.extract)
        if actual is None:
            if opts.no_number == "skip":
                return None
            return self.score(0.0, "the output holds no number", expected=expected)
        diff = actual - expected
        within = math.isclose(actual, expected, rel_tol=opts.rel_tol, abs_tol=opts.abs_tol)
        meta = {"actual": actual, "expected": expected, "diff": diff, "within_tolerance": within}
        if within:
            return self.score(1.0, f"{actual:g} is within tolerance of {expected:g}", **meta)
        if opts.mode == "binary":
            return self.score(0.0, f"{actual:g} differs from {expected:g} by {diff:g}", **meta)
        scale = opts.scale if opts.scale is not None else (abs(expected) or 1.0)
        value = max(0.0, 1.0 - abs(diff) / scale)
        return self.score(value, f"{actual:g} differs from {expected:g} by {diff:g} (scale {scale:g})", **meta)


def _as_number(value: Any) -> float | None:
    """A finite number from a number or a string that is exactly a number; ``None`` otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        match = _NUMBER_RE.fullmatch(text)
        if match is None:
            return None
        number = float(text.replace(",", ""))
    else:
        return None
    return number if math.isfinite(number) else None


def _output_number(output: Any, extract: Literal["first", "last"]) -> float | None:
    """The output's number: itself, its whole text, or its first/last numeric token."""
    whole = _as_number(output)
    if whole is not None or not isinstance(output, str):
        return whole
    tokens = _NUMBER_RE.findall(output)
    if not tokens:
        return None
    number = float((tokens[0] if extract == "first" else tokens[-1]).replace(",", ""))
    return number if math.isfinite(number) else None
