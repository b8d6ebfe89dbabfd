"""``rouge_l``: ROUGE-L F-measure (longest common subsequence of words) between output and expected."""

from __future__ import annotations

from typing import ClassVar, cast

from pydantic import Field
from rapidfuzz.distance import LCSseq

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.metrics.base import BaseMetric
from evald.metrics.similarity.text import references, word_tokens
from evald.metrics.text import as_text


class RougeLOptions(ComponentConfig):
    beta: float = Field(1.0, gt=0, description="weight of recall over precision in the F-measure (1: F1)")
    lowercase: bool = Field(True, description="case-fold the text before splitting it into word tokens")


class RougeLMetric(BaseMetric):
    """ROUGE-L F-measure between the output and the expected text, over word tokens.

    Reads ``output`` and ``expected`` (text; a structured value is compared as its JSON text; a list is
    several references and the best F-measure counts). Both texts are split into word tokens (runs of
    letters and digits, punctuation dropped, case-folded unless ``lowercase`` is false). With ``LCS`` the
    length of their longest common subsequence (rapidfuzz ``LCSseq`` over the token lists),
    ``P = LCS / len(output tokens)`` and ``R = LCS / len(reference tokens)``, the value is Lin (2004)'s
    ``F = (1 + beta²)·P·R / (R + beta²·P)`` (0 when LCS is 0; 1 when both have no tokens).

    The default threshold 0.5 passes an output that shares, in order, about half of its words with the
    reference: paraphrases of the same answer usually do, unrelated answers rarely. Metadata: ``precision``,
    ``recall``, ``lcs`` and ``reference_index``.

    Not applicable when ``output`` or ``expected`` is missing.
    """

    kind: ClassVar[str] = "rouge_l"
    family: ClassVar[str] = "similarity"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("output", "expected")
    needs: ClassVar[tuple[str, ...]] = ("output", "expected")
    Options: ClassVar[type[ComponentConfig]] = RougeLOptions

    def measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(RougeLOptions, self.options)
        if eval_case.output is None:
            return None
        refs = [word_tokens(ref, opts.lowercase) for ref in references(eval_case.expected)]
        if not refs:
            return None
        output = word_tokens(as_text(eval_case.output), opts.lowercase)
        results = [rouge_l(output, ref, opts.beta) for ref in refs]
        best = max(range(len(refs)), key=lambda i: results[i][0])
        f_measure, precision, recall, lcs = results[best]
        reason = (f"LCS of {lcs} word(s): precision {precision:.3f}, recall {recall:.3f}, "
                  f"F(beta={opts.beta:g}) {f_measure:.3f}")
        if len(refs) > 1:
            reason += f" (best of {len(refs)} references)"
        return self.score(
            f_measure, reason, precision=precision, recall=recall, lcs=lcs, reference_index=best,
        )


def rouge_l(candidate: list[str], reference: list[str], beta: float = 1.0) -> tuple[float, float, float, int]:
    """(F-measure, precision, recall, LCS length) of a candidate token list against a reference."""
    if not candidate and not reference:
        return 1.0, 1.0, 1.0, 0
    lcs = int(LCSseq.similarity(candidate, reference))
    if lcs == 0:
        return 0.0, 0.0, 0.0, 0
    precision, recall = lcs / len(candidate), lcs / len(reference)
    f_measure = (1 + beta**2) * precision * recall / (recall + beta**2 * precision)
    return f_measure, precision, recall, lcs
