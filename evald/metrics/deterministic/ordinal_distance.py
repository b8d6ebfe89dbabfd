"""``ordinal_distance``: how close the output's label is to the expected label on an ordered scale."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, cast

from pydantic import Field, field_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric


class OrdinalDistanceOptions(ComponentConfig):
    scale: list[Annotated[str, Field(min_length=1)]] = Field(
        ..., min_length=2, description='the labels in order, e.g. ["bad", "ok", "good", "great"] (required)'
    )

    @field_validator("scale")
    @classmethod
    def _labels_are_distinct(cls, scale: list[str]) -> list[str]:
        seen: set[str] = set()
        for label in scale:
            key = _label_key(label)
            if not key:
                raise ValueError("a scale label must not be blank")
            if key in seen:
                raise ValueError(f"label {label!r} appears twice on the scale (labels are case-insensitive)")
            seen.add(key)
        return scale


class OrdinalDistanceMetric(BaseMetric):
    """How close the output's label is to the expected label on an ordered scale.

    Reads ``output`` and ``expected``, each a label of ``scale`` (compared trimmed and case-insensitively;
    a number is read as its text, so a scale can be ``["1", "2", "3"]``). With ``i`` the index of a label,
    the value is ``1 - |i(output) - i(expected)| / (len(scale) - 1)``: 1 for the same label, 0 for the two
    ends of the scale.

    An output that is not on the scale scores 0 (with a reason naming the scale), rather than being skipped:
    a model asked for a label that answers something else is wrong, and skipping would hide it.

    The default threshold 0.5 passes an output at most half the scale's span away from the expected label
    (on a 3-label scale, one step; on a 5-label scale, two steps). Metadata: ``output_index``,
    ``expected_index`` and ``distance``.

    Not applicable when ``output`` or ``expected`` is missing, or when ``expected`` is not on the scale
    (that is a data problem, not the output's fault).
    """

    kind: ClassVar[str] = "ordinal_distance"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = OrdinalDistanceOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(OrdinalDistanceOptions, self.options)
        if eval_case.output is None or eval_case.expected is None:
            return None
        index = {_label_key(label): i for i, label in enumerate(opts.scale)}
        expected_index = index.get(_label_key(eval_case.expected))
        if expected_index is None:
            return None
        output_index = index.get(_label_key(eval_case.output))
        if output_index is None:
            shown = _label_text(eval_case.output)
            shown = shown if len(shown) <= 60 else shown[:59] + "…"
            return self.score(
                0.0, f"output {shown!r} is not a label of the scale {opts.scale}",
                output_index=None, expected_index=expected_index, distance=None,
            )
        distance = abs(output_index - expected_index)
        value = 1.0 - distance / (len(opts.scale) - 1)
        expected_label, output_label = opts.scale[expected_index], opts.scale[output_index]
        reason = (f"output {output_label!r} is the expected label" if distance == 0 else
                  f"output {output_label!r} is {distance} step(s) from expected {expected_label!r}")
        return self.score(
            value, reason, output_index=output_index, expected_index=expected_index, distance=distance,
        )


def _label_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _label_key(value: Any) -> str:
    return _label_text(value).strip().casefold()
