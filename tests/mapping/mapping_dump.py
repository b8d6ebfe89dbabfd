"""Map every captured OTLP file under a directory and print the results as JSON (one document).

    python tests/mapping/mapping_dump.py tests/testdata/corpus

Used by test_compiled_modules.py to compare the compiled mappers with their pure-Python sources: it only uses
evald's public reading and mapping functions, so whichever ``evald`` is first on ``sys.path`` is the one measured.
The first line of output is the path of the ``evald.mapping.router`` module that ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import evald.mapping.router as router_module
from evald.mapping.router import MapperRouter, default_mappers
from evald.model import AssembledTrace, LogRecord, SpanRecord
from evald.receivers.files import read_signal_file


def dump(directory: Path) -> dict[str, Any]:
    router = MapperRouter(default_mappers())
    out: dict[str, Any] = {}
    for path in sorted(directory.rglob("*")):
        if path.suffix not in {".pb", ".json"} or path.name == "manifest.json" or ".logs." in path.name:
            continue
        spans: dict[str, list[SpanRecord]] = {}
        logs: dict[str, list[LogRecord]] = {}
        for record in read_signal_file(path).spans:
            spans.setdefault(record.trace_id, []).append(record)
        for suffix in (".logs.pb", ".logs.json"):
            companion = path.with_name(path.name.split(".")[0] + suffix)
            if companion.exists():
                for log in read_signal_file(companion).logs:
                    logs.setdefault(log.trace_id, []).append(log)
        for trace_id, records in sorted(spans.items()):
            result = router.map(AssembledTrace(trace_id, tuple(records), tuple(logs.get(trace_id, ()))))
            out[f"{path.relative_to(directory)}:{trace_id}"] = {
                "cases": [case.to_dict() for case in result.cases],
                "not_evaluable": [[n.reason, n.convention, n.detail, n.scope] for n in result.not_evaluable],
                "warnings": list(result.warnings),
            }
    return out


if __name__ == "__main__":
    print(router_module.__file__)
    print(json.dumps(dump(Path(sys.argv[1])), sort_keys=True, default=repr))
