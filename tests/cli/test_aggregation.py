"""Replay summary policies: missing scores skipped or counted as 0, and Harbor-style aggregation scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evald.aggregate_script import AggregationError, rewards_lines, run_aggregation
from evald.case import EvalCase, Score
from evald.cli import main
from evald.model import ScoredCase
from evald.summary import summarize

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"

HARBOR_METRIC_PY = '''
import argparse, json
from pathlib import Path

def main(input_path, output_path):
    rewards = []
    for line in input_path.read_text().splitlines():
        reward = json.loads(line)
        value = reward.get("contains")
        rewards.append(0 if value is None else value)
    output_path.write_text(json.dumps({"mean": sum(rewards) / len(rewards) if rewards else 0, "n": len(rewards)}))

parser = argparse.ArgumentParser()
parser.add_argument("-i", "--input-path", type=Path, required=True)
parser.add_argument("-o", "--output-path", type=Path, required=True)
args = parser.parse_args()
main(args.input_path, args.output_path)
'''


def cases() -> list[ScoredCase]:
    def sc(value: float | None) -> ScoredCase:
        scores = () if value is None else (Score("contains", value, 1.0),)
        skipped = (("contains", "not_applicable"),) if value is None else ()
        return ScoredCase(EvalCase(trace_id="a" * 32, scope="trace"), scores, skipped, (),
                          {"contains": "correctness"})
    return [sc(1.0), sc(0.0), sc(None), sc(1.0)]


def test_missing_scores_skip_or_count_as_zero() -> None:
    skip = summarize(cases()).metrics["contains"]
    assert (skip.count, skip.pass_rate, skip.mean) == (3, 2 / 3, 2 / 3)
    zero = summarize(cases(), missing="zero").metrics["contains"]
    assert (zero.count, zero.pass_rate, zero.mean, zero.skipped) == (4, 0.5, 0.5, 1)
    errored = ScoredCase(EvalCase(trace_id="b" * 32, scope="trace"), (), (), (("contains", "TimeoutError"),),
                         {"contains": "correctness"})
    skip = summarize([*cases(), errored]).metrics["contains"]
    assert (skip.count, skip.errors, skip.mean) == (3, 1, 2 / 3)
    zero = summarize([*cases(), errored], missing="zero").metrics["contains"]
    assert (zero.count, zero.errors, zero.failed, zero.mean) == (5, 1, 3, 0.4)  # an error counts as a failed 0 too


def test_rewards_lines_mark_missing_metrics_as_null() -> None:
    assert rewards_lines(cases()) == [{"contains": 1.0}, {"contains": 0.0}, {"contains": None}, {"contains": 1.0}]


def test_a_harbor_metric_script_aggregates(tmp_path: Path) -> None:
    script = tmp_path / "metric.py"
    script.write_text(HARBOR_METRIC_PY)
    assert run_aggregation(script, cases()) == {"mean": 0.5, "n": 4}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("import sys; sys.exit(3)", "exited with 3"),
        ("import sys; open(sys.argv[-1], 'w').write('[1, 2]')", "must write a JSON object"),
        ("pass", "wrote no JSON"),
        ("import time; time.sleep(30)", "ran past"),
    ],
)
def test_failing_scripts_are_reported(tmp_path: Path, body: str, message: str) -> None:
    script = tmp_path / "metric.py"
    script.write_text(body)
    with pytest.raises(AggregationError, match=message):
        run_aggregation(script, cases(), timeout=2)


def test_replay_includes_the_custom_aggregation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "metric.py"
    script.write_text(HARBOR_METRIC_PY)
    config = tmp_path / "c.yaml"
    config.write_text("receivers: {}\nexporters: {}\nassembly: { settle: 0s, decision_wait: 1s }\n"
                      'metrics: [{ kind: contains, scope: trace, options: { values: ["Paris"] } }]\n')
    files = [str(CORPUS / f"{n}.pb") for n in ("a_chat_correct", "b_chat_wrong", "g_embeddings")]
    assert main(["replay", *files, "--config", str(config), "--aggregate", str(script), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["custom"] == {"mean": 0.5, "n": 2} and summary["missing"] == "skip"
    assert main(["replay", *files, "--config", str(config), "--aggregate", str(tmp_path / "nope.py")]) == 1
    assert "does not exist" in capsys.readouterr().err
