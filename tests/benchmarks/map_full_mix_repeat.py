"""Map every trace of the full mix (tests/testdata/corpus and tests/testdata/captured) N times with the default
router: a fixed workload for instruction counts, like map_corpus_repeat.py but over every convention.

    PY=$(python3 -c 'import sys; print(sys.executable)')
    valgrind --tool=callgrind --callgrind-out-file=/dev/null $PY tests/benchmarks/map_full_mix_repeat.py 5 [CONFIG]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null $PY tests/benchmarks/map_full_mix_repeat.py 0 [CONFIG]

The difference of the two "Collected" counts is the mapping's instruction count for 5 passes; CONFIG (a prefix of
a configuration's directory name, e.g. ``openinference-``) limits it to those configurations. Run it in two
checkouts (``PYTHONPATH=<checkout>``) to compare versions of the mapping on the same traces.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "mapping"))
sys.path.insert(0, str(HERE))

from corpus_loader import load_traces  # noqa: E402
from full_mix import SOURCES  # noqa: E402

from evald.mapping.router import MapperRouter, default_mappers  # noqa: E402


def main(argv: list[str]) -> int:
    repetitions, prefix = int(argv[0]), argv[1] if len(argv) > 1 else ""
    router = MapperRouter(default_mappers())
    files = sorted(p for source in SOURCES for p in source.glob(f"{prefix}*/*.pb") if not p.name.endswith(".logs.pb"))
    traces = [t for path in files for t in load_traces(path)]
    for trace in traces:  # first-call costs (imports, caches) in both runs
        router.map(trace)
    for _ in range(repetitions):
        for trace in traces:
            router.map(trace)
    print(f"{len(traces)} traces, {sum(len(t.spans) for t in traces)} spans, {repetitions} passes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
