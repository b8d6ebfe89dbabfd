"""evald.aio.being_cancelled: a task's own cancellation, told apart from awaiting a future someone else cancelled."""

from __future__ import annotations

import asyncio

from evald.aio import being_cancelled


async def test_a_future_cancelled_by_someone_else_is_not_our_cancellation() -> None:
    seen: list[bool] = []

    async def awaits_a_cancelled_future() -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        future.cancel()
        try:
            await future
        except asyncio.CancelledError:
            seen.append(being_cancelled())

    await asyncio.create_task(awaits_a_cancelled_future())
    assert seen == [False]


async def test_a_task_being_cancelled_knows_it() -> None:
    seen: list[bool] = []

    async def waits() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append(being_cancelled())
            raise

    task = asyncio.create_task(waits())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert seen == [True] and not being_cancelled()
