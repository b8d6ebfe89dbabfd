"""``pairwise`` with ``reference: variant``: the output of one variant judged against the reference variant's output
for the same input (A/B or shadow deployments), over pairs of cases the windowed stage forms.

``PairwiseMetric(options={"reference": "variant", ...})`` builds this class (the kind and options are
``pairwise``'s; see its docstring). It is a ``GroupMetric`` whose window is ``pairs`` (evald/windowed/pairs.py): each
group handed to it is ``[reference run, compared run]``, and ``a_measure_group`` judges the two outputs in both
orders like ``pairwise`` does with an expected answer. Failure semantics: a malformed verdict or a judge error
raises (the stage counts it ``error``, never a score); a judge skip (budget, circuit, never_send) or a run without
an output gives no score (counted ``not_applicable``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from evald.case import Score
from evald.metrics.judged.common import case_data
from evald.metrics.llm_judge.pairwise import PairwiseMetric, PairwiseOptions
from evald.metrics.multi_case import GroupMetric, Run, attribute
from evald.outcomes import MetricSkipped


class VariantPairwiseMetric(PairwiseMetric, GroupMetric):
    """``pairwise`` against another variant's output for the same input (built by ``PairwiseMetric``)."""

    #: the windowed stage pairs runs by variant instead of collecting K runs (evald/windowed/pairs.py)
    window: ClassVar[str] = "pairs"
    needs: ClassVar[tuple[str, ...]] = ("output",)

    async def a_measure_group(self, runs: Sequence[Run]) -> Score | None:
        if len(runs) != 2:
            return None
        reference, compared = runs
        output = case_data(compared.case, ("output",))
        reference_output = case_data(reference.case, ("output",))
        if not output or not reference_output:
            return None
        opts = cast(PairwiseOptions, self.options)
        variant = attribute(compared.case, opts.variant_attribute)
        try:
            return await self.compare(
                compared.case, output[0][1], reference_output[0][1], reference="variant",
                variant=None if variant is None else str(variant), reference_variant=opts.reference_variant,
                reference_trace_id=reference.case.trace_id,
            )
        except MetricSkipped:
            return None
