"""Stand-in embedding providers for the similarity tests."""

from __future__ import annotations

from evald.metrics.remote import MetricUnavailable

#: the offline hashing provider's options (distinct words get orthogonal one-hot vectors)
HASHING = {"kind": "hashing", "dimensions": 1024}


class FixedVectors:
    """A provider with hand-picked vectors (to reach cosines the hashing provider never gives); records calls."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(texts)
        return [self.vectors[text] for text in texts]


class Down:
    """A provider whose service is unreachable."""

    async def embed(self, texts: list[str]) -> list[list[float]]:
        raise MetricUnavailable("embedding service down")
