"""Render docs/configuration.md from the pydantic models (``python -m evald.config.reference``).

A test compares the file with this output, so the reference can never drift from the code.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from evald.components import EXPORTER_FACTORIES, RECEIVER_FACTORIES
from evald.config.loader import default_metric_blocks
from evald.config.model import ROLES, EvaldConfig


def _type_text(ann: Any) -> str:
    origin, args = get_origin(ann), get_args(ann)
    if origin is Annotated:
        return _named_by_validator(args[1:]) or _type_text(args[0])
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (Union, UnionType):
        return " | ".join("None" if a is type(None) else _type_text(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        inner = ", ".join("..." if a is Ellipsis else _type_text(a) for a in args)
        return f"{name}[{inner}]"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "mapping"
    return getattr(ann, "__name__", None) or str(ann).replace("typing.", "")


def _named_by_validator(metadata: Any) -> str | None:
    for meta in metadata:
        func = getattr(meta, "func", None)
        if "BeforeValidator" in type(meta).__name__ and func is not None:
            if func.__name__ == "parse_duration":
                return "duration"
            if func.__name__ == "parse_endpoint":
                return "host:port"
    return None


def _type_name(field: FieldInfo) -> str:
    return _cell(_named_by_validator(field.metadata) or _type_text(field.annotation))


def _cell(text: str) -> str:
    """Markdown table cells cannot hold a raw ``|`` (``X | None`` would split the row)."""
    return text.replace("|", "\\|")


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    if field.default_factory is not None:
        value: Any = field.default_factory()  # type: ignore[call-arg]
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(see below)"
    return _cell(f"`{value!r}`")


def _model_rows(model: type[BaseModel], prefix: str, out: list[str], nested: list[tuple[str, type[BaseModel]]]) -> None:
    for name, field in model.model_fields.items():
        ann = field.annotation
        sub = _submodel(ann)
        if sub is not None:
            nested.append((f"{prefix}{name}", sub))
        desc = _cell((field.description or "").replace("\n", " "))
        out.append(f"| `{prefix}{name}` | {_type_name(field)} | {_default(field)} | {desc} |")


def _submodel(ann: Any) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()) or ():
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _section(title: str, model: type[BaseModel], prefix: str) -> list[str]:
    lines = [f"### {title}", "", "| key | type | default | notes |", "| --- | --- | --- | --- |"]
    nested: list[tuple[str, type[BaseModel]]] = []
    _model_rows(model, prefix, lines, nested)
    while nested:
        path, sub = nested.pop(0)
        _model_rows(sub, f"{path}.", lines, nested)
    return [*lines, ""]


def render_markdown() -> str:
    default_kinds = ", ".join(f"`{block['kind']}`" for block in default_metric_blocks())
    lines = [
        "# Configuration reference",
        "",
        "Generated from the pydantic models by `python -m evald.config.reference > docs/configuration.md`;",
        "a test fails when this file is stale. Durations accept `250ms`, `5s`, `2m`, `1h` or seconds.",
        "Strings may use `${env:VAR}` or `${env:VAR:-default}`; `$$` is a literal `$`.",
        "Unknown keys are errors (with the nearest allowed keys). `evald validate --config FILE` reports every",
        "problem with its YAML path. An empty file is refused. A config without a `metrics` key gets the default",
        f"metric set ({default_kinds}; the start log says so); `metrics: []` is refused by",
        "`run` and `validate` in a role that scores (`all`, `score`).",
        "",
        "## Top level",
        "",
    ]
    for name in ("assembly", "sampling", "goldens", "conversations", "pipeline", "telemetry", "explorer"):
        model = _submodel(EvaldConfig.model_fields[name].annotation)
        assert model is not None
        lines += _section(f"`{name}`", model, f"{name}.")
    from evald.pipeline.bindings import MetricSpec

    lines += _section("`metrics[]` (one entry per metric; options are per kind, see docs/metrics.md)", MetricSpec,
                      "metrics[].")
    pipelines = next((_submodel(a) for a in get_args(EvaldConfig.model_fields["pipelines"].annotation)
                      if _submodel(a) is not None), None)  # list[Model] | None -> Model
    if pipelines is not None:
        lines += _section("`pipelines[]` (which exporters receive which scores; absent: every exporter gets all)",
                          pipelines, "pipelines[].")
    from evald.judges.config import JudgeConfig

    lines += _section("`judges.<name>` (named LLM judges that judged metrics refer to; see docs/judges.md)",
                      JudgeConfig, "judges.<name>.")
    from evald.ingest.forwarder import IngestConfig

    role = EvaldConfig.model_fields["role"]
    choices = ", ".join(f"`{name}`" for name in ROLES)
    lines += [f"`role`: one of {choices} (default `{role.default}`). {role.description}", ""]
    lines += _section("`ingest` (the Kafka producer of `--role ingest`; see docs/kafka.md)", IngestConfig, "ingest.")
    lines += ["## Receivers (`receivers.<type>[/<name>]`)", "",
              "The `otlp` receiver also reads the OpenTelemetry Collector's shape,",
              "`receivers.otlp.protocols.grpc|http`, with the same keys below each protocol; there only the protocols",
              "listed are served (`http:` with no",
              "settings: its defaults), while in evald's shape a protocol left out gets its defaults and `null` turns",
              "it off. One block cannot use both shapes. The Collector's `service`, `processors`, `extensions` and",
              "`connectors` sections are refused with what to do instead (evald/config/collector_shape.py).", ""]
    for type_name, factory in sorted(RECEIVER_FACTORIES.items()):
        lines += _section(f"`{type_name}`", factory.config_model(), f"receivers.{type_name}.")
    lines += ["## Exporters (`exporters.<type>[/<name>]`)", ""]
    for type_name, factory in sorted(EXPORTER_FACTORIES.items()):
        lines += _section(f"`{type_name}`", factory.config_model(), f"exporters.{type_name}.")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
