"""Map a corpus configuration's traces N times with the default router: a fixed workload for instruction counts.

    PY=$(python3 -c 'import sys; print(sys.executable)')
    valgrind --tool=callgrind --callgrind-out-file=/dev/null $PY tests/benchmarks/map_corpus_repeat.py 20 PREFIX
    valgrind --tool=callgrind --callgrind-out-file=/dev/null $PY tests/benchmarks/map_corpus_repeat.py 0 PREFIX

The difference of the two "Collected" counts is the mapping's instruction count for 20 passes (loading the corpus
and importing evald are in both runs). Run it in two checkouts (``PYTHONPATH=<checkout>``) to compare versions:
unlike wall-clock figures on this shared host, the counts repeat to well under 1%.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mapping"))

from corpus_loader import load_traces, manifest_files  # noqa: E402

from evald.mapping.router import MapperRouter, default_mappers  # noqa: E402


def main(argv: list[str]) -> int:
    repetitions, prefix = int(argv[0]), argv[1] if len(argv) > 1 else ""
    router = MapperRouter(default_mappers())
    traces = [t for entry in manifest_files(prefix) for t in load_traces(entry["file"])]
    router.map(traces[0])  # first-call costs (imports, caches) in both runs
    for _ in range(repetitions):
        for trace in traces:
            router.map(trace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
