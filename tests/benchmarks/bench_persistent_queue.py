"""Throughput of the shared sending queue in memory and with ``sending_queue.storage`` (sqlite, fsync per chunk).

    python tests/benchmarks/bench_persistent_queue.py [--items 100000] [--dir DIR]

100,000 items of 400 bytes are put in chunks of 150 (a worker batch of cases, two or three scores each) and sent in
batches of 100 by 10 consumers to a ``send`` that returns at once; reported: items per second from the first put
to the drained queue. ``--dir`` chooses the disk (default: the system temp directory).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evald.exporters.sending import SendingQueue  # noqa: E402
from evald.exporters.sending_policy import QueueStorageConfig, RetryOnFailureConfig, SendingQueueConfig  # noqa: E402
from evald.telemetry import Telemetry  # noqa: E402


async def run(items: int, directory: str | None) -> float:
    sent = 0

    async def send(batch: list[bytes]) -> None:
        nonlocal sent
        sent += len(batch)

    storage = QueueStorageConfig(directory=directory) if directory else None
    queue = SendingQueue("bench", send, Telemetry(), timeout=5, batch_size=100, codec=(bytes, bytes),
                         queue=SendingQueueConfig(queue_size=10_000, num_consumers=10, storage=storage),
                         retry=RetryOnFailureConfig())
    await queue.start()
    item, chunk = b"x" * 400, 150
    started = time.perf_counter()
    for _ in range(items // chunk):
        await queue.put([item] * chunk)
    await queue.drain(600)
    elapsed = time.perf_counter() - started
    await queue.shutdown(1)
    return sent / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    print(f"memory: {asyncio.run(run(args.items, None)):,.0f} items/s")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"storage: {asyncio.run(run(args.items, tmp)):,.0f} items/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
