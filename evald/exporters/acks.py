"""The acknowledgement an exporter holds until the scores it accepted are delivered (at-least-once).

While the pipeline hands a batch of scored cases to its exporters it sets :data:`export_ack` to one
:class:`~evald.model.Delivery` for that batch; its ``on_done`` releases the cases' completions and, through them,
the source's deliveries (the Kafka receiver commits there). An exporter that sends later (the shared sending
helper, evald/exporters/sending.py) calls :func:`current_ack` in ``export`` and passes it to its queue, which holds
it once per score until the score is sent or dropped and counted; an exporter that finishes inside ``export`` needs
nothing. Outside the pipeline (replay, tests) there is no ack and nothing is held. No configuration; cannot fail.
"""

from __future__ import annotations

from contextvars import ContextVar

from evald.model import Delivery

__all__ = ["current_ack", "export_ack"]

#: The acknowledgement of the batch being exported in this task (None outside the pipeline).
export_ack: ContextVar[Delivery | None] = ContextVar("evald_export_ack", default=None)


def current_ack() -> Delivery | None:
    """The acknowledgement of the batch the calling ``export`` was given, if any."""
    return export_ack.get()
