"""Token authentication for the OTLP receivers: the ``auth`` block of ``receivers.otlp.grpc|http``.

Config keys (``auth: null``, the default, accepts every request)::

    auth:
      bearer_tokens: ["${env:EVALD_TOKEN}"]   # accepted as `authorization: Bearer <token>`
      token_files: [/etc/evald/auth/token]   # one token per file (Kubernetes Secret mounts), re-read on change
      api_key_header: null                   # e.g. x-api-key: also accept `<header>: <token>`

A request is accepted when its ``authorization: Bearer <token>`` (scheme case-insensitive) or, with
``api_key_header``, its ``<api_key_header>: <token>`` equals one of the tokens. Tokens are compared in constant
time (``hmac.compare_digest`` against every accepted token, no early exit). Refusals have a ``reason``:
``missing`` (no credential at all) or ``invalid`` (a credential that matches no token, or another scheme).

Token files are read at start (surrounding whitespace, such as the newline of ``echo token > file``, is
stripped) and re-read at most once per ``reload_interval`` seconds (1 s) on the request path (a few bytes from a
Secret volume; no change detection by mtime, whose granularity can hide a quick rewrite), so a rotated token is
accepted, and the old one refused, about a second after the file changes; Kubernetes updates a Secret volume by
swapping its ``..data`` symlink, which a re-read follows. A file that became unreadable or empty keeps its last
token (logged at warning, rate-limited).

Failure semantics: config errors at load for no token source, an empty token or one with spaces or characters
other than visible ASCII, a token file that is missing, unreadable or empty, and an ``api_key_header`` that is
not a lowercase header name (or is ``authorization``). No token ever appears in a log line, an error message
or a metric label.
"""

from __future__ import annotations

import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

import grpc
from pydantic import ConfigDict, Field, SecretStr, field_validator, model_validator

from evald.config.base import ComponentConfig
from evald.telemetry import RateLimitedLog, Telemetry

logger = logging.getLogger(__name__)

Reason = Literal["missing", "invalid"]
REASONS: tuple[Reason, ...] = ("missing", "invalid")
#: What a refused client is told (and what is logged): never the token it sent.
MESSAGES: dict[Reason, str] = {
    "missing": "missing credentials: send `authorization: Bearer <token>`",
    "invalid": "invalid credentials: the token was not accepted",
}
_HEADER_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_TOKEN_RE = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII: what fits in an HTTP header and gRPC metadata


class ReceiverAuthConfig(ComponentConfig):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)  # never print a token

    bearer_tokens: list[SecretStr] = Field(
        default_factory=list, description="Accepted tokens (`authorization: Bearer <token>`); use `${env:VAR}`."
    )
    token_files: list[str] = Field(
        default_factory=list,
        description="Files holding one token each (Secret mounts); read at start, re-read when they change.",
    )
    api_key_header: str | None = Field(
        None, description="Also accept the token in this header, e.g. `x-api-key` (lowercase)."
    )

    @field_validator("bearer_tokens")
    @classmethod
    def _tokens(cls, tokens: list[SecretStr]) -> list[SecretStr]:
        for i, token in enumerate(tokens):
            check_token(token.get_secret_value(), f"bearer_tokens[{i}]")
        return tokens

    @field_validator("token_files")
    @classmethod
    def _files(cls, paths: list[str]) -> list[str]:
        for path in paths:
            read_token_file(path)
        return paths

    @field_validator("api_key_header")
    @classmethod
    def _header(cls, name: str | None) -> str | None:
        if name is not None and (not _HEADER_RE.match(name) or name == "authorization" or name.endswith("-bin")):
            raise ValueError(
                f"invalid `api_key_header` {name!r}: use a lowercase header name such as 'x-api-key' "
                "(not 'authorization', which carries the bearer token, nor a '-bin' gRPC header)"
            )
        return name

    @model_validator(mode="after")
    def _has_source(self) -> Self:
        if not self.bearer_tokens and not self.token_files:
            raise ValueError("`auth` needs at least one token: set `bearer_tokens` or `token_files`")
        return self


def check_token(token: str, where: str) -> str:
    """``token`` if usable; ``ValueError`` naming ``where`` (never the token) otherwise."""
    if not token.strip():
        raise ValueError(f"{where} is empty (is its environment variable or file empty?)")
    if not _TOKEN_RE.match(token):
        raise ValueError(f"{where} must be visible ASCII without spaces (it is sent in a header)")
    return token


def read_token_file(path: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"cannot read token file {path!r}: {getattr(err, 'strerror', None) or err}") from None
    return check_token(text.strip(), f"token file {path!r}")


@dataclass
class _TokenFile:
    path: str
    token: bytes


class Authenticator:
    """Checks request credentials against the configured tokens; ``check`` returns ``None`` when accepted.

    ``refuse`` counts and logs (rate-limited, never the token) a refusal on ``telemetry``:
    ``evald_receiver_unauthenticated_requests_total{receiver,transport,reason}`` and
    ``evald_receiver_requests_total{outcome="unauthenticated"}``.
    """

    def __init__(
        self,
        config: ReceiverAuthConfig,
        telemetry: Telemetry,
        *,
        receiver: str,
        transport: str,
        reload_interval: float = 1.0,
    ) -> None:
        self._component = f"{receiver}/{transport}"
        self._warnings = RateLimitedLog(logger)
        self._refused = {r: telemetry.unauthenticated_requests.labels(receiver, transport, r) for r in REASONS}
        self._requests = telemetry.requests.labels(receiver, transport, "unauthenticated")
        self._static = [t.get_secret_value().encode() for t in config.bearer_tokens]
        self._files = [_TokenFile(p, read_token_file(p).encode()) for p in config.token_files]
        self.api_key_header = config.api_key_header
        self._reload_interval = reload_interval
        self._checked = time.monotonic()

    def refuse(self, reason: Reason, peer: str | None) -> str:
        """Count and log (rate-limited) a refused request; returns the message for the client."""
        self._refused[reason].inc()
        self._requests.inc()
        self._warnings.log(logging.WARNING, reason, "%s: refused a request from %s: %s",
                           self._component, peer or "an unknown peer", MESSAGES[reason])
        return MESSAGES[reason]

    def check(self, authorization: str | None, api_key: str | None = None) -> Reason | None:
        """``None`` if a credential matches a token, else why not: ``missing`` or ``invalid``."""
        candidates: list[bytes] = []
        if authorization is not None:
            scheme, _, credential = authorization.strip().partition(" ")
            if scheme.lower() == "bearer":
                candidates.append(credential.strip().encode("utf-8", "replace"))
        if api_key is not None and self.api_key_header is not None:
            candidates.append(api_key.strip().encode("utf-8", "replace"))
        if not candidates:
            return "invalid" if authorization is not None else "missing"
        tokens = [*self._static, *self._current_file_tokens()]
        matched = False
        for candidate in candidates:
            for token in tokens:
                matched |= hmac.compare_digest(candidate, token)
        return None if matched else "invalid"

    def _current_file_tokens(self) -> list[bytes]:
        if self._files and time.monotonic() - self._checked >= self._reload_interval:
            self._checked = time.monotonic()
            for entry in self._files:
                self._reload(entry)
        return [f.token for f in self._files]

    def _reload(self, entry: _TokenFile) -> None:
        try:
            token = read_token_file(entry.path).encode()
        except ValueError as err:  # the message names the file, never its content
            self._warnings.log(logging.WARNING, entry.path, "%s: keeping the previous token: %s",
                               self._component, err)
            return
        if hmac.compare_digest(token, entry.token):
            return
        entry.token = token
        logger.info("%s: reloaded token file %s", self._component, entry.path, extra={"component": self._component})


class GrpcAuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Answers UNAUTHENTICATED before the handler runs (and before the request message is read)."""

    def __init__(self, auth: Authenticator) -> None:
        self._auth = auth
        self._api_key_header = auth.api_key_header
        self._deny = {reason: self._denier(reason) for reason in REASONS}

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[Any]], handler_call_details: Any
    ) -> Any:
        authorization = api_key = None
        for key, value in handler_call_details.invocation_metadata or ():
            if key == "authorization" and authorization is None:
                authorization = value if isinstance(value, str) else None
            elif key == self._api_key_header and api_key is None:
                api_key = value if isinstance(value, str) else None
        reason = self._auth.check(authorization, api_key)
        if reason is None:
            return await continuation(handler_call_details)
        return self._deny[reason]

    def _denier(self, reason: Reason) -> Any:
        async def deny(_requests: Any, context: Any) -> None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, self._auth.refuse(reason, context.peer()))

        return grpc.stream_unary_rpc_method_handler(deny)
