"""``dag``: a decision graph of yes/no judge questions declared in YAML, walked node by node to a leaf score."""

from __future__ import annotations

from typing import ClassVar, Literal, Self, cast

from pydantic import Field, model_validator

from evald.case import Dimension, EvalCase, Score
from evald.config.base import ComponentConfig
from evald.judges.prompting import VerdictField
from evald.metrics.base import BaseMetric
from evald.metrics.judged.common import JudgedOptions, ask_judge, output_data

CaseField = Literal["input", "output", "expected", "context", "system_prompt"]
#: a branch: the name of the next node, or a leaf score in [0, 1]
Branch = str | float
_FIELDS = (VerdictField("answer", 0, 1, "1 = yes, 0 = no"),)
MAX_NODES = 50


class DagNode(ComponentConfig):
    question: str | None = Field(None, min_length=1, max_length=2000, description="A yes/no question for the judge.")
    yes: Branch | None = Field(None, description="After a yes: the next node's name, or a leaf score in [0, 1].")
    no: Branch | None = Field(None, description="After a no: the next node's name, or a leaf score in [0, 1].")
    score: float | None = Field(None, ge=0.0, le=1.0, description="A leaf node's score (a leaf has no question).")

    @model_validator(mode="before")
    @classmethod
    def _yaml_booleans(cls, data: object) -> object:
        """YAML 1.1 (PyYAML, evald's loader) reads the keys ``yes:`` and ``no:`` as true and false: take them back."""
        if isinstance(data, dict) and (True in data or False in data):
            return {{True: "yes", False: "no"}.get(key, key) if isinstance(key, bool) else key: value
                    for key, value in data.items()}
        return data

    @model_validator(mode="after")
    def _shape(self) -> Self:
        if self.score is not None:
            if self.question is not None or self.yes is not None or self.no is not None:
                raise ValueError("a leaf node has only `score`; a question node has `question`, `yes` and `no`")
        elif self.question is None or self.yes is None or self.no is None:
            raise ValueError("a question node needs `question`, `yes` and `no` (or give a leaf only `score`)")
        for branch in (self.yes, self.no):
            if isinstance(branch, float) and not 0.0 <= branch <= 1.0:
                raise ValueError(f"leaf score {branch} must be within [0, 1]")
        return self


class DagOptions(JudgedOptions):
    root: str = Field(..., min_length=1, description="The name of the first node (a question node).")
    nodes: dict[str, DagNode] = Field(
        ..., min_length=1, max_length=MAX_NODES, description="Node name -> a question node or a leaf node."
    )
    fields: list[CaseField] = Field(
        ["input", "output"], min_length=1, description="Case fields shown to the judge at every node.",
    )

    @model_validator(mode="after")
    def _graph(self) -> Self:
        if self.root not in self.nodes:
            raise ValueError(f"root {self.root!r} is not a node (nodes: {', '.join(self.nodes)})")
        if self.nodes[self.root].question is None:
            raise ValueError(f"root {self.root!r} must be a question node, not a leaf")
        for name, node in self.nodes.items():
            for branch in (node.yes, node.no):
                if isinstance(branch, str) and branch not in self.nodes:
                    raise ValueError(f"node {name!r} branches to {branch!r}, which is not a node")
        reached: set[str] = set()
        self._visit(self.root, (), reached)
        if unreached := [name for name in self.nodes if name not in reached]:
            raise ValueError(f"nodes not reachable from root {self.root!r}: {', '.join(unreached)}")
        return self

    def _visit(self, name: str, path: tuple[str, ...], reached: set[str]) -> None:
        """Depth-first from ``name``: a node met again on its own path is a cycle (ValueError)."""
        if name in path:
            raise ValueError(f"cycle: {' -> '.join((*path[path.index(name):], name))}")
        reached.add(name)
        node = self.nodes[name]
        for branch in (node.yes, node.no):
            if isinstance(branch, str):
                self._visit(branch, (*path, name), reached)


class DagMetric(BaseMetric):
    """A decision graph of yes/no judge questions, declared in YAML, walked from the root to a leaf score.

    Rubric: DeepEval's DAG metric (deep acyclic graph, as harness-evals' ``DAGMetric``; seed catalog, LLM-Judged:
    "DAG composes judgement nodes into a decision graph") in its binary-judgement form: each question node is one
    judge call answering yes or no about the case, the answer picks the branch, and the leaf reached gives the
    score. Options: ``root`` (the first node), ``nodes`` (name -> ``{question, yes, no}`` or a leaf ``{score}``; a
    branch is a node name or a leaf score inline; ``yes``/``no`` written as YAML keys, which YAML 1.1 reads as
    true/false, are taken as meant), ``fields`` (case fields sent at every node, default ``input``
    and ``output``; also ``expected``, ``context``, ``system_prompt``), ``judge``. Checked at load: the root is a
    question node, every branch names a node or is a score in [0, 1], no cycles, every node reachable from the
    root (so every path ends at a leaf), at most 50 nodes.

    Each node's verdict is ``{"reasoning": ..., "answer": 0 | 1}``; ``Score.reason`` is the path taken
    (``root 'relevant': yes -> 'cites': no -> 0.6``), metadata ``path`` lists each node's name, answer and
    reasoning. A path of d questions makes d judge calls one after another, all within ``pipeline.metric_timeout``
    (keep graphs shallow). A malformed verdict at any node is an error outcome (never a score); a skipped call
    (budget, circuit, never_send) skips the metric. Not applicable without an output.
    """

    kind: ClassVar[str] = "dag"
    family: ClassVar[str] = "llm_judge"
    dimension: ClassVar[Dimension] = Dimension.CORRECTNESS
    default_threshold: ClassVar[float] = 0.5
    requires: ClassVar[tuple[str, ...]] = ("input", "output", "expected", "context", "system_prompt")
    needs: ClassVar[tuple[str, ...]] = ("output",)
    Options: ClassVar[type[ComponentConfig]] = DagOptions

    async def a_measure(self, eval_case: EvalCase) -> Score | None:
        opts = cast(DagOptions, self.options)
        data = output_data(eval_case, opts.fields)
        if data is None:
            return None
        name, steps, shown = opts.root, [], []
        while True:
            node = opts.nodes[name]
            task = (f"Answer this question about the case with 1 (yes) or 0 (no), after reasoning about it:\n"
                    f"{node.question}")
            verdict = await ask_judge(self, eval_case, opts.judge, task, data, _FIELDS)
            answer = verdict.values["answer"] == 1
            steps.append({"node": name, "answer": "yes" if answer else "no", "reasoning": verdict.reasoning})
            shown.append(f"{name!r}: {'yes' if answer else 'no'}")
            branch = node.yes if answer else node.no
            if isinstance(branch, str) and opts.nodes[branch].score is None:
                name = branch
                continue
            leaf_score = opts.nodes[branch].score if isinstance(branch, str) else branch
            assert leaf_score is not None  # a node without a score is a question node (handled above)
            value = float(leaf_score)
            leaf = f"{branch!r} = {value:g}" if isinstance(branch, str) else f"{value:g}"
            return self.score(value, f"root {' -> '.join(shown)} -> {leaf}", path=steps, judge=opts.judge)
