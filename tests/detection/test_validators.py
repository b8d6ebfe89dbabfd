"""Hand-checked examples for the shared checks: Luhn, IBAN mod 97, national ids, masking, entropy."""

from __future__ import annotations

import pytest

from evald.detection.validators import (
    NATIONAL_ID_VALIDATORS,
    card_number_valid,
    iban_valid,
    luhn_valid,
    mask,
    nino_valid,
    shannon_entropy,
)


def test_luhn_hand_checked() -> None:
    # 79927398713, from the right: 3 + (1*2=2) + 7 + (8*2=16 -> 7) + 9 + (3*2=6) + 7 + (2*2=4) + 9 + (9*2=18 -> 9)
    # + 7 = 70, a multiple of 10: valid. Changing the check digit breaks it.
    assert luhn_valid("79927398713")
    assert not luhn_valid("79927398710")
    assert not luhn_valid("7992-7398-713")  # digits only


@pytest.mark.parametrize("number", [
    "4111111111111111", "4111 1111 1111 1111", "4111-1111-1111-1111",  # Visa test number, with separators
    "5555555555554444", "2223003122003222",                               # Mastercard (51-55 and 2-series)
    "378282246310005",                                                    # American Express
    "6011111111111117",                                                   # Discover
])
def test_valid_card_numbers(number: str) -> None:
    assert card_number_valid(number)


@pytest.mark.parametrize("number", [
    "4111111111111112",   # Luhn fails (check digit off by one)
    "1234567812345670",   # Luhn-valid, but no card network starts with 1
    "411111111111",       # too short
    "41111111111111111111",  # too long
])
def test_invalid_card_numbers(number: str) -> None:
    assert not card_number_valid(number)


def test_iban_mod97_hand_checked() -> None:
    # GB82WEST12345698765432: move "GB82" to the end and letters to numbers (G=16, B=11, W=32, E=14, S=28,
    # T=29): 3214282912345698765432161182, whose remainder modulo 97 must be 1.
    assert int("3214282912345698765432161182") % 97 == 1
    assert iban_valid("GB82WEST12345698765432")
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert iban_valid("DE89370400440532013000")
    assert not iban_valid("GB82WEST12345698765433")  # corrupted last digit
    assert not iban_valid("GB28WEST12345698765432")  # swapped check digits
    assert not iban_valid("GB82WEST1234569876543")   # wrong length for GB


@pytest.mark.parametrize(("locale", "valid", "invalid"), [
    ("us", "536-90-4399", "666-90-4399"),               # area 666 is never issued
    ("us", "536-90-4399", "536-00-4399"),               # group 00 is never issued
    ("uk", "AB 12 34 56 C", "QQ 12 34 56 C"),           # Q is not a first letter
    ("uk", "AB123456C", "AB123456E"),                    # suffix A to D only
    ("fr", "2 95 10 99 126 111 93", "2 95 10 99 126 111 94"),   # key = 97 - (number mod 97)
    ("de", "36 574 261 809", "36574261890"),             # ISO 7064 check digit
    ("de", "36 574 261 809", "36554266806"),             # too many repeated digits
    ("it", "RCCMNL83S18D969H", "RCCMNL83S18D969A"),      # check letter
])
def test_national_ids(locale: str, valid: str, invalid: str) -> None:
    kind, is_valid = NATIONAL_ID_VALIDATORS[locale]
    assert kind.startswith(locale)
    assert is_valid(valid)
    assert not is_valid(invalid)


def test_nino_prefix_rules() -> None:
    assert nino_valid("ab123456c")  # case does not matter
    assert not nino_valid("GB123456A")  # never-issued prefix
    assert not nino_valid("AO123456A")  # O is not a second letter


def test_mask_never_keeps_more_than_a_few_characters() -> None:
    assert mask("email", "jane.doe@example.com") == "j***@e***.com"
    assert mask("email", "x@localhost") == "x***@l***"
    assert mask("phone", "+1-415-555-0132") == "***32"
    assert mask("iban", "GB82 WEST 1234 5698 7654 32") == "GB***32"
    assert mask("national_id", "536-90-4399") == "***99"
    assert mask("phone", "123-4567") == "***"  # short values reveal nothing


def test_shannon_entropy_hand_checked() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("aabb") == pytest.approx(1.0)  # two symbols, p = 1/2 each: -2 * 1/2 * log2(1/2) = 1
    assert shannon_entropy("abcd") == pytest.approx(2.0)  # four symbols, p = 1/4: log2(4) = 2
    assert shannon_entropy("0123456789abcdef") == pytest.approx(4.0)  # 16 distinct symbols: log2(16)
