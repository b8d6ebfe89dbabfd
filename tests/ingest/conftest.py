from __future__ import annotations

from tests.receivers.kafka.conftest import kafka_broker  # noqa: F401  (the shared tansu fixture, imported)
