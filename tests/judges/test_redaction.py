"""Redaction before a prompt leaves: what the local server received holds placeholders, never the values."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.config import RedactionConfig
from evald.judges.prompting import VerdictField
from evald.judges.redaction import Redactor
from evald.judges.telemetry import JudgeTelemetry
from tests.judges.fake_llm import fake_llm, judge_config, make_judge, user_text

EMAIL = "jane.doe@example.com"
PHONE = "+1 415 555 2671"
KEY = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
IBAN = "DE89 3704 0044 0532 0130 00"


def test_values_become_typed_numbered_placeholders_consistent_within_a_prompt() -> None:
    session = Redactor(RedactionConfig()).session()
    first = session.redact(f"Mail {EMAIL} or bob@example.org, call {PHONE}.")
    second = session.redact(f"Again: {EMAIL}; IBAN {IBAN}; key {KEY}")
    assert first == "Mail [EMAIL_1] or [EMAIL_2], call [PHONE_1]."
    assert second == "Again: [EMAIL_1]; IBAN [IBAN_1]; key [SECRET_1]"


def test_configured_patterns_and_switching_redaction_off() -> None:
    config = RedactionConfig(patterns={"ticket": r"TCK-\d{4}"})
    assert Redactor(config).session().redact("see TCK-1234 and TCK-9999") == "see [TICKET_1] and [TICKET_2]"
    assert Redactor(RedactionConfig(enabled=False)).session().redact(EMAIL) == EMAIL


@pytest.mark.integration
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_the_server_receives_placeholders_never_the_pii(provider: str) -> None:
    async with fake_llm() as llm:
        judge = make_judge(judge_config(llm, provider), JudgeTelemetry(CollectorRegistry()))
        await judge.evaluate(
            "Judge the output.",
            [("input", f"I am {EMAIL}, phone {PHONE}"), ("output", f"Noted {EMAIL}. Your key is {KEY}.")],
            (VerdictField("score", 1, 5, "quality"),),
        )
        await judge.aclose()
        sent = user_text(llm.received[0])
    assert "[EMAIL_1]" in sent and "[PHONE_1]" in sent and "[SECRET_1]" in sent
    for value in (EMAIL, PHONE, KEY, "415 555 2671", "jane.doe"):
        assert value not in sent
