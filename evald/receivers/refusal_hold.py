"""After the consumer refused a batch, refuse the next requests before decoding them, while nothing has changed.

Used by ``Ingestor.ingest_body`` (ingest.py), one per transport; no configuration keys. ``refused(err)`` records a
``QueueFullError`` from the consumer; ``active()`` returns the error to repeat while the hold lasts: at most
``REFUSAL_HOLD`` seconds (0.1 s, or the error's ``retry_after`` if shorter) and, when the consumer has a size (the
assembly window's ``len``: traces held), only while that size has not gone down (a released trace makes room, so the
next request is decoded and tried at once). A memory-limit refusal does not change the size: the time bound ends it.
"""

from __future__ import annotations

import time
from collections.abc import Sized

from evald.errors import QueueFullError

REFUSAL_HOLD = 0.1


class RefusalHold:
    def __init__(self, consumer: object, hold: float | None = None) -> None:
        self._consumer = consumer
        self._hold = hold
        self._error: QueueFullError | None = None
        self._until = 0.0
        self._size = -1

    def refused(self, err: QueueFullError) -> None:
        hold = REFUSAL_HOLD if self._hold is None else self._hold
        self._error = err
        self._until = time.monotonic() + min(hold, err.retry_after)
        self._size = self._consumer_size()

    def active(self) -> QueueFullError | None:
        """A copy of the last refusal while the hold lasts, else None."""
        error = self._error
        if error is None or time.monotonic() >= self._until:
            return None
        if self._size >= 0 and self._consumer_size() < self._size:  # room was made since
            self._error = None
            return None
        return QueueFullError(str(error), retry_after=error.retry_after)

    def _consumer_size(self) -> int:
        return len(self._consumer) if isinstance(self._consumer, Sized) else -1
