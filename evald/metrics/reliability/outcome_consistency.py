"""``outcome_consistency``: the share of a group's K runs that produced the majority output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import ClassVar

from evald.case import Dimension, Score
from evald.metrics.multi_case import GroupMetric, Run
from evald.metrics.text import as_text


class OutcomeConsistencyMetric(GroupMetric):
    """The share of the K runs of a group that produced the most common output (C_out of Rabanser et al.).

    harness-evals' OutcomeConsistency: value = count of the most common output / K, outputs compared as their
    text (exactly, as harness-evals' ``str(output)``). Runs come from the windowed stage: cases grouped by
    ``group_by`` (a run-group attribute such as ``evald.run_group``, the golden matched, or the normalised
    input), scored when a group has ``k`` runs (default 5) and attached to the latest run's case. Example: outputs
    [Paris, Paris, Paris, Lyon] (k 4): 0.75. Metadata: ``k``, ``unique_outputs``, ``trace_ids``.

    Not applicable to fewer than 2 runs with an output.
    """

    kind: ClassVar[str] = "outcome_consistency"
    family: ClassVar[str] = "reliability"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("output",)
    needs: ClassVar[tuple[str, ...]] = ()

    def measure_group(self, runs: Sequence[Run]) -> Score | None:
        outputs = [as_text(r.case.output) for r in runs if r.case.output is not None]
        if len(outputs) < 2:
            return None
        top = Counter(outputs).most_common(1)[0][1]
        return self.score(top / len(outputs), f"{top} of {len(outputs)} runs produced the majority output",
                          k=len(outputs), unique_outputs=len(set(outputs)))
