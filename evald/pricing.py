"""Model prices in USD per 1M tokens: the table shipped with evald and the lookup of a model name in a table.

Shared by the ``cost`` metric and the judges' budgets (neither owns it). The shipped table is the data file
``evald/metrics/operational/prices.yaml`` (read as package data; nothing of the metrics is imported).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field

TOKENS_PER_UNIT = 1_000_000
#: characters that may follow a price-table key in a longer (dated or tagged) model name
_VERSION_SEPARATORS = ("-", "@", ":", "_")
#: a vendor or router prefix in front of a model name: "openai/gpt-4o", "us.anthropic.claude-..."
_VENDOR_PREFIX = re.compile(r"^(?:[a-z]+[./])+(?=[a-z])")


class ModelPrice(BaseModel):
    """USD per 1 million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0, description="USD per 1M input tokens")
    output: float = Field(ge=0, description="USD per 1M output tokens")


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    as_of: str
    models: dict[str, ModelPrice]


@cache
def shipped_prices() -> PriceTable:
    """The price table shipped with evald (``evald/metrics/operational/prices.yaml``), read once."""
    text = resources.files("evald").joinpath("metrics", "operational", "prices.yaml").read_text(encoding="utf-8")
    return PriceTable.model_validate(yaml.safe_load(text))


#: a price table keyed by the case-folded model name: folded key -> (key as written, price)
FoldedPrices = dict[str, tuple[str, ModelPrice]]


def fold_prices(prices: dict[str, ModelPrice]) -> FoldedPrices:
    """``prices`` keyed for :func:`lookup_price` (built once per table, not per lookup)."""
    return {key.casefold(): (key, price) for key, price in prices.items()}


def find_price(model: str, prices: dict[str, ModelPrice]) -> tuple[str, ModelPrice] | None:
    """The price of ``model``: an exact (case-insensitive) key, else the longest key that prefixes the name
    and ends at a version separator; the same again without a vendor prefix such as ``openai/``."""
    return lookup_price(model, fold_prices(prices))


def lookup_price(model: str, table: FoldedPrices) -> tuple[str, ModelPrice] | None:
    """:func:`find_price` on a table already folded by :func:`fold_prices`."""
    name = model.strip().casefold()
    for candidate in dict.fromkeys((name, _VENDOR_PREFIX.sub("", name))):
        if candidate in table:
            return table[candidate]
        prefixes = [k for k in table if len(candidate) > len(k) > 0 and candidate.startswith(k)
                    and candidate[len(k)] in _VERSION_SEPARATORS]
        if prefixes:
            return table[max(prefixes, key=len)]
    return None
