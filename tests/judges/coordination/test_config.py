"""``judges.<name>.coordination``: keys, the password from a file or the environment, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evald.config.loader import parse_config
from evald.judges.coordination.config import CoordinationConfig, RedisConfig


def test_a_judge_with_coordination_reads_the_password_from_the_environment() -> None:
    config = parse_config("""
judges:
  default:
    provider: openai
    model: gpt-4o-mini
    coordination: { redis: { url: "redis://redis:6379/0", password: "${env:REDIS_PASSWORD}" }, expected_replicas: 5 }
metrics: [{ kind: answer_relevancy }]
""", environ={"REDIS_PASSWORD": "s3cret"})
    coordination = config.root.judges["default"].coordination
    assert coordination is not None and coordination.expected_replicas == 5
    assert coordination.redis.resolved_password() == "s3cret" and "s3cret" not in repr(coordination)
    assert coordination.redis.timeout == 1.0 and coordination.redis.key_prefix == "evald"


def test_the_password_file_is_read_without_its_newline(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("from-a-secret\n")
    redis = RedisConfig(url="rediss://redis:6380/0", password_file=str(secret))
    assert redis.resolved_password() == "from-a-secret"


@pytest.mark.parametrize(("settings", "message"), [
    ({"redis": {"url": "http://redis:6379"}}, "String should match pattern"),
    ({"redis": {"url": "redis://r", "password": "a", "password_file": "/p"}}, "not both"),
    ({"redis": {"url": "redis://r"}, "expected_replicas": 0}, "greater than or equal to 1"),
    ({"redis": {"url": "redis://r", "timeout": "30s"}}, "less than or equal to 10"),
])
def test_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CoordinationConfig.model_validate(settings)
