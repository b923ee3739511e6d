"""The attack suite drives the end-to-end suite's servers: the same fixtures."""

from tests.e2e.conftest import anyio_backend, app, connect, http_url, stateless_url

__all__ = ["anyio_backend", "app", "connect", "http_url", "stateless_url"]
