"""Conversation cases: trace cases sharing a conversation id, evaluated together after inactivity, bounded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from evald.case import EvalCase, Message, ToolCall
from evald.config.loader import parse_config
from evald.model import AssembledTrace, SpanRecord
from evald.pipeline.conversations import ConversationsConfig, ConversationTracker, conversation_id
from evald.replay import replay
from evald.telemetry import Telemetry


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def turn(trace_id: str, question: str, answer: str, cid: str | None = "c1", **extra: object) -> EvalCase:
    metadata = {"conversation_id": cid} if cid else {}
    return EvalCase(input=question, output=answer, trace_id=trace_id, span_id=trace_id[:16], scope="trace",
                    metadata=metadata, **extra)  # type: ignore[arg-type]


EMPTY = AssembledTrace("0" * 32, ())


def sample(tm: Telemetry, name: str, **labels: str) -> float:
    return tm.registry.get_sample_value(name, labels) or 0.0


def test_turns_become_one_case_after_inactivity() -> None:
    clock, tm = Clock(), Telemetry()
    tracker = ConversationTracker(ConversationsConfig(inactivity=60), tm, clock)
    assert tracker.add(turn("a" * 32, "Hi, I need a refund", "Sure, which order?", input_tokens=10,
                            output_tokens=5), EMPTY) == []
    clock.now += 30
    tracker.add(turn("b" * 32, "Order 42", "Refund issued.", input_tokens=20, output_tokens=None,
                     tool_calls=(ToolCall("refund", {"order": 42}, "ok"),)), EMPTY)
    tracker.add(turn("c" * 32, "unrelated", "x", cid=None), EMPTY)  # no id: not part of any conversation
    clock.now += 59
    assert tracker.due() == []
    clock.now += 2
    (case,) = tracker.due()
    assert case.scope == "conversation" and case.trace_id == "b" * 32
    assert [(m.role, m.content) for m in case.messages] == [
        ("user", "Hi, I need a refund"), ("assistant", "Sure, which order?"), ("user", "Order 42"),
        ("assistant", "Refund issued.")]
    assert (case.input, case.output) == ("Hi, I need a refund", "Refund issued.")
    assert [t.name for t in case.tool_calls] == ["refund"]
    assert (case.input_tokens, case.output_tokens, case.token_count) == (30, 5, 35)
    assert case.metadata["turn_count"] == 2 and case.metadata["trace_ids"] == ["a" * 32, "b" * 32]
    assert sample(tm, "evald_conversations_emitted_total", reason="inactive") == 1
    assert sample(tm, "evald_conversations_active") == 0


def test_memory_is_bounded_with_counted_early_emission_and_dropped_turns() -> None:
    tm = Telemetry()
    tracker = ConversationTracker(ConversationsConfig(max_conversations=2, max_turns=2), tm, Clock())
    tracker.add(turn("a" * 32, "q1", "a1", cid="one"), EMPTY)
    tracker.add(turn("b" * 32, "q1", "a1", cid="two"), EMPTY)
    (evicted,) = tracker.add(turn("c" * 32, "q1", "a1", cid="three"), EMPTY)
    assert evicted.metadata["conversation_id"] == "one"
    assert sample(tm, "evald_conversations_emitted_total", reason="capacity") == 1
    for i in range(3):
        tracker.add(turn("d" * 32, f"q{i}", f"a{i}", cid="two"), EMPTY)
    cases = {c.metadata["conversation_id"]: c for c in tracker.flush()}
    assert set(cases) == {"two", "three"}
    assert cases["two"].metadata["turn_count"] == 4 and cases["two"].metadata["turns_kept"] == 2
    assert sample(tm, "evald_conversation_turns_dropped_total") == 2
    assert sample(tm, "evald_conversations_emitted_total", reason="shutdown") == 2
    assert sample(tm, "evald_conversations_held_bytes") == 0  # dropped turns were let go of too, not charged twice


def test_conversation_id_sources() -> None:
    span = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_span_id=None, name="s", kind=1,
                      start_time_unix_nano=1, end_time_unix_nano=2, attributes={"langfuse.session.id": "lf-7"})
    trace = AssembledTrace("a" * 32, (span,))
    assert conversation_id(turn("a" * 32, "q", "a", cid=None), trace) == "lf-7"
    assert conversation_id(turn("a" * 32, "q", "a", cid="own"), trace) == "own"
    assert conversation_id(EvalCase(metadata={"session_id": "s-1"}), EMPTY) == "s-1"


def _chat_trace(trace_id: str, question: str, answer: str, conversation: str) -> dict[str, object]:
    def attr(key: str, value: str) -> dict[str, object]:
        return {"key": key, "value": {"stringValue": value}}
    return {"resource": {"attributes": [attr("service.name", "chat-app")]}, "scopeSpans": [{"spans": [{
        "traceId": trace_id, "spanId": trace_id[:16], "name": "chat m", "kind": 3,
        "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [
            attr("gen_ai.operation.name", "chat"), attr("gen_ai.conversation.id", conversation),
            attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [
                {"type": "text", "content": question}]}])),
            attr("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [
                {"type": "text", "content": answer}]}]))]}]}]}


def test_replay_scores_conversations(tmp_path: Path) -> None:
    body = {"resourceSpans": [
        _chat_trace("1" * 32, "Where is my parcel?", "Which order number?", "conv-1"),
        _chat_trace("2" * 32, "Order 42", "It arrives tomorrow. Anything else?", "conv-1"),
        _chat_trace("3" * 32, "Hello", "Hi!", "conv-2"),
    ]}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(body))
    config = parse_config("""
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: contains, scope: conversation, options: { values: ["tomorrow"] } }
""", environ={})
    result = asyncio.run(replay([path], config))
    conversations = {c.case.metadata["conversation_id"]: c for c in result.scored if c.case.scope == "conversation"}
    assert set(conversations) == {"conv-1", "conv-2"}
    assert [s.passed for s in conversations["conv-1"].scores] == [True]
    assert [s.passed for s in conversations["conv-2"].scores] == [False]
    assert len(conversations["conv-1"].case.messages) == 4
    assert not [c for c in result.scored if c.case.scope != "conversation"]  # only conversation metrics here


def test_turns_are_bounded_by_bytes_and_keep_only_what_the_conversation_case_reads() -> None:
    tm = Telemetry()
    tracker = ConversationTracker(ConversationsConfig(max_mib=1), tm, Clock())
    history = tuple(Message("user", "earlier turn " * 1000) for _ in range(20))  # ~260 kB the turn need not keep
    tracker.add(turn("a" * 32, "q" * 300_000, "a1", cid="one", messages=history), EMPTY)
    held = sample(tm, "evald_conversations_held_bytes")
    assert 300_000 < held < 310_000  # the question and answer, not the message history
    tracker.add(turn("b" * 32, "q" * 300_000, "a1", cid="two"), EMPTY)
    tracker.add(turn("c" * 32, "q" * 300_000, "a1", cid="three"), EMPTY)
    assert tracker.add(turn("d" * 32, "q", "a", cid="three"), EMPTY) == []  # ~0.9 MiB held: under 1 MiB
    (evicted,) = tracker.add(turn("e" * 32, "q" * 300_000, "a1", cid="four"), EMPTY)  # ~1.2 MiB: the oldest goes
    assert evicted.metadata["conversation_id"] == "one" and evicted.input == "q" * 300_000
    assert sample(tm, "evald_conversations_emitted_total", reason="memory_limit") == 1
    assert sample(tm, "evald_conversations_held_bytes") < 1 << 20
    cases = tracker.flush()
    assert len(cases) == 3 and sample(tm, "evald_conversations_held_bytes") == 0
    (three,) = (c for c in cases if c.metadata["conversation_id"] == "three")
    assert [m.content for m in three.messages] == ["q" * 300_000, "a1", "q", "a"]
