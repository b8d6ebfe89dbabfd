"""The rate limit on aiokafka's own log lines (evald/receivers/kafka_logs.py)."""

from __future__ import annotations

import logging

import pytest

from evald.receivers import kafka_logs


def record(name: str, level: int, msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_repeats_of_a_kind_are_suppressed_and_counted_on_the_next_line(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(kafka_logs.time, "monotonic", lambda: now[0])
    limit = kafka_logs._RateLimit(20.0)
    template = "Unable connect to node with id %s: %s"
    assert limit.filter(record("aiokafka", logging.ERROR, template, 1, "refused"))
    assert not any(limit.filter(record("aiokafka", logging.ERROR, template, 1, "refused")) for _ in range(50))
    other = record("aiokafka.consumer.fetcher", logging.ERROR, "Failed fetch messages from %s: %s", 1, "x")
    assert limit.filter(other)  # another kind (logger, template) has its own budget
    assert all(limit.filter(record("aiokafka", logging.INFO, "Discovered coordinator %s", 1)) for _ in range(5))
    now[0] += 20.0
    passed = record("aiokafka", logging.ERROR, template, 1, "refused")
    assert limit.filter(passed)
    assert passed.getMessage() == "Unable connect to node with id 1: refused (50 similar messages suppressed in 20s)"


def test_the_filter_is_attached_to_every_aiokafka_logger_once() -> None:
    import aiokafka  # noqa: F401  (creates its module loggers)

    kafka_logs.quiet_aiokafka_logs()
    kafka_logs.quiet_aiokafka_logs()
    loggers = [found for name, found in logging.Logger.manager.loggerDict.items()
               if name.split(".")[0] == "aiokafka" and isinstance(found, logging.Logger)]
    assert {"aiokafka", "aiokafka.consumer.fetcher", "aiokafka.consumer.group_coordinator"} <= {
        found.name for found in loggers}
    assert all(found.filters.count(kafka_logs._FILTER) == 1 for found in loggers)
    assert not any(kafka_logs._FILTER in found.filters for found in (logging.getLogger(), logging.getLogger("evald")))
