"""``trajectory_consistency``: how similar the tool-call paths of a group's K runs are (pairwise mean)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import ClassVar, Literal, cast

from pydantic import Field

from evald.case import Dimension, Score
from evald.config.base import ComponentConfig
from evald.metrics.multi_case import GroupMetric, GroupOptions, Run


class TrajectoryConsistencyOptions(GroupOptions):
    mode: Literal["distributional", "sequential"] = Field(
        "distributional", description="distributional: cosine of tool-name counts; sequential: LCS / longer length"
    )
    max_trajectory_length: int | None = Field(None, ge=1, description="compare only each run's last N calls")


class TrajectoryConsistencyMetric(GroupMetric):
    """Mean pairwise similarity of the K runs' tool-call name sequences (C_traj of Rabanser et al.).

    harness-evals' TrajectoryConsistency, over all K(K-1)/2 pairs of runs: mode ``distributional`` (default,
    C_traj_d) uses the cosine of the two runs' tool-name count vectors (two empty trajectories: 1, one empty: 0);
    mode ``sequential`` (C_traj_s) the longest common subsequence divided by the longer length (both empty: 1).
    ``max_trajectory_length`` keeps each run's last N calls. Example (sequential): [a, b, c], [a, c], [a, b, c]:
    pairs 2/3, 1, 2/3: mean 0.778. Metadata: ``mode``, ``k``, ``n_pairs``.

    Not applicable to fewer than 2 runs.
    """

    kind: ClassVar[str] = "trajectory_consistency"
    family: ClassVar[str] = "reliability"
    dimension: ClassVar[Dimension] = Dimension.TRAJECTORY
    default_threshold: ClassVar[float] = 0.8
    requires: ClassVar[tuple[str, ...]] = ("tool_calls",)
    needs: ClassVar[tuple[str, ...]] = ()
    Options: ClassVar[type[ComponentConfig]] = TrajectoryConsistencyOptions

    def measure_group(self, runs: Sequence[Run]) -> Score | None:
        opts = cast(TrajectoryConsistencyOptions, self.options)
        cap = opts.max_trajectory_length
        paths = [[c.name for c in r.case.tool_calls] for r in runs]
        paths = [p[-cap:] if cap else p for p in paths]
        if len(paths) < 2:
            return None
        pairs = [(paths[i], paths[j]) for i in range(len(paths)) for j in range(i + 1, len(paths))]
        similarity = _cosine if opts.mode == "distributional" else _normalized_lcs
        value = sum(similarity(a, b) for a, b in pairs) / len(pairs)
        return self.score(min(1.0, value), f"mean {opts.mode} similarity {value:.3f} over {len(pairs)} run pairs",
                          mode=opts.mode, k=len(paths), n_pairs=len(pairs))


def _cosine(a: list[str], b: list[str]) -> float:
    ca, cb = Counter(a), Counter(b)
    na, nb = math.sqrt(sum(v * v for v in ca.values())), math.sqrt(sum(v * v for v in cb.values()))
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return sum(ca[k] * cb[k] for k in ca) / (na * nb)


def _normalized_lcs(a: list[str], b: list[str]) -> float:
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1] / longest
