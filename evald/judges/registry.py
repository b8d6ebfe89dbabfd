"""The seam between the ``judges:`` config and judged metrics.

The service builds every configured judge once at startup with ``install_judges(config.judges, registry)`` and
closes them on shutdown with ``await close_judges()``; a metric asks ``get_judge(name)`` when it runs, so metrics
stay cheap to build and judge clients live exactly as long as the service. Judges know nothing of metrics or the
pipeline: which metric uses which judge is checked on the metrics' side (``evald/metrics/judged/references.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry

from evald.judges.config import JudgeConfig
from evald.judges.judge import Judge
from evald.judges.limiter import JudgeError
from evald.judges.telemetry import judge_telemetry

_INSTALLED: dict[str, Judge] = {}


def install_judges(configs: Mapping[str, JudgeConfig], registry: CollectorRegistry) -> dict[str, Judge]:
    """Build the judges (one limiter each) and make them what ``get_judge`` returns; replaces earlier ones."""
    telemetry = judge_telemetry(registry)
    judges = {name: Judge(name, config, telemetry) for name, config in configs.items()}
    _INSTALLED.clear()
    _INSTALLED.update(judges)
    return judges


def register_judge(judge: Judge) -> None:
    """Install one already-built judge (tests, embedding evald as a library)."""
    _INSTALLED[judge.name] = judge


def get_judge(name: str) -> Judge:
    found = _INSTALLED.get(name)
    if found is None:
        raise JudgeError(name, "not_configured", "no such judge is running (configure it under `judges:`)")
    return found


async def close_judges() -> None:
    judges = list(_INSTALLED.values())
    _INSTALLED.clear()
    for judge in judges:
        await judge.aclose()
