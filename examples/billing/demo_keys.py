"""API keys issued to the demo and the tests; the server's configuration holds their hashes."""

from __future__ import annotations

from typing import Final

NORTHWIND_READ: Final = "bk_32a81e9b52e35e5e04b12f016fd1205d"
NORTHWIND_WRITE: Final = "bk_03c802a09392c27a6f31a9572b0ffb2e"
GLOBEX_READ: Final = "bk_a5ceca7100b014bef0c68c849a887221"
GLOBEX_WRITE: Final = "bk_962ed882854d152989a0e738aad3d89a"
