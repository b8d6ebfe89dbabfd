"""`evald replay --junit/--sarif`: reports that CI tools read (checked with junitparser, SARIF's own models and
GitHub code scanning's documented upload requirements)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped
from sarif_pydantic import Sarif

from evald.case import Dimension, EvalCase, Score
from evald.ci_reports import MAX_RESULTS, Artifact, junit_xml, sarif, trace_sources
from evald.cli import main
from evald.model import ScoredCase

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"
REPO = Path(__file__).resolve().parents[2]
LEVELS = {"none", "note", "warning", "error"}


def github_problems(log: dict[str, Any]) -> list[str]:
    """What GitHub code scanning would refuse in an upload ("SARIF support for code scanning"): the required
    properties, a physical location with a file URI and a start line >= 1 on every result, and the per-run limits."""
    problems = []
    if log.get("version") != "2.1.0" or not log.get("$schema") or not log.get("runs"):
        problems.append("log: version 2.1.0, $schema and runs are required")
    if len(log.get("runs", [])) > 20:
        problems.append("more than 20 runs")
    for r, run in enumerate(log.get("runs", [])):
        driver = run.get("tool", {}).get("driver", {})
        rule_ids = [rule.get("id") for rule in driver.get("rules", [])]
        if not driver.get("name") or not all(rule_ids) or len(rule_ids) > 25_000:
            problems.append(f"runs[{r}].tool.driver: name and every rule's id are required, 25,000 rules at most")
        results = run.get("results")
        if not isinstance(results, list) or len(results) > 25_000:
            problems.append(f"runs[{r}].results: required, 25,000 at most")
            continue
        for i, result in enumerate(results):
            where = f"runs[{r}].results[{i}]"
            if result.get("ruleId") not in rule_ids:
                problems.append(f"{where}.ruleId: required, one of the driver's rules")
            if not (result.get("message") or {}).get("text"):
                problems.append(f"{where}.message.text: required")
            if result.get("level", "warning") not in LEVELS:
                problems.append(f"{where}.level: one of {sorted(LEVELS)}")
            locations = result.get("locations") or []
            if not 1 <= len(locations) <= 1000:
                problems.append(f"{where}.locations: at least one (1,000 at most)")
            for j, location in enumerate(locations):
                physical = location.get("physicalLocation") or {}
                uri = (physical.get("artifactLocation") or {}).get("uri")
                line = (physical.get("region") or {}).get("startLine")
                if not isinstance(uri, str) or not uri or uri.startswith("/") or "\\" in uri:
                    problems.append(f"{where}.locations[{j}].physicalLocation.artifactLocation.uri: a relative "
                                    "(repository) or file:// URI is required")
                if not isinstance(line, int) or line < 1:
                    problems.append(f"{where}.locations[{j}].physicalLocation.region.startLine: required, >= 1")
            fingerprints = result.get("partialFingerprints", {})
            if not all(isinstance(v, str) and v for v in fingerprints.values()):
                problems.append(f"{where}.partialFingerprints: string values")
    return problems


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


def test_every_sarif_result_has_a_physical_location_github_accepts() -> None:
    sources = {("c" * 32, ""): Artifact("traces/bad.json", 3), ("c" * 32, "d" * 16): Artifact("traces/bad.json", 9)}
    log = sarif(scored_cases(), sources, Artifact("evald.yaml"))
    assert github_problems(log) == []
    Sarif.model_validate(log)
    results = log["runs"][0]["results"]
    physical = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                 r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}
    assert physical == {("contains", "traces/bad.json", 9), ("pii_leak", "traces/bad.json", 9),
                        ("json_schema", "traces/bad.json", 9)}
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    unplaced = sarif(scored_cases(), {}, Artifact("config/evald.yaml"))["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in unplaced} == {"config/evald.yaml"}
    fingerprints = [r["partialFingerprints"]["evaldResult/v1"] for r in results]
    assert len(set(fingerprints)) == 3  # one per result, and the same on the next run:
    again = sarif(scored_cases())["runs"][0]["results"]
    assert fingerprints == [r["partialFingerprints"]["evaldResult/v1"] for r in again]


def test_the_checker_refuses_what_github_refuses() -> None:
    log = sarif(scored_cases(), {}, Artifact("evald.yaml"))
    first = log["runs"][0]["results"][0]
    del first["locations"][0]["physicalLocation"]
    log["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    log["runs"][0]["results"][2]["message"] = {"text": ""}
    problems = github_problems(log)
    assert len(problems) == 4, problems  # first result: uri and startLine; second: startLine; third: message


def test_results_past_githubs_limit_are_cut_errors_first() -> None:
    ok, bad = scored_cases()
    many = [bad] * (MAX_RESULTS // 3 + 5)  # 3 results each: two errors, one warning
    run = sarif(many)["runs"][0]
    assert len(run["results"]) == MAX_RESULTS and run["properties"]["results_omitted"] == len(many) * 3 - MAX_RESULTS
    levels = [r["level"] for r in run["results"]]
    assert levels.count("error") == 2 * len(many)  # every error kept, warnings fill the rest
    assert github_problems({**sarif([ok]), "runs": [run]}) == []


def test_trace_sources_find_the_file_and_the_line_of_each_span(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    json_file, pb_file = CORPUS / "b_chat_wrong.json", CORPUS / "a_chat_correct.pb"
    sources = trace_sources([json_file, pb_file])
    lines = json_file.read_text().splitlines()
    span_places = {key: place for key, place in sources.items() if key[1] and place.uri.endswith(".json")}
    assert span_places
    for (trace_id, span_id), place in span_places.items():
        assert place.uri == json_file.relative_to(REPO).as_posix()
        assert f'"{span_id}"' in lines[place.line - 1]
        assert sources[(trace_id, "")].uri == place.uri
    pb_places = [place for place in sources.values() if place.uri.endswith(".pb")]
    assert pb_places and {p.line for p in pb_places} == {1}
    assert Artifact.of("/") .uri == "file:///"  # outside the current directory: an absolute file URI


def test_replay_writes_both_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # CI runs at the repository root: URIs are relative to it
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
    log = json.loads(sarif_path.read_text())
    run = Sarif.model_validate(log).runs[0]
    assert [r.rule_id for r in run.results or []] == ["contains"]
    assert github_problems(log) == []
    (result,) = log["runs"][0]["results"]
    place = result["locations"][0]["physicalLocation"]
    assert place["artifactLocation"]["uri"] == (CORPUS / "b_chat_wrong.pb").relative_to(REPO).as_posix()
    assert place["region"]["startLine"] == 1


def test_replay_sarif_points_at_the_span_in_an_otlp_json_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    capture = tmp_path / "traces" / "wrong.json"
    capture.write_bytes((CORPUS / "b_chat_wrong.json").read_bytes())
    config = tmp_path / "evald.yaml"
    config.write_text("""
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: contains, scope: llm_call, options: { values: ["Paris"] } }
""")
    code = main(["replay", "traces", "--config", str(config), "--sarif", "out.sarif"])
    assert code == 0, capsys.readouterr().err
    log = json.loads((tmp_path / "out.sarif").read_text())
    assert github_problems(log) == []
    results = log["runs"][0]["results"]
    assert results
    lines = capture.read_text().splitlines()
    for result in results:
        place = result["locations"][0]["physicalLocation"]
        assert place["artifactLocation"]["uri"] == "traces/wrong.json"
        span_id = result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"].rsplit("/", 1)[1]
        assert f'"{span_id}"' in lines[place["region"]["startLine"] - 1]
