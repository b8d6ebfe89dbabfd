"""A Langfuse outage of a minute against ``evald run`` with default sending settings: nothing lost within the queue.

    python tests/benchmarks/outage_langfuse.py [--traces 200] [--outage 60]

``evald run`` (OTLP/HTTP receiver, a langfuse exporter with the default ``sending_queue`` and ``retry_on_failure``:
queue 1000, retries from 5 s up to 30 s apart for 5 minutes) scores ``--traces`` traces sent by the real OTel SDK
exporter, spread over the outage, while the Langfuse stand-in (tests/exporters/fake_langfuse.py) is down for
``--outage`` seconds; then the stand-in comes back on the same port. Reported: the scores that arrive (each id
once), the drops evald counted by reason, how long after the stand-in came back the last score arrived; the run
fails (exit 1) unless every score arrived exactly once and nothing was dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.exporters.fake_langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse  # noqa: E402
from tests.integration.daemon import Daemon  # noqa: E402
from tests.integration.test_daemon_e2e import send_chat_trace  # noqa: E402

SCORES_PER_TRACE = 3


def config(server: FakeLangfuse) -> str:
    return f"""  langfuse:
    host: "{server.url}"
    public_key: "{PUBLIC_KEY}"
    secret_key: "{SECRET_KEY}"
    rate_limit_per_minute: 0
assembly: {{ settle: 200ms }}
metrics:
  - kind: error_free
    scope: all
  - kind: contains
    scope: trace
    options: {{ values: ["Paris"] }}
"""


def dropped(daemon: Daemon) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in daemon.scrape().splitlines():
        if line.startswith("evald_exporter_dropped_scores_total{"):
            reason = line.split('reason="', 1)[1].split('"', 1)[0]
            out[reason] = out.get(reason, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


async def run(traces: int, outage: float, tmp: Path) -> bool:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    server = await FakeLangfuse().start()
    await server.stop()
    daemon = Daemon(tmp, config(server))
    await asyncio.to_thread(daemon.start)
    try:
        url = f"http://127.0.0.1:{daemon.http_port}/v1/traces"
        started = time.monotonic()
        for i in range(traces):  # spread over the outage
            await asyncio.to_thread(send_chat_trace, OTLPSpanExporter(endpoint=url), "geo",
                                    "Paris." if i % 2 else "Lyon.")
            await asyncio.sleep(max(0.0, started + outage * (i + 1) / traces - time.monotonic()))
        print(f"{traces} traces sent during a {outage:.0f} s outage; Langfuse has {len(server.accepted)} scores")
        await server.start()
        back = time.monotonic()
        want = SCORES_PER_TRACE * traces
        while len(set(server.accepted_ids())) < want and time.monotonic() - back < 360:  # noqa: ASYNC110 - polling
            await asyncio.sleep(0.2)
        last = time.monotonic() - back
        await asyncio.sleep(2.0)  # anything more would arrive now
        drops = await asyncio.to_thread(dropped, daemon)
        ids = server.accepted_ids()
        print(f"after Langfuse came back: {len(set(ids))} of {want} scores within {last:.1f} s, {len(ids)} accepted "
              f"(duplicates: {len(ids) - len(set(ids))}), evald dropped: {drops or 'none'}")
        return len(set(ids)) == len(ids) == want and not any(drops.values())
    finally:
        await asyncio.to_thread(daemon.stop)
        await server.stop()


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=200)
    parser.add_argument("--outage", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ok = asyncio.run(run(args.traces, args.outage, Path(tmp)))
    print("nothing lost" if ok else "LOST OR DUPLICATED SCORES")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
