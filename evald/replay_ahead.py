"""Which input file of ``evald replay`` is the last to hold each trace, read ahead, so a trace is released (mapped
and scored) as soon as that file has been read, instead of at the end of the replay or when the window is full.

``ReadAhead.of(files)`` reads every binary file once before the replay and lists the trace ids of its spans or log
records (evald/receivers/wire_ids.py, a superset of what decoding it gives); ``done_after(i)`` gives the trace ids
whose last file is ``files[i]``. The window then holds only the traces still open, not the whole input; a trace
whose spans and logs are spread over several files is still scored once, whole; a file's log records that come
before its spans (``x.logs.pb`` sorts before ``x.pb``) no longer make a full window release a trace without its
spans. What cannot be read ahead (an OTLP/JSON file, an unreadable or malformed body) might hold any trace: no
trace is released early before the last such file has been read (they wait for the end of the replay, as
before). No config. Never raises: a file that cannot be read here is simply not known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evald.receivers.wire_ids import trace_ids


@dataclass
class ReadAhead:
    #: file index -> the trace ids no later file holds (only after the last file that could not be read ahead)
    finishing: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, files: Sequence[Path]) -> ReadAhead:
        last: dict[str, int] = {}
        unknown = -1
        for index, path in enumerate(files):
            ids = _ids_in(path)
            if ids is None:
                unknown = index
                continue
            for trace_id in ids:
                if trace_id:  # "": records without a trace id, which decoding rejects
                    last[trace_id] = index
        finishing: dict[int, list[str]] = {}
        for trace_id, index in last.items():
            if index > unknown:
                finishing.setdefault(index, []).append(trace_id)
        return cls(finishing)

    def done_after(self, index: int) -> list[str]:
        """The trace ids that no file after ``files[index]`` holds (each given once)."""
        return self.finishing.pop(index, [])


def _ids_in(path: Path) -> set[str] | None:
    name = path.name.lower()
    if not name.endswith(".pb"):
        return None  # OTLP/JSON: not read ahead
    try:
        body = path.read_bytes()
    except OSError:
        return None
    return trace_ids(body, logs=name.endswith(".logs.pb"))
