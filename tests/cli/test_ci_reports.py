"""`evald replay --junit/--sarif`: reports that CI tools read (checked with junitparser and SARIF's own models)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from sarif_pydantic import Sarif

from evald.case import Dimension, EvalCase, Score
from evald.ci_reports import junit_xml, sarif
from evald.cli import main
from evald.model import ScoredCase

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"


def scored_cases() -> list[ScoredCase]:
    ok = ScoredCase(
        case=EvalCase(trace_id="a" * 32, span_id="b" * 16, scope="trace", output="Paris"),
        scores=(Score("contains", 1.0, 1.0, "all 1 value(s) found"),
                Score("pii_leak", 1.0, 1.0, "no PII", dimension=Dimension.SAFETY)),
        skipped=(("exact_match", "not_applicable"),), errors=(), metric_dimensions={"exact_match": "correctness"},
    )
    bad = ScoredCase(
        case=EvalCase(trace_id="c" * 32, span_id="d" * 16, scope="llm_call", output="Saturn <&>"),
        scores=(Score("contains", 0.0, 1.0, "0 of 1 found; missing: 'Jupiter' <&>"),
                Score("pii_leak", 0.0, 1.0, "found: email", dimension=Dimension.SAFETY,
                      metadata={"violations": [{"rule": "email", "field": "output"}]})),
        skipped=(), errors=(("json_schema", "TimeoutError: timed out after 30s"),),
        metric_dimensions={"json_schema": "correctness"},
    )
    return [ok, bad]


def test_junit_report_parses_with_junitparser(tmp_path: Path) -> None:
    path = tmp_path / "report.xml"
    path.write_text(junit_xml(scored_cases()))
    xml = JUnitXml.fromfile(str(path))
    suites = {suite.name: suite for suite in xml}
    assert set(suites) == {"contains", "pii_leak", "exact_match", "json_schema"}
    assert (suites["contains"].tests, suites["contains"].failures) == (2, 1)
    outcomes = {(s.name, c.name): [type(r).__name__ for r in c.result] for s in xml for c in s}
    assert outcomes[("contains", f"llm_call {'c' * 32}/{'d' * 16}")] == [Failure.__name__]
    assert outcomes[("exact_match", f"trace {'a' * 32}/{'b' * 16}")] == [Skipped.__name__]
    assert outcomes[("json_schema", f"llm_call {'c' * 32}/{'d' * 16}")] == [Error.__name__]
    failure = next(r for s in xml if s.name == "contains" for c in s for r in c.result)
    assert failure.message == "0 of 1 found; missing: 'Jupiter' <&>"  # escaped in the file, intact when read


def test_sarif_report_validates_against_the_sarif_models() -> None:
    report = Sarif.model_validate(sarif(scored_cases()))
    (run,) = report.runs
    assert run.tool.driver.name == "evald"
    assert {rule.id for rule in run.tool.driver.rules or []} == {"contains", "pii_leak", "json_schema"}
    results = {(r.rule_id, r.level.value if r.level else None) for r in run.results or []}
    assert results == {("contains", "warning"), ("pii_leak", "error"), ("json_schema", "error")}
    pii = next(r for r in run.results or [] if r.rule_id == "pii_leak")
    assert pii.properties and pii.properties["violations"] == [{"rule": "email", "field": "output"}]
    location = (pii.locations or [])[0].logical_locations
    assert location and location[0].fully_qualified_name == f"trace/{'c' * 32}/span/{'d' * 16}"


def test_replay_writes_both_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("""
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: contains, scope: trace, options: { values: ["Paris"] } }
""")
    junit, sarif_path = tmp_path / "r.xml", tmp_path / "r.sarif"
    code = main(["replay", str(CORPUS / "a_chat_correct.pb"), str(CORPUS / "b_chat_wrong.pb"), "--config",
                 str(config), "--junit", str(junit), "--sarif", str(sarif_path)])
    assert code == 0, capsys.readouterr().err
    suite = next(iter(JUnitXml.fromfile(str(junit))))
    assert (suite.name, suite.tests, suite.failures) == ("contains", 2, 1)
    run = Sarif.model_validate(json.loads(sarif_path.read_text())).runs[0]
    assert [r.rule_id for r in run.results or []] == ["contains"]
