"""``regex``: the output matches (or, with ``negate``, does not match) a regular expression."""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.text import as_text

_FLAGS: dict[str, re.RegexFlag] = {
    "IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE, "DOTALL": re.DOTALL, "VERBOSE": re.VERBOSE,
}
_PREVIEW = 80


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


FlagName = Annotated[Literal["IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE"], BeforeValidator(_upper)]


def _compile(pattern: str, flags: list[str]) -> re.Pattern[str]:
    combined = re.RegexFlag(0)
    for name in flags:
        combined |= _FLAGS[name]
    return re.compile(pattern, combined)


class RegexOptions(ComponentConfig):
    # flags come first so that the pattern is validated with them (VERBOSE changes how it parses)
    flags: list[FlagName] = Field(
        default_factory=list, description="named re flags: IGNORECASE, MULTILINE, DOTALL, VERBOSE"
    )
    pattern: str = Field(description="Python regular expression, checked when the config is loaded")
    mode: Literal["search", "fullmatch"] = Field(
        "search", description="search: match anywhere; fullmatch: the whole (checked) output must match"
    )
    negate: bool = Field(False, description="pass when the pattern does NOT match")
    max_chars: int = Field(100_000, gt=0, description="only the first max_chars characters are checked")

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str, info: ValidationInfo) -> str:
        try:
            _compile(pattern, list(info.data.get("flags", [])))
        except re.error as err:
            raise ValueError(f"invalid regular expression {pattern!r}: {err}") from err
        return pattern


class RegexMetric(BaseMetric):
    """Whether the output matches a regular expression (1 or 0).

    Reads ``output``; a structured output is checked as its JSON text. Only the first ``max_chars``
    characters are checked, to bound the cost on huge outputs. ``mode: fullmatch`` requires the whole
    checked text to match; ``negate: true`` inverts the result (e.g. "never apologise").

    Not applicable when ``output`` is missing.
    """

    kind: ClassVar[str] = "regex"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    boolean: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("output",)
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = RegexOptions

    def setup(self) -> None:
        opts = cast(RegexOptions, self.options)
        self._regex = _compile(opts.pattern, list(opts.flags))

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(RegexOptions, self.options)
        output = eval_case.output
        if output is None:
            return None
        text = as_text(output)
        truncated = len(text) > opts.max_chars
        text = text[: opts.max_chars]
        match = self._regex.fullmatch(text) if opts.mode == "fullmatch" else self._regex.search(text)
        matched = match is not None
        if match is not None:
            reason = f"pattern matched {match.group(0)[:_PREVIEW]!r} at character {match.start()}"
        else:
            reason = "pattern did not match" if opts.mode == "search" else "output does not fully match the pattern"
        if opts.negate:
            reason = ("must not match, but " if matched else "as required, ") + reason
        if truncated:
            reason += f" (only the first {opts.max_chars} characters were checked)"
        return self.score(1.0 if matched != opts.negate else 0.0, reason, matched=matched, truncated=truncated)
