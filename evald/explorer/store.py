"""The explorer's bounded memory: recent evaluations and not-evaluable traces, failing evaluations kept longest.

Two rings in arrival order, ``failing`` (a case with a failed score) and ``other`` (passing, skipped, errored,
not evaluable). Both together hold at most ``max_items`` entries and ``max_bytes`` (estimated record size). When
an insert passes a bound, the oldest ``other`` entry goes first while the failing ring is within its share
(``failing_share`` of both bounds), else the oldest failing one; so a burst of passing cases never pushes out the
failures an on-call engineer is looking for, and failures never take more than their share while others arrive.
Evictions are counted by ring and bound (``evicted``); an entry larger than ``max_bytes`` alone is not kept
(``evicted[(ring, "too_large")]``). Sizes are estimates: fixed overheads per entry, case, score and object, and the
case's values by the assembly window's estimator (``value_bytes``, evald/assembly/sizing.py).

Admission: at more than ``max_rate`` new records per second into a ring, the ring keeps a sample at that rate
(a token bucket per ring, a second's worth of burst; counted as ``evicted[(ring, "sampled")]``): at 10,000
evaluations per second the rings would turn over in a fraction of a second, so sizing and keeping every record
bought nothing but CPU (13% of evald's online on the full mix of conventions), while a sample keeps
``max_items`` spread over seconds. The judged part of a case already kept is always merged.

The pipeline exports a case's fast scores and its judged scores in two batches (``split_judged``): a record for
a case already kept (same trace id, span id and scope) is merged into it (scores by name) and moves to the newest
position; the case is sized once (the judged record carries the same case object), only the scores anew. Entries
keep the ``ScoredCase`` itself (immutable, shared with the exporters; nothing is copied); redaction and rendering
happen when a page or the API reads one (evald/explorer/views.py).
"""

from __future__ import annotations

import heapq
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evald.assembly.sizing import value_bytes
from evald.case import EvalCase, ToolCall
from evald.interfaces import NotEvaluable
from evald.model import ScoredCase

Ring = Literal["failing", "other"]
Outcome = Literal["pass", "fail", "skipped", "error", "not_evaluable"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "skipped", "error", "not_evaluable")
#: Fixed overhead counted per entry and per object in it (the dict, the dataclass, the index); values are sized by
#: the assembly window's estimator (evald/assembly/sizing.py ``value_bytes``)
_ENTRY_OVERHEAD = 512
_OBJECT_OVERHEAD = 56
_CASE_OVERHEAD = 1024  # an EvalCase's fixed fields
_SCORE_OVERHEAD = 256


@dataclass(slots=True)
class Entry:
    """One kept record: a scored case (``scored``) or a not-evaluable trace (``not_evaluable``)."""

    id: int
    received: float  # unix seconds
    trace_id: str
    span_id: str | None
    scope: str
    service: str | None
    model: str | None
    scored: ScoredCase | None = None
    not_evaluable: NotEvaluable | None = None
    size: int = 0
    case_size: int = 0  # the part of ``size`` that is ``scored.case`` (kept when a split case's parts merge)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # metric -> outcome
    seq: int = 0  # insertion order (a merged record moves to the newest position)

    @property
    def failing(self) -> bool:
        return "fail" in self.outcomes.values()

    @property
    def ring(self) -> Ring:
        return ring_of(self.scored)

    @property
    def key(self) -> tuple[str, str | None, str]:
        return (self.trace_id, self.span_id, self.scope)


def ring_of(scored: ScoredCase | None) -> Ring:
    """The ring of a record with these results: ``failing`` when any of its scores failed (a not-evaluable record,
    ``None``, is ``other``)."""
    if scored is not None:
        for score in scored.scores:
            if not score.passed:
                return "failing"
    return "other"


def outcomes_of(scored: ScoredCase) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    for name, _ in scored.skipped:
        out[name] = "skipped"
    for name, _ in scored.errors:
        out[name] = "error"
    for score in scored.scores:
        out[score.name] = "pass" if score.passed else "fail"
    return out


def _mapping_bytes(value: Mapping[str, Any] | None) -> int:
    """``value_bytes`` of a mapping field (a plain dict as the mappers build it; any other mapping as one)."""
    if not value:
        return 0
    return value_bytes(value if type(value) is dict else dict(value))


def _tool_call_bytes(call: ToolCall) -> int:
    return _OBJECT_OVERHEAD + len(call.name) + value_bytes(call.arguments) + value_bytes(call.result)


def case_bytes(case: EvalCase) -> int:
    """Estimated bytes of a case: a fixed overhead for its small fields, and its texts and structured values
    (input, output, expected, messages, documents, tool calls, metadata) by the assembly window's estimator."""
    size = _CASE_OVERHEAD + value_bytes(case.input) + value_bytes(case.output) + value_bytes(case.expected)
    size += len(case.system_prompt or "") + _mapping_bytes(case.metadata)
    size += sum(_OBJECT_OVERHEAD + len(m.content or "") + sum(map(_tool_call_bytes, m.tool_calls))
                for m in case.messages)
    size += sum(_OBJECT_OVERHEAD + len(d.content or "") + _mapping_bytes(d.metadata) for d in case.context)
    return size + sum(map(_tool_call_bytes, case.tool_calls))


def results_bytes(scored: ScoredCase) -> int:
    """Estimated bytes of a scored case's scores, skips and errors (without the case)."""
    size = sum(_SCORE_OVERHEAD + len(score.reason or "") + _mapping_bytes(score.metadata) for score in scored.scores)
    return size + sum(_OBJECT_OVERHEAD + len(reason) for _, reason in (*scored.skipped, *scored.errors))


def scored_size(scored: ScoredCase) -> int:
    """Estimated bytes of a scored case: ``case_bytes`` + ``results_bytes``."""
    return case_bytes(scored.case) + results_bytes(scored)


def not_evaluable_bytes(item: NotEvaluable) -> int:
    return _OBJECT_OVERHEAD + sum(len(text or "") for text in (item.reason, item.convention, item.detail,
                                                               item.scope, item.span_id))


def _merge(old: ScoredCase, new: ScoredCase) -> ScoredCase:
    names = {s.name for s in new.scores}
    scores = (*[s for s in old.scores if s.name not in names], *new.scores)
    done = names | {n for n, _ in new.errors}
    skipped = tuple(x for x in (*old.skipped, *new.skipped) if x[0] not in done)
    errors = tuple(x for x in (*old.errors, *new.errors) if x[0] not in names)
    return ScoredCase(case=new.case, scores=scores, skipped=_unique(skipped), errors=_unique(errors),
                      metric_dimensions={**old.metric_dimensions, **new.metric_dimensions})


def _unique(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple({name: (name, reason) for name, reason in pairs}.values())


class EvaluationStore:
    def __init__(self, max_items: int, max_bytes: int, failing_share: float, max_rate: float | None = None) -> None:
        self.max_items = max_items
        self.max_rate = max_rate
        self._tokens: dict[Ring, float] = {"failing": max_rate or 0.0, "other": max_rate or 0.0}
        self._refilled: dict[Ring, float] = {"failing": 0.0, "other": 0.0}
        self.max_bytes = max_bytes
        self.failing_share = failing_share
        self._rings: dict[Ring, OrderedDict[int, Entry]] = {"failing": OrderedDict(), "other": OrderedDict()}
        self._bytes: dict[Ring, int] = {"failing": 0, "other": 0}
        self._by_key: dict[tuple[str, str | None, str], Entry] = {}
        self._next_id = 1
        self.evicted: Counter[tuple[Ring, str]] = Counter()
        self.added = 0

    def __len__(self) -> int:
        return len(self._rings["failing"]) + len(self._rings["other"])

    @property
    def bytes(self) -> int:
        return self._bytes["failing"] + self._bytes["other"]

    def add_scored(self, scored: ScoredCase, now: float | None = None) -> Entry | None:
        case = scored.case
        key = (case.trace_id, case.span_id, case.scope)
        previous = self._by_key.get(key)
        entry_id = self._next_id
        case_size = -1
        now = time.time() if now is None else now
        if previous is None or previous.scored is None:  # a new record (a sampled-out case's judged part too)
            # the ring before the outcomes: above max_rate most new records are sampled out
            if not self._admit(ring_of(scored), now):
                return None
            outcomes = outcomes_of(scored)
        else:
            self._remove(previous)
            if previous.scored.case is case:  # the judged part of a split case: its case was sized already
                case_size = previous.case_size
            scored = _merge(previous.scored, scored)
            entry_id = previous.id
            outcomes = outcomes_of(scored)
        entry = Entry(entry_id, now, case.trace_id, case.span_id, case.scope, case.service_name, case.model,
                      scored=scored, outcomes=outcomes)
        entry.case_size = case_bytes(case) if case_size < 0 else case_size
        entry.size = _ENTRY_OVERHEAD + entry.case_size + results_bytes(scored)
        return self._insert(entry)

    def add_not_evaluable(self, trace_id: str, item: NotEvaluable, service: str | None,
                          now: float | None = None) -> Entry | None:
        if not self._admit("other", time.time() if now is None else now):
            return None
        entry = Entry(self._next_id, time.time() if now is None else now, trace_id, item.span_id, item.scope,
                      service, None, not_evaluable=item, outcomes={})
        entry.size = _ENTRY_OVERHEAD + not_evaluable_bytes(item)
        return self._insert(entry)

    def _admit(self, ring: Ring, now: float) -> bool:
        """Whether a new record may enter ``ring`` under ``max_rate`` (a token bucket, one second of burst)."""
        rate = self.max_rate
        if rate is None:
            return True
        tokens = min(rate, self._tokens[ring] + (now - self._refilled[ring]) * rate)
        self._refilled[ring] = now
        if tokens < 1.0:
            self._tokens[ring] = tokens
            self.evicted[(ring, "sampled")] += 1
            return False
        self._tokens[ring] = tokens - 1.0
        return True

    def get(self, entry_id: int) -> Entry | None:
        return self._rings["failing"].get(entry_id) or self._rings["other"].get(entry_id)

    def entries(self) -> Iterator[Entry]:
        """Newest first, both rings merged by arrival."""
        return heapq.merge(reversed(self._rings["failing"].values()), reversed(self._rings["other"].values()),
                           key=lambda e: e.seq, reverse=True)

    def stats(self) -> dict[str, Any]:
        return {
            "items": len(self), "bytes": self.bytes, "max_items": self.max_items, "max_bytes": self.max_bytes,
            "failing_items": len(self._rings["failing"]), "failing_bytes": self._bytes["failing"],
            "added": self.added,
            "evicted": [{"ring": ring, "reason": reason, "count": n}
                        for (ring, reason), n in sorted(self.evicted.items())],
        }

    def _insert(self, entry: Entry) -> Entry | None:
        ring = entry.ring
        if entry.size > self.max_bytes:
            self.evicted[(ring, "too_large")] += 1
            return None
        if entry.id == self._next_id:
            self._next_id += 1
        self._rings[ring][entry.id] = entry
        self._bytes[ring] += entry.size
        if entry.scored is not None:
            self._by_key[entry.key] = entry
        self.added += 1
        entry.seq = self.added
        while len(self) > self.max_items:
            self._evict("count")
        while self.bytes > self.max_bytes:
            self._evict("bytes")
        return entry if self.get(entry.id) is entry else None

    def _evict(self, reason: str) -> None:
        failing = self._rings["failing"]
        over_share = (len(failing) > self.max_items * self.failing_share
                      or self._bytes["failing"] > self.max_bytes * self.failing_share)
        ring: Ring = "failing" if (over_share or not self._rings["other"]) and failing else "other"
        _, victim = self._rings[ring].popitem(last=False)
        self._bytes[ring] -= victim.size
        self.evicted[(ring, reason)] += 1
        if self._by_key.get(victim.key) is victim:
            del self._by_key[victim.key]

    def _remove(self, entry: Entry) -> None:
        ring = entry.ring
        if self._rings[ring].pop(entry.id, None) is not None:
            self._bytes[ring] -= entry.size
        if self._by_key.get(entry.key) is entry:
            del self._by_key[entry.key]
