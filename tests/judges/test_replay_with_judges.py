"""Judged metrics through the whole pipeline: `evald replay` with a `judges:` config and the real openai SDK."""

from __future__ import annotations

from pathlib import Path

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
