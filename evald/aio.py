"""Small asyncio helpers shared by components. No configuration; nothing here fails."""

from __future__ import annotations

import asyncio

__all__ = ["being_cancelled"]


def being_cancelled() -> bool:
    """True when the running task itself is being cancelled (a stop), as opposed to having awaited a future that
    someone else cancelled (a client library cancelling its own request mid-reconnect raises the same
    ``CancelledError`` in the awaiting task)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
