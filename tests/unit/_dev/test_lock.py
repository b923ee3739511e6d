"""The capability lockfile: scope sets, stable text, digest, and the check's diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpfusion import Fusion
from mcpfusion._dev.lock import (
    LOCK_VERSION,
    build_lock,
    check_lock,
    declared_scope_sets,
    render_lock,
    write_lock,
)
from mcpfusion.cli import main


def _app(description: str = "Shows a thing.") -> Fusion:
    app = Fusion("lockdemo", version="1.0")
    things = app.tool("things", description="Things.")

    @things.action(read_only=True, description=description)
    def show(thing_id: str) -> str:
        return thing_id

    @things.action(requires=["things:write"])
    def wipe() -> str:
        """Wipes every thing."""
        return "wiped"

    @app.resource("note://readme", requires=["notes:read"])
    def readme() -> str:
        """The readme."""
        return "hello"

    return app


def test_scope_sets_are_none_each_required_set_and_all() -> None:
    """The locked scope sets are the empty set, each set something requires, and their union."""
    assert declared_scope_sets(_app()) == [
        frozenset(),
        frozenset({"notes:read"}),
        frozenset({"things:write"}),
        frozenset({"notes:read", "things:write"}),
    ]


def test_each_scope_set_pins_what_its_caller_lists() -> None:
    """An anonymous caller's entry lacks the scoped action and resource; the full one has both."""
    lock = build_lock(_app())
    by_scopes = {tuple(entry["scopes"]): entry for entry in lock["callers"]}
    assert "wipe" not in by_scopes[()]["tools"][0]["description"]
    assert by_scopes[()]["resources"] == []
    full = by_scopes[("notes:read", "things:write")]
    assert "wipe" in full["tools"][0]["description"]
    assert [item["uri"] for item in full["resources"]] == ["note://readme"]
    assert lock["lockVersion"] == LOCK_VERSION
    assert lock["digest"].startswith("sha256:")


def test_scope_sets_that_see_the_same_share_one_entry() -> None:
    """A scope set listing exactly what a smaller one lists adds no entry."""
    app = Fusion("plain")

    @app.tool("t", description="T.").action(read_only=True)
    def ping() -> str:
        """Answers."""
        return "pong"

    lock = build_lock(app, [(), ("unused",)])
    assert [entry["scopes"] for entry in lock["callers"]] == [[]]


def test_the_lock_text_and_digest_are_stable() -> None:
    """Two apps defined alike give byte-identical lockfiles."""
    assert render_lock(build_lock(_app())) == render_lock(build_lock(_app()))


def test_the_digest_follows_a_description_change() -> None:
    """Changing one action description changes the digest."""
    assert build_lock(_app())["digest"] != build_lock(_app("Shows it."))["digest"]


def test_check_matches_a_fresh_lock_and_diffs_a_stale_one(tmp_path: Path) -> None:
    """The check passes on what was written and shows a unified diff after a change."""
    path = tmp_path / "mcpfusion.lock"
    write_lock(_app(), path)
    assert check_lock(_app(), path).matches
    stale = check_lock(_app("Shows it."), path)
    assert not stale.matches
    changed = '+          "description": "Things.\\n\\nActions:\\n- show: Shows it.'
    assert changed in stale.diff
    assert stale.diff.startswith(f"--- {path} (locked)\n+++ lockdemo (now)\n")


def test_check_refuses_a_file_that_is_no_lockfile(tmp_path: Path) -> None:
    """A missing, unparsable or foreign file is an error naming it, not a mismatch."""
    path = tmp_path / "mcpfusion.lock"
    with pytest.raises(ValueError, match="no lockfile at"):
        check_lock(_app(), path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="is not JSON"):
        check_lock(_app(), path)
    path.write_text(json.dumps({"lockVersion": 99}), encoding="utf-8")
    with pytest.raises(ValueError, match="is not an mcpfusion lockfile of version 1"):
        check_lock(_app(), path)


APP = '''
from mcpfusion import Fusion

app = Fusion("cli-lock")
tool = app.tool("t", description="T.")


@tool.action(read_only=True)
def ping() -> str:
    """{doc}"""
    return "pong"
'''


def test_lock_check_exits_one_with_a_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lock --check`` exits 0 when current and 1 with the diff after a description change."""
    source = tmp_path / "lockapp.py"
    lockfile = tmp_path / "app.lock"
    source.write_text(APP.replace("{doc}", "Answers pong."), encoding="utf-8")
    assert main(["lock", str(source), "--file", str(lockfile)]) == 0
    assert main(["lock", "--check", str(source), "--file", str(lockfile)]) == 0
    capsys.readouterr()
    changed = tmp_path / "lockapp2.py"
    changed.write_text(APP.replace("{doc}", "Answers pong, loudly."), encoding="utf-8")
    assert main(["lock", "--check", str(changed), "--file", str(lockfile)]) == 1
    captured = capsys.readouterr()
    assert "+    " in captured.out and "Answers pong, loudly." in captured.out
    assert "is out of date" in captured.err


def test_lock_check_without_a_lockfile_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lock --check`` with no lockfile exits 2 and says how to write one."""
    source = tmp_path / "lockapp3.py"
    source.write_text(APP.replace("{doc}", "Answers pong."), encoding="utf-8")
    assert main(["lock", "--check", str(source), "--file", str(tmp_path / "none.lock")]) == 2
    assert "write one with 'mcpfusion lock'" in capsys.readouterr().err


def test_the_instructions_are_locked_and_the_version_is_not() -> None:
    """Changing the instructions changes the lock; bumping the version does not."""
    first, bumped = Fusion("v", version="1.0"), Fusion("v", version="2.0")
    instructed = Fusion("v", version="1.0", instructions="Use it well.")
    assert build_lock(first) == build_lock(bumped)
    assert build_lock(instructed)["server"] == {"name": "v", "instructions": "Use it well."}
    assert build_lock(instructed)["digest"] != build_lock(first)["digest"]
