"""Redaction before a prompt leaves the process: PII and secrets become typed placeholders like ``[EMAIL_1]``.

Detection reuses the safety detectors (``evald/detection/detectors.py``): emails, phone numbers
(libphonenumber), payment cards (Luhn), IBANs (mod 97), national ids, provider API keys, JWTs, private keys and
high-entropy ``name = value`` secrets; adds the secret ruleset of ``evald/judges/secret_rules.py`` (detect-secrets'
regex plugins and evald's rules for what they miss: Authorization/Bearer values, Hugging Face tokens, Azure
connection-string and SAS secrets, ...) and e-mail addresses with non-ASCII characters; plus the judge's
configured regexes. Where detections overlap, the one that starts first (then the longest) is replaced. One
``Redactor.session()`` numbers values across all the texts of one prompt, so the same email is ``[EMAIL_1]``
everywhere in it.
"""

from __future__ import annotations

import re
from collections import Counter

from evald.detection.detectors import SECRET_TYPES, Match, find_pii, find_secrets
from evald.judges.config import RedactionConfig
from evald.judges.secret_rules import detect_secrets_rules, find_rule_secrets, unicode_emails

_PLACEHOLDER_TYPES = {"credit_card": "CARD", "national_id": "NATIONAL_ID", "secret": "SECRET"}


class RedactionSession:
    """Placeholders for the texts of one prompt; ``counts`` says how many values of each type were replaced."""

    def __init__(self, config: RedactionConfig, extra: dict[str, re.Pattern[str]]) -> None:
        self._config = config
        self._extra = extra
        self._placeholders: dict[tuple[str, str], str] = {}
        self.counts: Counter[str] = Counter()

    def redact(self, text: str) -> str:
        if not self._config.enabled or not text:
            return text
        matches = self._matches(text)
        out: list[str] = []
        position = 0
        for match in matches:
            out.append(text[position:match.start])
            out.append(self._placeholder(match.type, match.value))
            position = match.end
        out.append(text[position:])
        return "".join(out)

    def _matches(self, text: str) -> list[Match]:
        found = find_pii(text, self._config.pii, self._config.locales)
        if "email" in self._config.pii:
            found += unicode_emails(text)
        if self._config.secrets:
            found += find_secrets(text, SECRET_TYPES, self._config.min_entropy)
            found += find_rule_secrets(text)
        for kind, pattern in self._extra.items():
            found += [Match(kind, m.start(), m.end(), m.group(), "***") for m in pattern.finditer(text) if m.group()]
        kept: list[Match] = []
        for match in sorted(found, key=lambda m: (m.start, -m.end)):
            if not kept or match.start >= kept[-1].end:
                kept.append(match)
        return kept

    def _placeholder(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._placeholders:
            label = _PLACEHOLDER_TYPES.get(kind, kind).upper()
            self.counts[label] += 1
            self._placeholders[key] = f"[{label}_{self.counts[label]}]"
        return self._placeholders[key]


class Redactor:
    """Built once per judge from its ``redaction`` config."""

    def __init__(self, config: RedactionConfig) -> None:
        self.config = config
        self._extra = {kind: re.compile(pattern) for kind, pattern in config.patterns.items()}
        if config.enabled and config.secrets:
            detect_secrets_rules()  # loaded now (at startup), not on the first prompt

    def session(self) -> RedactionSession:
        return RedactionSession(self.config, self._extra)
