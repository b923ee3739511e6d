"""``make demo``: the scripted session over stdio, shown with the CLI's renderer."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.e2e.servers import REPO

pytestmark = pytest.mark.e2e

_CALL_TOTAL = re.compile(
    r"^── total: (\d+) blocks? · (\d+) tokens(?: \(\d+ read by the model\))? · "
    r"isError=(true|false)",
    re.M,
)
_SESSION = re.compile(r"━━ (\d+) calls · (\d+) blocks · (\d+) tokens \(o200k\) · (\d+) error")


def test_demo_totals_add_up_and_stay_plain_when_piped() -> None:
    """Every call ends in render_result's total line; the session line sums them; no colour."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    done = subprocess.run(
        [sys.executable, "-m", "examples.demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    calls = _CALL_TOTAL.findall(done.stdout)
    session = _SESSION.search(done.stdout)
    assert session is not None
    assert int(session.group(1)) == len(calls) > 0
    assert int(session.group(2)) == sum(int(blocks) for blocks, _, _ in calls)
    assert int(session.group(3)) == sum(int(tokens) for _, tokens, _ in calls)
    assert int(session.group(4)) == sum(flag == "true" for _, _, flag in calls)
    assert "┆ … " in done.stdout and "\x1b[" not in done.stdout
