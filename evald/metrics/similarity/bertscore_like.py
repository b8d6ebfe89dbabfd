"""``bertscore_like``: BERTScore's greedy token matching (F1) over word embeddings from a provider."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, cast

import numpy as np
from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.similarity.embeddings import EmbeddingProviderConfig, Matrix, embed_normalized, provider_for
from evald.metrics.similarity.text import references, word_tokens
from evald.metrics.text import as_text


class BertscoreLikeOptions(ComponentConfig):
    provider: EmbeddingProviderConfig = Field(
        description="embedding provider: {kind: openai|local|hashing, ...} (see evald/metrics/similarity/embeddings.py)"
    )
    max_tokens: int = Field(128, ge=1, le=2048, description="tokens kept from the start of each text (bounds cost)")
    lowercase: bool = Field(True, description="case-fold tokens before embedding them")


@dataclass(frozen=True, slots=True)
class _Match:
    precision: float
    recall: float
    f1: float


class BertscoreLikeMetric(BaseMetric):
    """Token-level greedy-match F1 between the output and the expected text (BERTScore's matching).

    Reads ``output`` and ``expected`` (a list holds several references; the best F1 counts). Both are split
    into word tokens (``similarity.text.word_tokens``; the first ``max_tokens`` of each are kept) and every
    distinct token is embedded, all in ONE call of the configured ``provider``. With cosine similarities
    between token vectors, precision is the mean over output tokens of the best cosine with a reference
    token, recall the mean over reference tokens of the best cosine with an output token (precision and
    recall are then clamped to [0, 1]), and the value is their harmonic mean F1 (Zhang et al., 2020, without
    idf weighting or baseline rescaling). Unlike BERTScore, tokens are embedded one by one, without context:
    synonyms match as well as the provider's model knows them, word order is ignored. Calibrate the
    threshold on your own data.

    Provider options (``provider``, required: sending texts to a service is a choice to make
    explicitly): ``{kind: openai, model, base_url, api_key_env, dimensions, timeout,
    max_retries, batch_size}`` (defaults: text-embedding-3-small, OPENAI_API_KEY, 10 s, 1 retry), ``{kind:
    local, model, device, timeout}`` (sentence-transformers) or ``{kind: hashing, dimensions}`` (offline,
    deterministic, no notion of meaning: for tests and dry runs).

    Not applicable when ``output`` or ``expected`` is missing, or when no reference has a word token. An
    output without word tokens scores 0. A failing provider is an error outcome, never a score.
    """

    kind: ClassVar[str] = "bertscore_like"
    family: ClassVar[str] = "similarity"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.7
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = BertscoreLikeOptions

    def _tokens(self, text: str) -> tuple[list[str], bool]:
        opts = cast(BertscoreLikeOptions, self.options)
        tokens = word_tokens(text, lowercase=opts.lowercase)
        return tokens[: opts.max_tokens], len(tokens) > opts.max_tokens

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(BertscoreLikeOptions, self.options)
        if eval_case.output is None:
            return None
        tokenized = [self._tokens(ref) for ref in references(eval_case.expected)]
        refs = {index: tokens for index, (tokens, _) in enumerate(tokenized) if tokens}
        if not refs:
            return None
        candidate, truncated = self._tokens(as_text(eval_case.output))
        truncated = truncated or any(cut for _, cut in tokenized)
        if not candidate:
            return self.score(0.0, "the output has no word tokens", precision=0.0, recall=0.0, truncated=truncated)
        vocabulary = list(dict.fromkeys([*candidate, *(token for ref in refs.values() for token in ref)]))
        rows = await embed_normalized(provider_for(opts.provider), vocabulary)
        row_of = {token: i for i, token in enumerate(vocabulary)}
        candidate_rows = rows[[row_of[token] for token in candidate]]
        matches = {index: greedy_match(candidate_rows, rows[[row_of[t] for t in ref]]) for index, ref in refs.items()}
        best = max(matches, key=lambda index: matches[index].f1)
        match = matches[best]
        which = f", best of {len(tokenized)} references: #{best}" if len(tokenized) > 1 else ""
        return self.score(
            match.f1, f"F1 {match.f1:.3f} (precision {match.precision:.3f}, recall {match.recall:.3f}{which})",
            precision=match.precision, recall=match.recall, candidate_tokens=len(candidate),
            reference_tokens=len(refs[best]), best_reference=best, truncated=truncated,
            provider=opts.provider.kind,
        )


def greedy_match(candidate: Matrix, reference: Matrix) -> _Match:
    """BERTScore's greedy matching on L2-normalised token rows: each token takes its most similar partner."""
    similarity = candidate @ reference.T
    precision = min(1.0, max(0.0, float(np.mean(similarity.max(axis=1)))))
    recall = min(1.0, max(0.0, float(np.mean(similarity.max(axis=0)))))
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return _Match(precision, recall, f1)
