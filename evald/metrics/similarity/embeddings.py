"""Embedding providers of the similarity metrics (``embedding_cosine``, ``bertscore_like``).

A provider turns texts into vectors (``EmbeddingProvider.embed``). Three kinds, chosen per metric under
``options.provider`` (``kind`` picks the model below):

- ``openai``: any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Azure-style proxies, vLLM, Ollama, TEI...)
  through the official ``openai`` SDK (optional extra: ``pip install 'evald[openai]'``). The API key is read from
  the environment variable named by ``api_key_env`` when the first request is made; it is never logged.
- ``local``: a sentence-transformers model in this process (``pip install sentence-transformers``; it pulls
  torch). Encoding runs in a worker thread, so the event loop never blocks.
- ``hashing``: ``HashingEmbeddingProvider``, deterministic and offline: a bag of words hashed into buckets. It
  knows nothing of meaning (synonyms score 0); it exists for tests, CI and dry runs without a network.

A missing optional package is a config error (raised while the metric's options are validated). Providers are
cached per process by their config, so metrics configured with the same provider share one client. A client is
bound to the event loop it was created on; a provider used from another loop (tests) makes a new one.
Every call that leaves the process runs under the provider's ``timeout`` (the whole call, retries included);
failures raise ``MetricUnavailable`` naming the endpoint and the cause.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, Self

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evald.config.base import ComponentConfig, Duration
from evald.metrics.remote import MetricUnavailable, safe_url, short_detail
from evald.metrics.similarity.text import word_tokens

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: rows of L2-normalised embeddings
Matrix = NDArray[np.float64]


class EmbeddingProvider(Protocol):
    """Turns texts into vectors: one vector per text, in the same order, all of one dimension."""

    async def embed(self, texts: list[str]) -> list[list[float]]: ...


def _require_package(module: str, install: str, provider: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ValueError(f"the {provider!r} embedding provider needs the {module!r} package, which is not "
                         f"installed: {install}")


class OpenAIEmbeddingConfig(ComponentConfig):
    kind: Literal["openai"] = Field(description="an OpenAI-compatible embeddings endpoint (openai SDK)")
    model: str = Field("text-embedding-3-small", min_length=1, description="embedding model name")
    base_url: str | None = Field(
        None, description="API base URL, e.g. http://localhost:8000/v1; default: OPENAI_BASE_URL or OpenAI's"
    )
    api_key_env: str | None = Field(
        "OPENAI_API_KEY", min_length=1,
        description="environment variable holding the API key (never logged); null for a server without auth",
    )
    dimensions: int | None = Field(None, ge=1, description="ask for vectors of this size (text-embedding-3 models)")
    timeout: Duration = Field(10.0, gt=0, description="deadline of one embed call, retries included")
    max_retries: int = Field(1, ge=0, le=5, description="SDK retries on connection errors, 408/409/429 and 5xx")
    batch_size: int = Field(512, ge=1, le=2048, description="most texts sent in one request")

    @model_validator(mode="after")
    def _sdk_installed(self) -> Self:
        _require_package("openai", "pip install 'evald[openai]'", "openai")
        return self


class LocalEmbeddingConfig(ComponentConfig):
    kind: Literal["local"] = Field(description="a sentence-transformers model loaded in this process")
    model: str = Field("sentence-transformers/all-MiniLM-L6-v2", min_length=1, description="model name or path")
    device: str | None = Field(None, description="torch device (cpu, cuda...); default: sentence-transformers'")
    timeout: Duration = Field(30.0, gt=0, description="deadline of one embed call (the first one loads the model)")

    @model_validator(mode="after")
    def _package_installed(self) -> Self:
        _require_package("sentence_transformers", "pip install sentence-transformers", "local")
        return self


class HashingEmbeddingConfig(ComponentConfig):
    kind: Literal["hashing"] = Field(description="deterministic offline bag-of-words vectors (tests, dry runs)")
    dimensions: int = Field(1024, ge=2, le=65536, description="number of hash buckets (vector size)")


EmbeddingProviderConfig = Annotated[
    OpenAIEmbeddingConfig | LocalEmbeddingConfig | HashingEmbeddingConfig, Field(discriminator="kind")
]


class HashingEmbeddingProvider:
    """Deterministic, offline embeddings: each word token (``similarity.text.word_tokens``, case-folded) adds 1
    to bucket ``blake2b(token) mod dimensions``.

    The cosine of two texts is then the cosine of their word-count vectors (barring hash collisions), which
    makes results computable by hand: ``"the cat sat"`` vs ``"the cat lay"`` is 2/3, one word vs another 0.
    Use it for tests and offline runs; it has no notion of meaning. ``calls`` and ``texts_embedded`` count the
    requests it served (tests check batching and de-duplication with them).
    """

    def __init__(self, dimensions: int = 1024) -> None:
        self.dimensions = dimensions
        self.calls = 0
        self.texts_embedded = 0

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self.vector(text) for text in texts]

    def bucket(self, token: str) -> int:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.dimensions

    def vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for token in word_tokens(text):
            vector[self.bucket(token)] += 1.0
        return vector


class OpenAIEmbeddingProvider:
    """``POST {base_url}/embeddings`` through ``openai.AsyncOpenAI``, ``encoding_format="float"``."""

    def __init__(self, config: OpenAIEmbeddingConfig) -> None:
        self.config = config
        self._client: AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        where = safe_url(config.base_url) if config.base_url else "the default OpenAI endpoint"
        self.label = f"openai embeddings at {where} (model {config.model})"

    def _client_for_this_loop(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            from openai import AsyncOpenAI

            api_key = "no-key"
            if self.config.api_key_env is not None:
                api_key = os.environ.get(self.config.api_key_env, "")
                if not api_key:
                    raise MetricUnavailable(
                        f"{self.label}: environment variable {self.config.api_key_env} (the API key) is not set"
                    )
            self._client = AsyncOpenAI(
                api_key=api_key, base_url=self.config.base_url, timeout=self.config.timeout,
                max_retries=self.config.max_retries,
            )
            self._loop = loop
        return self._client

    async def embed(self, texts: list[str]) -> list[list[float]]:
        import openai

        if not texts:
            return []
        client = self._client_for_this_loop()
        extra: dict[str, Any] = {} if self.config.dimensions is None else {"dimensions": self.config.dimensions}
        vectors: list[list[float]] = []
        try:
            async with asyncio.timeout(self.config.timeout):
                for start in range(0, len(texts), self.config.batch_size):
                    batch = texts[start : start + self.config.batch_size]
                    response = await client.embeddings.create(
                        model=self.config.model, input=batch, encoding_format="float", **extra
                    )
                    data = sorted(response.data, key=lambda item: item.index)
                    if len(data) != len(batch):
                        raise MetricUnavailable(f"{self.label}: {len(data)} embeddings for {len(batch)} inputs")
                    vectors.extend(list(item.embedding) for item in data)
        except TimeoutError as err:
            raise MetricUnavailable(f"{self.label}: no answer within {self.config.timeout:g}s") from err
        except openai.APIStatusError as err:
            raise MetricUnavailable(f"{self.label}: HTTP {err.status_code}: {short_detail(err.message)}") from err
        except openai.APITimeoutError as err:
            raise MetricUnavailable(f"{self.label}: request timed out after {self.config.timeout:g}s") from err
        except openai.APIConnectionError as err:
            raise MetricUnavailable(f"{self.label}: cannot connect: {short_detail(err.__cause__ or err)}") from err
        except openai.OpenAIError as err:
            raise MetricUnavailable(f"{self.label}: {type(err).__name__}: {short_detail(err)}") from err
        return vectors


class LocalEmbeddingProvider:
    """A sentence-transformers model, loaded on first use and run in a worker thread."""

    def __init__(self, config: LocalEmbeddingConfig) -> None:
        self.config = config
        self.label = f"local sentence-transformers model {config.model!r}"
        self._model: Any = None
        self._load_lock = threading.Lock()

    def _encode(self, texts: list[str]) -> list[list[float]]:  # runs in a worker thread
        with self._load_lock:
            if self._model is None:
                module = importlib.import_module("sentence_transformers")
                self._model = module.SentenceTransformer(self.config.model, device=self.config.device)
        vectors = self._model.encode(texts, convert_to_numpy=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in vectors]

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            async with asyncio.timeout(self.config.timeout):
                return await asyncio.to_thread(self._encode, texts)
        except TimeoutError as err:
            raise MetricUnavailable(f"{self.label}: no answer within {self.config.timeout:g}s") from err
        except Exception as err:  # loading or encoding failed: the metric is unavailable, not wrong
            raise MetricUnavailable(f"{self.label}: {type(err).__name__}: {short_detail(err)}") from err


_PROVIDERS: dict[str, EmbeddingProvider] = {}


def provider_for(config: OpenAIEmbeddingConfig | LocalEmbeddingConfig | HashingEmbeddingConfig) -> EmbeddingProvider:
    """The process-wide provider for ``config`` (created on first use; equal configs share one)."""
    key = config.model_dump_json()
    provider = _PROVIDERS.get(key)
    if provider is None:
        if isinstance(config, OpenAIEmbeddingConfig):
            provider = OpenAIEmbeddingProvider(config)
        elif isinstance(config, LocalEmbeddingConfig):
            provider = LocalEmbeddingProvider(config)
        else:
            provider = HashingEmbeddingProvider(config.dimensions)
        _PROVIDERS[key] = provider
    return provider


async def embed_normalized(provider: EmbeddingProvider, texts: Sequence[str]) -> Matrix:
    """Embed ``texts`` in ONE provider call, each distinct text once; returns one L2-normalised row per text,
    in order (a zero vector stays zero, so its cosine with anything is 0)."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return np.zeros((0, 0))
    vectors = await provider.embed(unique)
    matrix = _checked_matrix(vectors, len(unique), provider)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    row_of = {text: i for i, text in enumerate(unique)}
    rows: Matrix = matrix[[row_of[text] for text in texts]]
    return rows


def _checked_matrix(vectors: object, expected_rows: int, provider: EmbeddingProvider) -> Matrix:
    label = getattr(provider, "label", type(provider).__name__)
    if not isinstance(vectors, list) or len(vectors) != expected_rows:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        raise MetricUnavailable(f"{label}: returned {got} embeddings for {expected_rows} texts")
    sizes = {len(v) if isinstance(v, (list, tuple)) else -1 for v in vectors}
    if len(sizes) != 1 or sizes.pop() < 1:
        raise MetricUnavailable(f"{label}: returned embeddings that are not vectors of one size")
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise MetricUnavailable(f"{label}: returned non-numeric embeddings") from err
    if not np.isfinite(matrix).all():
        raise MetricUnavailable(f"{label}: returned embeddings with NaN or infinite values")
    return matrix
