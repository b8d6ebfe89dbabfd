"""The shared formula of the ratio-based robustness metrics: R = min(Acc_perturbed / Acc_nominal, 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from pydantic import Field

from evald.case import Score
from evald.config.base import ComponentConfig
from evald.metrics.multi_case import GroupMetric, GroupOptions, Run, attribute


class RobustnessOptions(GroupOptions):
    variant_attribute: str = Field("evald.variant", min_length=1, description="attribute naming a run's variant")
    nominal_variant: str = Field("nominal", min_length=1, description="the variant value of unperturbed runs "
                                 "(a run without the attribute is nominal too)")


class RobustnessMetric(GroupMetric):
    """``min(Acc_perturbed / Acc_nominal, 1)`` over a group of nominal and perturbed runs (Rabanser et al. Table 2).

    Shared by prompt, environment and fault robustness (harness-evals' ``RobustnessMetric.measure_robustness``):
    the runs of one group (K in all) are split by ``variant_attribute`` (default ``evald.variant``) into nominal
    runs (the value ``nominal_variant``, or no value) and perturbed runs (any other value: a rephrasing, a
    reordered environment, an injected fault, as the sender tagged it). Each run's outcome is ``outcome_metric``'s
    pass/fail on that case, else the golden match. Acc = passing runs / runs, per side. A group whose nominal runs
    all failed scores 1 (degradation cannot be attributed to the perturbation; evaluate capability separately).
    Example: nominal [pass, pass], perturbed [pass, fail, fail]: Acc 1 and 1/3: 0.333. Metadata: ``acc_nominal``,
    ``acc_perturbed``, ``n_nominal``, ``n_perturbed``.

    Not applicable when the group lacks a nominal or a perturbed run with an outcome.
    """

    uses_outcome: ClassVar[bool] = True
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("output", "expected", "metadata")
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = RobustnessOptions

    def measure_group(self, runs: Sequence[Run]) -> Score | None:
        opts = cast(RobustnessOptions, self.options)
        nominal: list[bool] = []
        perturbed: list[bool] = []
        for run in runs:
            if run.outcome is None:
                continue
            variant = attribute(run.case, opts.variant_attribute)
            side = nominal if variant is None or str(variant) == opts.nominal_variant else perturbed
            side.append(run.outcome)
        if not nominal or not perturbed:
            return None
        acc_nominal, acc_perturbed = sum(nominal) / len(nominal), sum(perturbed) / len(perturbed)
        facts = {"acc_nominal": acc_nominal, "acc_perturbed": acc_perturbed, "n_nominal": len(nominal),
                 "n_perturbed": len(perturbed)}
        if acc_nominal == 0.0:
            return self.score(1.0, "every nominal run failed: degradation cannot be attributed to perturbation",
                              **facts)
        value = min(acc_perturbed / acc_nominal, 1.0)
        return self.score(value, f"perturbed accuracy {acc_perturbed:.1%} vs nominal {acc_nominal:.1%}", **facts)
