"""Debug exporter: a compact line per score on stdout, for trying evald out and for troubleshooting.

Config keys (``exporters.debug[/name]``):
  verbosity   ``basic`` (default): one line per score with metric, value, passed, scope, service and the trace and
              span ids; ``detailed``: also dimension, threshold, model and the reason, plus a line per skipped
              and per errored evaluation

Example (basic)::

    evald score metric=contains value=1 passed=true scope=trace service=geo trace_id=4bf9...4736 span_id=00f0...

Failure semantics: writes synchronously to stdout (like the Collector's debug exporter); nothing is queued or
retried, and a closed stdout drops the lines silently. Not meant for production volumes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Literal, TextIO

from pydantic import Field

from evald.config.base import ComponentConfig
from evald.model import ScoredCase


class DebugExporterConfig(ComponentConfig):
    verbosity: Literal["basic", "detailed"] = Field(
        "basic", description="`basic`: one line per score; `detailed`: with reasons and skipped/errored lines."
    )


def _quote(text: str | None, limit: int = 300) -> str:
    if text is None:
        return '""'
    return json.dumps(text[:limit] + ("..." if len(text) > limit else ""), ensure_ascii=False)


def _value(value: float) -> str:
    return f"{value:.4g}"


def format_lines(scored: ScoredCase, detailed: bool) -> list[str]:
    case = scored.case
    where = (f"scope={case.scope} service={case.service_name or '-'} trace_id={case.trace_id}"
             f" span_id={case.span_id or '-'}")
    lines = []
    for score in scored.scores:
        line = f"evald score metric={score.name} value={_value(score.value)} passed={str(score.passed).lower()} {where}"
        if detailed:
            line += (f" dimension={score.dimension.value} threshold={_value(score.threshold)}"
                     f" model={case.model or '-'} reason={_quote(score.reason)}")
        lines.append(line)
    if detailed:
        for kind, entries in (("skipped", scored.skipped), ("error", scored.errors)):
            lines += [f"evald {kind} metric={name} {where} reason={_quote(reason)}" for name, reason in entries]
    return lines


class DebugExporter:
    def __init__(self, config: DebugExporterConfig, *, component_id: str = "debug", stream: TextIO | None = None
                 ) -> None:
        self.id = component_id
        self.config = config
        self._stream = stream

    async def start(self) -> None:
        return None

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        detailed = self.config.verbosity == "detailed"
        lines = [line for scored in batch for line in format_lines(scored, detailed)]
        if not lines:
            return
        stream = self._stream if self._stream is not None else sys.stdout
        try:
            stream.write("\n".join(lines) + "\n")
            stream.flush()
        except (OSError, ValueError):  # stdout closed or a broken pipe
            return

    async def shutdown(self, timeout: float) -> None:
        return None
