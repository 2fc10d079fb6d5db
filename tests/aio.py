"""Running a coroutine from a test, whatever else the suite has running."""

import asyncio
import concurrent.futures


def run_coroutine(coro):
    """Run *coro* to the end on an event loop of its own, in a thread of its own.

    In the whole suite the browser tests' Playwright (its sync API) keeps an event loop running in
    the main thread for the session, and ``asyncio.run`` refuses to start inside a running loop.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
