"""``bleu``: smoothed sentence BLEU of the output against one or more expected references."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.similarity.text import references, word_tokens
from evald.metrics.text import as_text


class BleuOptions(ComponentConfig):
    max_n: int = Field(4, ge=1, le=4, description="longest n-gram order (weights are uniform, 1/max_n)")
    epsilon: float = Field(
        0.1, gt=0, le=1, description="smoothing method 1: an n-gram order with no match counts epsilon matches"
    )
    lowercase: bool = Field(True, description="case-fold the text before splitting it into word tokens")


@dataclass(frozen=True, slots=True)
class BleuResult:
    value: float
    precisions: tuple[float, ...]
    brevity_penalty: float
    candidate_length: int
    reference_length: int


class BleuMetric(BaseMetric):
    """Sentence BLEU of the output against the expected reference(s), smoothed so short texts do not collapse.

    Reads ``output`` and ``expected`` (text; a list is several references; a structured value is compared as
    its JSON text). Both are split into word tokens (runs of letters and digits, punctuation dropped,
    case-folded unless ``lowercase`` is false). As in Papineni et al. (2002):

    - ``p_n`` (n = 1..``max_n``) is the modified n-gram precision: candidate n-grams matched, each clipped
      to its highest count in any one reference, over the candidate's n-gram count (at least 1);
    - smoothing is Chen & Cherry (2014)'s method 1, as in NLTK's ``SmoothingFunction().method1``: an order
      with no match gets ``p_n = epsilon / count`` instead of 0, so one missing 4-gram does not zero the score;
    - ``BP = 1`` when the candidate is longer than the closest reference length ``r`` (ties: the shorter),
      else ``exp(1 - r / c)``;
    - ``BLEU = BP · exp(Σ log(p_n) / max_n)``.

    Like NLTK, a candidate without any matching unigram scores 0, and a candidate shorter than ``max_n``
    tokens gets ``epsilon`` for the orders it cannot have (lower ``max_n`` for very short answers); two
    empty texts score 1. Otherwise the values equal NLTK's ``sentence_bleu`` with uniform weights and
    ``smoothing_function=SmoothingFunction().method1`` on the same tokens.

    The default threshold 0.3: sentence BLEU falls fast with rewording (one changed word out of six gives
    0.254 for "the cat sat on the mat" against "the cat is on the mat"), so a high bar would fail nearly any
    reworded answer; 0.3 passes outputs that keep most of a reference's words and phrases. Metadata:
    ``precisions``, ``brevity_penalty``, ``candidate_length`` and ``reference_length``.

    Not applicable when ``output`` or ``expected`` is missing. Hand-written (about 30 lines) rather than
    pulling in NLTK or sacrebleu and their dependencies.
    """

    kind: ClassVar[str] = "bleu"
    family: ClassVar[str] = "similarity"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.3
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = BleuOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(BleuOptions, self.options)
        if eval_case.output is None:
            return None
        refs = [word_tokens(ref, opts.lowercase) for ref in references(eval_case.expected)]
        if not refs:
            return None
        candidate = word_tokens(as_text(eval_case.output), opts.lowercase)
        result = sentence_bleu(candidate, refs, opts.max_n, opts.epsilon)
        shown = ", ".join(f"{p:.3f}" for p in result.precisions)
        reason = (f"BLEU-{opts.max_n} {result.value:.3f}: precisions [{shown}], brevity penalty "
                  f"{result.brevity_penalty:.3f} ({result.candidate_length} vs {result.reference_length} words)")
        return self.score(
            result.value, reason, precisions=list(result.precisions), brevity_penalty=result.brevity_penalty,
            candidate_length=result.candidate_length, reference_length=result.reference_length,
        )


def sentence_bleu(candidate: list[str], refs: list[list[str]], max_n: int = 4, epsilon: float = 0.1) -> BleuResult:
    """BLEU of one candidate token list against reference token lists (see ``BleuMetric``)."""
    c = len(candidate)
    r = min((len(ref) for ref in refs), key=lambda length: (abs(length - c), length))
    if c == 0:
        value = 1.0 if r == 0 else 0.0
        return BleuResult(value, (value,) * max_n, value, c, r)
    precisions: list[float] = []
    for n in range(1, max_n + 1):
        candidate_counts = _ngrams(candidate, n)
        max_ref_counts: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            max_ref_counts |= _ngrams(ref, n)
        matched = sum(min(count, max_ref_counts[gram]) for gram, count in candidate_counts.items())
        total = max(1, sum(candidate_counts.values()))
        if n == 1 and matched == 0:
            return BleuResult(0.0, (0.0,) * max_n, _brevity_penalty(c, r), c, r)
        precisions.append((matched if matched else epsilon) / total)
    brevity_penalty = _brevity_penalty(c, r)
    value = brevity_penalty * math.exp(sum(math.log(p) for p in precisions) / max_n)
    return BleuResult(value, tuple(precisions), brevity_penalty, c, r)


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _brevity_penalty(c: int, r: int) -> float:
    return 1.0 if c > r else math.exp(1 - r / c)
