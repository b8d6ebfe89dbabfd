"""Pairs of runs for group metrics whose window is ``pairs`` (``pairwise`` with ``reference: variant``): a case of
a compared variant meets the latest case of the reference variant with the same key (normalised input, or a group
attribute), within a bounded window.

Per key the window keeps the latest reference run and the compared cases still waiting for one. A reference run
pairs with every waiting case of its key (each pair handed over once) and stays for later cases; a compared case
pairs at once with a reference run not older than ``max_age``, else waits. The pair is ``[reference, compared]``
and the score goes on the compared case (kept whole while it waits; the reference run is held slim, its input
kept for the judge).

Bounds and counted losses (``dropped(reason, n)``): a case without a variant ``no_variant``, without a key
``no_group_key``; at most ``max_waiting`` waiting cases per key (the oldest dropped, ``group_evicted``) and
``max_groups`` keys (the least recently touched dropped with its waiting cases, ``group_evicted``); a waiting case
older than ``max_age`` is dropped when its key is next touched or swept (``group_expired``). Reference runs that
age out are forgotten without a count: a reference case never gets a score of its own.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol, cast

from evald.case import EvalCase
from evald.metrics.multi_case import GroupMetric, Run, attribute
from evald.windowed.groups import GroupWindow, slim

#: a pair ready for scoring: its runs (reference first) and the case the score is attached to
Pair = tuple[list[Run], EvalCase]


class PairOptions(Protocol):
    variant_attribute: str
    reference_variant: str
    max_age: float
    max_groups: int
    max_waiting: int


@dataclass(slots=True)
class _Waiting:
    case: EvalCase
    run: Run
    since: float


@dataclass(slots=True)
class _Slot:
    reference: Run | None = None
    reference_since: float = 0.0
    waiting: list[_Waiting] = field(default_factory=list)


def _held(case: EvalCase) -> EvalCase:
    """A run as a pair holds it: slim, with its input (the judge shows it)."""
    return replace(slim(case), input=case.input)


class PairWindow:
    """The open keys of one ``pairs`` group metric binding."""

    def __init__(self, metric: GroupMetric, dropped: Callable[[str, int], None]) -> None:
        self.metric = metric
        self.options = cast(PairOptions, metric.options)
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._dropped = dropped

    def __len__(self) -> int:
        return len(self._slots)

    def add(self, case: EvalCase, outcome: bool | None, now: float, key: str | None) -> list[Pair]:
        """Add a scored case; the pairs it completes."""
        opts = self.options
        variant = attribute(case, opts.variant_attribute)
        if variant is None or variant == "":
            self._dropped("no_variant", 1)
            return []
        if key is None:
            self._dropped("no_group_key", 1)
            return []
        slot = self._slot(key, now)
        run = Run(_held(case), {}, outcome)
        if str(variant) == opts.reference_variant:
            slot.reference, slot.reference_since = run, now
            pairs: list[Pair] = [([run, w.run], w.case) for w in slot.waiting]
            slot.waiting.clear()
            return pairs
        if slot.reference is not None:
            return [([slot.reference, run], case)]
        if len(slot.waiting) >= opts.max_waiting:
            slot.waiting.pop(0)
            self._dropped("group_evicted", 1)
        slot.waiting.append(_Waiting(case, run, now))
        return []

    def _slot(self, key: str, now: float) -> _Slot:
        slot = self._slots.get(key)
        if slot is None:
            while len(self._slots) >= self.options.max_groups:
                _, oldest = self._slots.popitem(last=False)
                if oldest.waiting:
                    self._dropped("group_evicted", len(oldest.waiting))
            slot = self._slots[key] = _Slot()
        else:
            self._slots.move_to_end(key)
            self._expire(slot, now)
        return slot

    def _expire(self, slot: _Slot, now: float) -> None:
        max_age = self.options.max_age
        if slot.reference is not None and now - slot.reference_since > max_age:
            slot.reference = None
        fresh = [w for w in slot.waiting if now - w.since <= max_age]
        if len(fresh) < len(slot.waiting):
            self._dropped("group_expired", len(slot.waiting) - len(fresh))
            slot.waiting = fresh

    def sweep(self, now: float) -> None:
        """Expire old references and waiting cases; forget keys left empty."""
        for key in list(self._slots):
            slot = self._slots[key]
            self._expire(slot, now)
            if slot.reference is None and not slot.waiting:
                del self._slots[key]


def window_for(metric: GroupMetric, dropped: Callable[[str, int], None]) -> GroupWindow | PairWindow:
    """The window a group metric declares (class variable ``window``): ``pairs`` or, by default, K-run groups."""
    if getattr(metric, "window", "groups") == "pairs":
        return PairWindow(metric, dropped)
    return GroupWindow(metric, dropped)
