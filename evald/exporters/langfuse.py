"""Langfuse exporter: every score becomes a Langfuse score on the trace/observation (or session) it judged.

Config keys (``exporters.langfuse[/name]``):
  host                   Langfuse base URL (default ``https://cloud.langfuse.com``)
  public_key, secret_key HTTP Basic credentials; give them as ``${env:LANGFUSE_PUBLIC_KEY}`` /
                         ``${env:LANGFUSE_SECRET_KEY}``; they are never logged
  environment            Langfuse environment of the scores (lowercase ``[a-z0-9_-]``, not starting with
                         ``langfuse``); default: none sent (Langfuse shows ``default``)
  timeout                deadline of one HTTP attempt (default 5s)
  rate_limit_per_minute  client-side limit on requests (default 30, Langfuse Cloud's smallest plan; 0 = none)
  batch_size             scores per request (default 100), sent as a JSON array; ``1`` sends one JSON object per
                         request from the start (the form a Langfuse server without batched scores takes; with a
                         larger batch_size evald finds that out by itself, see "Object mode")
  sending_queue, retry_on_failure   the shared helper's blocks (evald/exporters/sending_policy.py): a full
                         queue makes the pipeline wait by default (``block_on_overflow``); ``storage`` keeps the
                         queue on disk across restarts

Delivery: ``export`` queues the scores and holds the pipeline's acknowledgement until each one is sent or dropped
and counted (with ``storage``: until it is fsync'ed), so a Kafka source commits only delivered scores.

Wire: ``POST {host}/api/public/scores`` with a JSON array of score bodies (evald/exporters/langfuse_scores.py),
at most 1,000,000 bytes per request (the endpoint's body limit per the Langfuse SDK). Langfuse Python SDK 5 sends
the same array; the server answers 202 (all accepted) or 207 with ``{accepted, rejected, errors}``.

Object mode: the Langfuse server code of August 2026 takes one JSON object on that route and answers an array with
400 ``{"message": "Invalid request data", "error": [{"code": "invalid_type", "expected": "object", "path": [],
...}]}`` (its zod body schema). Such an answer to an array (any 4xx whose body says a root-level object was
expected) switches the exporter to one object per request for the rest of its life (one exporter = one host): the
refused batch's scores are sent again one per request, concurrently, as are all later scores, at most
``sending_queue.num_consumers`` requests at once and each after its own rate-limit token (the shared helper's
:class:`SendSingly`). Nothing is dropped or counted as a retry for the refused request; the switch is counted in
``evald_exporter_langfuse_mode_switches_total{exporter,mode="object"}`` and logged once as a WARNING.

Failure semantics: 2xx = sent; 207 = the rejected count is dropped as ``permanent_error`` and not retried (the
response does not say which scores failed; the SDK does not retry either); 429 and 5xx honour ``Retry-After``
(seconds or HTTP date) and are retried, as are 408, network errors and timeouts; other 4xx (bad body, bad keys)
are ``permanent_error`` in either mode (only the array/object mismatch above switches modes). Scores are upserted
on their deterministic ids, so a retry never duplicates a score.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import NoReturn

import httpx
from prometheus_client import CollectorRegistry, Counter
from pydantic import Field, SecretStr, field_validator

from evald import __version__
from evald.config.base import ComponentConfig, Duration
from evald.exporters.acks import current_ack
from evald.exporters.langfuse_scores import encode_scores
from evald.exporters.routing import MetricInfo
from evald.exporters.sending import SendingQueue
from evald.exporters.sending_policy import (
    PartiallyRejected,
    PermanentError,
    RetryableError,
    RetryOnFailureConfig,
    SendingQueueConfig,
    SendSingly,
    TokenBucket,
    parse_retry_after,
)
from evald.model import ScoredCase
from evald.telemetry import RateLimitedLog, Telemetry, shared_instruments

logger = logging.getLogger(__name__)

SCORES_PATH = "/api/public/scores"
#: POST /api/public/scores body limit (Langfuse Python SDK 5: "the default Next.js body limit of 1 MiB").
MAX_BODY_BYTES = 1_000_000
_ENVIRONMENT_RE = re.compile(r"^[a-z0-9_-]+$")
#: A validation message saying the body should have been an object (zod 3: "Expected object, received array").
_OBJECT_EXPECTED = re.compile(
    r"expected (an? )?object,? (but )?(received|got) (an? )?array|(body|request) must be (an? )?object", re.IGNORECASE)


class LangfuseExporterConfig(ComponentConfig):
    host: str = Field("https://cloud.langfuse.com", description="Langfuse base URL (scheme, host, optional port).")
    public_key: SecretStr = Field(description="Langfuse public key (`pk-lf-...`); use `${env:LANGFUSE_PUBLIC_KEY}`.")
    secret_key: SecretStr = Field(description="Langfuse secret key (`sk-lf-...`); use `${env:LANGFUSE_SECRET_KEY}`.")
    environment: str | None = Field(None, description="Langfuse environment of the scores; none = `default`.")
    timeout: Duration = Field(5.0, gt=0, description="Deadline of one HTTP attempt.")
    rate_limit_per_minute: float = Field(
        30.0, ge=0.0, description="Requests per minute at most (Cloud hobby: 30, paid plans: 1000); 0 = no limit."
    )
    batch_size: int = Field(
        100, ge=1, le=10_000, description="Scores per request, as a JSON array; 1 = one JSON object per request "
        "from the start (a server that refuses arrays as not an object makes the exporter switch to that itself)."
    )
    sending_queue: SendingQueueConfig = Field(SendingQueueConfig(), description="Bounded queue of scores to send.")
    retry_on_failure: RetryOnFailureConfig = Field(RetryOnFailureConfig(), description="Retry with backoff.")

    @field_validator("host")
    @classmethod
    def _check_host(cls, value: str) -> str:
        url = httpx.URL(value)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"host {value!r} must be an http(s) URL such as https://cloud.langfuse.com")
        return value.rstrip("/")

    @field_validator("environment")
    @classmethod
    def _check_environment(cls, value: str | None) -> str | None:
        if value is not None and (not _ENVIRONMENT_RE.match(value) or value.startswith("langfuse")):
            raise ValueError("environment must be lowercase letters, digits, `-` or `_`, not starting with `langfuse`")
        return value


class LangfuseExporter:
    """Queues score bodies and sends them in batches through the shared helper (module docstring)."""

    def __init__(self, config: LangfuseExporterConfig, telemetry: Telemetry, *, component_id: str = "langfuse",
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.id = component_id
        self.config = config
        self._infos: Mapping[str, MetricInfo] = {}
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._log = RateLimitedLog(logger)
        limiter = TokenBucket(config.rate_limit_per_minute) if config.rate_limit_per_minute > 0 else None
        self._limiter = limiter
        self._objects = config.batch_size == 1  # one JSON object per request (object mode)
        self._switches = shared_instruments(telemetry.registry, _mode_switches).labels(component_id, "object")
        self._queue: SendingQueue[bytes] = SendingQueue(
            component_id, self._send, telemetry, queue=config.sending_queue, retry=config.retry_on_failure,
            timeout=config.timeout, batch_size=config.batch_size, max_batch_bytes=MAX_BODY_BYTES,
            size_of=len, rate_limiter=limiter, codec=(bytes, bytes),
        )

    @property
    def queue(self) -> SendingQueue[bytes]:
        return self._queue

    def set_metric_info(self, infos: Mapping[str, MetricInfo]) -> None:
        """Metric versions and pass/fail-only declarations (ids and ``dataType`` use them)."""
        self._infos = dict(infos)

    async def start(self) -> None:
        if self._client is None:
            cfg = self.config
            self._client = httpx.AsyncClient(
                base_url=cfg.host,
                auth=httpx.BasicAuth(cfg.public_key.get_secret_value(), cfg.secret_key.get_secret_value()),
                headers={"User-Agent": f"evald/{__version__}", "Content-Type": "application/json"},
                timeout=httpx.Timeout(cfg.timeout),
                limits=httpx.Limits(max_connections=cfg.sending_queue.num_consumers),
                transport=self._transport,
            )
        await self._queue.start()

    @property
    def waits_for_room(self) -> bool:
        """``export`` waits while the sending queue is full (``block_on_overflow``): the pipeline must not time out."""
        return self._queue.blocks

    async def export(self, batch: Sequence[ScoredCase]) -> None:
        """Queue every score of ``batch``, holding the pipeline's acknowledgement until each is sent or dropped and
        counted (a persistent queue: until it is on disk). Never waits on the network; a full queue waits for room
        (``block_on_overflow``) or drops and counts."""
        now = datetime.now(UTC)
        await self._queue.put(encode_scores(batch, self._infos, environment=self.config.environment,
                                            timestamp=now), current_ack())

    async def shutdown(self, timeout: float) -> None:
        """Send what is queued within ``timeout`` (the rest is counted as dropped), then close the client."""
        try:
            await self._queue.shutdown(timeout)
        finally:
            if self._client is not None:
                await self._client.aclose()
                self._client = None

    @property
    def object_mode(self) -> bool:
        """True when the exporter sends one JSON object per request (``batch_size: 1``, or switched to it)."""
        return self._objects

    async def _send(self, batch: list[bytes]) -> None:
        if self._client is None:
            raise RetryableError("exporter not started")
        if self._objects and len(batch) > 1:  # taken before the switch: the helper sends it one by one
            if self._limiter is not None:
                self._limiter.refund()  # no request was made with this batch's token
            raise SendSingly("Langfuse takes one score per request")
        single = self._objects
        body = batch[0] if single else b"[" + b",".join(batch) + b"]"
        try:
            response = await self._client.post(SCORES_PATH, content=body)
        except httpx.TimeoutException as err:
            raise RetryableError(f"request timed out ({type(err).__name__})", reason="timeout") from err
        except httpx.TransportError as err:
            raise RetryableError(f"{type(err).__name__}: {err}", reason="network") from err
        self._check(response, len(batch), single)

    def _switch_to_objects(self, response: httpx.Response) -> NoReturn:
        if not self._objects:
            self._objects = True
            self._switches.inc()
            logger.warning("exporter %s: %s takes one score per request (HTTP %d to an array: %s); sending one "
                           "JSON object per request from now on", self.id, self.config.host, response.status_code,
                           _message(response))
        raise SendSingly("Langfuse takes one score per request")

    def _check(self, response: httpx.Response, sent: int, single: bool) -> None:
        status = response.status_code
        if not single and 400 <= status < 500 and status not in (401, 403, 408, 429) and expects_object(response):
            self._switch_to_objects(response)
        if status == 207:
            rejected, errors = _partial_result(response, sent)
            raise PartiallyRejected(f"Langfuse rejected {rejected} of {sent} scores: {errors}", rejected)
        if 200 <= status < 300:
            return
        hint = parse_retry_after(response.headers.get("Retry-After"))
        if status == 429:
            raise RetryableError("HTTP 429 (rate limited)", retry_after=hint, reason="throttled")
        if status >= 500 or status == 408:
            raise RetryableError(f"HTTP {status}", retry_after=hint, reason="server_error")
        message = _message(response)
        if status in (401, 403):
            self._log.log(logging.ERROR, f"auth:{self.id}", "exporter %s: Langfuse refused the keys (HTTP %d): %s",
                          self.id, status, message)
        raise PermanentError(f"HTTP {status}: {message}")


def _mode_switches(registry: CollectorRegistry) -> Counter:
    return Counter("evald_exporter_langfuse_mode_switches", "Langfuse exporters that switched to one score per "
                   "request (mode=object): the server refused a JSON array as not an object.",
                   ["exporter", "mode"], registry=registry)


def expects_object(response: httpx.Response) -> bool:
    """Whether a 4xx answer to an array says the server wanted one object: a root-level zod issue expecting an
    object (``path: []``), as Langfuse's body validation answers, or a message saying so."""
    try:
        data = response.json()
    except ValueError:
        return _OBJECT_EXPECTED.search(response.text[:2000]) is not None
    issues = data.get("error") if isinstance(data, dict) else None
    for issue in issues if isinstance(issues, list) else []:
        if isinstance(issue, dict) and issue.get("path") == [] and issue.get("expected") == "object":
            return True
    message = data.get("message") if isinstance(data, dict) else None
    return isinstance(message, str) and _OBJECT_EXPECTED.search(message) is not None


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])[:200]
    return str(data)[:200]


def _partial_result(response: httpx.Response, sent: int) -> tuple[int, str]:
    """``(rejected, joined error messages)`` of a 207; an unreadable body counts every score as rejected."""
    try:
        data = response.json()
    except ValueError:
        return sent, response.text[:200]
    if not isinstance(data, dict) or not isinstance(data.get("rejected"), int):
        return sent, str(data)[:200]
    errors = data.get("errors") if isinstance(data.get("errors"), list) else []
    text = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors or [])
    return min(max(int(data["rejected"]), 0), sent), text[:300]
