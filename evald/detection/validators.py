"""Checksums, national-id rules, masking and entropy shared by the safety detectors.

The check algorithms come from python-stdnum (Luhn; IBAN mod-97 with each country's length and format; US SSN
area/group/serial rules; French NIR key; German Steuer-IdNr ISO 7064 check and digit-repetition rule; Italian
codice fiscale check letter). The UK NINO has no check digit: it is validated here against HMRC's published
prefix and suffix rules. ``mask`` builds the only form of a matched value that a score may carry.
"""

from __future__ import annotations

import importlib
import math
import re
from collections import Counter
from collections.abc import Callable

_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")

# Issuer prefixes (IIN ranges) of the major card networks with their lengths; a Luhn-valid number outside
# these is not reported, which keeps random digit runs (1 in 10 passes Luhn) from being called card numbers.
_CARD_BRANDS = re.compile(
    r"4\d{12}(?:\d{3}){0,2}"                                 # Visa: 13, 16 or 19 digits
    r"|(?:5[1-5]\d{2}|222[1-9]|22[3-9]\d|2[3-6]\d{2}|27[01]\d|2720)\d{12}"  # Mastercard
    r"|3[47]\d{13}"                                          # American Express
    r"|3(?:0[0-5]|[68]\d)\d{11,16}"                          # Diners Club
    r"|(?:6011|64[4-9]\d|65\d{2})\d{12,15}"                  # Discover
    r"|35(?:2[89]|[3-8]\d)\d{12,15}"                         # JCB
    r"|62\d{14,17}"                                          # UnionPay
)

# HMRC: the first letter is not D, F, I, Q, U or V; the second not D, F, I, O, Q, U or V; a few prefixes are
# never issued; the suffix is A to D.
_NINO = re.compile(r"(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]")


def compact(value: str) -> str:
    """The value without spaces, dashes or other separators."""
    return _NON_ALNUM.sub("", value)


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check over a string of digits."""
    from stdnum import luhn  # python-stdnum is imported when a candidate is checked, not at start-up (~20 ms)

    return digits.isdigit() and bool(luhn.is_valid(digits))


def card_number_valid(value: str) -> bool:
    """A payment card number: 13 to 19 digits, a known network's prefix, and a valid Luhn check digit."""
    digits = compact(value)
    return 13 <= len(digits) <= 19 and _CARD_BRANDS.fullmatch(digits) is not None and luhn_valid(digits)


def iban_valid(value: str) -> bool:
    """An IBAN: the country's length and format, and the ISO 7064 mod-97 check (remainder 1)."""
    from stdnum import iban

    return bool(iban.is_valid(compact(value)))


def nino_valid(value: str) -> bool:
    """A UK National Insurance number (no checksum exists: prefix and suffix rules only)."""
    return _NINO.fullmatch(compact(value).upper()) is not None


def _stdnum(module: str) -> Callable[[str], bool]:
    """The ``is_valid`` of python-stdnum's ``module``, imported at its first use."""
    return lambda value: bool(importlib.import_module(module).is_valid(compact(value)))


#: locale -> (id kind, validator). Only identifiers with a check digit or strict issuing rules are listed.
NATIONAL_ID_VALIDATORS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "us": ("us_ssn", _stdnum("stdnum.us.ssn")),
    "uk": ("uk_nino", nino_valid),
    "fr": ("fr_insee_nir", _stdnum("stdnum.fr.nir")),
    "de": ("de_steuer_idnr", _stdnum("stdnum.de.idnr")),
    "it": ("it_codice_fiscale", _stdnum("stdnum.it.codicefiscale")),
}


def shannon_entropy(value: str) -> float:
    """Shannon entropy of the characters of ``value``, in bits per character (0 for an empty string)."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


def mask(kind: str, value: str) -> str:
    """A redacted form of a matched value that reveals at most a few characters.

    Emails keep the first letter of the local part and of the domain plus the top-level domain
    (``j***@e***.com``); IBANs keep the country code and the last two characters; other identifiers keep only
    their last two characters, and only when they are long enough for that to give nothing away.
    """
    if kind == "email" and "@" in value:
        local, _, domain = value.rpartition("@")
        tld = domain.rsplit(".", 1)[-1] if "." in domain else ""
        return f"{local[:1]}***@{domain[:1]}***" + (f".{tld}" if tld else "")
    plain = compact(value)
    if len(plain) < 8:
        return "***"
    if kind == "iban":
        return f"{plain[:2].upper()}***{plain[-2:]}"
    return f"***{plain[-2:]}"
