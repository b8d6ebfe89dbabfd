"""The ``explorer:`` config section (evald/explorer/; docs/explorer.md).

Config keys::

    explorer:
      enabled: true              # /debug/evaluations on the admin port
      endpoint: null             # host:port of a separate listener instead of the admin port
      max_items: 2000            # evaluations and not-evaluable traces kept in memory, at most
      max_mib: 16                # and at most this many MiB (estimated size of the kept records)
      failing_share: 0.5         # share of both bounds failing evaluations keep before they are evicted
      max_rate: 100              # new records kept per second and ring (failing / other); beyond, a sample
      show_content: false        # false: content redacted as for judges; true: raw content (a privacy decision)
      trace_url_template: null   # e.g. "https://tempo.example/trace/{trace_id}"; {trace_id} and {span_id}
      auth: null                 # {bearer_tokens, token_files, api_key_header}; null: the OTLP receivers' auth

Failure semantics: config errors at load for a template without ``{trace_id}`` or a ``trace_url_template`` that is
not an http(s) URL; nothing the explorer does at run time can stop the pipeline (the feed, evald/explorer/server.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from evald.config.base import ComponentConfig, Endpoint
from evald.judges.config import RedactionConfig
from evald.receivers.auth import ReceiverAuthConfig


class ExplorerConfig(ComponentConfig):
    enabled: bool = Field(True, description="Serve /debug/evaluations (recent evaluations) on the admin port.")
    endpoint: Endpoint | None = Field(
        None, description="A separate `host:port` for the explorer; default: the admin port (`telemetry.endpoint`)."
    )
    max_items: int = Field(2000, ge=1, le=1_000_000, description="Evaluations and not-evaluable traces kept.")
    max_mib: float = Field(16.0, gt=0, le=4096, description="MiB the kept records may take (estimated).")
    failing_share: float = Field(
        0.5, gt=0, lt=1,
        description="Share of `max_items` and `max_mib` failing evaluations keep; passing ones are evicted first.",
    )
    max_rate: float | None = Field(
        100.0, gt=0, description="New records kept per second into each ring (failing, other); at a higher rate a "
        "sample at this rate (counted as evicted `sampled`), so the rings span seconds, not a fraction of one, and "
        "cost little CPU. `null`: keep every record.",
    )
    show_content: bool = Field(
        False, description="Show raw case content; false: redacted as for judges (a privacy decision; "
        "docs/explorer.md).",
    )
    redaction: RedactionConfig = Field(
        RedactionConfig(), description="What is redacted when `show_content` is false (as a judge's `redaction`)."
    )
    trace_url_template: str | None = Field(
        None, description="Link from a case to its trace, e.g. `https://tempo.example/trace/{trace_id}` "
        "(`{trace_id}`, `{span_id}` are replaced).",
    )
    auth: ReceiverAuthConfig | None = Field(
        None, description="Require a token; null: the OTLP/HTTP (else gRPC) receiver's `auth`, if any."
    )

    @field_validator("trace_url_template")
    @classmethod
    def _template(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if "{trace_id}" not in value:
            raise ValueError("`trace_url_template` must contain {trace_id}")
        if not value.startswith(("http://", "https://")):
            raise ValueError("`trace_url_template` must be an http(s) URL")
        return value


def receiver_auth(receivers: dict[str, Any]) -> ReceiverAuthConfig | None:
    """The ``auth`` of the first OTLP receiver that has one (HTTP first): what the explorer reuses by default."""
    for component_id, cfg in receivers.items():
        if component_id.split("/")[0] != "otlp" or cfg is None:
            continue
        for transport in ("http", "grpc"):
            block = getattr(cfg, transport, None)
            auth = getattr(block, "auth", None)
            if isinstance(auth, ReceiverAuthConfig):
                return auth
    return None
