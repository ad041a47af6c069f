"""At most N calls in flight per role, so a run of many conversations does not flood the provider."""

from __future__ import annotations

import asyncio

from .base import ChatClient, ChatRequest, ChatResponse


class LimitedClient:
    """Waits for one of `max_in_flight` slots before calling `inner`."""

    def __init__(self, inner: ChatClient, max_in_flight: int):
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.inner = inner
        self.max_in_flight = max_in_flight
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _slots(self) -> asyncio.Semaphore:
        # Made in the running loop, and anew for a new loop (a semaphore belongs to one loop).
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._semaphore = asyncio.Semaphore(self.max_in_flight)
            self._loop = loop
        return self._semaphore

    async def complete(self, request: ChatRequest) -> ChatResponse:
        async with self._slots():
            return await self.inner.complete(request)
