"""``embedding_cosine``: cosine similarity of the output's and the expected text's embeddings."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.similarity.embeddings import (
    EmbeddingProvider,
    EmbeddingProviderConfig,
    embed_normalized,
    provider_for,
)
from evald.metrics.similarity.text import references, word_tokens
from evald.metrics.text import as_text


class EmbeddingCosineOptions(ComponentConfig):
    provider: EmbeddingProviderConfig = Field(
        description="embedding provider: {kind: openai|local|hashing, ...} (see evald/metrics/similarity/embeddings.py)"
    )
    mapping: Literal["clamp", "affine"] = Field(
        "clamp", description="cosine to [0,1]: clamp (negatives become 0) or affine ((cos + 1) / 2)"
    )


class EmbeddingCosineMetric(BaseMetric):
    """Cosine similarity between the embeddings of the output and the expected text.

    Reads ``output`` and ``expected`` (anything not a string is compared as its JSON text). Both texts are
    embedded in one call of the configured ``provider`` (``openai``, ``local`` or the offline ``hashing``), and
    the cosine of the two vectors is mapped to [0, 1] by ``mapping``: ``clamp`` (default) keeps the cosine and
    turns negatives into 0 (an opposite meaning is as wrong as an unrelated one); ``affine`` uses
    ``(cos + 1) / 2``, so unrelated texts (cos 0) score 0.5. When ``expected`` is a list, the best-matching
    reference counts. Identical texts score 1 and an empty text against a non-empty one 0, without calling the
    provider. Typical cosines depend on the model: calibrate the threshold on your own data.

    Provider options (``provider``, required: sending texts to a service is a choice to make
    explicitly): ``{kind: openai, model, base_url, api_key_env, dimensions, timeout,
    max_retries, batch_size}`` (defaults: text-embedding-3-small, OPENAI_API_KEY, 10 s, 1 retry), ``{kind:
    local, model, device, timeout}`` (sentence-transformers) or ``{kind: hashing, dimensions}`` (offline,
    deterministic, no notion of meaning: for tests and dry runs).

    Not applicable when ``output`` or ``expected`` is missing. An unreachable or failing provider is an error
    outcome (``MetricUnavailable``), never a score.
    """

    kind: ClassVar[str] = "embedding_cosine"
    family: ClassVar[str] = "similarity"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = EmbeddingCosineOptions

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(EmbeddingCosineOptions, self.options)
        if eval_case.output is None:
            return None
        refs = references(eval_case.expected)
        if not refs:
            return None
        output = as_text(eval_case.output).strip()
        cosines = await reference_cosines(output, [ref.strip() for ref in refs], provider_for(opts.provider))
        best = max(range(len(cosines)), key=cosines.__getitem__)
        cosine = cosines[best]
        value = max(0.0, cosine) if opts.mapping == "clamp" else (cosine + 1.0) / 2.0
        which = f" (best of {len(refs)} references: #{best})" if len(refs) > 1 else ""
        return self.score(
            min(1.0, value), f"cosine {cosine:.3f}{which}", cosine=cosine, mapping=opts.mapping,
            best_reference=best, provider=opts.provider.kind,
        )


async def reference_cosines(output: str, refs: Sequence[str], provider: EmbeddingProvider | None) -> list[float]:
    """Cosine of ``output`` with each reference (all stripped): identical texts 1.0 and an empty text 0.0 without
    any call; the rest embedded in ONE ``provider`` call, or, with ``provider`` None, the cosine of their
    word-count vectors (:func:`bag_of_words_cosine`, no service called)."""
    cosines: list[float | None] = [1.0 if ref == output else 0.0 if not ref or not output else None for ref in refs]
    pending = [ref for ref, cosine in zip(refs, cosines, strict=True) if cosine is None]
    if pending:
        if provider is None:
            computed = iter(bag_of_words_cosine(output, ref) for ref in pending)
        else:
            rows = await embed_normalized(provider, [output, *pending])
            computed = iter(float(c) for c in rows[1:] @ rows[0])
        cosines = [next(computed) if cosine is None else cosine for cosine in cosines]
    return [float(cosine) for cosine in cosines if cosine is not None]


def bag_of_words_cosine(a: str, b: str) -> float:
    """Cosine of the word-count vectors of two texts (0 when either has no word)."""
    left, right = Counter(word_tokens(a)), Counter(word_tokens(b))
    norm = math.sqrt(sum(v * v for v in left.values())) * math.sqrt(sum(v * v for v in right.values()))
    if norm == 0:
        return 0.0
    return sum(count * right[word] for word, count in left.items()) / norm
