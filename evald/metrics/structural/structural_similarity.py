"""``structural_similarity``: JSON/YAML structure of the output against the expected one, at three levels."""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal, cast

import jsonschema
import yaml
from jsonschema.protocols import Validator
from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.json_diff import leaves, render_path
from evald.metrics.deterministic.json_values import same_json


class StructuralSimilarityOptions(ComponentConfig):
    format: Literal["yaml", "json"] = Field("yaml", description="how text is parsed (YAML also reads JSON)")
    level: Literal["raw", "structural", "schema_validated"] = Field(
        "raw", description="raw: compare everything; structural: drop ignore_keys, check required_fields, "
        "penalise extra keys; schema_validated: structural after the output validates against `schema`",
    )
    ignore_keys: list[Annotated[str, Field(min_length=1)]] = Field(
        default_factory=list, description="structural levels: top-level keys left out on both sides"
    )
    required_fields: dict[str, Any] = Field(
        default_factory=dict, description="structural levels: top-level keys the output must have (value: expected "
        "value, or null for any value); a missing or different one scores 0",
    )
    extra_keys: Literal["ignore", "penalize"] = Field("ignore", description="structural levels: output-only keys")
    extra_keys_penalty: float = Field(0.8, ge=0.0, le=1.0, description="multiplier when extra keys are penalised")
    schema_: dict[str, Any] | None = Field(None, alias="schema", description="schema_validated: a JSON Schema")


class StructuralSimilarityMetric(BaseMetric):
    """Structural similarity of the output to the expected JSON/YAML document (harness-evals' StructuralSimilarity).

    Reads ``output`` and ``expected`` (text parsed as ``format``, or structured values). The similarity is the
    share of leaf paths that agree, as ``json_diff`` computes it: matching leaves / |union of leaf paths|, with
    arrays compared as multisets (harness-evals compares with DeepDiff ``ignore_order=True``; its
    ``deep_distance`` is not a share of leaves, so the two agree exactly on identical documents (1.0) and otherwise
    only in direction: two documents sharing no leaf score 0 here, about 0.67 there). Levels:

    - ``raw``: every leaf counts.
    - ``structural``: ``ignore_keys`` are dropped from both sides (top level); each ``required_fields`` key must be
      in the output (with the given value unless it is null), else the value is 0; with ``extra_keys: penalize``,
      keys only in the output multiply the value by ``extra_keys_penalty`` (0.8).
    - ``schema_validated``: the output must first validate against ``schema`` (0 otherwise), then ``structural``.

    Not applicable when ``output`` or ``expected`` is missing or ``expected`` does not parse into a structure.
    Output that does not parse into a structure scores 0. Default threshold 0.85 (harness-evals').
    """

    kind: ClassVar[str] = "structural_similarity"
    family: ClassVar[str] = "structural"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.85
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = StructuralSimilarityOptions

    def setup(self) -> None:
        opts = cast(StructuralSimilarityOptions, self.options)
        self._validator: Validator | None = None
        if opts.level == "schema_validated":
            if opts.schema_ is None:
                raise ValueError("level schema_validated needs `schema`")
            cls = jsonschema.validators.validator_for(opts.schema_)
            cls.check_schema(opts.schema_)
            self._validator = cls(opts.schema_)  # built once, not per case

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(StructuralSimilarityOptions, self.options)
        expected = _parse(eval_case.expected, opts.format)
        if not isinstance(expected, (dict, list)):
            return None
        actual = _parse(eval_case.output, opts.format)
        if not isinstance(actual, (dict, list)):
            return self.score(0.0, f"output does not parse as {opts.format} structure", level=opts.level)
        structural = opts.level != "raw"
        if self._validator is not None:
            error = next(iter(self._validator.iter_errors(actual)), None)
            if error is not None:
                return self.score(0.0, f"schema validation failed: {error.message}", level=opts.level)
        extra: list[str] = []
        if structural and isinstance(actual, dict):
            if isinstance(expected, dict):
                expected = {k: v for k, v in expected.items() if k not in opts.ignore_keys}
            actual = {k: v for k, v in actual.items() if k not in opts.ignore_keys}
            for key, want in opts.required_fields.items():
                if key not in actual or (want is not None and not _equal(actual[key], want)):
                    return self.score(0.0, f"required field {key!r} missing or different", level=opts.level)
            if isinstance(expected, dict):
                extra = sorted(str(k) for k in actual if k not in expected)
        value, matched, total, differing = _leaf_share(expected, actual)
        if structural and extra and opts.extra_keys == "penalize":
            value *= opts.extra_keys_penalty
        reason = f"{matched} of {total} leaf path(s) agree"
        if differing:
            reason += "; first differences: " + ", ".join(differing[:5])
        if extra and opts.extra_keys == "penalize" and structural:
            reason += f"; extra keys {extra[:5]} penalised x{opts.extra_keys_penalty:g}"
        return self.score(value, reason, level=opts.level, matched=matched, total=total, extra_keys=extra)


def _parse(value: Any, fmt: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value) if fmt == "json" else yaml.safe_load(value)
    except (ValueError, yaml.YAMLError):
        return None


def _equal(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _canonical_lists(value: Any) -> Any:
    """Arrays sorted by their elements' canonical JSON text, recursively (multiset comparison)."""
    if isinstance(value, dict):
        return {k: _canonical_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_canonical_lists(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def _leaf_share(expected: Any, actual: Any) -> tuple[float, int, int, list[str]]:
    want, got = leaves(_canonical_lists(expected)), leaves(_canonical_lists(actual))
    paths = list(dict.fromkeys([*want, *got]))
    differing = [render_path(p) for p in paths if not (p in want and p in got and same_json(want[p], got[p]))]
    total = len(paths)
    matched = total - len(differing)
    return (matched / total if total else 1.0), matched, total, differing
