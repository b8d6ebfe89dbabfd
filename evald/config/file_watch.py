"""Watching TLS files for a usable change: what every ``reload_interval`` (the Collector's configtls key) shares.

``FileWatch(paths, interval, what).poll(build)`` is cheap when no check is due (one clock read) and safe from any
thread (grpc and ssl callbacks call it from their own): at most once per ``interval`` it compares the files'
``(mtime_ns, size, inode)`` with the last usable state and, when they changed, calls ``build()`` (which reads and
checks them, raising ``OSError`` / ``ValueError`` when they are not usable) and returns its result. Files that are
not usable yet (a rotation half written: new certificate, old key) are counted in ``failures`` and logged once per
state, and ``None`` is returned so the caller keeps what it has; so are files that changed again while ``build`` ran.
Used by the receivers' server TLS (evald/receivers/tls_reload.py) and the clients' (evald/config/tls_client_context.py,
evald/exporters/otlp_reload.py).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
Signature = tuple[tuple[int, int, int] | None, ...]


def file_signature(paths: tuple[str, ...]) -> Signature:
    """Per file ``(mtime_ns, size, inode)`` as ``stat`` (following symlinks) sees it, None when it cannot."""
    out: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


class FileWatch:
    """The files of one TLS block, checked for a usable change (see the module docstring)."""

    def __init__(self, paths: tuple[str, ...], interval: float, what: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.paths = paths
        self._interval = interval
        self._what = what
        self._clock = clock
        self._lock = threading.Lock()
        self._signature = file_signature(paths)
        self._next_check = clock() + interval
        self._failed: Signature | None = None  # the state last logged as unusable (log once per state)
        self.failures = 0

    def poll(self, build: Callable[[], T]) -> T | None:
        """``build()`` after a usable change of the files, else None (nothing due, no change, or not usable yet)."""
        now = self._clock()
        if now < self._next_check or not self._lock.acquire(blocking=False):
            return None
        try:
            self._next_check = now + self._interval
            signature = file_signature(self.paths)
            if signature == self._signature:
                return None
            try:
                built = build()
                if file_signature(self.paths) != signature:
                    raise ValueError("the files changed while they were read")
            except (OSError, ValueError) as err:
                self.failures += 1
                if signature != self._failed:
                    self._failed = signature
                    logger.warning("%s: TLS files %s changed but cannot be used yet (%s); keeping the ones in use "
                                   "and checking again in %gs", self._what, ", ".join(self.paths), err, self._interval)
                return None
            self._signature, self._failed = signature, None
            return built
        finally:
            self._lock.release()
