"""fast_init keeps every dataclass behaviour of the frozen records it speeds up."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall, new_eval_case, new_message, new_score
from evald.frozen import constructor, fast_init, replace
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


@pytest.mark.parametrize("changes", [{}, {"name": "z"}, {"count": 9, "tags": ["t"]}, {"tags": []}])
def test_replace_builds_what_dataclasses_replace_builds(changes: dict[str, Any]) -> None:
    """Copied fields, changed fields, init=False fields reset by __init__'s defaults, __post_init__ run again."""
    fast, reference = _Fast("a", 5, ["x"]), _Reference("a", 5, ["x"])
    object.__setattr__(fast, "derived", 7)  # an init=False field: replace() resets it, as dataclasses.replace does
    object.__setattr__(reference, "derived", 7)
    replaced, expected = replace(fast, **changes), dataclasses.replace(reference, **changes)
    assert type(replaced) is _Fast and replaced is not fast
    assert dataclasses.astuple(replaced) == dataclasses.astuple(expected)
    assert replaced.late == expected.late and replaced.derived == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        replaced.name = "x"
    assert fast.name == "a" and fast.derived == 7  # the original is untouched


@pytest.mark.parametrize("record", [
    Score("m", 0.7, 0.5, "why", {"k": 1}, Dimension.SAFETY),
    EvalCase(input="q", output="a", trace_id="t", metadata={"k": 1}),
    SpanRecord("t" * 32, "s" * 16, None, "chat", 1, 1, 2, {"a": 1}),
    Message("user", "hi", tool_calls=(ToolCall("f", "{}"),)),
])
def test_replace_on_the_hot_records_equals_dataclasses_replace(record: Any) -> None:
    name = dataclasses.fields(record)[0].name
    assert replace(record, **{name: "other"}) == dataclasses.replace(record, **{name: "other"})
    assert replace(record) == record and replace(record) is not record


def test_replace_reruns_post_init_checks_and_derivations() -> None:
    score = Score("m", 0.7, 0.5)
    assert replace(score, value=0.2).passed is False and replace(score, threshold=0.9).passed is False
    assert replace(score, value=1.0 + 1e-9).value == 1.0
    with pytest.raises(ValueError, match="outside"):
        replace(score, value=1.5)


@pytest.mark.parametrize("changes, error", [({"derived": 1}, ValueError), ({"bogus": 1}, TypeError)])
def test_replace_refuses_what_dataclasses_replace_refuses(changes: dict[str, Any], error: type[Exception]) -> None:
    for replacing, record in ((replace, _Fast("a")), (dataclasses.replace, _Reference("a"))):
        with pytest.raises(error):
            replacing(record, **changes)


def test_replace_falls_back_to_dataclasses_replace_for_other_dataclasses() -> None:
    reference = _Reference("a", 2)
    replaced = replace(reference, count=4)
    assert type(replaced) is _Reference and replaced.count == 4 and replaced.late == "a:4"
