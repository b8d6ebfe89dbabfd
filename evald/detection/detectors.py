"""PII and secret detectors shared by the ``pii_leak``/``secret_leak`` metrics and the judges' redaction.

Every detector returns ``Match`` objects: the span, the kind and a masked form. The matched text itself never
leaves this module except through ``Match.value``, which the metrics use only to apply ``allow`` patterns.

PII: emails (regex), phone numbers (Google's libphonenumber, Python port ``phonenumberslite``: numbers in
E.164 / international form anywhere, national formats for the selected locales, kept only when valid for the
numbering plan), payment cards (network prefix + Luhn), IBANs (country format + mod 97) and national ids
(patterns per locale, then the checks of ``validators.NATIONAL_ID_VALIDATORS``).
Secrets: provider key formats (OpenAI, Anthropic, AWS access key ids, GitHub, Slack, Google API keys), JWTs
whose header decodes to JSON with an ``alg``, PEM private key blocks, and ``name = "value"`` assignments whose
name says secret and whose value has at least a given Shannon entropy.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from evald.detection.validators import (
    NATIONAL_ID_VALIDATORS,
    card_number_valid,
    iban_valid,
    mask,
    shannon_entropy,
)

PiiType = Literal["email", "phone", "credit_card", "iban", "national_id"]
Locale = Literal["us", "uk", "fr", "de", "it"]
SecretType = Literal[
    "openai", "anthropic", "aws_access_key", "github", "slack", "google_api_key", "jwt", "private_key", "generic",
]

PII_TYPES: tuple[PiiType, ...] = ("email", "phone", "credit_card", "iban", "national_id")
LOCALES: tuple[Locale, ...] = ("us", "uk", "fr", "de", "it")
SECRET_TYPES: tuple[SecretType, ...] = (
    "openai", "anthropic", "aws_access_key", "github", "slack", "google_api_key", "jwt", "private_key", "generic",
)
_PHONE_REGIONS: dict[str, str] = {"us": "US", "uk": "GB", "fr": "FR", "de": "DE", "it": "IT"}


@dataclass(frozen=True, slots=True)
class Match:
    """One detection in one text. ``value`` is the raw matched text: never put it in a score."""

    type: str
    start: int
    end: int
    value: str
    masked: str
    detail: str | None = None


# -- PII -----------------------------------------------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24}(?![\w-])"
)
# a run of digits and phone punctuation (spaces, dashes, dots, slashes, brackets) starting with a digit, +, or (
_PHONE_CANDIDATE = re.compile(r"[+\uff0b(]*\d[\d \t\u00a0().\-/\u2010-\u2015]{4,}\d")
_MIN_PHONE_DIGITS = 6
# dates and year ranges: 2024-07-18, 18/07/2024, 1990 - 2000
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{4} ?[-/] ?\d{4}")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
# Uppercase IBANs, compact or in groups of four; a trailing word caught by the last group is trimmed on retry.
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_NATIONAL_ID_PATTERNS: dict[str, re.Pattern[str]] = {
    "us": re.compile(r"(?<![\d-])\d{3}([- ])\d{2}\1\d{4}(?![\d-])"),      # separators required: 123-45-6789
    "uk": re.compile(r"\b[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"),
    "fr": re.compile(r"(?<!\d)[1-478] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?!\d)"),
    "de": re.compile(r"(?<!\d)[1-9]\d(?: ?\d{3}){3}(?!\d)"),
    "it": re.compile(
        r"\b[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]\b", re.IGNORECASE
    ),
}


def _emails(text: str) -> Iterator[Match]:
    for m in _EMAIL.finditer(text):
        yield Match("email", m.start(), m.end(), m.group(), mask("email", m.group()))


def _cards(text: str) -> Iterator[Match]:
    for m in _CARD.finditer(text):
        if card_number_valid(m.group()):
            yield Match("credit_card", m.start(), m.end(), m.group(), mask("credit_card", m.group()))


def _ibans(text: str) -> Iterator[Match]:
    for m in _IBAN.finditer(text):
        candidate = m.group()
        while not iban_valid(candidate) and " " in candidate:
            candidate = candidate.rsplit(" ", 1)[0]
        if iban_valid(candidate):
            yield Match("iban", m.start(), m.start() + len(candidate), candidate, mask("iban", candidate))


def _national_ids(text: str, locales: Iterable[str]) -> Iterator[Match]:
    for locale in locales:
        kind, is_valid = NATIONAL_ID_VALIDATORS[locale]
        for m in _NATIONAL_ID_PATTERNS[locale].finditer(text):
            if is_valid(m.group()):
                yield Match("national_id", m.start(), m.end(), m.group(), mask("national_id", m.group()), kind)


def _valid_phone_number(candidate: str, regions: Sequence[str]) -> bool:
    """Whether libphonenumber accepts ``candidate`` as a whole: in international form (``+`` or ``00``) for any
    country, otherwise in the national format of one of ``regions``. A cheap parse and validity check comes
    first; the matcher then confirms with its own rules (e.g. a national prefix that the format requires)."""
    import phonenumbers  # ~30 ms of import: at the first phone candidate, not at every start-up

    text = candidate
    if text.startswith("00"):
        text = "+" + text[2:]
    international = text.lstrip("(").startswith(("+", "\uff0b"))
    if not international and text.isdigit():
        return False  # a bare run of digits in national form is more often an order or account number
    digits = [c for c in text if c.isdigit()]
    for region in [None] if international else regions:
        try:
            number = phonenumbers.parse(text, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number) and any(
            [c for c in m.raw_string if c.isdigit()] == digits
            for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID)
        ):
            return True
    return False


def _phones(text: str, locales: Sequence[str], taken: list[Match]) -> Iterator[Match]:
    """Runs of digits and phone punctuation that libphonenumber validates: numbers written in international
    form (``+`` or ``00``) for any country, national formats (with at least one separator) for the regions of
    ``locales``. Dates, and spans already claimed by another detector, are skipped; a run that is not valid as
    a whole is retried without its last one or two space-separated groups."""
    regions = [_PHONE_REGIONS[locale] for locale in locales]
    for candidate in _PHONE_CANDIDATE.finditer(text):
        snippet, start = candidate.group(), candidate.start()
        if _DATE.fullmatch(snippet.lstrip("(+")) or any(start < k.end and k.start < candidate.end() for k in taken):
            continue
        for _ in range(3):
            if sum(c.isdigit() for c in snippet) < _MIN_PHONE_DIGITS:
                break
            if _valid_phone_number(snippet, regions):
                yield Match("phone", start, start + len(snippet), snippet, mask("phone", snippet))
                break
            if " " not in snippet:
                break
            snippet = snippet.rsplit(" ", 1)[0].rstrip(" (")


def find_pii(text: str, types: Collection[str], locales: Sequence[str]) -> list[Match]:
    """PII in ``text``, in text order. Detectors run in the order email, card, IBAN, national id, phone; where
    detections overlap, the earlier one wins (a card number is not also reported as a phone number)."""
    found: list[Match] = []
    if "email" in types:
        found += _emails(text)
    if "credit_card" in types:
        found += _cards(text)
    if "iban" in types:
        found += _ibans(text)
    if "national_id" in types:
        found += _national_ids(text, locales)
    if "phone" in types:
        found += list(_phones(text, locales, taken=list(found)))
    return _without_overlaps(found)


# -- secrets -------------------------------------------------------------------------------------------------------

_SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "anthropic": re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    "openai": re.compile(r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    "aws_access_key": re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    "github": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    "slack": re.compile(r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}"),
    "google_api_key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}"),
    "private_key": re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END \1PRIVATE KEY(?: BLOCK)?-----)?"
    ),
}
_SECRET_PREFIXES: dict[str, re.Pattern[str]] = {
    "anthropic": re.compile(r"sk-ant-"),
    "openai": re.compile(r"sk-(?:proj-|svcacct-|admin-)?"),
    "aws_access_key": re.compile(r"A[A-Z]IA"),
    "github": re.compile(r"gh[pousr]_|github_pat_"),
    "slack": re.compile(r"xox[a-z]-"),
    "google_api_key": re.compile(r"AIza"),
    "jwt": re.compile(r"eyJ"),
    "private_key": re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
}
# the name's parts are bounded: unbounded, a long run of name characters without a keyword ('a.a.a...') made
# every word boundary scan to its end (10 KB took 8 s)
_ASSIGNMENT = re.compile(
    r"(?P<name>\b[A-Za-z0-9_.-]{0,64}?(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|access[_-]?key"
    r"|private[_-]?key|credentials?|auth)[A-Za-z0-9_.-]{0,64})[\"']?\s*(?::=|=>|:|=)\s*(?P<quote>[\"'`]?)"
    r"(?P<value>[^\s\"'`,;<>{}$*()\[\]]{16,})(?P=quote)",
    re.IGNORECASE,
)


def _jwt_header_ok(token: str) -> bool:
    header = token.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


def _secret_mask(kind: str, value: str) -> str:
    prefix = _SECRET_PREFIXES[kind].match(value)
    return f"{prefix.group() if prefix else ''}***"


def find_secrets(text: str, types: Collection[str], min_entropy: float) -> list[Match]:
    """Secrets in ``text``, in text order; a provider format wins over a generic assignment on the same span."""
    found: list[Match] = []
    for kind, pattern in _SECRET_PATTERNS.items():
        if kind not in types:
            continue
        for m in pattern.finditer(text):
            if kind == "jwt" and not _jwt_header_ok(m.group()):
                continue
            found.append(Match("secret", m.start(), m.end(), m.group(), _secret_mask(kind, m.group()), kind))
    if "generic" in types:
        for m in _ASSIGNMENT.finditer(text):
            value = m.group("value")
            if shannon_entropy(value) >= min_entropy:
                start, end = m.start("value"), m.end("value")
                found.append(Match("secret", start, end, value, f"{m.group('name')}=***", "generic"))
    return _without_overlaps(found)


def _without_overlaps(found: list[Match]) -> list[Match]:
    """Keep the first-found of overlapping matches (the detectors run in priority order), sorted by position."""
    kept: list[Match] = []
    for match in found:
        if all(match.end <= k.start or match.start >= k.end for k in kept):
            kept.append(match)
    return sorted(kept, key=lambda m: (m.start, m.end))
