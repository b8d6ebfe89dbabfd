"""``list_contains``: the output list holds the expected items."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import NotJsonError, json_value

_MAX_LISTED = 5
#: A list marker at the start of a line: "-", "*", "•", "1." or "1)".
_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


class ListContainsOptions(ComponentConfig):
    items: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="items the output list must hold; empty: use the case's expected"
    )
    mode: Literal["all", "any"] = Field("all", description="all: score the share found; any: 1 if one is found")
    case_sensitive: bool = Field(False, description="compare items case-sensitively (default: case folding)")


class ListContainsMetric(BaseMetric):
    """Whether the output, read as a list, holds the expected items.

    Reads ``output`` and, when ``items`` is empty, ``expected``. The output is read as a list: a list is
    used as is; text that is a JSON array is parsed; other text is split into lines when it has several
    non-empty lines (list markers such as ``-``, ``*``, ``1.`` are removed), else on commas. Expected items
    come from ``items``, or from ``expected`` read the same way (a single string without commas or line
    breaks is one item). Items are compared whole (not as substrings), after trimming, Unicode NFC and,
    unless ``case_sensitive``, case folding; non-string items compare by their JSON text (``1`` equals
    ``"1"``). Duplicate expected items count once.

    Mode ``all`` scores the share of expected items found; ``any`` scores 1 when one is found, else 0.
    The reason and metadata list the missing items.

    Not applicable when ``output`` is missing or there are no expected items.
    """

    kind: ClassVar[str] = "list_contains"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 1.0
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")

    def required_fields(self) -> tuple[str, ...]:
        """With ``items`` configured no ``expected`` is needed."""
        return ("output",) if cast(ListContainsOptions, self.options).items else self.needs
    Options: ClassVar[type[ComponentConfig]] = ListContainsOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(ListContainsOptions, self.options)
        if eval_case.output is None:
            return None
        wanted = _unique([self._fold(i, opts) for i in (opts.items or as_items(eval_case.expected))])
        wanted = [w for w in wanted if w]
        if not wanted:
            return None
        present = {self._fold(item, opts) for item in as_items(eval_case.output)}
        missing = [w for w in wanted if w not in present]
        found = len(wanted) - len(missing)
        value = found / len(wanted) if opts.mode == "all" else float(found > 0)
        if not missing:
            reason = f"all {len(wanted)} item(s) found"
        else:
            listed = ", ".join(repr(m) for m in missing[:_MAX_LISTED])
            more = f" and {len(missing) - _MAX_LISTED} more" if len(missing) > _MAX_LISTED else ""
            reason = f"{found} of {len(wanted)} found; missing: {listed}{more}"
        return self.score(
            value, reason, found=found, total=len(wanted), mode=opts.mode, missing=missing[:_MAX_LISTED],
        )

    @staticmethod
    def _fold(item: str, opts: ListContainsOptions) -> str:
        item = unicodedata.normalize("NFC", item.strip())
        return item if opts.case_sensitive else item.casefold()


def as_items(value: Any) -> list[str]:
    """A value read as a list of item strings (see the metric's docstring); empty for ``None``."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            parsed = json_value(value)
        except NotJsonError:
            parsed = None
        if isinstance(parsed, list):
            return [_item_text(v) for v in parsed]
        return _split_text(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_item_text(v) for v in value]
    return [_item_text(value)]


def _split_text(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        return [_BULLET_RE.sub("", line) for line in lines]
    return [part for part in text.split(",") if part.strip()]


def _item_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
