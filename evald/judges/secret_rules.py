"""The secret ruleset of redaction: detect-secrets' regex plugins, plus the formats they miss.

Maintained rules: every regex plugin (``RegexBasedDetector``) that detect-secrets (Yelp, Apache-2.0) ships, found
through its own plugin registry, so an upgrade brings its new rules: AWS access keys (and secret keys next to
an ``aws ... key`` name), Azure storage ``AccountKey=`` (88 characters), URL user:password, Cloudant, Discord,
GitHub (ghp_/gho_/ghu_/ghs_/ghr_), GitLab, IBM Cloud IAM and COS HMAC, JWTs, Mailchimp, npm, OpenAI (legacy
``T3BlbkFJ`` keys), private key headers, PyPI, SendGrid, Slack tokens and webhooks, SoftLayer, Square, Stripe
``sk_live_``/``rk_live_``, Telegram, Twilio. Left out: ``IPPublicDetector`` (an IP address is not a credential).
Its verification code (network calls) is never used: only the ``denylist`` regexes are read.

A match is what the secret is: for a detect-secrets rule, its last group that captured at least 8 characters (a
password in a URL, a key after its name); for an evald rule, its ``secret`` group; else the whole match. Then the
separators some rules include (whitespace, quotes, ``=``, ``:``) are trimmed, and the span is extended to the end
of the token (detect-secrets' Stripe rule stops at 24 characters of a longer key and its JWT rule is lazy: the
rest of the key must not leave). A rule's match inside its previous extended match is skipped.

evald's additions (``EVALD_RULES``), for what detect-secrets lacks: ``Authorization:`` header values with any
scheme and ``Bearer`` tokens anywhere, Hugging Face ``hf_``/``api_org_`` tokens, Azure connection-string and SAS
secrets of any length (``AccountKey=``, ``SharedAccessKey=``, ``SharedAccessSignature=``, ``sig=``), Stripe test and
webhook secrets, GitHub fine-grained ``github_pat_`` tokens, and whole PEM private key blocks (with or without
their END line). ``unicode_emails`` finds e-mail addresses with non-ASCII local parts or IDN domains (Unicode or
``xn--``), which the ASCII e-mail detector does not; it runs only on text that is not pure ASCII.

Cost, measured on 10 KB of prose: about 3 ms for every rule (the keyword-context rules of Cloudant, IBM and
SoftLayer are half of it); redaction of a typical 2 KB judge prompt stays under 2 ms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from evald.detection.detectors import Match

#: detect-secrets plugins not used for redaction (not credentials)
EXCLUDED_PLUGINS = frozenset({"IPPublicDetector"})
#: a literal every match of a plugin's rules contains: without it in the text the rules are not run (npm's rule is
#: quadratic on long lines of slashes: 10 KB took 0.1 s)
REQUIRED_LITERALS = {"NpmDetector": "_authToken"}
#: a captured group shorter than this is a prefix (``ghp``), not the secret: the whole match is used
_MIN_GROUP = 8
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.%~]*")
_EDGE = " \t\r\n\"'`=:,;"

EVALD_RULES: dict[str, re.Pattern[str]] = {
    "authorization_header": re.compile(
        r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|negotiate|apikey)\s+)?"
        r"(?P<secret>[^\s\"',;]{8,})"
    ),
    "bearer_token": re.compile(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{12,}=*)"),
    "huggingface": re.compile(r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}"),
    "azure_connection_secret": re.compile(
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*(?P<secret>[^;\s\"']{8,})"
    ),
    "azure_sas_signature": re.compile(r"(?i)[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{16,})"),
    "stripe": re.compile(r"\b(?:[rs]k_(?:live|test)|whsec)_[0-9A-Za-z]{16,}"),
    "github_fine_grained": re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    "private_key_block": re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END \1PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)"
    ),
}

_LOCAL = r"[\w!#$%&'*+/=?^`{|}~-]+(?:\.[\w!#$%&'*+/=?^`{|}~-]+)*"
_UNICODE_EMAIL = re.compile(
    rf"(?<![\w.!#$%&'*+/=?^`{{|}}~-]){_LOCAL}[@\uff20](?:[^\W_](?:[\w-]{{0,61}}[^\W_])?\.)+"
    r"(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{2,59})(?![\w-])"
)


@functools.cache
def detect_secrets_rules() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(plugin class name, regex) of every detect-secrets regex plugin used (loaded once, when the first judge
    with secret redaction is built: importing detect-secrets takes ~0.1 s, which commands without judges skip)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

    plugins: list[type[BasePlugin]] = list(get_mapping_from_secret_type_to_class().values())
    chosen = sorted(
        (p for p in plugins if issubclass(p, RegexBasedDetector) and p.__name__ not in EXCLUDED_PLUGINS),
        key=lambda p: p.__name__,
    )
    return tuple(
        (plugin.__name__, pattern) for plugin in chosen for pattern in plugin().denylist
    )


def all_rules() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return detect_secrets_rules() + tuple(EVALD_RULES.items())


def _span(text: str, match: re.Match[str], evald_rule: bool) -> tuple[int, int]:
    """The secret's span in a rule's match: see the module docstring."""
    groups = [] if evald_rule else [i for i in range(1, match.re.groups + 1) if match.group(i)]
    if evald_rule and "secret" in match.re.groupindex:
        start, end = match.span("secret")
    elif groups and len(match.group(groups[-1])) >= _MIN_GROUP:
        start, end = match.span(groups[-1])
    else:
        start, end = match.span()
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    tail = _TOKEN_TAIL.match(text, end)
    end = tail.end() if tail else end
    while end > start and text[end - 1] == ".":  # a sentence's full stop, not the key's
        end -= 1
    return start, end


def find_rule_secrets(text: str) -> Iterator[Match]:
    """Every secret the ruleset finds in ``text`` (overlapping matches included; the caller keeps one)."""
    for name, pattern in all_rules():
        if (literal := REQUIRED_LITERALS.get(name)) is not None and literal not in text:
            continue
        covered = 0  # a rule's match inside its previous (extended) one adds nothing
        for found in pattern.finditer(text):
            if found.start() < covered:
                continue
            start, end = _span(text, found, name in EVALD_RULES)
            if end > start:
                covered = end
                yield Match("secret", start, end, text[start:end], "***", name)


def unicode_emails(text: str) -> Iterator[Match]:
    """E-mail addresses with non-ASCII characters (none in ASCII-only text: the PII detector has those)."""
    if text.isascii():
        return
    for found in _UNICODE_EMAIL.finditer(text):
        if not found.group().isascii():
            yield Match("email", found.start(), found.end(), found.group(), "***")
