"""Per-metric requirements (evald/metrics/requirements.py) and the scorer's check before a metric runs."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evald.case import Dimension, Document, EvalCase, Message, Score, ToolCall
from evald.metrics.base import BaseMetric
from evald.metrics.deterministic.contains import ContainsMetric
from evald.metrics.registry import all_metric_classes, get_metric_class
from evald.metrics.requirements import is_present, missing_field, requirement_check
from evald.pipeline.bindings import MetricBinding, MetricFilter
from evald.pipeline.scoring import CaseScorer
from evald.telemetry import Telemetry

DIMENSIONS = set(Dimension)


def case(**fields: Any) -> EvalCase:
    return EvalCase(trace_id="a" * 32, **fields)


def test_absent_means_none_blank_or_empty_and_tool_calls_depend_on_capture() -> None:
    assert not is_present(case(), "input") and not is_present(case(input="  "), "input")
    assert is_present(case(input="q"), "input") and is_present(case(latency_ms=0.0), "latency_ms")
    assert not is_present(case(), "context") and not is_present(case(), "expected")
    # no tool call, with content recorded: the model called none (tool_not_called can pass)
    assert is_present(case(metadata={"content_capture": "full"}), "tool_calls")
    assert is_present(case(), "tool_calls")  # hand-built cases (goldens, tests) carry no capture status
    # no tool call while content was not recorded or masked: unknown, not "none called"
    assert not is_present(case(metadata={"content_capture": "none"}), "tool_calls")
    assert not is_present(case(metadata={"content_capture": "masked"}), "tool_calls")
    assert is_present(case(tool_calls=(ToolCall("get_weather"),), metadata={"content_capture": "none"}), "tool_calls")


def test_messages_need_text_and_tool_arguments_are_derived() -> None:
    structure_only = case(messages=(Message("user"), Message("assistant")))  # pydantic-ai include_content=False
    assert not is_present(structure_only, "messages")
    assert is_present(case(messages=(Message("user", "hi"),)), "messages")
    assert not is_present(case(tool_calls=(ToolCall("get_weather", id="call_1"),)), "tool_arguments")
    assert is_present(case(tool_calls=(ToolCall("get_weather", {"city": "Paris"}),)), "tool_arguments")


def test_missing_field_names_the_first_absent_one_and_alternatives_need_one() -> None:
    assert missing_field(case(output="a"), ("output", "expected")) == "expected"
    assert missing_field(case(), ("output", "expected")) == "output"
    assert missing_field(case(output_tokens=3), ("token_count|input_tokens|output_tokens",)) is None
    assert missing_field(case(), ("token_count|input_tokens|output_tokens",)) == "token_count"


def _reference_missing(eval_case: EvalCase, needs: tuple[str, ...]) -> str | None:
    """The rule written out plainly: the first spec none of whose names is present names its first one."""
    for spec in needs:
        names = spec.split("|")
        if not any(is_present(eval_case, name) for name in names):
            return names[0]
    return None


def test_the_prepared_check_agrees_with_the_rule_for_every_declared_need() -> None:
    """``requirement_check`` (prepared once per plan, with plain fields tested inline) answers as the rule does."""
    cases = [
        case(), case(input=" \n", output="", expected="  ", context=(), latency_ms=0.0, token_count=0),
        case(input="q", output="a", expected="Paris", context=(Document("d1"),), latency_ms=5.0, input_tokens=3,
             messages=(Message("user", "hi"),), tool_calls=(ToolCall("f", {"x": 1}),), system_prompt="be brief",
             metadata={"content_capture": "full"}),
        case(output={"answer": 1}, expected=0, messages=(Message("user"),), tool_calls=(ToolCall("f", id="c"),),
             metadata={"content_capture": "none"}),
        case(metadata={"content_capture": "masked"}, output_tokens=7, cost_usd=0.0, expected_tools=()),
    ]
    declared = {cls.needs for cls in all_metric_classes()} | {
        ("output",), ("unknown_field",), ("messages", "tool_arguments"), ("tool_calls|context", "input|output")}
    assert len(declared) > 5
    for needs in declared:
        check = requirement_check(needs)
        assert (check is None) == (not needs)
        for eval_case in cases:
            expected = _reference_missing(eval_case, needs)
            assert missing_field(eval_case, needs) == expected, needs
            assert (None if check is None else check(eval_case)) == expected, needs


def test_every_built_in_metric_declares_fields_it_reads_and_one_dimension() -> None:
    for cls in all_metric_classes():
        kind = cls.kind
        assert cls.dimension in DIMENSIONS
        for spec in cls.needs:
            for name in spec.split("|"):
                assert name in EvalCase.__dataclass_fields__ or name == "tool_arguments", (kind, name)
    assert get_metric_class("latency").needs == ("latency_ms",)
    assert get_metric_class("contains").needs == ("output", "expected")
    assert get_metric_class("error_free").needs == ()


def test_options_can_supply_a_field() -> None:
    assert ContainsMetric(options={"values": ["Paris"]}).required_fields() == ("output",)
    assert ContainsMetric().required_fields() == ("output", "expected")


class _ReadsOutput(BaseMetric):
    """A user's metric that declares what it reads but not what it needs: it needs the content it reads."""

    kind: ClassVar[str] = "reads_output"
    family: ClassVar[str] = "test"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    requires: ClassVar[tuple[str, ...]] = ("output", "latency_ms")
    calls: ClassVar[int] = 0

    def measure(self, eval_case: EvalCase) -> Score | None:
        type(self).calls += 1
        return self.score(0.0 if eval_case.output is None else 1.0)


class _JudgesInput(_ReadsOutput):
    kind: ClassVar[str] = "judges_input"
    needs: ClassVar[tuple[str, ...]] = ("input",)

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        type(self).calls += 1
        return self.score(1.0)


def test_undeclared_needs_default_to_the_content_fields_read() -> None:
    assert _ReadsOutput.needs == ("output",)
    assert _JudgesInput.needs == ("input",)

    class Child(_JudgesInput):  # inherits a declared `needs`
        kind: ClassVar[str] = "child"

    assert Child.needs == ("input",)


@pytest.mark.parametrize("gated", [False, True])
async def test_the_scorer_skips_before_running_and_counts_the_field(gated: bool) -> None:
    tm = Telemetry()
    scorer = CaseScorer(tm, metric_timeout=5.0, gated=gated)
    _ReadsOutput.calls = _JudgesInput.calls = 0
    bindings = [MetricBinding(_ReadsOutput(), "all", MetricFilter()),
                MetricBinding(_JudgesInput(), "all", MetricFilter())]
    result = await scorer.score(case(latency_ms=5.0, metadata={"content_capture": "none"}), bindings)
    assert result.scores == ()
    assert sorted(result.skipped) == [("judges_input", "missing_input"), ("reads_output", "missing_output")]
    assert _ReadsOutput.calls == 0 and _JudgesInput.calls == 0  # never run on what it cannot do without
    sample = tm.registry.get_sample_value
    assert sample("evald_metric_skips_total", {"metric": "reads_output", "reason": "missing_output"}) == 1.0
    assert sample("evald_metric_skips_total", {"metric": "judges_input", "reason": "missing_input"}) == 1.0
    scored = await scorer.score(case(input="q", output="a", latency_ms=5.0), bindings)
    assert [s.name for s in scored.scores] == ["reads_output", "judges_input"]


def test_the_inline_path_checks_too() -> None:
    tm = Telemetry()
    scorer = CaseScorer(tm, metric_timeout=5.0, gated=False)
    plan = scorer.plan([MetricBinding(_ReadsOutput(), "all", MetricFilter())])
    assert plan.inline
    result = scorer.score_inline(case(), plan)
    assert result.skipped == (("reads_output", "missing_output"),) and result.scores == ()
    scorer.score_inline(case(), plan)
    labels = {"metric": "reads_output", "reason": "missing_output"}
    assert tm.registry.get_sample_value("evald_metric_skips_total", labels) is None  # added up, once per batch
    scorer.flush_skips()
    assert tm.registry.get_sample_value("evald_metric_skips_total", labels) == 2.0
    scorer.flush_skips()
    assert tm.registry.get_sample_value("evald_metric_skips_total", labels) == 2.0


def test_the_harness_adapter_gets_the_same_check() -> None:
    """harness-evals metrics run through generated classes: they need the content fields they read."""
    exact = get_metric_class("harness:ExactMatchMetric")
    assert exact.needs == ("output",)
    tm = Telemetry()
    scorer = CaseScorer(tm, metric_timeout=5.0, gated=False)
    plan = scorer.plan([MetricBinding(exact(), "all", MetricFilter())])
    result = scorer.score_inline(case(expected="Paris", metadata={"content_capture": "masked"}), plan)
    assert result.scores == () and result.skipped == (("harness:ExactMatchMetric", "missing_output"),)


_VALUES = st.sampled_from([None, "", "  \n", "q", 0, 0.0, [], ["x"], {"k": 1}])
_NAMES = ["input", "output", "expected", "latency_ms", "tool_calls", "tool_arguments", "context", "messages"]
_SPECS = st.lists(st.one_of(st.sampled_from(_NAMES), st.builds("|".join, st.lists(st.sampled_from(_NAMES),
                                                                                   min_size=2, max_size=3))),
                  min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(needs=_SPECS, inp=_VALUES, out=_VALUES, expected=_VALUES, latency=st.sampled_from([None, 0.0, 12.5]),
       calls=st.sampled_from([(), (ToolCall("f"),), (ToolCall("f", {"a": 1}),)]),
       capture=st.sampled_from([None, "full", "none", "masked"]))
def test_a_prepared_check_names_the_first_spec_none_of_whose_fields_is_present(
        needs: list[str], inp: Any, out: Any, expected: Any, latency: float | None, calls: tuple[ToolCall, ...],
        capture: str | None) -> None:
    """Whatever shape the prepared check takes (a plain field inline, alternatives, derived fields), it answers as
    the definition does: the first name of the first spec none of whose alternatives ``is_present``."""
    metadata = {} if capture is None else {"content_capture": capture}
    subject = case(input=inp, output=out, expected=expected, latency_ms=latency, tool_calls=calls, metadata=metadata)
    want = next((spec.split("|")[0] for spec in needs
                 if not any(is_present(subject, name) for name in spec.split("|"))), None)
    assert missing_field(subject, needs) == want
