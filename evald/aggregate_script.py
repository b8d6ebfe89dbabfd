"""Custom aggregation by an external script with Harbor's ``metric.py`` contract (``evald replay --aggregate``).

The script is run as ``<python> SCRIPT -i rewards.jsonl -o metrics.json`` (``.py`` files with this interpreter,
anything else as an executable). ``rewards.jsonl`` holds one JSON object per scored case, ``{metric name: score
value}``, with ``null`` for a metric that did not apply or failed on that case (the script decides what missing
means; Harbor's default treats it as 0). The script must write one JSON object of named values to ``-o``; evald
includes it in the replay summary under ``custom``.

Failure semantics: a script that exits non-zero, runs past ``timeout`` seconds (it is killed), or writes no JSON
object raises ``AggregationError`` with the script's stderr tail; the caller reports it and exits non-zero.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evald.model import ScoredCase


class AggregationError(RuntimeError):
    """The aggregation script failed; the message says how."""


def rewards_lines(scored_cases: Sequence[ScoredCase]) -> list[dict[str, float | None]]:
    names = sorted({s.name for c in scored_cases for s in c.scores}
                   | {n for c in scored_cases for n, _ in (*c.skipped, *c.errors)})
    lines: list[dict[str, float | None]] = []
    for scored in scored_cases:
        values = {s.name: s.value for s in scored.scores}
        evaluated = values.keys() | {n for n, _ in (*scored.skipped, *scored.errors)}
        lines.append({name: values.get(name) for name in names if name in evaluated})
    return lines


def run_aggregation(script: str | Path, scored_cases: Sequence[ScoredCase], timeout: float = 60.0) -> dict[str, Any]:
    script = Path(script)
    if not script.is_file():
        raise AggregationError(f"aggregation script {script} does not exist")
    with tempfile.TemporaryDirectory(prefix="evald-aggregate-") as tmp:
        rewards, output = Path(tmp) / "rewards.jsonl", Path(tmp) / "metrics.json"
        rewards.write_text("".join(json.dumps(line) + "\n" for line in rewards_lines(scored_cases)))
        argv = [sys.executable, str(script)] if script.suffix == ".py" else [str(script.resolve())]
        try:
            done = subprocess.run([*argv, "-i", str(rewards), "-o", str(output)], capture_output=True, text=True,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired as err:
            raise AggregationError(f"aggregation script {script} ran past {timeout:g}s and was stopped") from err
        except OSError as err:
            raise AggregationError(f"cannot run aggregation script {script}: {err.strerror or err}") from err
        if done.returncode != 0:
            raise AggregationError(
                f"aggregation script {script} exited with {done.returncode}: {done.stderr.strip()[-500:]}")
        try:
            result = json.loads(output.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise AggregationError(f"aggregation script {script} wrote no JSON to -o: {err}") from err
    if not isinstance(result, dict):
        raise AggregationError(f"aggregation script {script} must write a JSON object, got {type(result).__name__}")
    return result
