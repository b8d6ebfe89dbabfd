"""Conversations: trace cases that share a conversation id become one ``conversation`` case after inactivity.

Active only when some metric is configured with ``scope: conversation`` (otherwise nothing is kept). A trace case
joins a conversation when it carries an id: ``metadata.conversation_id`` (GenAI ``gen_ai.conversation.id``) or
``metadata.session_id`` (OpenInference ``session.id``, OpenLLMetry association properties), else a span attribute
``gen_ai.conversation.id``, ``session.id`` or ``langfuse.session.id`` in its trace. Each trace case is a turn: its
user input and final answer (with its tool calls) appended in arrival order.

Config keys (``conversations:``): ``inactivity`` (a conversation with no new turn for this long is evaluated,
default 5m), ``max_conversations`` (held at once, default 10000), ``max_turns`` (turns kept per conversation,
default 100; older turns are dropped and counted), ``max_mib`` (estimated MiB of turns held, default 64).

The conversation case: ``scope="conversation"``, ``messages`` = every kept turn (user, assistant), ``input`` = the
first user input, ``output`` = the last answer, ``tool_calls`` = all turns' calls, tokens summed (unknown stays
unknown), ``error`` = any turn failed, ``trace_id`` / ``span_id`` = the last turn's, ``metadata`` =
``conversation_id``, ``turn_count``, ``trace_ids`` (the last 20), ``turn_latency_ms`` and ``turn_tokens`` (per kept
turn, None where unknown).

Failure semantics: memory is bounded by count and by bytes. A turn keeps only what the conversation case reads
(its messages, retrieved context and metadata are left out), charged the estimated size of its texts and tool
calls (evald/assembly/sizing.py; ``evald_conversations_held_bytes``). When ``max_conversations`` is reached, the
least recently active conversation is evaluated early (``evald_conversations_emitted_total{reason="capacity"}``),
and so is it while the turns held pass ``max_mib`` (``reason="memory_limit"``); on shutdown every held
conversation is evaluated (``reason="shutdown"``). A conversation case does not hold its traces' acknowledgements
(a source never waits minutes for an offset commit), so after a crash the turns of an open conversation that were
already acknowledged are not re-read: conversation scores are best effort, trace and call scores at least once.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from prometheus_client import CollectorRegistry, Gauge
from pydantic import Field

from evald.assembly.sizing import value_bytes
from evald.case import EvalCase, Message, ToolCall
from evald.config.base import ComponentConfig, Duration
from evald.mapping.values import as_str
from evald.model import AssembledTrace
from evald.telemetry import Telemetry, shared_instruments

_ID_ATTRIBUTES = ("gen_ai.conversation.id", "session.id", "langfuse.session.id")
_MAX_TRACE_IDS = 20


class ConversationsConfig(ComponentConfig):
    inactivity: Duration = Field(300.0, description="A conversation idle this long is evaluated as one case.")
    max_conversations: int = Field(10_000, gt=0, description="Held at once; beyond it the oldest is evaluated.")
    max_turns: int = Field(100, gt=0, description="Turns kept per conversation; older ones are dropped, counted.")
    max_mib: int = Field(64, gt=0, description="Estimated MiB of turns held; beyond it the least recently active "
                         "conversations are evaluated early.")


@dataclass
class _Conversation:
    conversation_id: str
    turns: list[EvalCase] = field(default_factory=list)
    last_active: float = 0.0
    dropped_turns: int = 0
    turn_bytes: list[int] = field(default_factory=list)  # each kept turn's estimate, charged while it is held


_TURN_OVERHEAD = 1_000  # the kept EvalCase and its small fields
_TOOL_OVERHEAD = 200


def _kept(case: EvalCase) -> EvalCase:
    """The turn as kept: without what the conversation case never reads (messages, context, metadata)."""
    return replace(case, messages=(), context=(), expected=None,
                   metadata={"convention": case.metadata.get("convention")})


def _turn_bytes(turn: EvalCase) -> int:
    nbytes = _TURN_OVERHEAD + value_bytes(turn.input) + value_bytes(turn.output) + value_bytes(turn.system_prompt)
    for call in turn.tool_calls:
        nbytes += _TOOL_OVERHEAD + value_bytes(call.arguments) + value_bytes(call.result)
    return nbytes


def _held_gauge(registry: CollectorRegistry) -> Gauge:
    return Gauge("evald_conversations_held_bytes", "Estimated bytes of the conversation turns held.", registry=registry)


def conversation_id(case: EvalCase, trace: AssembledTrace) -> str | None:
    for key in ("conversation_id", "session_id"):
        if value := as_str(case.metadata.get(key)):
            return value
    for span in trace.spans:
        for key in _ID_ATTRIBUTES:
            if value := as_str(span.attributes.get(key)):
                return value
    return None


class ConversationTracker:
    def __init__(self, config: ConversationsConfig, telemetry: Telemetry,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._cfg = config
        self._tm = telemetry
        self._clock = clock
        self._open: OrderedDict[str, _Conversation] = OrderedDict()  # least recently active first
        self._max_bytes = config.max_mib << 20
        self.held_bytes = 0
        telemetry.conversations_active.set_function(lambda: len(self._open))
        shared_instruments(telemetry.registry, _held_gauge).set_function(lambda: self.held_bytes)

    def add(self, case: EvalCase, trace: AssembledTrace) -> list[EvalCase]:
        """Record a trace case as a turn; returns conversation cases evicted early to stay within bounds."""
        if case.scope != "trace" or (cid := conversation_id(case, trace)) is None:
            return []
        conversation = self._open.pop(cid, None) or _Conversation(cid)
        kept = _kept(case)
        nbytes = _turn_bytes(kept)
        conversation.turns.append(kept)
        conversation.turn_bytes.append(nbytes)
        self.held_bytes += nbytes
        if len(conversation.turns) > self._cfg.max_turns:
            del conversation.turns[0]
            self.held_bytes -= conversation.turn_bytes.pop(0)
            conversation.dropped_turns += 1
            self._tm.conversation_turns_dropped.inc()
        conversation.last_active = self._clock()
        self._open[cid] = conversation
        evicted: list[EvalCase] = []
        while len(self._open) > self._cfg.max_conversations:
            _, oldest = self._open.popitem(last=False)
            evicted.append(self._emit(oldest, "capacity"))
        while self.held_bytes > self._max_bytes and self._open:
            _, oldest = self._open.popitem(last=False)
            evicted.append(self._emit(oldest, "memory_limit"))
        return evicted

    def due(self) -> list[EvalCase]:
        """Conversations idle for ``inactivity``, as cases (oldest first)."""
        deadline = self._clock() - self._cfg.inactivity
        out: list[EvalCase] = []
        while self._open:
            cid, oldest = next(iter(self._open.items()))
            if oldest.last_active > deadline:
                break
            del self._open[cid]
            out.append(self._emit(oldest, "inactive"))
        return out

    def flush(self) -> list[EvalCase]:
        out = [self._emit(c, "shutdown") for c in self._open.values()]
        self._open.clear()
        return out

    def _emit(self, conversation: _Conversation, reason: str) -> EvalCase:
        self.held_bytes -= sum(conversation.turn_bytes)
        self._tm.conversations_emitted.labels(reason).inc()
        return conversation_case(conversation.conversation_id, conversation.turns, conversation.dropped_turns)


def conversation_case(cid: str, turns: list[EvalCase], dropped_turns: int = 0) -> EvalCase:
    messages: list[Message] = []
    tools: list[ToolCall] = []
    for turn in turns:
        if isinstance(turn.input, str):
            messages.append(Message("user", turn.input))
        if isinstance(turn.output, str):
            messages.append(Message("assistant", turn.output, tool_calls=turn.tool_calls))
        tools.extend(turn.tool_calls)
    last = turns[-1]
    tin = [t.input_tokens for t in turns if t.input_tokens is not None]
    tout = [t.output_tokens for t in turns if t.output_tokens is not None]
    return EvalCase(
        input=turns[0].input, output=last.output, messages=tuple(messages), tool_calls=tuple(tools),
        token_count=(sum(tin) + sum(tout)) if tin or tout else None,
        input_tokens=sum(tin) if tin else None, output_tokens=sum(tout) if tout else None,
        error=any(t.error for t in turns), trace_id=last.trace_id, span_id=last.span_id, scope="conversation",
        model=last.model, request_model=last.request_model, provider=last.provider, system_prompt=last.system_prompt,
        service_name=last.service_name,
        metadata={"conversation_id": cid, "turn_count": len(turns) + dropped_turns, "turns_kept": len(turns),
                  "trace_ids": [t.trace_id for t in turns][-_MAX_TRACE_IDS:],
                  "convention": last.metadata.get("convention"),
                  # per turn (kept turns, in order; None where unknown): turn_latency and turn_token_cost read them
                  "turn_latency_ms": [t.latency_ms for t in turns], "turn_tokens": [_turn_tokens(t) for t in turns]},
    )


def _turn_tokens(turn: EvalCase) -> int | None:
    if turn.token_count is not None:
        return turn.token_count
    if turn.input_tokens is None or turn.output_tokens is None:
        return None
    return turn.input_tokens + turn.output_tokens
