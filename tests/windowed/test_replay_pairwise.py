"""``evald replay`` of two files, one trace of variant A and one of variant B for the same question: ``pairwise`` with
``reference: variant`` judges B's answer against A's (real openai SDK, local stand-in) and scores B's trace."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from evald.config.loader import parse_config
from evald.replay import replay
from tests.judges.fake_llm import Reply, fake_llm
from tests.metrics.judged_support import blocks_of
from tests.windowed.probe import ProbeRun, write_runs

RUNS = (ProbeRun("It is Lyon.", 0.5, "A"), ProbeRun("The capital is Paris.", 0.5, "B"))


async def test_replay_pairs_variant_b_with_variant_a(tmp_path: Path) -> None:
    paths = write_runs(tmp_path, RUNS)
    async with fake_llm() as llm:
        original = llm._reply

        async def by_order(request: web.Request) -> web.StreamResponse:
            b_first = blocks_of(await request.json())["response_a"] == "The capital is Paris."
            llm.default = Reply(text=f'{{"reasoning": "Paris is right", "preference": {2 if b_first else 4}}}')
            return await original(request)

        llm._reply = by_order  # type: ignore[method-assign]
        config = parse_config(f"""
receivers: {{}}
exporters: {{}}
assembly: {{ settle: 0s, decision_wait: 1s }}
judges:
  default: {{ provider: openai, model: gpt-4o-mini, api_key: "${{env:JUDGE_KEY}}", base_url: "{llm.base_url}/v1",
             timeout: 5s }}
metrics:
  - {{ kind: pairwise, scope: trace, options: {{ reference: variant }} }}
""", environ={"JUDGE_KEY": "sk-test-not-a-real-key"})
        result = await replay(paths, config)
    scores = [(record.trace_id, score) for record in result.scored for score in record.scores]
    assert len(scores) == 1 and len(llm.received) == 2  # one pair, judged in both orders
    ((trace_id, score),) = scores
    trace_a, trace_b = score.metadata["trace_ids"]
    assert trace_id == trace_b != trace_a == score.metadata["reference_trace_id"]
    assert score.metadata["variant"] == "B" and score.metadata["reference"] == "variant"
    assert score.value == 0.75 and score.passed  # ((5-2)/4 + (4-1)/4) / 2
    sent = sorted((b["response_a"], b["response_b"]) for b in map(blocks_of, llm.received))
    assert sent == [("It is Lyon.", "The capital is Paris."), ("The capital is Paris.", "It is Lyon.")]
