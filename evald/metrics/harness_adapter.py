"""Run any metric class of the optional ``harness-evals`` package as an evald metric: ``kind: "harness:<Class>"``.

``evald.metrics.registry.get_metric_class`` hands every ``harness:`` kind to :func:`harness_metric_class`, which
builds (once per class) an evald :class:`BaseMetric` subclass around the harness-evals class:

- ``kind`` is ``harness:<Class>``, ``family`` is ``harness``; ``dimension`` and ``default_threshold`` are the ones
  harness-evals' own catalog (``harness_evals.catalog.catalog()``) reports for the class.
- ``options`` are the class's constructor arguments, as a pydantic model generated from its signature, so an
  unknown key or a wrong type is a config error; the options are also tried on the constructor at config load,
  so the class's own checks (e.g. ``negate`` without ``forbidden``) are config errors too. ``threshold`` comes
  from the evald metric spec; ``name`` and ``dimension`` are evald's and cannot be set.
- Classes that need an object that cannot come from YAML (an LLM, an embedding model or a decision provider:
  the LLM judges and RAG metrics), repeated runs (``ReliabilityMetric``) or a whole dataset
  (``measure_dataset``) are refused at config load with the reason.
- A class whose own ``a_measure`` is overridden (I/O-bound) runs through evald's ``a_measure`` (awaited under
  the metric timeout); any other through the synchronous ``measure``.

See :func:`evald.metrics.harness_case.to_harness_case` for how an evald case becomes a harness-evals
``EvalCase``. A harness score maps to an evald score with the same value, reason and metadata; ``None`` (the
harness way to skip) is "not applicable". harness-evals' ``Score`` documents ``value`` in [0, 1] for every
metric (it clamps a 1e-6 overshoot and raises otherwise), so the same is enforced here: a value outside it (or
not a harness ``Score``) raises :class:`HarnessScoreError`, which evald reports as a metric error. Without
``harness-evals`` installed, a ``harness:`` kind is a config error naming the package
(``pip install 'evald[harness]'``).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import math
import re
import typing
from types import ModuleType
from typing import Any, ClassVar, cast

from pydantic import BaseModel, Field, TypeAdapter, create_model, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.harness_case import to_harness_case

HARNESS_PREFIX = "harness:"
PACKAGE = "harness-evals"
INSTALL_HINT = f"pip install 'evald[harness]' (or: pip install {PACKAGE})"
#: constructor arguments evald owns: the threshold comes from the metric spec, name and dimension are evald's
_RESERVED = frozenset({"self", "threshold", "name", "dimension"})
_EPSILON = 1e-6
#: harness-evals EvalCase attribute or helper read by a metric -> the evald EvalCase field it comes from
_FIELD_OF = {
    "input": "input", "output": "output", "output_as_str": "output", "output_as_dict": "output",
    "expected": "expected", "expected_as_str": "expected", "expected_as_dict": "expected", "context": "context",
    "messages": "messages", "tool_calls": "tool_calls", "expected_tools": "expected_tools",
    "latency_ms": "latency_ms", "token_count": "token_count", "input_tokens": "input_tokens",
    "output_tokens": "output_tokens", "cost_usd": "cost_usd", "retry_count": "retry_count",
    "confidence": "confidence", "tags": "tags", "metadata": "metadata", "meta": "metadata",
}


class HarnessEvalsMissingError(LookupError):
    """``harness-evals`` is not installed (a config error when a ``harness:`` kind is used)."""


class UnsupportedHarnessMetricError(LookupError):
    """The harness-evals class is unknown, or cannot run per case from config."""


class HarnessScoreError(ValueError):
    """A harness-evals metric returned something that is not a harness ``Score`` with a value in [0, 1]."""


def _harness_catalog() -> ModuleType:
    """``harness_evals.catalog``; a missing (or broken) harness-evals is a config error saying what to install."""
    try:
        importlib.import_module("harness_evals")
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] == "harness_evals":
            raise HarnessEvalsMissingError(
                f"metric kinds {HARNESS_PREFIX}<Class> need the optional package {PACKAGE}: {INSTALL_HINT}"
            ) from err
    try:
        return importlib.import_module("harness_evals.catalog")
    except ImportError as err:  # e.g. one of its own dependencies is missing
        raise HarnessEvalsMissingError(f"{PACKAGE} is installed but cannot be imported: {err}") from err


@functools.cache
def _catalog() -> dict[str, Any]:
    """Class name -> harness-evals ``CatalogEntry``, for the built-in and plugin metrics of harness-evals."""
    return {entry.metric_class.__name__: entry for entry in _harness_catalog().catalog()}


@functools.cache
def harness_metric_class(class_name: str) -> type[BaseMetric]:
    """The evald metric class for ``harness:<class_name>`` (built once, then cached)."""
    entries = _catalog()
    entry = entries.get(class_name)
    if entry is None:
        by_kind = {e.kind: name for name, e in entries.items()}  # harness' snake_case kinds, e.g. exact_match
        close = [by_kind[class_name]] if class_name in by_kind else []
        close += difflib.get_close_matches(class_name, list(entries), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(HARNESS_PREFIX + c) for c in dict.fromkeys(close))}?" if close else ""
        raise UnsupportedHarnessMetricError(
            f"unknown {PACKAGE} metric class {class_name!r}{hint} (known: {', '.join(sorted(entries))})"
        )
    harness_cls: type[Any] = entry.metric_class
    _check_runs_per_case(harness_cls)
    options = _options_model(harness_cls, entry.default_threshold)
    from harness_evals.core.metric import BaseMetric as HarnessBaseMetric

    base = _AsyncHarnessMetric if harness_cls.a_measure is not HarnessBaseMetric.a_measure else _SyncHarnessMetric
    name = class_name if class_name.endswith("Metric") else f"{class_name}Metric"
    summary = f"{PACKAGE} {class_name}: {entry.description or 'no description'}"
    attrs: dict[str, Any] = {
        "__doc__": f"{summary}\n\nAdapted by evald.metrics.harness_adapter (see its docstring).",
        "__module__": __name__,
        "kind": HARNESS_PREFIX + class_name,
        "family": "harness",
        "dimension": _dimension(entry.dimension, entry.category),
        "default_threshold": min(1.0, max(0.0, float(entry.default_threshold))),
        "requires": _requires(harness_cls),
        "Options": options,
        "harness_class": harness_cls,
    }
    return cast(type[BaseMetric], type(f"Harness{name}", (base,), attrs))


def _check_runs_per_case(harness_cls: type[Any]) -> None:
    from harness_evals.core.metric import BaseMetric as HarnessBaseMetric
    from harness_evals.core.metric import ReliabilityMetric

    name = harness_cls.__name__
    if issubclass(harness_cls, ReliabilityMetric):
        raise UnsupportedHarnessMetricError(
            f"{PACKAGE} {name} scores K repeated runs of one task (EvalCase.runs); evald cases carry one run")
    if harness_cls.measure_dataset is not HarnessBaseMetric.measure_dataset:
        raise UnsupportedHarnessMetricError(
            f"{PACKAGE} {name} scores a whole dataset (measure_dataset); evald scores one case at a time")


class _HarnessOptions(ComponentConfig):
    """Base of the generated options models: the options must also satisfy the harness constructor."""

    harness_class: ClassVar[type[Any] | None] = None
    default_threshold: ClassVar[float] = 1.0
    #: field name -> constructor argument (they differ when an argument shadows a pydantic name, e.g. schema)
    arguments: ClassVar[dict[str, str]] = {}

    def constructor_kwargs(self) -> dict[str, Any]:
        return {argument: getattr(self, field) for field, argument in self.arguments.items()}

    @model_validator(mode="after")
    def _constructible(self) -> _HarnessOptions:
        cls = type(self).harness_class
        if cls is not None:
            try:
                cls(threshold=type(self).default_threshold, **self.constructor_kwargs())
            except Exception as err:  # the harness class's own option checks
                raise ValueError(f"{cls.__name__} rejects these options: {err}") from err
        return self


def _options_model(harness_cls: type[Any], default_threshold: float) -> type[_HarnessOptions]:
    """A pydantic model of the constructor arguments that can come from YAML (plain values)."""
    try:
        hints = typing.get_type_hints(harness_cls.__init__)
    except Exception:  # unresolvable annotations: accept any value, the constructor still checks them
        hints = {}
    fields: dict[str, Any] = {}
    arguments: dict[str, str] = {}
    for param in list(inspect.signature(harness_cls.__init__).parameters.values()):
        if param.name in _RESERVED or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        required = param.default is inspect.Parameter.empty
        if not _is_plain(annotation):
            if required:
                raise UnsupportedHarnessMetricError(
                    f"{PACKAGE} {harness_cls.__name__} needs a {_type_name(annotation)} object "
                    f"({param.name}=...), which cannot be given in evald's config; use a metric without one")
            continue  # an optional object argument keeps the harness default
        field = f"{param.name}_" if hasattr(BaseModel, param.name) or param.name.startswith("model_") else param.name
        description = f"{harness_cls.__name__}({param.name}=...): {_type_name(annotation)}"
        default = ... if required else param.default
        fields[field] = (annotation, Field(default, alias=param.name if field != param.name else None,
                                           description=description))
        arguments[field] = param.name
    model = create_model(f"{harness_cls.__name__}Options", __base__=_HarnessOptions, **fields)
    model.harness_class, model.default_threshold, model.arguments = harness_cls, default_threshold, arguments
    return model


def _is_plain(annotation: Any) -> bool:
    """Whether pydantic can validate the type from YAML values (an LLM client class cannot)."""
    try:
        TypeAdapter(annotation)
    except Exception:
        return False
    return True


def _type_name(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


def _dimension(harness_dimension: Any, category: str) -> Dimension:
    try:
        return Dimension(getattr(harness_dimension, "value", harness_dimension))
    except ValueError:
        by_category = {"operational": Dimension.PERFORMANCE, "safety": Dimension.SAFETY, "rag": Dimension.GROUNDEDNESS,
                       "grounding": Dimension.GROUNDEDNESS, "agent": Dimension.TRAJECTORY, "mcp": Dimension.TRAJECTORY}
        return by_category.get(category, Dimension.CORRECTNESS)


def _requires(harness_cls: type[Any]) -> tuple[str, ...]:
    """Best effort: the evald fields behind the ``eval_case.<attribute>`` reads in the class's module."""
    try:
        source = inspect.getsource(inspect.getmodule(harness_cls) or harness_cls)
    except (OSError, TypeError):
        return ()
    read = re.findall(r"\beval_case\.(\w+)", source)
    return tuple(dict.fromkeys(_FIELD_OF[a] for a in read if a in _FIELD_OF))


class _HarnessMetric(BaseMetric):
    """Shared part of the generated classes: builds the harness metric and maps its score."""

    harness_class: ClassVar[type[Any]]

    def setup(self) -> None:
        kwargs = cast(_HarnessOptions, self.options).constructor_kwargs()
        self.harness_metric = self.harness_class(threshold=self.threshold, **kwargs)

    def _to_score(self, result: Any) -> Score | None:
        if result is None:
            return None
        from harness_evals.core.score import Score as HarnessScore

        if not isinstance(result, HarnessScore):
            raise HarnessScoreError(f"{self.kind} returned {type(result).__name__}, not a {PACKAGE} Score")
        value = float(result.value)
        if not math.isfinite(value) or not -_EPSILON <= value <= 1 + _EPSILON:
            raise HarnessScoreError(
                f"{self.kind} returned value {result.value!r}, outside [0, 1], the range {PACKAGE}' Score "
                "documents for every metric (fix the metric)")
        return Score(name=self.name, value=min(1.0, max(0.0, value)), threshold=self.threshold,
                     reason=result.reason, metadata=dict(result.metadata or {}), dimension=self.dimension)


class _SyncHarnessMetric(_HarnessMetric):
    """For harness classes that only implement ``measure()``."""

    def measure(self, eval_case: EvalCase) -> Score | None:
        return self._to_score(self.harness_metric.measure(to_harness_case(eval_case)))


class _AsyncHarnessMetric(_HarnessMetric):
    """For harness classes with their own ``a_measure()`` (I/O-bound)."""

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        return self._to_score(await self.harness_metric.a_measure(to_harness_case(eval_case)))
