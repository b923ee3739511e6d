"""Fixtures of the scale-out suite: a Redis shared by its tests, on a port of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scale.services import Redis, redis_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Runs the suite on asyncio."""
    return "asyncio"


@pytest.fixture(scope="session")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redis]:
    """A redis-server for the session (tests that restart Redis start their own)."""
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The test's folder for databases, logs and configuration."""
    return tmp_path
