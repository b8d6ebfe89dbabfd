"""fast_init keeps every dataclass behaviour of the frozen records it speeds up."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall
from evald.frozen import fast_init
from evald.mapping.messages import CallContent
from evald.model import AssembledTrace, LogRecord, ScoredCase, SpanEvent, SpanRecord


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
