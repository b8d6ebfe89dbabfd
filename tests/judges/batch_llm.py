"""A stand-in judge that answers any verdict schema it is sent, single or batched (``m1``..``mN`` parts), through
the real SDKs' wire formats (evald/judges/fake_llm.py does the HTTP), with a valid verdict per part unless
``mangle`` changes a part (to make it malformed); usage reported as about 4 bytes per token of what was sent and
answered (so prompt tokens and cost can be compared between single and batched judging)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.judges.fake_llm import FakeLLM, Reply
from tests.metrics.local_http import serve

_RANGE = re.compile(r"\((-?\d+) to (-?\d+)\)|\(at least (-?\d+)\)")
BYTES_PER_TOKEN = 4


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    if tools := body.get("tools"):
        schema: dict[str, Any] = tools[0]["input_schema"]
        return schema
    return dict(body["response_format"]["json_schema"]["schema"])


def verdict_for(schema: dict[str, Any]) -> dict[str, Any]:
    """A valid verdict for a single verdict schema: each integer at the top of its range (or its minimum)."""
    verdict: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if spec["type"] == "string":
            verdict[name] = "looks fine"
            continue
        found = _RANGE.search(spec.get("description", ""))
        assert found, spec
        verdict[name] = int(found.group(2)) if found.group(2) else int(found.group(3))
    return verdict


@dataclass
class SchemaLLM(FakeLLM):
    mangle: Callable[[str, dict[str, Any]], Any] | None = None
    raw_answer: str | None = None  # answer every request with this text instead
    latency: float = 0.0  # seconds before each answer
    batched_requests: int = 0
    parts_asked: int = 0
    prompt_tokens: int = 0
    answer_tokens: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.bodies.append(body)
        schema = _schema(body)
        if all(re.fullmatch(r"m\d+", name) for name in schema["properties"]):
            self.batched_requests += 1
            self.parts_asked += len(schema["properties"])
            answer = {name: self._part(name, verdict_for(part)) for name, part in schema["properties"].items()}
        else:
            self.parts_asked += 1
            answer = verdict_for(schema)
        text = self.raw_answer if self.raw_answer is not None else json.dumps(answer)
        sent = len(json.dumps(body).encode())
        tokens = math.ceil(sent / BYTES_PER_TOKEN), math.ceil(len(text.encode()) / BYTES_PER_TOKEN)
        self.prompt_tokens += tokens[0]
        self.answer_tokens += tokens[1]
        self.script.appendleft(Reply(text=text, input_tokens=tokens[0], output_tokens=tokens[1],
                                       delay=self.latency))
        return await super().handle(request)  # takes that reply at once (no await before it does)

    def _part(self, name: str, verdict: dict[str, Any]) -> Any:
        return self.mangle(name, verdict) if self.mangle is not None else verdict


@asynccontextmanager
async def schema_llm() -> AsyncIterator[SchemaLLM]:
    llm = SchemaLLM()
    async with serve(llm.handle) as server:
        llm.server = server
        yield llm
