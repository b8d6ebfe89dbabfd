"""Deterministic sampling keyed on the trace id.

Config key (``sampling:``): ``ratio`` in [0, 1] (default 1.0). The decision is a pure function of the trace id
(BLAKE2b of its bytes), so every replica and every redelivery of a trace gets the same answer, and it is
independent of the upstream SDK's TraceIdRatioBased sampler (which reads the id's low bits directly).
"""

from __future__ import annotations

import hashlib

from pydantic import Field

from evald.config.base import ComponentConfig

_SPACE = 1 << 64


class SamplingConfig(ComponentConfig):
    ratio: float = Field(
        1.0, ge=0.0, le=1.0, description="Share of traces evaluated, decided by trace id (stable across replicas)."
    )


def trace_bucket(trace_id: str) -> float:
    """Map a trace id to a stable number in [0, 1)."""
    digest = hashlib.blake2b(trace_id.encode("ascii", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _SPACE


class Sampler:
    def __init__(self, ratio: float) -> None:
        self.ratio = ratio

    def sampled(self, trace_id: str) -> bool:
        if self.ratio >= 1.0:
            return True
        if self.ratio <= 0.0:
            return False
        return trace_bucket(trace_id) < self.ratio
