"""EvaluationStore: bounds by count and by bytes, failing evaluations kept longest, split records merged."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evald.assembly.sizing import value_bytes
from evald.case import EvalCase, Score
from evald.explorer import store as store_module
from evald.explorer.store import EvaluationStore, scored_size
from evald.interfaces import NotEvaluable
from evald.model import ScoredCase


def scored(i: int, passed: bool, text: str = "", name: str = "contains") -> ScoredCase:
    case = EvalCase(input=text, output=text, trace_id=f"{i:032x}", span_id=f"{i:016x}", service_name="svc")
    return ScoredCase(case, (Score(name, 1.0 if passed else 0.0, 0.5),))


def ids(store: EvaluationStore) -> list[int]:
    return [e.id for e in store.entries()]


def test_count_bound_evicts_passing_before_failing() -> None:
    store = EvaluationStore(max_items=10, max_bytes=10**9, failing_share=0.5)
    failing = [store.add_scored(scored(i, False)) for i in range(3)]
    for i in range(3, 40):
        store.add_scored(scored(i, True))
    assert len(store) == 10
    kept = {e.trace_id for e in store.entries()}
    assert {e.trace_id for e in failing if e} <= kept  # the three failures outlived 37 passing cases
    assert store.evicted[("other", "count")] == 30 and store.evicted[("failing", "count")] == 0
    assert ids(store) == sorted(ids(store), reverse=True)  # newest first


def test_failing_cases_beyond_their_share_are_evicted_oldest_first() -> None:
    store = EvaluationStore(max_items=10, max_bytes=10**9, failing_share=0.5)
    for i in range(4):
        store.add_scored(scored(i, True))
    for i in range(4, 20):
        store.add_scored(scored(i, False))
    failing = [e for e in store.entries() if e.failing]
    # passing ones are evicted while the failures are within their share; then the oldest failures go
    assert len(store) == 10
    assert [int(e.trace_id, 16) for e in failing] == list(range(19, 19 - len(failing), -1))
    assert store.evicted[("failing", "count")] == 16 - len(failing)


def test_byte_bound() -> None:
    text = "x" * 10_000
    one = scored_size(scored(0, True, text))
    store = EvaluationStore(max_items=1000, max_bytes=one * 5, failing_share=0.5)
    store.add_scored(scored(0, False, text))
    for i in range(1, 30):
        store.add_scored(scored(i, True, text))
    assert store.bytes <= store.max_bytes
    assert len(store) == 4  # each entry is `one` plus the entry overhead: a fifth would pass the bound
    assert "0" * 32 in {e.trace_id for e in store.entries()}  # the failing one is still there
    assert store.evicted[("other", "bytes")] == 26 and store.evicted[("failing", "bytes")] == 0
    too_big = store.add_scored(scored(99, True, "y" * one * 6))
    assert too_big is None and store.evicted[("other", "too_large")] == 1


def test_split_records_merge_into_one_entry() -> None:
    store = EvaluationStore(max_items=10, max_bytes=10**9, failing_share=0.5)
    first = store.add_scored(ScoredCase(scored(1, True).case, (Score("contains", 1.0, 0.5),),
                                        skipped=(("faithfulness", "pending"),)))
    store.add_scored(scored(2, True))
    merged = store.add_scored(scored(1, False, name="faithfulness"))
    assert first is not None and merged is not None and merged.id == first.id
    assert len(store) == 2
    assert merged.outcomes == {"contains": "pass", "faithfulness": "fail"}
    assert merged.failing and ids(store)[0] == first.id  # moved to the newest position, in the failing ring


def test_not_evaluable_entries() -> None:
    store = EvaluationStore(max_items=10, max_bytes=10**9, failing_share=0.5)
    entry = store.add_not_evaluable("ab" * 16, NotEvaluable("no_output", "openinference", "no output.value"), "svc")
    assert entry is not None and not entry.failing and entry.outcomes == {}
    assert store.stats()["items"] == 1


def test_values_are_sized_by_the_assembly_windows_estimator() -> None:
    plain = scored(1, True)
    nested = {"documents": [{"text": "x" * 500, "score": 0.5, "tags": ["a", "b"]} for _ in range(20)]}
    rich = ScoredCase(replace(plain.case, output=nested), plain.scores)
    assert scored_size(rich) - scored_size(plain) == value_bytes(nested) - value_bytes("")


def test_the_judged_part_of_a_split_case_does_not_size_its_case_again(monkeypatch: pytest.MonkeyPatch) -> None:
    sized: list[EvalCase] = []
    case_bytes = store_module.case_bytes

    def counting(case: EvalCase) -> int:
        sized.append(case)
        return case_bytes(case)

    monkeypatch.setattr(store_module, "case_bytes", counting)
    store = EvaluationStore(max_items=10, max_bytes=10**9, failing_share=0.5)
    fast = scored(1, True, "x" * 1000)
    first = store.add_scored(ScoredCase(fast.case, fast.scores, skipped=(("faithfulness", "pending"),)))
    merged = store.add_scored(ScoredCase(fast.case, (Score("faithfulness", 0.2, 0.8, reason="r" * 300),)))
    assert len(sized) == 1  # once, for the fast part: the judged part carries the same case
    moved = replace(fast.case, output="y" * 5000)  # another case object under the same key: sized anew
    again = store.add_scored(ScoredCase(moved, (Score("contains", 1.0, 0.5),)))
    assert len(sized) == 2
    assert first is not None and first.scored is not None and merged is not None and merged.scored is not None
    assert merged.size - first.size == scored_size(merged.scored) - scored_size(first.scored)  # only scores changed
    assert again is not None and again.scored is not None and again.size - merged.size == (
        scored_size(again.scored) - scored_size(merged.scored))
    assert store.bytes == again.size


def test_the_byte_bound_holds_when_judged_parts_grow_their_entries() -> None:
    one = scored_size(scored(0, True, "x" * 2000))
    store = EvaluationStore(max_items=1000, max_bytes=one * 6, failing_share=0.5)
    cases = [scored(i, True, "x" * 2000) for i in range(5)]
    for case in cases:
        store.add_scored(case)
    assert len(store) == 5 and not store.evicted
    for case in cases[2:]:
        store.add_scored(ScoredCase(case.case, (Score("faithfulness", 0.9, 0.8, reason="r" * one),)))
    assert store.bytes <= store.max_bytes and store.bytes == sum(e.size for e in store.entries())
    assert store.evicted[("other", "bytes")] == 5 - len(store) > 0


def test_above_max_rate_each_ring_keeps_a_sample_at_that_rate() -> None:
    """10 new records per second per ring (a second's burst): 50 failing and 50 passing cases within one second
    keep 10 of each (the burst), the rest counted as sampled; over the next second 10 more fit; a judged part
    always merges."""
    store = EvaluationStore(max_items=1000, max_bytes=10**9, failing_share=0.5, max_rate=10)
    kept = {"pass": 0, "fail": 0}
    for i in range(100):
        outcome = "fail" if i % 2 else "pass"
        if store.add_scored(scored(i, passed=outcome == "pass"), now=1000.0) is not None:
            kept[outcome] += 1
    assert kept == {"pass": 10, "fail": 10}
    assert store.evicted[("failing", "sampled")] == 40 and store.evicted[("other", "sampled")] == 40
    assert store.add_scored(scored(500, passed=True), now=1001.0) is not None  # refilled: ~10 tokens
    first = next(e for e in store.entries() if e.scored is not None and e.trace_id == f"{0:032x}")
    judged = ScoredCase(first.scored.case, (Score("judge", 0.9, 0.5),))  # type: ignore[union-attr]
    assert store.add_scored(judged, now=1001.0) is not None  # merged, not rate-limited
    assert len(store) == 21
    unlimited = EvaluationStore(max_items=1000, max_bytes=10**9, failing_share=0.5)
    assert all(unlimited.add_scored(scored(i, passed=True), now=1000.0) for i in range(100))
