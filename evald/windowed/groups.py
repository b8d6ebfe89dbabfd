"""Groups of runs for ``GroupMetric`` kinds: K runs of one probe, keyed, bounded by count and age.

A run joins the group of its key (``group_by``: the ``group_attribute`` value, the golden's normalised input for a
case that matched a golden, or the case's normalised input). When the group holds ``k`` runs it is handed over
for scoring and starts again empty (tumbling: each run is scored in exactly one group). Bounds: at most
``max_groups`` open groups (the least recently started is dropped, counted ``group_evicted``), and a group older
than ``max_age`` (since its first run) is dropped when next touched or swept (counted ``group_expired``). A case
without a key is counted ``no_group_key``; a metric that needs outcomes drops runs without one (``no_outcome``).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import cast

from evald.case import EvalCase, new_tool_call
from evald.metrics.multi_case import GroupMetric, GroupOptions, Run, attribute
from evald.metrics.text import as_text
from evald.pipeline.goldens import normalise_input


def group_key(case: EvalCase, options: GroupOptions) -> str | None:
    """The group a case belongs to, or None (no attribute, no golden, no input)."""
    if options.group_by == "attribute":
        value = attribute(case, options.group_attribute)
        return None if value is None or value == "" else f"a:{value}"
    if options.group_by == "golden" and not case.metadata.get("golden"):
        return None
    if case.input is None:
        return None
    digest = hashlib.blake2b(normalise_input(as_text(case.input)).encode("utf-8"), digest_size=12).hexdigest()
    return f"i:{digest}"


@dataclass(slots=True)
class _Group:
    started: float
    runs: list[Run] = field(default_factory=list)


class GroupWindow:
    """The open groups of one ``GroupMetric`` binding."""

    def __init__(self, metric: GroupMetric, dropped: Callable[[str, int], None]) -> None:
        self.metric = metric
        self.options = cast(GroupOptions, metric.options)
        self._groups: OrderedDict[str, _Group] = OrderedDict()
        self._dropped = dropped  # (reason, n) -> counted

    def __len__(self) -> int:
        return len(self._groups)

    def add(self, case: EvalCase, outcome: bool | None, now: float, key: str | None
            ) -> list[tuple[list[Run], EvalCase]]:
        """Add a case's run (held slim) to group ``key`` (``group_key`` of the whole case); when this run made the
        group K: ``[(its runs, oldest first, case)]`` (the score goes on ``case``, the latest run's), else ``[]``."""
        opts = self.options
        if self.metric.uses_outcome and outcome is None:
            self._dropped("no_outcome", 1)
            return []
        if key is None:
            self._dropped("no_group_key", 1)
            return []
        run = Run(slim(case), {}, outcome)
        group = self._groups.get(key)
        if group is not None and now - group.started > opts.max_age:
            del self._groups[key]
            self._dropped("group_expired", len(group.runs))
            group = None
        if group is None:
            while len(self._groups) >= opts.max_groups:
                _, oldest = self._groups.popitem(last=False)
                self._dropped("group_evicted", len(oldest.runs))
            group = self._groups[key] = _Group(now)
        group.runs.append(run)
        if len(group.runs) < opts.k:
            return []
        del self._groups[key]
        return [(group.runs, case)]

    def sweep(self, now: float) -> None:
        """Drop the groups older than ``max_age`` (counted)."""
        for key in [k for k, g in self._groups.items() if now - g.started > self.options.max_age]:
            self._dropped("group_expired", len(self._groups.pop(key).runs))


def slim(case: EvalCase) -> EvalCase:
    """A run as a group holds it: what the group metrics read (output, tool names, resources, attributes)."""
    return replace(case, input=None, expected=None, context=(), messages=(), system_prompt=None,
                   tool_calls=tuple(new_tool_call(c.name) for c in case.tool_calls))


def attribute_names(options: GroupOptions) -> list[str]:
    """The attributes a group metric reads: its group attribute (``group_by: attribute``) and a variant attribute."""
    names = [options.group_attribute] if options.group_by == "attribute" else []
    variant = getattr(options, "variant_attribute", None)
    return [*names, variant] if isinstance(variant, str) else names
