"""What the browser and jsdom suites need from the machine, and what happens when it is missing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
"""Debian's browser and driver; `make test` installs them when either is missing."""


def unavailable(reason: str) -> NoReturn:
    """Fails the test under CI (``CI=true``), where the tool must be there; skips it otherwise."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: a missing tool is a failure)")
    pytest.skip(reason)
