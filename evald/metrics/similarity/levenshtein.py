"""``levenshtein``: normalized edit-distance similarity between output and expected (``rapidfuzz``)."""

from __future__ import annotations

import unicodedata
from typing import ClassVar, cast

from pydantic import Field
from rapidfuzz.distance import Levenshtein

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.similarity.text import normalize_whitespace, references
from evald.metrics.text import as_text


class LevenshteinOptions(ComponentConfig):
    case_sensitive: bool = Field(True, description="compare case-sensitively; false: case-fold both texts first")
    normalize_whitespace: bool = Field(
        True, description="trim both texts and collapse every whitespace run to one space first"
    )


class LevenshteinMetric(BaseMetric):
    """Character-level similarity of the output to the expected text: 1 minus the normalized edit distance.

    Reads ``output`` and ``expected`` (text; a structured value is compared as its JSON text; a list is
    several references and the best one counts). Both texts are NFC-normalised, then optionally
    whitespace-normalised and case-folded. The value is rapidfuzz's
    ``Levenshtein.normalized_similarity``: ``1 - distance / max(len(output), len(expected))`` with unit
    insert/delete/substitute costs (two empty texts score 1). E.g. ``kitten`` vs ``sitting``: distance 3,
    value ``1 - 3/7 ≈ 0.571``.

    The default threshold 0.8 tolerates about one character edit in five (typos, small wording changes)
    while failing different answers. Metadata: ``distance`` and ``reference_index`` (of the best reference).

    Not applicable when ``output`` or ``expected`` is missing (an empty string is a value).
    """

    kind: ClassVar[str] = "levenshtein"
    family: ClassVar[str] = "similarity"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = LevenshteinOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(LevenshteinOptions, self.options)
        if eval_case.output is None:
            return None
        refs = [self._prepare(ref, opts) for ref in references(eval_case.expected)]
        if not refs:
            return None
        output = self._prepare(as_text(eval_case.output), opts)
        similarities = [Levenshtein.normalized_similarity(output, ref) for ref in refs]
        best = max(range(len(refs)), key=similarities.__getitem__)
        distance = Levenshtein.distance(output, refs[best])
        value = similarities[best]
        longest = max(len(output), len(refs[best]))
        reason = f"edit distance {distance} over {longest} character(s): similarity {value:.3f}"
        if len(refs) > 1:
            reason += f" (best of {len(refs)} references)"
        return self.score(value, reason, distance=distance, reference_index=best)

    @staticmethod
    def _prepare(text: str, opts: LevenshteinOptions) -> str:
        text = unicodedata.normalize("NFC", text)
        if opts.normalize_whitespace:
            text = normalize_whitespace(text)
        return text if opts.case_sensitive else text.casefold()
