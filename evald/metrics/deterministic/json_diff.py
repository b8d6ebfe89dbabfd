"""``json_diff``: structural similarity of the output JSON to the expected JSON (share of matching leaves)."""

from __future__ import annotations

import json
import re
from collections import defaultdict, deque
from typing import Annotated, Any, ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_values import NotJsonError, json_value, same_json

JsonPath = tuple[str | int, ...]

_MAX_LISTED_IN_REASON = 5
_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class JsonDiffOptions(ComponentConfig):
    ignore_list_order: bool = Field(False, description="compare arrays as multisets (see the alignment rule)")
    ignore_keys: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="object keys to drop at every depth before comparing (e.g. ids)"
    )
    max_differences: int = Field(10, ge=1, le=1000, description="how many differing paths the metadata lists")


class JsonDiffMetric(BaseMetric):
    """Structural similarity of the output JSON to the expected JSON: the share of leaf paths that agree.

    Reads ``output`` and ``expected``; either may be JSON text or a structured value. Each side is flattened
    into leaves: a path (``$.items[0].name``) to a scalar, or to an empty object/array. With ``A`` and ``B``
    the leaf paths of expected and output, the value is::

        |{p in A ∩ B : the two leaves are equal}| / |A ∪ B|

    Leaves are equal when they have the same JSON value (``1`` equals ``1.0``; ``true`` never equals ``1``;
    strings are compared exactly). A path present on one side only counts in the union and never matches,
    so missing and extra fields both lower the value; two scalars give 1 or 0.

    Array order matters by default (elements are compared index by index). With ``ignore_list_order``, the
    elements of two arrays at the same path are aligned first: equal elements are paired, then the remaining
    ones are paired in sorted (canonical JSON text) order, and the pairs get the same indexes on both sides.
    ``ignore_keys`` drops those object keys at every depth before comparing.

    The default threshold 0.9 passes an output when at least 90% of the paths agree (e.g. one wrong field
    out of ten); set 1.0 to require the same JSON. Metadata: ``matched``,
    ``total`` (the union's size), ``difference_count`` and ``differences`` (the first ``max_differences`` as
    ``{"path", "kind"}`` with kind ``changed``, ``missing`` (expected only) or ``extra`` (output only)).

    Not applicable when ``output`` or ``expected`` is missing or ``expected`` is text that is not JSON.
    Output text that is not JSON scores 0.
    """

    kind: ClassVar[str] = "json_diff"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.9
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = JsonDiffOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(JsonDiffOptions, self.options)
        if eval_case.output is None or eval_case.expected is None:
            return None
        try:
            expected = json_value(eval_case.expected)
        except NotJsonError:
            return None
        try:
            actual = json_value(eval_case.output)
        except NotJsonError as err:
            return self.score(0.0, f"output is not valid JSON: {err}", matched=0, total=0, difference_count=0,
                              differences=[])
        ignored = frozenset(opts.ignore_keys)
        expected, actual = _drop_keys(expected, ignored), _drop_keys(actual, ignored)
        if opts.ignore_list_order:
            expected, actual = _align(expected, actual)
        wanted, got = leaves(expected), leaves(actual)
        differences: list[dict[str, str]] = []
        matched = 0
        for path, leaf in wanted.items():
            if path not in got:
                differences.append({"path": render_path(path), "kind": "missing"})
            elif same_json(leaf, got[path]):
                matched += 1
            else:
                differences.append({"path": render_path(path), "kind": "changed"})
        differences += [{"path": render_path(p), "kind": "extra"} for p in got if p not in wanted]
        total = matched + len(differences)
        if not differences:
            reason = f"all {total} leaf value(s) match"
        else:
            listed = ", ".join(f"{d['path']} ({d['kind']})" for d in differences[:_MAX_LISTED_IN_REASON])
            more = (f" and {len(differences) - _MAX_LISTED_IN_REASON} more"
                    if len(differences) > _MAX_LISTED_IN_REASON else "")
            reason = f"{matched} of {total} leaf path(s) match; differs at {listed}{more}"
        return self.score(
            matched / total, reason, matched=matched, total=total, difference_count=len(differences),
            differences=differences[: opts.max_differences],
        )


def leaves(value: Any, path: JsonPath = ()) -> dict[JsonPath, Any]:
    """Path -> leaf (a scalar or an empty container), in document order."""
    if isinstance(value, dict) and value:
        out: dict[JsonPath, Any] = {}
        for key, child in value.items():
            out.update(leaves(child, (*path, key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for index, child in enumerate(value):
            out.update(leaves(child, (*path, index)))
        return out
    return {path: value}


def render_path(path: JsonPath) -> str:
    """``("items", 0, "first name")`` -> ``$.items[0]["first name"]``."""
    parts = ["$"]
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        elif _IDENTIFIER_RE.match(part):
            parts.append(f".{part}")
        else:
            parts.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(parts)


def _drop_keys(value: Any, ignored: frozenset[str]) -> Any:
    if not ignored:
        return value
    if isinstance(value, dict):
        return {k: _drop_keys(v, ignored) for k, v in value.items() if k not in ignored}
    if isinstance(value, list):
        return [_drop_keys(v, ignored) for v in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _align(expected: Any, actual: Any) -> tuple[Any, Any]:
    """Reorder the arrays of both values so that corresponding elements share an index (see the docstring)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        expected, actual = dict(expected), dict(actual)
        for key in expected.keys() & actual.keys():
            expected[key], actual[key] = _align(expected[key], actual[key])
        return expected, actual
    if not (isinstance(expected, list) and isinstance(actual, list)):
        return expected, actual
    unused: defaultdict[str, deque[int]] = defaultdict(deque)
    for index, element in enumerate(actual):
        unused[_canonical(element)].append(index)
    pairs: list[tuple[Any, Any]] = []
    left_expected: list[Any] = []
    for element in expected:
        indexes = unused[_canonical(element)]
        if indexes:
            pairs.append((element, actual[indexes.popleft()]))
        else:
            left_expected.append(element)
    left_actual = [actual[i] for indexes in unused.values() for i in indexes]
    left_expected.sort(key=_canonical)
    left_actual.sort(key=_canonical)
    pairs += [_align(e, a) for e, a in zip(left_expected, left_actual, strict=False)]
    unpaired = min(len(left_expected), len(left_actual))
    return (
        [e for e, _ in pairs] + left_expected[unpaired:],
        [a for _, a in pairs] + left_actual[unpaired:],
    )
