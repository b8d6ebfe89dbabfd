"""Route an assembled trace to the first span mapper whose convention it matches.

``MapperRouter(mappers).map(trace)`` tries each mapper's ``matches()`` in order and returns the first matching
mapper's result. No match gives an empty ``MappingResult`` ("no GenAI spans"; the pipeline counts the trace as
ignored). A mapper that raises despite the contract is contained: the trace becomes
``NotEvaluable(reason="mapper_error")`` with the exception type in ``detail``. New conventions plug in by
adding a mapper to :func:`default_mappers` (more specific conventions first). Every case returned carries its
content-capture status and instrumentation in its metadata (:mod:`evald.mapping.content_capture`). The service
builds the ``llm_call`` cases only when a configured metric can score one (its scope ``llm_call`` or ``all``):
building a case costs about as much as reading the call, and no case is built only to be counted unscored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evald.interfaces import MappingResult, NotEvaluable, SpanMapper
from evald.mapping.content_capture import annotate
from evald.mapping.genai_semconv import GenAISemconvMapper
from evald.mapping.openinference import OpenInferenceMapper
from evald.mapping.openllmetry import OpenLLMetryMapper
from evald.model import AssembledTrace

__all__ = ["MapperRouter", "default_mappers"]


def default_mappers(llm_call_cases: bool = True) -> list[SpanMapper]:
    """The built-in mappers in routing order: the conventions with their own span-kind markers first, the
    OpenTelemetry GenAI conventions (which other instrumentations also partly emit) last. With ``llm_call_cases``
    False they build each trace's ``trace`` case only (no configured metric scores an ``llm_call`` case)."""
    return [OpenInferenceMapper(llm_call_cases), OpenLLMetryMapper(llm_call_cases),
            GenAISemconvMapper(llm_call_cases)]


class MapperRouter:
    """Picks one mapper per trace; never raises."""

    def __init__(self, mappers: Sequence[SpanMapper]) -> None:
        self._mappers = tuple(mappers)
        self._observers: list[Callable[[AssembledTrace, MappingResult], None]] = []

    def observe(self, observer: Callable[[AssembledTrace, MappingResult], None]) -> None:
        """Call ``observer(trace, result)`` for every trace mapped (``evald replay`` records not-evaluable traces
        with it); an observer that raises is ignored."""
        self._observers.append(observer)

    @property
    def mappers(self) -> tuple[SpanMapper, ...]:
        return self._mappers

    def map(self, trace: AssembledTrace) -> MappingResult:
        result = self._map(trace)
        for observer in self._observers:
            # an observer must never cost a trace; try/except, not suppress(): an object and two calls per trace
            try:  # noqa: SIM105
                observer(trace, result)
            except Exception:  # noqa: S110
                pass
        return result

    def _map(self, trace: AssembledTrace) -> MappingResult:
        for mapper in self._mappers:
            convention = getattr(mapper, "name", type(mapper).__name__)
            try:
                if not mapper.matches(trace):
                    continue
                return annotate(trace, mapper.map(trace))
            except Exception as err:  # a mapper bug must not take the pipeline down
                detail = f"{type(err).__name__} in {convention}"
                return MappingResult(not_evaluable=(NotEvaluable("mapper_error", str(convention), detail),))
        return MappingResult()
