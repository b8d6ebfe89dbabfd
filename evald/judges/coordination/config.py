"""``judges.<name>.coordination``: share the judge's budgets, rate limits, verdict cache and circuit state with
every replica through one Redis.

Keys: ``redis.url`` (``redis://host:6379/0``; ``rediss://`` is TLS), ``redis.key_prefix`` (default ``evald``;
replicas that share a judge's limits use the same prefix and judge name), ``redis.timeout`` (the deadline of every
Redis call, default 250ms), ``redis.tls`` (TLS without a ``rediss://`` URL), ``redis.tls_ca_file``,
``redis.password`` (use ``${env:VAR}``) or ``redis.password_file`` (read at start, e.g. a mounted secret; one of
the two), ``expected_replicas`` (how many replicas share the limits: while Redis is unreachable each replica
admits calls against its share, limit / ``expected_replicas``, in process), ``reconnect_max_interval`` (the
longest wait between two reconnection attempts) and ``cache_wait`` (how long a replica waits for a verdict that
another replica is computing before it asks the judge itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field, SecretStr, model_validator

from evald.config.base import ComponentConfig, Duration


class RedisConfig(ComponentConfig):
    url: str = Field(
        pattern=r"^(redis|rediss|unix)://", description="`redis://host:6379/0` (`rediss://` for TLS)."
    )
    key_prefix: str = Field(
        "evald", min_length=1, description="Prefix of every key; replicas that share limits use the same one."
    )
    timeout: Duration = Field(
        1.0, gt=0, le=10, description="Deadline of every Redis call (connect and waiting for a pooled connection "
        "included); a call that passes it falls back to the in-process share until Redis answers a ping."
    )
    max_connections: int = Field(32, ge=1, le=1024, description="Connections to Redis per judge (a blocking pool).")
    tls: bool = Field(False, description="Use TLS (implied by a `rediss://` URL).")
    tls_ca_file: str | None = Field(None, description="CA bundle that signs the Redis server's certificate.")
    password: SecretStr | None = Field(None, description="Use `${env:VAR}`; never logged. Or `password_file`.")
    password_file: str | None = Field(None, description="File holding the password (a mounted secret).")

    @model_validator(mode="after")
    def _one_password(self) -> Self:
        if self.password is not None and self.password_file is not None:
            raise ValueError("set redis.password or redis.password_file, not both")
        return self

    def resolved_password(self) -> str | None:
        """The password, read from ``password_file`` (stripped of its trailing newline) when that is set."""
        if self.password_file is not None:
            return Path(self.password_file).read_text().rstrip("\r\n")
        return self.password.get_secret_value() if self.password is not None else None


class CoordinationConfig(ComponentConfig):
    redis: RedisConfig = Field(description="The Redis every replica shares.")
    expected_replicas: int = Field(
        1, ge=1, description="Replicas sharing the limits: while Redis is unreachable each one admits calls "
        "against limit / expected_replicas (budgets and rate limits), in process."
    )
    reconnect_max_interval: Duration = Field(
        10.0, gt=0, description="Longest wait between reconnection attempts while Redis is unreachable."
    )
    cache_wait: Duration = Field(
        2.0, ge=0, description="How long a replica waits for a verdict another replica is computing (then it "
        "asks the judge itself)."
    )
