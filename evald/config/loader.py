"""Load, interpolate and validate a config; report every problem at once with its YAML path.

``${env:VAR}`` (or ``${VAR}``) in any string is replaced by the environment variable; ``${env:VAR:-default}``
gives a default; ``$$`` is a literal ``$``. A missing variable without a default is a config error, reported once
at its path (what the empty value left in its place would make the validators say is dropped).

An empty file (or one holding only comments) is an error. A config without a ``metrics`` key gets the embedded
default config's metric set (``ResolvedConfig.default_metrics`` says so, for the start log); ``metrics: []`` is
valid here and refused by the roles that score (``scoring_problems``). Unknown keys, component types and metric
kinds are reported with the nearest known names (problems.py, suggest.py).

Collector-shaped input (collector_shape.py): ``receivers.otlp.protocols.grpc|http`` is normalised to evald's shape
first, and the Collector-only sections (``service``, ``processors``, ``extensions``, ``connectors``) are each one
error saying what to do instead.

Validation runs in two passes: the root shape (``EvaldConfig``), then every ``receivers``/``exporters`` entry
against its factory's config model and every ``metrics`` entry against its metric's ``Options`` model, so
plugins validate as strictly as built-ins.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evald.components import EXPORTER_FACTORIES, RECEIVER_FACTORIES, Factory, component_type
from evald.config.base import ComponentConfig
from evald.config.collector_shape import collector_section_problems, normalise_receivers, restore_paths
from evald.config.model import EvaldConfig
from evald.config.problems import pydantic_problems, without_duplicates
from evald.config.suggest import did_you_mean
from evald.errors import ConfigError
from evald.pipeline.bindings import MetricSpec
from evald.pipeline.conditions import check_conditions

_ENV_RE = re.compile(r"\$\$|\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class ResolvedConfig:
    root: EvaldConfig
    receivers: dict[str, ComponentConfig]
    exporters: dict[str, ComponentConfig]
    metrics: list[MetricSpec]
    #: True when the config had no ``metrics`` key and got the embedded default metric set
    default_metrics: bool = False


def default_config_text() -> str:
    return resources.files("evald.config").joinpath("default.yaml").read_text(encoding="utf-8")


def default_metric_blocks() -> list[dict[str, Any]]:
    """The ``metrics`` entries of the embedded default config (what a config without ``metrics`` gets)."""
    blocks: list[dict[str, Any]] = yaml.safe_load(default_config_text())["metrics"]
    return blocks


def scoring_problems(config: ResolvedConfig, role: str) -> list[tuple[str, str]]:
    """Why ``config`` would score nothing in ``role`` (empty when it would score, or when ``role`` does not score)."""
    if role == "ingest" or config.metrics:
        return []
    kinds = ", ".join(str(block["kind"]) for block in default_metric_blocks())
    return [("metrics", f"`metrics: []` evaluates nothing in role `{role}`: list metrics (`evald list-metrics`), or "
                        f"leave the key out for the default set ({kinds})")]


def load_config(path: str | Path | None, environ: Mapping[str, str] | None = None) -> ResolvedConfig:
    """Load ``path`` (or the embedded default config when None) and validate it."""
    if path is None:
        text, source = default_config_text(), "<embedded default>"
    else:
        try:
            text, source = Path(path).read_text(encoding="utf-8"), str(path)
        except OSError as err:
            raise ConfigError([("", f"cannot read {path}: {err.strerror or err}")]) from err
    return parse_config(text, source, environ)


def parse_config(text: str, source: str = "<string>", environ: Mapping[str, str] | None = None) -> ResolvedConfig:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        context, context_mark = getattr(err, "context", None), getattr(err, "context_mark", None)
        if context and context_mark is not None:
            where += f" ({context} started at line {context_mark.line + 1}, column {context_mark.column + 1})"
        raise ConfigError([("", f"{source} is not valid YAML{where}: {getattr(err, 'problem', err)}")]) from err
    if raw is None:
        raise ConfigError([("", f"{source} is empty: it holds no settings (use `evald run` without --config for "
                                "the embedded default config, or start from config/minimal.yaml)")])
    if not isinstance(raw, dict):
        raise ConfigError([("", f"{source}: the top level must be a mapping, got {type(raw).__name__}")])
    problems: list[tuple[str, str]] = []
    raw = _interpolate(raw, os.environ if environ is None else environ, "", problems)
    return validate_config(raw, problems)


def validate_config(raw: dict[str, Any], problems: list[tuple[str, str]] | None = None) -> ResolvedConfig:
    """Validate an interpolated config; ``problems`` are the interpolation's (their paths hold no usable value)."""
    unbuilt = {path for path, _ in problems or []}
    problems = list(problems or [])
    raw, collector_problems = collector_section_problems(raw)
    problems += collector_problems
    receivers_section, renames = normalise_receivers(raw.get("receivers"), problems)
    if "receivers" in raw:
        raw = {**raw, "receivers": receivers_section}
    default_metrics = "metrics" not in raw
    if default_metrics:
        raw = {**raw, "metrics": default_metric_blocks()}
    try:
        root = EvaldConfig.model_validate(raw)
    except ValidationError as err:
        problems += pydantic_problems(err, "", EvaldConfig)
        # keep going with what we can to report component problems too
        root = None
    receivers = _validate_components(raw.get("receivers"), "receivers", RECEIVER_FACTORIES, problems)
    exporters = _validate_components(raw.get("exporters"), "exporters", EXPORTER_FACTORIES, problems)
    if root is not None:
        _validate_metrics(root.metrics, problems)
    else:
        _validate_metrics(_salvage_metric_specs(raw.get("metrics")), problems)
    if problems or root is None:
        raise ConfigError(restore_paths(without_duplicates(problems, unbuilt), renames))
    if "receivers" not in raw:
        receivers = {"otlp": RECEIVER_FACTORIES["otlp"].config_model().model_validate({"grpc": {}, "http": {}})}
    if "exporters" not in raw:
        exporters = {"prometheus": EXPORTER_FACTORIES["prometheus"].config_model().model_validate({})}
    return ResolvedConfig(root=root, receivers=receivers, exporters=exporters, metrics=list(root.metrics),
                          default_metrics=default_metrics)


def _validate_components(
    section: Any, name: str, factories: dict[str, Factory], problems: list[tuple[str, str]]
) -> dict[str, ComponentConfig]:
    if section is None or not isinstance(section, dict):
        return {}
    out: dict[str, ComponentConfig] = {}
    for component_id, block in section.items():
        path = f"{name}.{component_id}"
        kind = component_type(str(component_id))
        factory = factories.get(kind)
        if factory is None:
            hint, known = did_you_mean(kind, factories), ", ".join(sorted(factories))
            problems.append((path, f"unknown {name[:-1]} type {kind!r}{hint} (known: {known})"))
            continue
        model = factory.config_model()
        try:
            out[str(component_id)] = model.model_validate(block or {})
        except ValidationError as err:
            problems += pydantic_problems(err, path, model)
    return out


def _validate_metrics(specs: list[MetricSpec] | list[MetricSpec | None], problems: list[tuple[str, str]]) -> None:
    from evald.metrics.registry import get_metric_class

    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        if spec is None:
            continue
        path = f"metrics[{i}]"
        try:
            cls = get_metric_class(spec.kind)
        except LookupError as err:
            problems.append((f"{path}.kind", str(err.args[0] if err.args else err)))
            continue
        name = spec.name or cls.kind
        if name in seen:
            problems.append(
                (f"{path}.name", f"duplicate metric name {name!r} (also metrics[{seen[name]}]); set `name`")
            )
        seen[name] = i
        try:
            cls.Options.model_validate(spec.options)
        except ValidationError as err:
            problems += pydantic_problems(err, f"{path}.options", cls.Options)
    problems += check_conditions(specs)  # `when`: known metrics, scopes that meet, no cycles


def _salvage_metric_specs(section: Any) -> list[MetricSpec | None]:
    """Metric entries that are valid on their own, so their kind/options are checked even when the root failed.

    Entries that fail their own shape keep their index (as None); the root validation already reported them.
    """
    if not isinstance(section, list):
        return []
    specs: list[MetricSpec | None] = []
    for item in section:
        try:
            specs.append(MetricSpec.model_validate(item))
        except ValidationError:
            specs.append(None)
    return specs


def _interpolate(value: Any, environ: Mapping[str, str], path: str, problems: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        def repl(m: re.Match[str]) -> str:
            if m.group(0) == "$$":
                return "$"
            var, default = m.group(1), m.group(2)
            if var in environ:
                return environ[var]
            if default is not None:
                return default
            problems.append((path, f"environment variable {var} is not set"))
            return ""

        return _ENV_RE.sub(repl, value)
    if isinstance(value, dict):
        return {k: _interpolate(v, environ, f"{path}.{k}" if path else str(k), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, environ, f"{path}[{i}]", problems) for i, v in enumerate(value)]
    return value
