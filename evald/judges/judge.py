"""A named judge: redact, build the delimited prompt, call the provider through the limiter, parse the verdict."""

from __future__ import annotations

from collections.abc import Sequence

from evald.judges.config import JudgeConfig
from evald.judges.limiter import JudgeLimiter
from evald.judges.prompting import Verdict, VerdictField, build_prompt, parse_verdict
from evald.judges.providers import JudgeProvider, make_provider
from evald.judges.redaction import Redactor
from evald.judges.telemetry import JudgeTelemetry


class Judge:
    def __init__(
        self, name: str, config: JudgeConfig, telemetry: JudgeTelemetry, *,
        provider: JudgeProvider | None = None, limiter: JudgeLimiter | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.provider = provider if provider is not None else make_provider(config)
        self.limiter = limiter if limiter is not None else JudgeLimiter(name, config, telemetry)
        self.redactor = Redactor(config.redaction)

    async def evaluate(self, task: str, data: Sequence[tuple[str, str]], fields: Sequence[VerdictField]) -> Verdict:
        """Judge ``data`` ((label, untrusted text) pairs) for ``task``; raises ``JudgeError`` without a verdict."""
        session = self.redactor.session()
        prompt = build_prompt(task, [(label, session.redact(text)) for label, text in data], fields)

        return await self.limiter.call(
            prompt.text, lambda: self.provider.complete(prompt.system, prompt.user),
            lambda text: parse_verdict(text, fields),
        )

    async def aclose(self) -> None:
        await self.provider.aclose()
