"""The command line, run in-process through ``evald.cli.main`` (exit codes, output formats, the replay gate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evald.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus"
SPAN_ONLY = CORPUS / "otel-openai-v2.span_only"
ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from evald.native import COMPILED_MODULES, compiled

    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("evald ")
    assert f"({len(compiled())}/{len(COMPILED_MODULES)} hot modules compiled with mypyc)" in out


def test_dash_dash_version_prints_what_version_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    expected = capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == expected


def test_validate_says_when_the_default_metric_set_is_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, "no_metrics.yaml", "receivers: {}\n")
    assert main(["validate", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "3 metrics [the default set, as there is no `metrics` key: error_free, latency, token_usage]" in out


@pytest.mark.parametrize("command", ["validate", "run", "replay"])
def test_an_empty_metric_list_is_refused_in_a_role_that_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    config = write(tmp_path, "empty_metrics.yaml", "receivers: {}\nexporters: {}\nmetrics: []\n")
    args = [command, "--config", str(config)] + ([str(SPAN_ONLY / "a_chat_correct.pb")] if command == "replay" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "metrics: `metrics: []` evaluates nothing in role `all`" in err
    if command == "validate":
        assert main([command, "--config", str(config), "--role", "score"]) == 2
        assert "evaluates nothing in role `score`" in capsys.readouterr().err
        assert main([command, "--config", str(config), "--role", "ingest"]) == 2  # no ingest block; metrics are fine
        assert "evaluates nothing" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["validate", "run", "replay"])
def test_an_empty_config_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    config = write(tmp_path, "empty.yaml", "# nothing yet\n")
    args = [command, "--config", str(config)] + ([str(SPAN_ONLY / "a_chat_correct.pb")] if command == "replay" else [])
    assert main(args) == 2
    assert f"{config} is empty" in capsys.readouterr().err


@pytest.mark.integration
def test_run_logs_the_default_metric_set_at_start(tmp_path: Path) -> None:
    from tests.integration.daemon import free_port, start_evald, stop_evald

    admin = free_port()
    config = write(tmp_path, "evald.yaml", f"""
receivers:
  otlp: {{ grpc: {{ endpoint: "127.0.0.1:0" }}, http: {{ endpoint: "127.0.0.1:0" }} }}
exporters:
  prometheus: {{ endpoint: "127.0.0.1:{admin}" }}
""")
    log = tmp_path / "evald.log"
    proc = start_evald(config, log, f"http://127.0.0.1:{admin}/readyz")
    assert stop_evald(proc) == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    told = [line for line in lines if "no metrics configured" in line]
    assert len(told) == 1 and " INFO " in told[0], lines
    assert told[0].endswith("no metrics configured: using the default metric set: error_free, latency, token_usage")


def test_validate_reports_every_problem_with_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.yaml", """
receivers:
  otlp:
    grpc: { endpoint: "nope" }
assembly: { settle: banana }
metrics:
  - { kind: exact_macth }
  - { kind: latency, threshold: 3 }
pipeline: { workers: 0, surprise: 1 }
""")
    assert main(["validate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    for path in ("receivers.otlp.grpc.endpoint", "assembly.settle", "metrics[0].kind", "metrics[1].threshold",
                 "pipeline.workers", "pipeline.surprise"):
        assert path in err, (path, err)
    assert "exact_match" in err  # the close match is suggested


def test_validate_accepts_every_shipped_example(capsys: pytest.CaptureFixture[str]) -> None:
    configs = sorted((ROOT / "config").glob("*.yaml"))
    assert configs
    for path in configs:
        assert main(["validate", "--config", str(path)]) == 0, capsys.readouterr().err
        assert "configuration is valid" in capsys.readouterr().out


def test_run_refuses_an_invalid_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.yaml", "metrics: [{kind: nope}]\n")
    assert main(["run", "--config", str(bad)]) == 2
    assert "metrics[0].kind" in capsys.readouterr().err


def test_list_metrics_json_lists_every_registered_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list-metrics", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    kinds = {r["kind"]: r for r in rows}
    assert {"exact_match", "contains", "regex", "json_valid", "latency", "token_usage", "error_free"} <= set(kinds)
    for row in rows:
        assert row["dimension"] in {"correctness", "groundedness", "safety", "trajectory", "performance"}
        assert 0.0 <= row["default_threshold"] <= 1.0 and row["family"]
    assert kinds["latency"]["dimension"] == "performance"


def test_list_metrics_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list-metrics"]) == 0
    out = capsys.readouterr().out
    assert "exact_match" in out and "correctness" in out and "performance" in out


REPLAY_CONFIG = """
receivers: {}
exporters: {}
assembly: { settle: 0s, decision_wait: 1s }
metrics:
  - { kind: error_free, scope: trace }
  - { kind: contains, scope: trace, options: { values: ["Paris"] } }
"""


def test_replay_writes_json_lines_and_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path, "replay.yaml", REPLAY_CONFIG)
    out = tmp_path / "scores.jsonl"
    files = [SPAN_ONLY / "a_chat_correct.pb", SPAN_ONLY / "b_chat_wrong.json"]
    assert main(["replay", *map(str, files), "--config", str(config), "--output", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    trace_lines = [line for line in lines if line["scope"] == "trace"]
    assert len(trace_lines) == 2
    for line in lines:
        assert set(line) >= {"trace_id", "span_id", "scope", "service_name", "case", "scores"}
        assert len(line["trace_id"]) == 32
        for score in line["scores"]:
            assert set(score) >= {"name", "value", "threshold", "passed", "dimension", "reason"}
            assert 0.0 <= score["value"] <= 1.0
    passed = sorted(s["passed"] for line in trace_lines for s in line["scores"] if s["name"] == "contains")
    assert passed == [False, True]
    summary = capsys.readouterr().out
    assert "contains" in summary and "error_free" in summary


def test_replay_gate_fails_under_the_pass_rate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path, "replay.yaml", REPLAY_CONFIG)
    files = [str(SPAN_ONLY / "a_chat_correct.pb"), str(SPAN_ONLY / "b_chat_wrong.pb")]
    assert main(["replay", *files, "--config", str(config), "--fail-under", "0.9"]) == 1
    assert "gate failed" in capsys.readouterr().err
    assert main(["replay", *files, "--config", str(config), "--fail-under", "0.4"]) == 0


def test_replay_output_to_stdout_keeps_the_summary_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, "replay.yaml", REPLAY_CONFIG)
    assert main(["replay", str(SPAN_ONLY / "a_chat_correct.pb"), "--config", str(config), "--output", "-"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert lines and all("scores" in line for line in lines)
    assert "contains" in captured.err


def test_replay_fails_on_unusable_inputs_after_processing_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path, "replay.yaml", REPLAY_CONFIG)
    junk = tmp_path / "junk.pb"
    junk.write_bytes(b"\xff\x00 definitely not protobuf \x13\x37" * 10)
    notes = write(tmp_path, "notes.txt", "hello")
    bad_json = write(tmp_path, "bad.json", "{\"resourceSpans\": [")
    folder = tmp_path / "captured"
    folder.mkdir()
    (folder / "README.md").write_text("what these are", encoding="utf-8")
    (folder / "dangling.pb").symlink_to(tmp_path / "gone.pb")
    (folder / "b_chat_wrong.pb").write_bytes((SPAN_ONLY / "b_chat_wrong.pb").read_bytes())
    out = tmp_path / "scores.jsonl"
    args = ["replay", str(SPAN_ONLY / "a_chat_correct.pb"), str(junk), str(notes), str(bad_json),
            str(tmp_path / "missing.pb"), str(folder), "--config", str(config), "--format", "json",
            "--output", str(out)]
    assert main(args) == 2
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    failed = {item["path"]: item["reason"] for item in summary["failed_inputs"]}
    assert set(failed) == {str(junk), str(notes), str(bad_json), str(tmp_path / "missing.pb"),
                           str(folder / "dangling.pb")}
    assert failed[str(tmp_path / "missing.pb")] == "no such file or directory"
    assert failed[str(folder / "dangling.pb")] == f"dangling symlink (to {tmp_path / 'gone.pb'})"
    assert "not a binary ExportTraceServiceRequest" in failed[str(junk)]
    assert "not an OTLP file" in failed[str(notes)] and "not an OTLP/JSON" in failed[str(bad_json)]
    assert "evald replay: 5 inputs could not be used:" in captured.err
    for path, reason in failed.items():
        assert f"  {path}: {reason}" in captured.err
    assert f"skipped {folder / 'README.md'}: not an OTLP file" in captured.err  # found in a directory: a note
    # the usable files were still scored and written
    traces = {json.loads(line)["trace_id"] for line in out.read_text(encoding="utf-8").splitlines()}
    assert len(traces) == 2 and summary["cases"] >= 2 and summary["no_cases_reason"] is None


def test_replay_input_failures_win_over_a_passing_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write(tmp_path, "replay.yaml", REPLAY_CONFIG)
    args = ["replay", str(SPAN_ONLY / "a_chat_correct.pb"), str(tmp_path / "missing.pb"), "--config", str(config),
            "--fail-under", "0.1"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "gate failed" not in captured.err and "missing.pb: no such file or directory" in captured.err
    assert "cases evaluated: 1" in captured.out  # the trace case of the file that was there


def non_genai_trace(path: Path) -> Path:
    from tests.receivers.support import trace_request

    path.write_bytes(trace_request(3, attributes={"http.method": "GET"}).SerializeToString())
    return path


@pytest.mark.parametrize(("case", "expected"), [
    ("nothing_read", "no cases evaluated: no OTLP file was read (1 failed)"),
    ("no_genai", "no cases evaluated: none of the 1 trace has a GenAI span that a mapper recognises"),
    # the trace case only: the configured metrics score trace cases, so no llm_call case is built
    ("sampled_out", "no cases evaluated: the 1 case was sampled out (sampling.ratio)"),
    ("no_metric_applies", "no cases evaluated: no configured metric applies to the 1 case (check each metric's "
                          "`scope` and `filter`)"),
])
def test_a_replay_that_evaluates_nothing_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, expected: str
) -> None:
    config_text, inputs = REPLAY_CONFIG, [SPAN_ONLY / "a_chat_correct.pb"]
    if case == "nothing_read":
        inputs = [tmp_path / "missing.pb"]
    elif case == "no_genai":
        inputs = [non_genai_trace(tmp_path / "http.pb")]
    elif case == "sampled_out":
        config_text += "sampling: { ratio: 0.0 }\n"
    else:  # the metrics are for another service
        config_text = config_text.replace("scope: trace", "scope: trace, filter: { service_name: [nope] }")
    config = write(tmp_path, "replay.yaml", config_text)
    status = main(["replay", *map(str, inputs), "--config", str(config)])
    captured = capsys.readouterr()
    assert status == (2 if case == "nothing_read" else 0), captured.err
    assert "cases evaluated: 0" in captured.out
    assert expected in captured.out, captured.out


def test_replay_a_directory_pairs_logs_companions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = write(tmp_path, "replay.yaml", REPLAY_CONFIG)
    out = tmp_path / "out.jsonl"
    event_only = CORPUS / "otel-openai-v2.event_only"
    assert main(["replay", str(event_only), "--config", str(config), "--output", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    traces = [line for line in lines if line["scope"] == "trace" and line["case"]]  # not: not-evaluable rows
    # content lives on the log records: without pairing, outputs would be missing
    assert traces and sum(1 for t in traces if t["case"]["output"]) >= 5
