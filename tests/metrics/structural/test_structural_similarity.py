"""structural_similarity: hand-computed leaf shares at each level, and agreement with harness-evals at 1 and 0."""

from __future__ import annotations

import pytest
from harness_evals.metrics.structural import StructuralSimilarityMetric as HarnessStructural

from evald.case import EvalCase
from evald.metrics.harness_case import to_harness_case
from evald.metrics.structural.structural_similarity import StructuralSimilarityMetric


def _value(output: object, expected: object, **options: object) -> float:
    score = StructuralSimilarityMetric(options=options).measure(EvalCase(output=output, expected=expected))
    assert score is not None
    return score.value


def test_raw_share_of_leaves_with_lists_as_multisets() -> None:
    expected = "kind: Deployment\nreplicas: 3\nports: [80, 443]\n"
    # leaves: kind, replicas, ports[0], ports[1]; output swaps the ports (same multiset) and changes replicas
    assert _value("kind: Deployment\nreplicas: 2\nports: [443, 80]\n", expected) == pytest.approx(3 / 4)


def test_structural_ignores_keys_requires_fields_and_penalises_extra_keys() -> None:
    expected = {"name": "a", "id": 1, "spec": {"x": 1}}
    output = {"name": "a", "id": 99, "spec": {"x": 1}, "extra": True}
    # raw: name, spec.x match; id differs; extra only in output: 2 of 4
    assert _value(output, expected, format="json") == pytest.approx(2 / 4)
    # structural without id: name, spec.x match, extra differs: 2/3, times 0.8 for the extra key
    assert _value(output, expected, level="structural", ignore_keys=["id"], extra_keys="penalize") == pytest.approx(
        2 / 3 * 0.8)
    assert _value(output, expected, level="structural", required_fields={"name": "b"}) == 0.0


def test_schema_validated_fails_an_invalid_output_first() -> None:
    schema = {"type": "object", "required": ["name"]}
    assert _value({"id": 1}, {"id": 1}, level="schema_validated", schema=schema) == 0.0
    assert _value({"id": 1, "name": "n"}, {"id": 1, "name": "n"}, level="schema_validated", schema=schema) == 1.0


def test_not_applicable_without_a_structured_expected_and_zero_for_unparsable_output() -> None:
    metric = StructuralSimilarityMetric(options={"format": "json"})
    assert metric.measure(EvalCase(output="{}", expected="plain text")) is None
    assert _value("not json {", {"a": 1}, format="json") == 0.0


@pytest.mark.parametrize(("output", "expected"), [
    ("a: 1\nb: [x, y]\n", "b: [y, x]\na: 1\n"),  # identical up to list order
    ("a: 1\nb: {c: [1, 2]}\n", "a: 1\nb: {c: [1, 2]}\n"),
])
def test_agrees_with_harness_evals_on_identical_documents(output: str, expected: str) -> None:
    """Tolerance 1e-9, on identical documents only: DeepDiff's deep_distance is not a leaf share (two documents
    sharing no leaf are 0.0 here and about 0.67 there), see the metric's docstring."""
    case = EvalCase(output=output, expected=expected)
    ours = StructuralSimilarityMetric().measure(case)
    theirs = HarnessStructural().measure(to_harness_case(case))
    assert ours is not None
    assert ours.value == pytest.approx(theirs.value, abs=1e-9)
