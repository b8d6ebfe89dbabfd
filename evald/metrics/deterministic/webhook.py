"""``webhook``: delegate scoring to your own HTTP service (POST the case as JSON, read back a score)."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar, cast

import httpx
import orjson
from pydantic import ConfigDict, Field, HttpUrl, SecretStr, field_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig, Duration
from evald.metrics.base import BaseMetric
from evald.metrics.remote import MetricUnavailable, safe_url, short_detail

_MAX_RESPONSE_BYTES = 1 << 20
_HEADER_NAME_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # RFC 9110 token


class WebhookOptions(ComponentConfig):
    model_config = ConfigDict(hide_input_in_errors=True)  # header values are secrets: keep them out of errors

    url: HttpUrl = Field(description="http(s) URL the case is POSTed to")
    headers: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="extra request headers, e.g. Authorization: 'Bearer ${env:SCORER_TOKEN}'; values are never logged",
    )
    timeout: Duration = Field(10.0, gt=0, description="deadline of one request, from connecting to the last byte")

    @field_validator("headers")
    @classmethod
    def _valid_headers(cls, headers: dict[str, SecretStr]) -> dict[str, SecretStr]:
        for name, value in headers.items():
            if not _HEADER_NAME_RE.match(name):
                raise ValueError(f"invalid HTTP header name {name!r}")
            if any(c in value.get_secret_value() for c in "\r\n\0"):
                raise ValueError(f"the value of header {name!r} contains a line break or NUL")
        return headers


class WebhookMetric(BaseMetric):
    """Score with your own HTTP service: the case is POSTed as JSON and the service answers the score.

    Reads every field: the request body is ``EvalCase.to_dict()`` (input, output, expected, context,
    tool_calls, messages, metadata, trace_id, span_id, scope, ...), sent to ``url`` with ``headers``
    (use ``${env:VAR}`` in the config for tokens; their values are never logged). The service answers
    ``{"score": <number in [0, 1]>, "reason": "...", "metadata": {...}}`` (``reason`` and ``metadata``
    optional; a ``passed`` key is ignored: passing is always ``score >= threshold``), or
    ``{"score": null}`` when the case is not applicable.

    Options: ``url``, ``headers``, ``timeout`` (default 10 s, the whole request). The default threshold,
    0.5, suits a service that answers probabilities; set ``threshold`` to your service's pass mark. A non-2xx status, a
    timeout, a connection error, a body that is not such a JSON object (or over 1 MiB), or a score outside
    [0, 1] is an error outcome whose reason names the status or cause: never a score.

    One ``httpx.AsyncClient`` per metric instance is created on first use and kept (connections are
    reused across cases) and closed by ``aclose()``, which the pipeline calls on shutdown. A client belongs
    to one event loop: called from another loop, the metric makes a new one. Creating a client per call would
    close everything each time but pay a new TCP (and TLS) handshake for every case.
    """

    kind: ClassVar[str] = "webhook"
    family: ClassVar[str] = "deterministic"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "expected", "context", "tool_calls", "metadata")
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = WebhookOptions

    _client: httpx.AsyncClient | None = None
    _client_loop: asyncio.AbstractEventLoop | None = None

    def _client_for_this_loop(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            opts = cast(WebhookOptions, self.options)
            headers = {name: value.get_secret_value() for name, value in opts.headers.items()}
            headers.setdefault("Accept", "application/json")
            self._client = httpx.AsyncClient(timeout=opts.timeout, headers=headers, follow_redirects=False)
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (call it from the loop that used the metric)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(WebhookOptions, self.options)
        url = str(opts.url)
        where = f"webhook {safe_url(url)}"
        body = orjson.dumps(eval_case.to_dict(), default=str)
        client = self._client_for_this_loop()
        try:
            async with asyncio.timeout(opts.timeout):
                status, content = await _post(client, url, body)
        except (TimeoutError, httpx.TimeoutException) as err:
            raise MetricUnavailable(f"{where}: no answer within {opts.timeout:g}s") from err
        except httpx.HTTPError as err:
            raise MetricUnavailable(f"{where}: {type(err).__name__}: {short_detail(err) or 'request failed'}") from err
        if not 200 <= status < 300:
            detail = short_detail(content.decode("utf-8", "replace"))
            raise MetricUnavailable(f"{where} answered HTTP {status}" + (f": {detail}" if detail else ""))
        return self._parse(content, where)

    def _parse(self, content: bytes, where: str) -> Score | None:
        try:
            payload = orjson.loads(content)
        except orjson.JSONDecodeError as err:
            detail = short_detail(content.decode("utf-8", "replace"), 80)
            raise MetricUnavailable(f"{where} answered a body that is not JSON: {detail!r}") from err
        if not isinstance(payload, Mapping) or "score" not in payload:
            raise MetricUnavailable(f"{where} answered JSON without a 'score' key (expected {{\"score\": 0..1}})")
        value = payload["score"]
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and 0.0 <= value <= 1.0
        ):
            raise MetricUnavailable(f"{where} answered score {short_detail(repr(value), 40)}, not a number in [0, 1]")
        reason = payload.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise MetricUnavailable(f"{where} answered a 'reason' that is not a string")
        metadata: Any = payload.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise MetricUnavailable(f"{where} answered a 'metadata' that is not an object")
        return replace(self.score(float(value), reason), metadata=dict(metadata))


async def _post(client: httpx.AsyncClient, url: str, body: bytes) -> tuple[int, bytes]:
    """POST ``body`` as JSON; the status and at most ``_MAX_RESPONSE_BYTES`` of the response body."""
    async with client.stream("POST", url, content=body, headers={"Content-Type": "application/json"}) as response:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > _MAX_RESPONSE_BYTES:
                raise MetricUnavailable(f"webhook {safe_url(url)}: response body over {_MAX_RESPONSE_BYTES} bytes")
            chunks.append(chunk)
        return response.status_code, b"".join(chunks)
