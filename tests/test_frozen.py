"""fast_init keeps every dataclass behaviour of the frozen records it speeds up."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall, new_eval_case, new_message, new_score
from evald.frozen import constructor, fast_init
from evald.mapping.messages import CallContent
from evald.model import AssembledTrace, LogRecord, ScoredCase, SpanEvent, SpanRecord, new_span_record


def _declared() -> type[Any]:
    """The same class body every time: one copy becomes the plain dataclass, another the fast_init one."""

    class Record:
        name: str
        count: int = 3
        tags: list[str] = field(default_factory=list)
        derived: int = field(init=False, default=0)
        late: str = field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "late", f"{self.name}:{self.count}")

    return Record


_Reference: Any = dataclass(frozen=True, slots=True)(_declared())
_Fast: Any = fast_init(dataclass(frozen=True, slots=True)(_declared()))


@pytest.mark.parametrize("record", [EvalCase, Score, Message, ToolCall, Document, SpanEvent, SpanRecord, LogRecord,
                                    AssembledTrace, ScoredCase, CallContent, _Fast])
def test_the_hot_records_are_built_by_the_fast_init(record: type[Any]) -> None:
    """The constructor is fast_init's (through the mutable twin), not the dataclass's per-field setattr one."""
    twin = record.__init__.__globals__.get("_twin")
    assert twin is not None and twin.__slots__ == record.__slots__
    assert "_twin" not in _Reference.__init__.__globals__


@pytest.mark.parametrize("args, kwargs", [(("a",), {}), (("a", 5), {}), ((), {"name": "b", "tags": ["x"]}),
                                          (("c",), {"count": 0, "tags": []})])
def test_same_values_as_the_dataclass_init(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    fast, reference = _Fast(*args, **kwargs), _Reference(*args, **kwargs)
    assert type(fast) is _Fast
    assert dataclasses.astuple(fast) == dataclasses.astuple(reference)
    assert repr(fast) == repr(reference)


def test_default_factory_gives_each_instance_its_own_value() -> None:
    first, second = _Fast("a"), _Fast("b")
    assert first.tags == [] and first.tags is not second.tags


@pytest.mark.parametrize("call", [lambda: _Fast(), lambda: _Fast("a", 1, [], 2), lambda: _Fast("a", derived=1),
                                  lambda: _Fast("a", bogus=1), lambda: _Fast("a", name="b")])
def test_wrong_arguments_are_refused_like_the_dataclass(call: Any) -> None:
    with pytest.raises(TypeError):
        call()


def test_still_frozen_hashable_comparable_picklable_and_replaceable() -> None:
    score = Score("m", 0.7, 0.5, "why", {"k": 1}, Dimension.SAFETY)
    with pytest.raises(dataclasses.FrozenInstanceError):
        score.value = 0.1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del score.reason
    message = Message("user", "hi", tool_calls=(ToolCall("f", "{}"),))
    assert message == Message("user", "hi", tool_calls=(ToolCall("f", "{}"),))
    assert hash(message) == hash(Message("user", "hi", tool_calls=(ToolCall("f", "{}"),)))
    assert pickle.loads(pickle.dumps(score)) == score and copy.deepcopy(score) == score
    replaced = dataclasses.replace(score, value=0.2)
    assert type(replaced) is Score and replaced.passed is False and score.passed is True


def test_hot_records_keep_their_post_init_and_defaults() -> None:
    assert Score("m", 1.0 + 1e-9, 0.5).value == 1.0  # __post_init__ still clamps and derives passed
    with pytest.raises(ValueError, match="outside"):
        Score("m", 1.5, 0.5)
    case = EvalCase(input="q", output="a", trace_id="t")
    assert case.metadata == {} and case.metadata is not EvalCase().metadata and case.scope == "trace"
    span = SpanRecord("t" * 32, "s" * 16, None, "chat", 1, 1, 2, {})
    assert span.events == () and span.resource == {} and span.is_root


def test_refuses_what_it_cannot_reproduce() -> None:
    with pytest.raises(TypeError):
        fast_init(dataclass(frozen=False, slots=True)(type("Mutable", (), {"__annotations__": {"a": int}})))
    with pytest.raises(TypeError, match="kw_only"):
        @fast_init
        @dataclass(frozen=True, slots=True, kw_only=True)
        class _KwOnly:
            a: int


@pytest.mark.parametrize("args, kwargs", [(("a",), {}), (("a", 5), {}), ((), {"name": "b", "tags": ["x"]}),
                                          (("c",), {"count": 0, "tags": []})])
def test_the_constructor_builds_what_the_class_call_builds(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    new = constructor(_Fast)
    built, called = new(*args, **kwargs), _Fast(*args, **kwargs)
    assert type(built) is _Fast and built == called and built.late == called.late  # __post_init__ ran
    assert dataclasses.astuple(built) == dataclasses.astuple(_Reference(*args, **kwargs))
    assert new("a").tags is not new("a").tags  # default_factory per instance
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "x"
    assert copy.deepcopy(built) == built and pickle.loads(pickle.dumps(new_score("m", 0.5, 0.5))).passed


@pytest.mark.parametrize("call", [lambda new: new(), lambda new: new("a", 1, [], 2), lambda new: new("a", derived=1),
                                  lambda new: new("a", bogus=1), lambda new: new("a", name="b")])
def test_the_constructor_refuses_wrong_arguments_like_the_class(call: Any) -> None:
    with pytest.raises(TypeError):
        call(constructor(_Fast))


def test_the_hot_records_constructors_match_their_classes() -> None:
    assert new_score("m", 1.2 - 0.2, 0.5) == Score("m", 1.0, 0.5) and new_score("m", 0.4, 0.5).passed is False
    with pytest.raises(ValueError, match="outside"):
        new_score("m", 1.5, 0.5)
    assert new_message(role="user", content="hi") == Message("user", "hi")
    assert new_eval_case(input="q", output="a").metadata == {} and new_eval_case().metadata is not EvalCase().metadata
    span = dict(trace_id="t", span_id="s", parent_span_id=None, name="n", kind=1, start_time_unix_nano=1,
                end_time_unix_nano=2, attributes={"k": "v"})
    assert new_span_record(**span) == SpanRecord(**span) and new_span_record(**span).resource == {}


def test_constructor_refuses_a_class_fast_init_did_not_build() -> None:
    with pytest.raises(TypeError, match="not a fast_init class"):
        constructor(_Reference)
