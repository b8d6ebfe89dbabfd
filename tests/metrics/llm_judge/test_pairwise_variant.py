"""``pairwise`` with ``reference: variant``: a case of variant B judged against the reference variant A's output for
the same (normalised) input, paired by the windowed stage within its bounds, through the real openai and anthropic
SDKs against the local stand-in. Values are hand-computed from the scripted preferences."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from aiohttp import web

from evald.case import EvalCase
from evald.metrics.llm_judge.pairwise import PairwiseMetric
from evald.metrics.llm_judge.pairwise_variant import VariantPairwiseMetric
from evald.metrics.multi_case import WINDOW_ATTRIBUTES, GroupMetric
from evald.model import ScoredCase, new_scored_case
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.telemetry import Telemetry
from evald.windowed.stage import WindowedStage
from tests.judges.fake_llm import FakeLLM, Reply
from tests.metrics.judged_support import EMAIL, blocks_of, reply

pytestmark = pytest.mark.integration
TRACE_A, TRACE_B, TRACE_C = "a" * 32, "b" * 32, "c" * 32


def case(trace_id: str, variant: str | None, output: str, question: str = f"Capital of France? ({EMAIL})",
         attribute: str = "evald.variant") -> EvalCase:
    metadata: dict[str, Any] = {} if variant is None else {WINDOW_ATTRIBUTES: {attribute: variant}}
    return EvalCase(input=question, output=output, trace_id=trace_id, span_id="1" * 16, metadata=metadata)


class Harness:
    """A windowed stage with one ``pairwise`` (variant) binding, its exports collected, on a settable clock."""

    def __init__(self, **options: Any) -> None:
        self.now = 0.0
        self.telemetry = Telemetry()
        self.metric = PairwiseMetric(options={"reference": "variant", **options})
        self.stage = WindowedStage([MetricBinding(self.metric, "all", MetricFilter())], self.telemetry,
                                   clock=lambda: self.now)
        self.exported: list[ScoredCase] = []
        self.stage.judge.bind(self._export, timeout=10)

    async def _export(self, batch: Sequence[ScoredCase]) -> None:
        self.exported.extend(batch)

    async def send(self, *cases: EvalCase) -> None:
        for c in cases:
            assert self.stage.observe([new_scored_case(c, (), (), (), {})]) == []  # judged asynchronously
        await self.stage.judge.drain(10)

    def dropped(self, reason: str) -> float | None:
        return self.telemetry.registry.get_sample_value("evald_windowed_dropped_total",
                                                        {"metric": "pairwise", "reason": reason})


def answer_by_order(llm: FakeLLM, compared: str, compared_first: Reply, reference_first: Reply) -> None:
    """The stand-in answers ``compared_first`` when response_a is the compared output, else ``reference_first``."""
    original: Callable[[web.Request], Awaitable[web.StreamResponse]] = llm._reply

    async def by_order(request: web.Request) -> web.StreamResponse:
        llm.default = compared_first if blocks_of(await request.json())["response_a"] == compared else reference_first
        return await original(request)

    llm._reply = by_order  # type: ignore[method-assign]


def test_reference_variant_builds_the_windowed_form() -> None:
    plain, variant = PairwiseMetric(), PairwiseMetric(options={"reference": "variant"})
    assert type(plain) is PairwiseMetric and not isinstance(plain, GroupMetric)
    assert isinstance(variant, VariantPairwiseMetric) and isinstance(variant, GroupMetric)
    assert variant.kind == "pairwise" and variant.group_is_async


async def test_b_after_a_is_judged_in_both_orders_and_scored_on_b(sdk_llm: FakeLLM) -> None:
    answer_by_order(sdk_llm, "Paris.", reply("B is right", preference=1), reply("B is right", preference=5))
    h = Harness()
    # the same input after normalisation (case and whitespace)
    await h.send(case(TRACE_A, "A", "Lyon."), case(TRACE_B, "B", "Paris.", f"capital of   France? ({EMAIL})"))
    ((scored,),) = [[sc] for sc in h.exported]
    (score,) = scored.scores
    assert scored.trace_id == TRACE_B and score.name == "pairwise"
    assert score.value == 1.0 and score.passed  # ((5-1)/4 + (5-1)/4) / 2
    assert {k: score.metadata[k] for k in ("reference", "variant", "reference_variant", "reference_trace_id",
                                           "position_consistent", "runs", "trace_ids")} == {
        "reference": "variant", "variant": "B", "reference_variant": "A", "reference_trace_id": TRACE_A,
        "position_consistent": True, "runs": 2, "trace_ids": [TRACE_A, TRACE_B]}
    assert score.reason == "group of 2 runs: output first: B is right | reference first: B is right"
    orders = sorted((b["response_a"], b["response_b"]) for b in map(blocks_of, sdk_llm.received))
    assert orders == [("Lyon.", "Paris."), ("Paris.", "Lyon.")]
    assert all(blocks_of(b)["input"].endswith("([EMAIL_1])") for b in sdk_llm.received)  # redacted


async def test_b_before_a_waits_for_the_reference(sdk_llm: FakeLLM) -> None:
    answer_by_order(sdk_llm, "Paris.", reply(preference=4), reply(preference=2))
    h = Harness()
    await h.send(case(TRACE_B, "B", "Paris."))
    assert h.exported == [] and sdk_llm.received == []
    await h.send(case(TRACE_A, "A", "Lyon."))
    (scored,) = h.exported
    assert scored.trace_id == TRACE_B  # on the compared case, though the reference arrived last
    assert scored.scores[0].value == 0.25 and not scored.scores[0].passed  # ((5-4)/4 + (2-1)/4) / 2


async def test_the_reference_stays_for_later_cases_and_a_position_biased_judge_cancels_out(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply("the first one", preference=1)  # whichever is shown first wins
    h = Harness(reference_variant="control", variant_attribute="deploy.variant")
    await h.send(case(TRACE_A, "control", "Lyon.", attribute="deploy.variant"),
                 case(TRACE_B, "shadow", "Paris.", attribute="deploy.variant"),
                 case(TRACE_C, "shadow", "Marseille.", attribute="deploy.variant"))
    assert sorted(sc.trace_id for sc in h.exported) == [TRACE_B, TRACE_C]
    for scored in h.exported:
        assert scored.scores[0].value == 0.5  # ((5-1)/4 + (1-1)/4) / 2
        assert scored.scores[0].metadata["position_consistent"] is False
    assert len(sdk_llm.received) == 4


async def test_losses_are_counted(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply(preference=3)
    h = Harness(max_age=60, max_waiting=1)
    await h.send(case(TRACE_A, None, "x"))                       # no variant
    await h.send(case(TRACE_B, "B", "x", "Another question"))    # waits ...
    await h.send(case(TRACE_C, "B", "y", "Another question"))    # ... and is pushed out (max_waiting 1)
    assert h.dropped("no_variant") == 1 and h.dropped("group_evicted") == 1
    h.now = 61.0
    await h.send(case(TRACE_A, "A", "z", "Another question"))    # the waiting case expired first
    assert h.dropped("group_expired") == 1 and h.exported == [] and sdk_llm.received == []
    await h.send(case(TRACE_B, "B", "x", "A different question"))  # no reference for this input
    assert h.exported == []


async def test_a_malformed_verdict_is_counted_as_an_error_never_a_score(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = Reply(text='{"reasoning": "x", "preference": 9}')
    h = Harness()
    await h.send(case(TRACE_A, "A", "Lyon."), case(TRACE_B, "B", "Paris."))
    assert h.exported == [] and h.dropped("error") == 2  # the group's two runs


async def test_group_by_attribute_pairs_by_a_shared_request_id(sdk_llm: FakeLLM) -> None:
    sdk_llm.default = reply(preference=3)
    h = Harness(group_by="attribute", group_attribute="app.request_id")
    assert set(h.stage.attribute_names) == {"app.request_id", "evald.variant"}

    def tagged(trace_id: str, variant: str, request: str, question: str) -> EvalCase:
        c = case(trace_id, variant, "answer", question)
        return EvalCase(input=c.input, output=c.output, trace_id=trace_id, span_id=c.span_id,
                        metadata={WINDOW_ATTRIBUTES: {"evald.variant": variant, "app.request_id": request}})

    # the shadow rewrote the prompt, the request id is the same: a pair; another request id: none
    await h.send(tagged(TRACE_A, "A", "req-1", "Hello"), tagged(TRACE_B, "B", "req-1", "Hello (shadow)"),
                 tagged(TRACE_C, "B", "req-2", "Hello"))
    (scored,) = h.exported
    assert scored.trace_id == TRACE_B and scored.scores[0].value == 0.5
    assert scored.scores[0].metadata["group"] == "a:req-1"
