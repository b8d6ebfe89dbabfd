from __future__ import annotations

import gc
import tracemalloc
from collections import OrderedDict

from evald.assembly.released import ReleasedIds


def _ids(n: int, start: int = 0) -> list[str]:
    return [f"{i + 1:032x}" for i in range(start, start + n)]


def test_the_last_ids_are_remembered_and_the_oldest_forgotten_first() -> None:
    released = ReleasedIds(3)
    for trace_id in _ids(4):
        released.add(trace_id)
    first, second, third, fourth = _ids(4)
    assert first not in released and all(t in released for t in (second, third, fourth)) and len(released) == 3
    released.add(second)  # released again (a late span reopened it): it keeps its place
    released.add(_ids(1, 10)[0])
    assert second not in released and third in released and len(released) == 3
    assert _ids(1, 20)[0] not in released


def test_a_limit_of_zero_remembers_nothing() -> None:
    released = ReleasedIds(0)
    released.add(_ids(1)[0])
    assert _ids(1)[0] not in released and len(released) == 0


def _kept(build: object) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = build() if callable(build) else None
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held is not None
    return kept


def test_an_id_costs_about_half_of_what_an_ordered_dict_of_the_strings_did() -> None:
    """The window kept every released id string in an OrderedDict (~170 bytes per id, the string alive after its
    spans were gone); 100,000 ids (the default released_memory) now take ~85 bytes each."""
    n = 100_000

    def compact() -> ReleasedIds:
        released = ReleasedIds(n)
        for trace_id in _ids(n):
            released.add(trace_id)
        return released

    new = _kept(compact)
    old = _kept(lambda: OrderedDict.fromkeys(_ids(n)))
    assert new / n < 100 and new < 0.6 * old, (new / n, old / n)
