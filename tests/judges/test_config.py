"""The ``judges:`` root key: judge configs, secrets, and the check that metrics name a defined judge."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from evald.config.model import EvaldConfig
from evald.judges.config import JudgeConfig

JUDGE = {"provider": "openai", "model": "gpt-4o-mini", "api_key": "sk-secret-value-123"}


def root(metrics: list[dict[str, Any]], judges: dict[str, Any] | None = None) -> EvaldConfig:
    return EvaldConfig.model_validate({"judges": judges if judges is not None else {"default": JUDGE},
                                       "metrics": metrics})


def test_a_metric_naming_a_defined_judge_is_accepted() -> None:
    config = root([{"kind": "faithfulness"}, {"kind": "geval", "options": {"criteria": "c", "judge": "default"}}])
    assert config.judges["default"].model == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("metrics", "judges"),
    [([{"kind": "answer_relevancy", "options": {"judge": "gpt"}}], None), ([{"kind": "faithfulness"}], {})],
)
def test_a_metric_naming_an_undefined_judge_is_a_config_error(
    metrics: list[dict[str, Any]], judges: dict[str, Any] | None
) -> None:
    with pytest.raises(ValidationError, match="not defined under `judges:`"):
        root(metrics, judges)


def test_the_api_key_is_never_shown() -> None:
    config = JudgeConfig.model_validate(JUDGE)
    assert "sk-secret-value-123" not in repr(config) and "sk-secret-value-123" not in str(config.model_dump())
    assert config.api_key is not None and config.api_key.get_secret_value() == "sk-secret-value-123"


def test_durations_and_limits_parse() -> None:
    config = JudgeConfig.model_validate(
        {**JUDGE, "timeout": "1500ms", "circuit_breaker": {"failures": 3, "reset_after": "2m"},
         "requests_per_minute": 60, "daily_budget_usd": 5}
    )
    assert config.timeout == 1.5 and config.circuit_breaker.reset_after == 120.0


def test_a_budget_needs_a_price() -> None:
    with pytest.raises(ValidationError, match="no price"):
        JudgeConfig.model_validate({**JUDGE, "model": "my-local-llama", "daily_budget_usd": 5})
    priced = {**JUDGE, "model": "my-local-llama", "daily_budget_usd": 5, "price": {"input": 0.1, "output": 0.2}}
    assert JudgeConfig.model_validate(priced).resolved_price() is not None


async def test_the_service_seam_installs_gets_and_closes_judges() -> None:
    from prometheus_client import CollectorRegistry

    from evald.judges.limiter import JudgeError
    from evald.judges.registry import close_judges, get_judge, install_judges
    from evald.judges.telemetry import judge_telemetry

    registry = CollectorRegistry()
    config = JudgeConfig.model_validate({**JUDGE, "base_url": "http://127.0.0.1:9/v1", "daily_budget_usd": 5})
    judges = install_judges({"fast": config}, registry)
    assert get_judge("fast") is judges["fast"]
    assert judge_telemetry(registry) is judge_telemetry(registry)  # one set of instruments per registry
    assert registry.get_sample_value("evald_judge_budget_remaining_usd", {"judge": "fast"}) == 5.0
    assert registry.get_sample_value("evald_judge_circuit_state", {"judge": "fast"}) == 0.0
    await close_judges()
    with pytest.raises(JudgeError, match="not_configured"):
        get_judge("fast")
