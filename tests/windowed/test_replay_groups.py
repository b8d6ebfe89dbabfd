"""``evald replay`` on files: the groups come from the files given, the windows are run-level results."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evald.config.loader import parse_config
from evald.replay import replay
from tests.windowed.probe import CONFIG_METRICS, EXPECTED, RUNS, write_runs

CONFIG = "receivers: {}\nexporters: {}\nassembly: { settle: 0s, decision_wait: 1s }\n" + CONFIG_METRICS


def test_replay_scores_the_group_and_the_windows(tmp_path: Path) -> None:
    paths = write_runs(tmp_path)
    result = asyncio.run(replay(paths, parse_config(CONFIG, environ={})))
    by_metric: dict[str, list[tuple[str, float, dict[str, object]]]] = {}
    reasons: dict[str, str] = {}
    for record in result.scored:
        for score in record.scores:
            by_metric.setdefault(score.name, []).append((record.trace_id, score.value, dict(score.metadata)))
            reasons[score.name] = score.reason or ""
    assert reasons["outcome_consistency"].startswith("group of 4 runs: ")
    assert reasons["calibration"].startswith("run-level, window probe/gpt-4o-mini of 4 cases: ")
    assert [v for _, v, _ in by_metric["contains"]].count(1.0) == 3
    assert len(by_metric["canary_quality"]) == len(RUNS)  # the composite, once per case
    for kind in ("outcome_consistency", "prompt_robustness"):
        ((trace_id, value, metadata),) = by_metric[kind]
        assert value == pytest.approx(EXPECTED[kind])
        assert metadata["runs"] == len(RUNS)
        assert trace_id == metadata["trace_ids"][-1]  # attached to the latest run's trace
    for kind in ("calibration", "discrimination", "brier_score"):
        ((_, value, metadata),) = by_metric[kind]
        assert value == pytest.approx(EXPECTED[kind])
        assert metadata["run_level"] is True and metadata["window_cases"] == len(RUNS)
        assert metadata["service_name"] == "probe"


def test_too_few_cases_give_no_window_value_and_an_incomplete_group_no_score(tmp_path: Path) -> None:
    paths = write_runs(tmp_path, RUNS[:3])
    result = asyncio.run(replay(paths, parse_config(CONFIG, environ={})))
    names = {score.name for record in result.scored for score in record.scores}
    assert "contains" in names
    assert names.isdisjoint({"outcome_consistency", "prompt_robustness", "calibration", "discrimination",
                             "brier_score"})
