"""A Kafka record holding more than the assembly window can ever take is handed on in parts, none of it dropped."""

from __future__ import annotations

from types import SimpleNamespace

from evald.assembly.window import AssemblyConfig, TraceWindow
from evald.model import ConsumeResult, SignalBatch
from evald.receivers.converted import Converted
from evald.receivers.kafka import KafkaReceiver
from evald.receivers.kafka_config import KafkaReceiverConfig
from evald.receivers.kafka_offsets import PartitionOffsets
from evald.telemetry import Telemetry
from evald.testing import FakeClock, span


class _Recorder:
    """The window's consume/split, recording each part it is handed."""

    def __init__(self, window: TraceWindow) -> None:
        self.window = window
        self.parts: list[int] = []

    def split(self, batch: SignalBatch) -> list[SignalBatch]:
        return self.window.split(batch)

    def consume(self, batch: SignalBatch) -> ConsumeResult:
        self.parts.append(len({s.trace_id for s in batch.spans}))
        return ConsumeResult()


async def test_a_record_larger_than_the_window_is_delivered_in_parts() -> None:
    tm = Telemetry()
    window = TraceWindow(AssemblyConfig.model_validate({"settle": 1, "decision_wait": 10, "num_traces": 10}), tm,
                         FakeClock())
    receiver = KafkaReceiver(KafkaReceiverConfig(), tm)
    recorder = _Recorder(window)
    receiver._next = recorder  # the pipeline's consumer (start() would connect to a broker)
    spans = tuple(span(trace_id=f"{i:032x}", span_id=f"{i:016x}") for i in range(1, 26))
    offsets = PartitionOffsets()
    record = SimpleNamespace(offset=7, topic="otlp_spans", partition=0)
    await receiver._deliver(offsets, record, "traces", Converted(spans))
    assert recorder.parts == [10, 10, 5]  # every trace handed on, in parts that each fit an empty window
    assert tm.registry.get_sample_value("evald_receiver_accepted_spans_total",
                                        {"receiver": "kafka", "transport": "kafka"}) == 25
    assert offsets.committable() == 8  # nothing was rejected: the record is done once its evaluations are
