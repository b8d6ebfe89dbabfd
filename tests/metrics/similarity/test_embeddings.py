"""Embedding providers: the hashing provider, de-duplication and normalisation, the per-process cache, and
clear config errors when an optional package is missing (absence simulated with ``sys.modules[name] = None``)."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.metrics.remote import MetricUnavailable
from evald.metrics.similarity.embedding_cosine import EmbeddingCosineMetric
from evald.metrics.similarity.embeddings import (
    EmbeddingProviderConfig,
    HashingEmbeddingConfig,
    HashingEmbeddingProvider,
    OpenAIEmbeddingProvider,
    embed_normalized,
    provider_for,
)

PROVIDER_CONFIG: TypeAdapter[Any] = TypeAdapter(EmbeddingProviderConfig)


class ReturnsThis:
    """A provider answering a fixed (possibly broken) value."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return self.answer  # type: ignore[no-any-return]


def test_hashing_vectors_are_word_counts_in_stable_buckets() -> None:
    provider = HashingEmbeddingProvider(dimensions=1024)
    assert provider.bucket("the") == 558 and provider.bucket("cat") == 47  # blake2b: the same in every process
    vector = provider.vector("The cat, the CAT!")  # tokens: the, cat, the, cat (case-folded, punctuation dropped)
    assert vector[558] == 2.0 and vector[47] == 2.0 and sum(vector) == 4.0 and len(vector) == 1024
    assert provider.vector("...") == [0.0] * 1024


async def test_embed_normalized_embeds_each_distinct_text_once_in_one_call() -> None:
    provider = HashingEmbeddingProvider()
    rows = await embed_normalized(provider, ["the cat", "sat", "the cat", "..."])
    assert (provider.calls, provider.texts_embedded) == (1, 3)
    assert rows.shape == (4, 1024)
    assert np.allclose(np.linalg.norm(rows, axis=1), [1.0, 1.0, 1.0, 0.0])  # a zero vector stays zero
    assert np.array_equal(rows[0], rows[2])
    # "the cat" is e_558 + e_47, normalised: 1/sqrt(2) in both buckets
    assert math.isclose(rows[0][558], 1 / math.sqrt(2)) and math.isclose(rows[0][47], 1 / math.sqrt(2))


async def test_embed_normalized_of_nothing_calls_nobody() -> None:
    provider = HashingEmbeddingProvider()
    assert (await embed_normalized(provider, [])).shape == (0, 0) and provider.calls == 0


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([[1.0, 0.0]], "returned 1 embeddings for 2 texts"),
        ("nope", "returned str embeddings for 2 texts"),
        ([[1.0, 0.0], [1.0]], "not vectors of one size"),
        ([[], []], "not vectors of one size"),
        ([[1.0, 0.0], [1.0, "x"]], "non-numeric"),
        ([[1.0, 0.0], [1.0, float("nan")]], "NaN or infinite"),
    ],
)
async def test_a_broken_provider_answer_is_unavailable(answer: Any, message: str) -> None:
    with pytest.raises(MetricUnavailable, match=message):
        await embed_normalized(ReturnsThis(answer), ["a", "b"])


def test_providers_are_shared_per_process_by_config() -> None:
    first = provider_for(HashingEmbeddingConfig(kind="hashing", dimensions=64))
    assert provider_for(HashingEmbeddingConfig(kind="hashing", dimensions=64)) is first
    assert provider_for(HashingEmbeddingConfig(kind="hashing", dimensions=128)) is not first
    openai_config = PROVIDER_CONFIG.validate_python({"kind": "openai", "base_url": "http://127.0.0.1:9/v1"})
    provider = provider_for(openai_config)
    assert isinstance(provider, OpenAIEmbeddingProvider) and provider_for(openai_config) is provider


def test_provider_config_defaults_and_durations() -> None:
    config = PROVIDER_CONFIG.validate_python({"kind": "openai", "timeout": "1500ms"})
    assert (config.model, config.api_key_env, config.timeout, config.max_retries) == (
        "text-embedding-3-small", "OPENAI_API_KEY", 1.5, 1)
    assert PROVIDER_CONFIG.validate_python({"kind": "hashing"}).dimensions == 1024


@pytest.mark.parametrize(
    "config",
    [
        {"kind": "bert"},
        {"model": "x"},
        {"kind": "openai", "api_key": "sk-inline-keys-are-not-allowed"},
        {"kind": "openai", "timeout": 0},
        {"kind": "openai", "max_retries": 10},
        {"kind": "hashing", "dimensions": 1},
    ],
)
def test_invalid_provider_configs_are_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        PROVIDER_CONFIG.validate_python(config)


def test_a_missing_openai_sdk_is_a_clear_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if not installed
    with pytest.raises(ValidationError, match=r"needs the 'openai' package.*pip install 'evald\[openai\]'"):
        EmbeddingCosineMetric(options={"provider": {"kind": "openai"}})


def test_a_missing_sentence_transformers_is_a_clear_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # whether installed or not
    text = "metrics:\n  - { kind: embedding_cosine, options: { provider: { kind: local } } }\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, environ={})
    [(path, message)] = info.value.problems
    assert path == "metrics[0].options.provider.local"
    assert "needs the 'sentence_transformers' package" in message and "pip install sentence-transformers" in message
