"""Redaction before a prompt leaves: what the local server received holds placeholders, never the values.

Every format of issue 16 (Stripe live keys, Authorization/Bearer values, Hugging Face tokens, Azure AccountKey
connection strings, non-ASCII e-mail addresses) and the usual ones (AWS, GitHub, Slack, private keys, JWTs), each
built at random in its real shape, through the real openai and anthropic SDKs."""

from __future__ import annotations

import base64
import json
import random
import re
import string
import time

import pytest
from prometheus_client import CollectorRegistry

from evald.judges.config import RedactionConfig
from evald.judges.prompting import VerdictField
from evald.judges.redaction import Redactor
from evald.judges.secret_rules import EVALD_RULES, detect_secrets_rules
from evald.judges.telemetry import JudgeTelemetry
from tests.judges.fake_llm import fake_llm, judge_config, make_judge, user_text

EMAIL = "jane.doe@example.com"
PHONE = "+1 415 555 2671"
KEY = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
IBAN = "DE89 3704 0044 0532 0130 00"
_RND = random.Random(16)
_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"


def chars(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RND.choice(alphabet) for _ in range(n))


def b64url(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


#: name -> (text as it would appear in a case, the secret in it); prefixes split so no scanner flags this file
SECRETS: dict[str, tuple[str, str]] = {
    name: (template.format(secret), secret) for name, template, secret in [
        ("stripe_live_secret_key", "use {} for charges.", "sk_" "live_" "51H" + chars(96)),
        ("stripe_restricted_key", "restricted key: {}", "rk_" "live_" + chars(24)),
        ("stripe_test_key", "test key {}", "sk_" "test_" + chars(40)),
        ("bearer_header", "curl -H 'Authorization: Bearer {}' https://api.example.com",
         "ya29.a0" + chars(60, _ALNUM + "-_")),
        ("bearer_in_prose", "the bearer token is bearer {}", chars(32, _ALNUM + "-._~")),
        ("basic_header_json", '{{"headers": {{"authorization": "Basic {}"}}}}',
         base64.b64encode(b"admin:" + chars(12).encode()).decode()),
        ("huggingface", "HF_TOKEN is {} ok", "hf_" + chars(34, string.ascii_letters)),
        ("azure_storage_connection_string",
         "DefaultEndpointsProtocol=https;AccountName=evald;AccountKey={};EndpointSuffix=core.windows.net",
         chars(86, _B64) + "=="),
        ("azure_service_bus_connection_string",
         "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={}", chars(43, _B64) + "="),
        ("azure_sas_url", "https://evald.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&sp=r&sig={}",
         chars(40) + "%3D"),
        ("aws_access_key_id", "key id {} in the config", "AKIA" + chars(16, string.ascii_uppercase + string.digits)),
        ("aws_secret_access_key", 'aws_secret_access_key = "{}"', chars(40, _B64)),
        ("github_classic", "token {}", "ghp_" + chars(36)),
        ("github_fine_grained", "GH={}", "github_pat_" + chars(22) + "_" + chars(59)),
        ("slack_bot_token", "slack {}", "xoxb-" + chars(12, string.digits) + "-" + chars(13, string.digits) + "-"
         + chars(24, string.ascii_lowercase + string.digits)),
        ("slack_webhook", "post to {}", "https://hooks.slack.com/services/T" + chars(8, string.ascii_uppercase)
         + "/B" + chars(8, string.ascii_uppercase) + "/" + chars(24)),
        ("private_key_pem", "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
         "MIIEowIBAAKCAQEA" + chars(60, _B64)),
        ("private_key_truncated", "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n(the rest was cut)",
         "b3BlbnNzaC1rZXktdjEAAAAA" + chars(60, _B64)),
        ("jwt", "cookie: session={}; path=/",
         b64url({"alg": "HS256", "typ": "JWT"}) + "." + b64url({"sub": "42"}) + "." + chars(43, _ALNUM + "-_")),
        ("url_password", "db at postgres://evald:{}@db.internal:5432/app", chars(20)),
    ]
}
UNICODE_EMAILS = ["jörg.müller@bücher.de", "用户@例子.广告", "θσερ@παράδειγμα.δοκιμή", "pelé@example.com",
                  "info@xn--bcher-kva.de", "ñandú@correo.es", "user＠例え.jp"]


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


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_secret_format_becomes_a_placeholder_and_the_text_around_it_stays(name: str) -> None:
    text, secret = SECRETS[name]
    redacted = Redactor(RedactionConfig()).session().redact(text)
    assert secret not in redacted and secret[4:20] not in redacted and secret[-16:] not in redacted
    assert re.search(r"\[(SECRET|EMAIL)_1\]", redacted)  # a password before @host reads as an e-mail: gone too
    if not name.startswith("private_key"):  # a key block goes whole, its BEGIN line included
        before = text.split(secret)[0]
        kept = before[: max(before.rfind(separator) for separator in " ;&?\n/") + 1]  # up to the secret's name
        assert redacted.startswith(kept)


@pytest.mark.parametrize("address", UNICODE_EMAILS)
def test_e_mail_addresses_with_non_ascii_characters_are_replaced(address: str) -> None:
    redacted = Redactor(RedactionConfig()).session().redact(f"Écrivez à {address} demain.")
    assert redacted == "Écrivez à [EMAIL_1] demain."


def test_ordinary_text_is_left_alone() -> None:
    text = ("The bearer of this letter needs authorization: ask the key holder. Visit https://example.com/a/b?x=1 "
            "— naïve café owners in Zürich write to ops@example.com; the APACHE server said 200 OK. Prices: 12:30.")
    assert Redactor(RedactionConfig()).session().redact(text) == text.replace("ops@example.com", "[EMAIL_1]")


def test_the_ruleset_is_detect_secrets_own_plus_evald_rules_for_what_it_misses() -> None:
    names = {name for name, _ in detect_secrets_rules()}
    assert {"StripeDetector", "AWSKeyDetector", "GitHubTokenDetector", "SlackDetector", "JwtTokenDetector",
            "PrivateKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector"} <= names
    assert "IPPublicDetector" not in names
    own = [SECRETS[n][0] for n in ("bearer_header", "huggingface", "azure_service_bus_connection_string")]
    for text in own:  # what detect-secrets alone lets through, and an evald rule catches
        assert not any(p.search(text) for _, p in detect_secrets_rules())
        assert any(p.search(text) for p in EVALD_RULES.values())


@pytest.mark.parametrize("text", ["a." * 5120, "//a/" * 2560, "eyJa." * 2048, "ö@ü." * 2560, " " * 10240])
def test_redacting_10_kb_of_adversarial_text_stays_fast(text: str) -> None:
    redactor = Redactor(RedactionConfig())
    started = time.perf_counter()
    redactor.session().redact(text)
    assert time.perf_counter() - started < 1.0  # each took 0.1-8 s before its rule was bounded; now ~50 ms


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


@pytest.mark.integration
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_the_server_never_receives_any_listed_secret_or_unicode_address(provider: str) -> None:
    data = [(name, text) for name, (text, _) in SECRETS.items()]
    data.append(("emails", "Contacts: " + ", ".join(UNICODE_EMAILS)))
    async with fake_llm() as llm:
        judge = make_judge(judge_config(llm, provider), JudgeTelemetry(CollectorRegistry()))
        await judge.evaluate("Judge the output.", data, (VerdictField("score", 1, 5, "quality"),))
        await judge.aclose()
        sent = user_text(llm.received[0])
    for _, secret in SECRETS.values():
        assert secret not in sent and secret[4:20] not in sent and secret[-16:] not in sent
    for address in UNICODE_EMAILS:
        local = re.split("[@＠]", address)[0]
        assert address not in sent and (local.isascii() or local not in sent)
    assert len(set(re.findall(r"\[(?:SECRET|EMAIL)_\d+\]", sent))) == len(SECRETS) + len(UNICODE_EMAILS)
