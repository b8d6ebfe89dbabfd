"""``dag``: a YAML decision graph of yes/no judge questions, walked node by node (real openai and anthropic SDKs
against the local stand-in), and its checks at load."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from evald.case import EvalCase
from evald.config.loader import parse_config
from evald.errors import ConfigError
from evald.judges.limiter import JudgeError
from evald.metrics.llm_judge.dag import DagMetric
from tests.judges.fake_llm import FakeLLM, Reply
from tests.metrics.judged_support import reply, sent_blocks, sent_system

pytestmark = pytest.mark.integration
GRAPH: dict[str, Any] = yaml.safe_load("""
root: answers
nodes:
  answers: {question: "Does the output answer the question?", yes: cites, no: 0.0}
  cites: {question: "Does the output cite a source?", yes: 1.0, no: polite}
  polite: {question: "Is the output polite?", yes: good_enough, no: 0.3}
  good_enough: {score: 0.6}
fields: [input, output, expected]
""")
CASE = EvalCase(input="Capital of France?", output="Paris, obviously.", expected="Paris")


async def test_the_path_is_walked_to_a_leaf_node(sdk_llm: FakeLLM) -> None:
    sdk_llm.then(reply("it says Paris", answer=1), reply("no source", answer=0), reply("curt but fine", answer=1))
    score = await DagMetric(options=GRAPH).a_measure(CASE)
    assert score is not None and score.value == 0.6 and score.passed
    assert score.reason == "root 'answers': yes -> 'cites': no -> 'polite': yes -> 'good_enough' = 0.6"
    assert score.metadata["path"] == [
        {"node": "answers", "answer": "yes", "reasoning": "it says Paris"},
        {"node": "cites", "answer": "no", "reasoning": "no source"},
        {"node": "polite", "answer": "yes", "reasoning": "curt but fine"},
    ]
    assert len(sdk_llm.received) == 3  # one judge call per question node on the path
    assert "Is the output polite?" in sent_system(sdk_llm) and "(integer, 0 to 1)" in sent_system(sdk_llm)
    assert list(sent_blocks(sdk_llm)) == ["input", "output", "expected"]


async def test_an_inline_leaf_ends_the_walk_early(sdk_llm: FakeLLM) -> None:
    sdk_llm.then(reply("no answer", answer=0))
    score = await DagMetric(options=GRAPH).a_measure(CASE)
    assert score is not None and score.value == 0.0 and not score.passed
    assert score.reason == "root 'answers': no -> 0"
    assert len(sdk_llm.received) == 1


async def test_a_malformed_verdict_at_any_node_is_an_error(sdk_llm: FakeLLM) -> None:
    sdk_llm.then(reply(answer=1), Reply(text='{"reasoning": "x", "answer": 2}'))
    with pytest.raises(JudgeError) as caught:
        await DagMetric(options=GRAPH).a_measure(CASE)
    assert caught.value.outcome == "malformed" and len(sdk_llm.received) == 2
    sdk_llm.then(Reply(text="yes"))
    with pytest.raises(JudgeError) as caught:
        await DagMetric(options=GRAPH).a_measure(CASE)
    assert caught.value.outcome == "malformed"


async def test_without_an_output_it_is_not_applicable(llm: FakeLLM) -> None:
    assert await DagMetric(options=GRAPH).a_measure(EvalCase(input="q")) is None
    assert llm.received == []


@pytest.mark.parametrize(("nodes", "root", "message"), [
    ({"a": {"question": "q", "yes": "b", "no": 0}, "b": {"question": "q", "yes": "a", "no": 1}}, "a",
     "cycle: a -> b -> a"),
    ({"a": {"question": "q", "yes": "a", "no": 0}}, "a", "cycle: a -> a"),
    ({"a": {"question": "q", "yes": 1.5, "no": 0}}, "a", "leaf score 1.5 must be within [0, 1]"),
    ({"a": {"question": "q", "yes": 1, "no": "b"}, "b": {"score": -0.1}}, "a", "greater than or equal to 0"),
    ({"a": {"question": "q", "yes": 1, "no": 0}, "c": {"score": 0.2}}, "a", "not reachable from root 'a': c"),
    ({"a": {"score": 0.2}}, "a", "must be a question node"),
    ({"a": {"question": "q", "yes": "zz", "no": 0}}, "a", "branches to 'zz', which is not a node"),
    ({"a": {"question": "q", "yes": 1}}, "a", "needs `question`, `yes` and `no`"),
    ({"a": {"question": "q", "yes": 1, "no": 0, "score": 0.5}}, "a", "a leaf node has only `score`"),
    ({"a": {"question": "q", "yes": 1, "no": 0}}, "b", "root 'b' is not a node"),
])
def test_a_bad_graph_is_refused_at_load(nodes: dict[str, Any], root: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        DagMetric(options={"root": root, "nodes": nodes})
    assert message in str(caught.value)


def test_a_config_file_with_a_cycle_is_refused_with_its_yaml_path() -> None:
    text = """
judges:
  default: {provider: openai, model: gpt-4o-mini, api_key: sk-test}
metrics:
  - kind: dag
    options:
      root: a
      nodes:
        a: {question: "Is it right?", yes: b, no: 0}
        b: {question: "Is it polite?", yes: a, no: 1}
"""
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert caught.value.problems == [("metrics[0].options", "Value error, cycle: a -> b -> a")]
    parse_config(text.replace("yes: a, no: 1", "yes: 1, no: 0.5"))  # the same graph without the cycle loads
