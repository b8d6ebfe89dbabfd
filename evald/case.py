"""The evaluation contract: EvalCase in, Score out (harness-evals' field names and semantics).

These are plain frozen dataclasses with no third-party dependency (their ``__init__`` is the cheaper one of
``evald.frozen.fast_init``, same signature and semantics), so that any metric, including a
harness-evals ``BaseMetric`` through an adapter, can read them. ``Score.passed`` is always derived from
``value >= threshold``; it can never be set by hand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from types import MappingProxyType
from typing import Any, Final, Literal

from evald.frozen import constructor, fast_init

CaseScope = Literal["llm_call", "trace", "conversation"]


class Dimension(StrEnum):
    """What a metric judges. Every metric has exactly one; safety is never averaged with the others."""

    CORRECTNESS = "correctness"
    GROUNDEDNESS = "groundedness"
    SAFETY = "safety"
    TRAJECTORY = "trajectory"
    PERFORMANCE = "performance"


@fast_init
@dataclass(frozen=True, slots=True)
class Message:
    """One chat message; ``content`` is the concatenated text parts."""

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool invocation with its arguments and, when known, its result."""

    name: str
    arguments: Any = None
    result: Any = None
    id: str | None = None
    error: bool = False


@fast_init
@dataclass(frozen=True, slots=True)
class Document:
    """A retrieved document: id and score are usual, content only when the convention carries it."""

    id: str | None = None
    content: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class EvalCase:
    """One thing to evaluate: a single LLM call (``scope="llm_call"``) or a whole trace (``"trace"``)."""

    input: Any = None
    output: Any = None
    expected: Any = None
    context: tuple[Document, ...] = ()
    messages: tuple[Message, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    expected_tools: tuple[str, ...] | None = None
    latency_ms: float | None = None
    token_count: int | None = None
    cost_usd: float | None = None
    retry_count: int | None = None
    confidence: float | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # what an online daemon needs on top of the offline contract
    trace_id: str = ""
    span_id: str | None = None
    scope: CaseScope = "trace"
    model: str | None = None
    request_model: str | None = None
    provider: str | None = None
    system_prompt: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: bool = False
    service_name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view of every field (used by replay output and exporters)."""
        from dataclasses import asdict

        out: dict[str, Any] = _jsonable(asdict(self))
        return out


_EPSILON = 1e-6
#: ``EvalCase.metadata`` key of the evaluated span's end time (ns): mappers set it, exporters stamp scores with it
SPAN_END_METADATA: Final = "span_end_unix_nano"


@fast_init
@dataclass(frozen=True, slots=True)
class Score:
    """A metric's result. ``value`` is in [0, 1] (tiny float overshoot is clamped); ``passed`` is derived."""

    name: str
    value: float
    threshold: float
    reason: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    dimension: Dimension = Dimension.CORRECTNESS
    passed: bool = field(init=False)

    def __post_init__(self) -> None:
        value, threshold = self.value, self.threshold
        if type(value) is float and 0.0 <= value <= 1.0 and 0.0 <= threshold <= 1.0:  # the usual score
            object.__setattr__(self, "passed", value >= threshold)
            return
        value = value if type(value) is float else float(value)
        if not -_EPSILON <= value <= 1 + _EPSILON:  # also false for NaN
            raise ValueError(f"score {self.name!r}: value {self.value!r} is outside [0, 1]")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"score {self.name!r}: threshold {self.threshold!r} is outside [0, 1]")
        if value < 0.0 or value > 1.0 or value is not self.value:
            value = 0.0 if value < 0.0 else 1.0 if value > 1.0 else value
            object.__setattr__(self, "value", value)
        object.__setattr__(self, "passed", value >= self.threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "threshold": self.threshold,
            "passed": self.passed,
            "dimension": self.dimension.value,
            "reason": self.reason,
            "metadata": _jsonable(dict(self.metadata)),
        }


def _jsonable(value: Any) -> Any:
    """Turn tuples, enums and bytes into JSON-friendly values, recursively."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: the records' constructors as plain functions (``evald.frozen.constructor``: the same instances, built without
#: ``type.__call__``'s overhead), for the hot paths that build them by the thousand
new_message = constructor(Message)
new_tool_call = constructor(ToolCall)
new_document = constructor(Document)
new_eval_case = constructor(EvalCase)
_construct_score = constructor(Score)
#: ``Score``'s layout twin (the same slots): a usual score is built on it and given its class, as fast_init does
_ScoreTwin: Final[type] = type("_ScoreTwin", (object,), {"__slots__": Score.__dict__["__slots__"]})
_alloc: Final = object.__new__
_FRESH: Final[Mapping[str, Any]] = MappingProxyType({})  # "no metadata given": a new dict, as the default_factory


def new_score(
    name: str,
    value: float,
    threshold: float,
    reason: str | None = None,
    metadata: Mapping[str, Any] = _FRESH,
    dimension: Dimension = Dimension.CORRECTNESS,
) -> Score:
    """``Score(...)`` as a plain function (every metric builds its scores with it, several per case): a usual
    score (a float value and a threshold within [0, 1]) gets ``passed`` here, without the ``__post_init__`` call
    and its ``object.__setattr__``; any other goes through the class's own checks and clamping."""
    if metadata is _FRESH:
        metadata = {}
    if type(value) is float and 0.0 <= value <= 1.0 and 0.0 <= threshold <= 1.0:
        score: Any = _alloc(_ScoreTwin)
        score.name = name
        score.value = value
        score.threshold = threshold
        score.reason = reason
        score.metadata = metadata
        score.dimension = dimension
        score.passed = value >= threshold
        score.__class__ = Score
        return score  # type: ignore[no-any-return]
    return _construct_score(name, value, threshold, reason, metadata, dimension)
