from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evald.receivers.kafka_offsets import PartitionOffsets


def test_commits_only_below_the_lowest_record_in_flight() -> None:
    p = PartitionOffsets()
    assert p.committable() is None
    for offset in (10, 11, 12):
        p.start(offset)
    assert p.committable() == 10 and p.in_flight == 3
    p.done(11)
    assert p.committable() == 10  # 10 is still being evaluated
    p.done(10)
    assert p.committable() == 12
    p.committed = 12
    assert p.committable() is None
    p.skip(13)  # a poison record behind one in flight
    assert p.committable() is None
    p.done(12)
    assert p.committable() == 14 and p.in_flight == 0


def test_revoked_bookkeeping_forwards_what_a_later_assignment_re_read() -> None:
    old = PartitionOffsets()
    for offset in (5, 6, 7):
        old.start(offset)
    old.done(5)
    old.revoked = True
    old.done(6)  # finishes after revocation: nothing to commit there any more
    assert old.committable() == 6 and old.in_flight == 1
    new = PartitionOffsets()  # the partition comes back; it is re-read from the committed offset 6
    assert not old.adopt(6, new)  # finished: hand it on again (the window drops it as a duplicate)
    new.skip(6)
    assert old.adopt(7, new)  # still being evaluated here: not handed on twice, and not done yet
    new.start(8)
    new.done(8)
    assert new.committable() == 7
    old.done(7)  # the first evaluation finishes: the new assignment may now commit past it
    assert new.committable() == 9 and old.in_flight == 0


@given(st.permutations(list(range(20))), st.integers(0, 20))
def test_committable_is_the_first_unfinished_offset(order: list[int], finished: int) -> None:
    p = PartitionOffsets()
    for offset in range(20):
        p.start(offset)
    done = set(order[:finished])
    for offset in order[:finished]:
        p.done(offset)
    first_open = next((o for o in range(20) if o not in done), 20)
    assert p.committable() == first_open
