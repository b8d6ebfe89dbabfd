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
    with pytest.raises(ValidationError, match="no price"):
        JudgeConfig.model_validate({**JUDGE, "model": "my-local-llama", "budget": {"max_cost_usd": {"hour": 1}}})
    tokens_only = {**JUDGE, "model": "my-local-llama", "budget": {"max_tokens": {"day": 10_000}}}
    assert JudgeConfig.model_validate(tokens_only).budget.max_tokens.day == 10_000  # tokens need no price
    priced = {**JUDGE, "model": "my-local-llama", "daily_budget_usd": 5, "price": {"input": 0.1, "output": 0.2}}
    assert JudgeConfig.model_validate(priced).resolved_price() is not None


async def test_the_service_seam_installs_gets_and_closes_judges() -> None:
    from prometheus_client import CollectorRegistry

    from evald.judges.limiter import JudgeError
    from evald.judges.registry import close_judges, get_judge, install_judges
    from evald.judges.telemetry import judge_telemetry

    registry = CollectorRegistry()
    config = JudgeConfig.model_validate({
        **JUDGE, "base_url": "http://127.0.0.1:9/v1", "daily_budget_usd": 5,
        "budget": {"max_cost_usd": {"hour": 0.5}, "max_tokens": {"hour": 1000, "day": 20000}},
    })
    judges = install_judges({"fast": config}, registry)
    assert get_judge("fast") is judges["fast"]
    assert judge_telemetry(registry) is judge_telemetry(registry)  # one set of instruments per registry
    remaining = registry.get_sample_value
    assert remaining("evald_judge_budget_remaining_usd", {"judge": "fast", "window": "day"}) == 5.0
    assert remaining("evald_judge_budget_remaining_usd", {"judge": "fast", "window": "hour"}) == 0.5
    assert remaining("evald_judge_budget_remaining_tokens", {"judge": "fast", "window": "hour"}) == 1000
    assert remaining("evald_judge_budget_remaining_tokens", {"judge": "fast", "window": "day"}) == 20000
    assert registry.get_sample_value("evald_judge_circuit_state", {"judge": "fast"}) == 0.0
    await close_judges()
    with pytest.raises(JudgeError, match="not_configured"):
        get_judge("fast")


def test_daily_budget_usd_is_a_deprecated_alias_of_budget_max_cost_usd_day() -> None:
    config = JudgeConfig.model_validate({**JUDGE, "daily_budget_usd": 5, "budget": {"max_cost_usd": {"hour": 1}}})
    assert config.budget.max_cost_usd.day == 5.0 and config.budget.max_cost_usd.hour == 1.0
    assert "Deprecated" in (JudgeConfig.model_fields["daily_budget_usd"].description or "")
    with pytest.raises(ValidationError, match="not both"):
        JudgeConfig.model_validate({**JUDGE, "daily_budget_usd": 5, "budget": {"max_cost_usd": {"day": 6}}})


@pytest.mark.parametrize(
    ("base_url", "allowed"),
    [(None, ["https://api.openai.com/v1"]), ("http://vllm.internal:8000/v1", ["vllm.internal"]),
     ("http://vllm.internal:8000/v1", ["http://vllm.internal:8000", "api.openai.com"])],
)
def test_an_endpoint_in_allowed_base_urls_is_accepted(base_url: str | None, allowed: list[str]) -> None:
    config = JudgeConfig.model_validate({**JUDGE, "base_url": base_url, "allowed_base_urls": allowed})
    assert config.endpoint_allowed()


@pytest.mark.parametrize(
    ("base_url", "allowed"),
    [("https://gateway.example.com/v1", ["api.openai.com"]),  # another host
     (None, ["vllm.internal"]),  # no base_url: the provider's public API, not in the list
     ("http://vllm.internal:9000/v1", ["http://vllm.internal:8000"])],  # the right host on another port
)
def test_an_endpoint_outside_allowed_base_urls_is_a_config_error(base_url: str | None, allowed: list[str]) -> None:
    with pytest.raises(ValidationError, match="not in allowed_base_urls"):
        JudgeConfig.model_validate({**JUDGE, "base_url": base_url, "allowed_base_urls": allowed})


def test_an_endpoint_outside_the_allowlist_fails_the_root_config() -> None:
    judge = {**JUDGE, "base_url": "https://user:pw@elsewhere.example/v1?k=1", "allowed_base_urls": ["api.openai.com"]}
    with pytest.raises(ValidationError, match="not in allowed_base_urls") as caught:
        root([{"kind": "faithfulness"}], {"default": judge})
    assert "pw" not in str(caught.value).split("input_value")[0]  # the endpoint is shown without its user info


def test_the_defaults_give_a_judge_a_deadline_shorter_than_the_metric_timeout() -> None:
    config = root([{"kind": "faithfulness"}])
    judge = config.judges["default"]
    assert judge.call_deadline() == judge.timeout * (judge.max_retries + 1) + sum(
        judge.backoff_cap(k) for k in range(judge.max_retries)
    )
    assert judge.call_deadline() < config.pipeline.metric_timeout


@pytest.mark.parametrize(
    ("judge", "metric_timeout", "deadline"),
    [({"timeout": "30s"}, "30s", "60.5s"),  # the old defaults: 30s x 2 attempts + 0.5s backoff
     ({"timeout": "10s", "max_retries": 2, "retry_initial_interval": "4s"}, "40s", "42s"),  # backoff 4s + 8s
     ({"timeout": "10s", "max_retries": 0}, "10s", "10s")],  # equal is not shorter
)
def test_a_judge_that_can_outlast_its_metric_is_refused_naming_both_keys(
    judge: dict[str, Any], metric_timeout: str, deadline: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        EvaldConfig.model_validate({
            "judges": {"slow": {**JUDGE, **judge}}, "pipeline": {"metric_timeout": metric_timeout},
            "metrics": [{"kind": "faithfulness", "options": {"judge": "slow"}}],
        })
    message = str(caught.value)
    assert f"one call can take up to {deadline}" in message
    assert f"judges.slow.timeout {JudgeConfig.model_validate({**JUDGE, **judge}).timeout:g}s" in message
    assert f"pipeline.metric_timeout {float(metric_timeout[:-1]):g}s" in message


def test_a_longer_metric_timeout_admits_a_slow_judge() -> None:
    config = EvaldConfig.model_validate({"judges": {"default": {**JUDGE, "timeout": "30s", "max_retries": 2}},
                                         "pipeline": {"metric_timeout": "95s"}})
    assert config.judges["default"].call_deadline() == 91.5
