"""Collector-shaped configs: the receiver shape ``receivers.otlp.protocols.grpc|http`` and the Collector-only sections.

evald reads its ``otlp`` receiver in two shapes, normalised to one model (``OTLPReceiverConfig``) before validation:

    receivers:                          receivers:
      otlp:                               otlp:
        grpc: {endpoint: ...}               protocols:                 # the OpenTelemetry Collector's shape
        http: {endpoint: ...}                 grpc: {endpoint: ...}
                                              http:                    # null: enabled with its defaults

The two differ only in what a missing or null protocol means. evald's shape: a protocol left out is enabled with
its defaults and ``null`` disables it. The Collector's shape follows the Collector: only the protocols listed under
``protocols`` are enabled, and a listed protocol with no settings (``http:``) is enabled with its defaults. A block
holding both shapes (``protocols`` and ``grpc``/``http``) is an error naming both; so is an empty ``protocols``.
Problems found inside a normalised block are reported at the path the user wrote (``...protocols.grpc.endpoint``).

The Collector's ``service``, ``processors``, ``extensions`` and ``connectors`` sections have no place in evald (no
pipelines of processors: every receiver feeds the assembly window, every exporter gets every score unless evald's
own ``pipelines:`` routes them); each is reported as one error saying what to do instead, not as an unknown key.
"""

from __future__ import annotations

from typing import Any

from evald.components import component_type

PROTOCOLS = ("grpc", "http")

#: Collector-only top-level sections -> what to do instead (the message of the config error at that key)
COLLECTOR_SECTIONS: dict[str, str] = {
    "service": (
        "evald has no `service` section and no pipelines of receivers, processors and exporters: every receiver under "
        "`receivers` is started and feeds the assembly window, and every exporter under `exporters` receives every "
        "score (to send some scores to some exporters, use evald's top-level `pipelines:` list with `exporters` and a "
        "`filter`, docs/exporters.md). Delete `service:` (with `telemetry.logs` from it moved to evald's top-level "
        "`telemetry:`); to run evald beside a Collector, keep this config in the Collector and add an `otlp` exporter "
        "pointing at evald to its traces pipeline (docs/collector.md)"
    ),
    "processors": (
        "evald has no processors: what they do is built in or belongs in the Collector before evald. Batching and "
        "grouping by trace: `assembly` (settle, decision_wait, num_traces); memory_limiter: "
        "`assembly.memory_limiter` (limit_mib, spike_limit_mib); probabilistic or tail sampling: `sampling.ratio` (by "
        "trace id) or sample in the Collector; attributes/transform/filter/redaction: run them in the Collector, whose "
        "`otlp` exporter then sends to evald (docs/collector.md). Delete `processors:`"
    ),
    "extensions": (
        "evald has no extensions: health_check is /healthz and /readyz, and evald's own metrics are /metrics, on "
        "`telemetry.endpoint` (default: the prometheus exporter's endpoint); authenticator extensions are replaced by "
        "`auth:` (bearer tokens, token files) on each receiver protocol (docs/security.md). Delete `extensions:`"
    ),
    "connectors": (
        "evald has no connectors: it consumes traces and logs and emits scores through its exporters; connect "
        "pipelines in the Collector. Delete `connectors:`"
    ),
}


def collector_section_problems(raw: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """``raw`` without the Collector-only sections, and one problem per section found."""
    found = [key for key in COLLECTOR_SECTIONS if key in raw]
    if not found:
        return raw, []
    return {k: v for k, v in raw.items() if k not in found}, [(key, COLLECTOR_SECTIONS[key]) for key in found]


def normalise_receivers(
    section: Any, problems: list[tuple[str, str]]
) -> tuple[Any, dict[str, str]]:
    """``receivers`` with every ``otlp`` block in evald's shape, and the path renames for problem reports.

    The renames map an evald-shape prefix (``receivers.otlp.grpc``) to the one written
    (``receivers.otlp.protocols.grpc``). A block that cannot be normalised gets a problem and is left out of the
    returned section, so validation does not report it a second time.
    """
    if not isinstance(section, dict):
        return section, {}
    out: dict[Any, Any] = {}
    renames: dict[str, str] = {}
    for component_id, block in section.items():
        path = f"receivers.{component_id}"
        if component_type(str(component_id)) != "otlp" or not isinstance(block, dict) or "protocols" not in block:
            out[component_id] = block
            continue
        both = [key for key in PROTOCOLS if key in block]
        if both:
            named = " and ".join(f"`{path}.{key}`" for key in both)
            problems.append((path, f"both `{path}.protocols` (the Collector's shape) and {named} (evald's shape) are "
                                   "set: use one form (move the settings under `protocols`, or drop `protocols`)"))
            continue
        protocols = block["protocols"]
        if protocols is None or protocols == {}:
            problems.append((f"{path}.protocols", "lists no protocol: add `grpc:` and/or `http:` under it (a protocol "
                                                  "listed with no settings is enabled with its defaults)"))
            continue
        if not isinstance(protocols, dict):
            problems.append((f"{path}.protocols", f"must be a mapping with `grpc` and/or `http`, got "
                                                  f"{type(protocols).__name__}"))
            continue
        normalised = {k: v for k, v in block.items() if k != "protocols"}
        for key, value in protocols.items():
            normalised[key] = {} if value is None and key in PROTOCOLS else value
            renames[f"{path}.{key}"] = f"{path}.protocols.{key}"
        for key in PROTOCOLS:
            normalised.setdefault(key, None)  # the Collector's shape: a protocol not listed is not served
        out[component_id] = normalised
    return out, renames


def restore_paths(problems: list[tuple[str, str]], renames: dict[str, str]) -> list[tuple[str, str]]:
    """``problems`` with paths under a normalised block renamed back to the shape the user wrote."""
    if not renames:
        return problems
    out = []
    for path, message in problems:
        for evald_path, written in renames.items():
            if path == evald_path or path.startswith((evald_path + ".", evald_path + "[")):
                path = written + path[len(evald_path):]
                break
        out.append((path, message))
    return out
