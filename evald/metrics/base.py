"""The metric contract (harness-evals' BaseMetric, made async-native and declarative).

A metric is one class in one file under ``evald/metrics/<family>/``. It declares ``kind``, ``family``,
``dimension`` and ``default_threshold`` as class variables, an ``Options`` pydantic model for its
``options:`` block, implements ``measure()`` (sync, cheap) or ``a_measure()`` (async, e.g. a judge call), and
returns ``None`` when the case does not carry what it needs: that is "not applicable" (counted as skipped),
never a 0. ``needs`` lists the fields it cannot do without: the scorer checks them before the metric runs and skips
it with reason ``missing_<field>`` (evald/metrics/requirements.py), so ``measure()`` never sees a case without them.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from typing import Any, ClassVar

from evald.case import Dimension, EvalCase, Score, new_score
from evald.config.base import ComponentConfig
from evald.metrics.requirements import default_needs


class NoOptions(ComponentConfig):
    """For metrics that take no options."""


class BaseMetric(ABC):
    kind: ClassVar[str]
    family: ClassVar[str]
    dimension: ClassVar[Dimension]
    default_threshold: ClassVar[float] = 1.0
    #: True when the metric only ever returns 0 or 1 (pass/fail): exporters report it as a boolean score.
    boolean: ClassVar[bool] = False
    version: ClassVar[str] = "1"
    #: EvalCase fields the metric reads; documented by ``evald list-metrics``.
    requires: ClassVar[tuple[str, ...]] = ()
    #: EvalCase fields the metric cannot do without (``"a|b"``: at least one); when one is absent the scorer skips
    #: the metric with reason ``missing_<field>`` before it runs (evald/metrics/requirements.py). A class that does
    #: not declare it gets the content fields among its ``requires``.
    needs: ClassVar[tuple[str, ...]] = ()
    _needs_declared: ClassVar[bool] = False
    Options: ClassVar[type[ComponentConfig]] = NoOptions
    #: True when the class implements ``a_measure()``: the scorer awaits it under a timeout; otherwise
    #: ``measure()`` runs inline (set automatically).
    is_async: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.is_async = cls.a_measure is not BaseMetric.a_measure
        if "needs" in cls.__dict__:
            cls._needs_declared = True
        elif not cls._needs_declared:  # nothing declared here or above: the content fields it reads
            cls.needs = default_needs(cls.requires)

    def __init__(
        self,
        threshold: float | None = None,
        options: ComponentConfig | Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        self.name = name or self.kind
        self.threshold = self.default_threshold if threshold is None else float(threshold)
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"threshold {self.threshold} must be within [0, 1]")
        if options is None or isinstance(options, Mapping):
            options = self.Options.model_validate(dict(options or {}))
        self.options = options
        self.setup()

    def required_fields(self) -> tuple[str, ...]:
        """The fields this instance cannot do without: ``needs``, unless its options supply one (a ``contains``
        with ``values`` needs no ``expected``); override for that."""
        return self.needs

    def setup(self) -> None:
        """Prepare per-instance state from ``self.options`` (compiled patterns, tables...); called once by
        ``__init__``. Override this instead of ``__init__``; raise ``ValueError`` for unusable options."""
        return None

    async def aclose(self) -> None:
        """Release what the metric holds (HTTP clients...); the pipeline calls it once on shutdown."""
        return None

    def measure(self, eval_case: EvalCase) -> Score | None:
        """Score one case synchronously; ``None`` means not applicable."""
        raise NotImplementedError(f"{type(self).__name__} implements neither measure() nor a_measure()")

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        """Score one case; the default runs ``measure()`` inline (deterministic metrics are cheap)."""
        return self.measure(eval_case)

    def score(self, value: float, reason: str | None = None, **metadata: Any) -> Score:
        """Build this metric's Score: name, threshold and dimension come from the metric."""
        return new_score(self.name, value, self.threshold, reason, metadata, self.dimension)  # hot path: no type call

    @classmethod
    def describe(cls) -> dict[str, Any]:
        doc = (cls.__doc__ or "").strip().splitlines()
        return {
            "kind": cls.kind,
            "family": cls.family,
            "dimension": cls.dimension.value,
            "default_threshold": cls.default_threshold,
            "version": cls.version,
            "requires": list(cls.requires),
            "needs": list(cls.needs),
            "summary": doc[0] if doc else "",
        }
