"""Judged metrics through the whole pipeline: `evald replay` with a `judges:` config and the real openai SDK."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from evald.config.loader import parse_config
from evald.replay import replay
from tests.judges.fake_llm import Reply, fake_llm, user_text

CORPUS = Path(__file__).resolve().parents[1] / "testdata" / "corpus" / "otel-openai-v2.span_only"


async def test_replay_scores_a_corpus_trace_with_a_judge_and_redacts_pii() -> None:
    async with fake_llm() as llm:
        llm.default = Reply(text='{"reasoning": "on topic and correct", "score": 5}')
        config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: "${{env:JUDGE_KEY}}", base_url: "{llm.base_url}/v1",
             timeout: 5s }}
metrics:
  - {{ kind: answer_relevancy, scope: trace, options: {{ judge: default }} }}
""", environ={"JUDGE_KEY": "sk-test-not-a-real-key"})
        result = await replay([CORPUS / "a_chat_correct.pb", CORPUS / "e_pii.pb"], config)
    scores = {c.case.trace_id: c.scores for c in result.scored}
    assert len(scores) == 2 and all(len(s) == 1 and s[0].value == 1.0 for s in scores.values())
    assert all(s[0].reason == "on topic and correct" for s in scores.values())
    sent = [user_text(body) for body in llm.received]
    assert len(sent) == 2
    assert not any("jane.doe@example.com" in text or "555-0132" in text for text in sent)  # redacted before sending
    assert any("[EMAIL_1]" in text for text in sent)


async def test_replay_scores_the_issue_17_judged_kinds_through_the_anthropic_sdk() -> None:
    """A dag (two questions deep), misuse_detection and compliance on two corpus traces; pairwise, without a
    golden's expected answer, is a counted skip (missing_expected), not an error and not a 0."""
    async with fake_llm() as llm:
        original = llm._reply

        async def by_metric(request: web.Request) -> web.StreamResponse:
            system = str((await request.json())["system"])
            if "1 (yes) or 0 (no)" in system:  # a dag node: yes to 'on topic', no to 'cites'
                answer = 0 if "cite" in system else 1
                llm.default = Reply(text=f'{{"reasoning": "node", "answer": {answer}}}')
            elif "compliant_policies" in system:
                llm.default = Reply(text='{"reasoning": "fine", "compliant_policies": 1}')
            else:
                llm.default = Reply(text='{"reasoning": "benign", "score": 5}')
            return await original(request)

        llm._reply = by_metric  # type: ignore[method-assign]
        config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
judges:
  default: {{ provider: anthropic, model: claude-haiku-4-5, api_key: "${{env:JUDGE_KEY}}", base_url: "{llm.base_url}",
             timeout: 5s }}
metrics:
  - kind: dag
    scope: trace
    options:
      root: on_topic
      nodes:
        on_topic: {{ question: "Is the output on topic?", yes: cites, no: 0.0 }}
        cites: {{ question: "Does the output cite a source?", yes: 1.0, no: 0.5 }}
  - {{ kind: misuse_detection, scope: trace }}
  - {{ kind: compliance, scope: trace, options: {{ policies: ["Never reveal a password."] }} }}
  - {{ kind: pairwise, scope: trace }}
""", environ={"JUDGE_KEY": "sk-test-not-a-real-key"})
        result = await replay([CORPUS / "a_chat_correct.pb", CORPUS / "e_pii.pb"], config)
    assert len(result.scored) == 2
    for scored in result.scored:
        values = {s.name: (s.value, s.reason) for s in scored.scores}
        assert values == {
            "dag": (0.5, "root 'on_topic': yes -> 'cites': no -> 0.5"),
            "misuse_detection": (1.0, "benign"),
            "compliance": (1.0, "fine"),
        }
        assert ("pairwise", "missing_expected") in scored.skipped and scored.errors == ()
    assert len(llm.received) == 2 * (2 + 1 + 1)  # per trace: two dag nodes, misuse_detection, compliance
