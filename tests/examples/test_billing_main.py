"""The billing example's entry point: where the database comes from and how failures read."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from examples.billing import __main__ as entry
from examples.billing.db import BillingDatabaseError, default_path


def test_unwritable_database_path_exits_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database path that cannot be created is one line on stderr and exit status 2."""
    (tmp_path / "file").write_text("not a folder")
    status = entry.main(["--db", str(tmp_path / "file" / "billing.db")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("billing: error: cannot create the folder")
    assert "--db PATH or set MCPFUSION_BILLING_DB" in err


def test_environment_names_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --db, MCPFUSION_BILLING_DB is the path (a failing one, so nothing serves)."""
    (tmp_path / "from-env").write_text("not a folder")
    monkeypatch.setenv("MCPFUSION_BILLING_DB", str(tmp_path / "from-env" / "billing.db"))
    assert entry.main([]) == 2
    assert str(tmp_path / "from-env") in capsys.readouterr().err


def test_db_flag_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--db is used even when MCPFUSION_BILLING_DB is set."""
    for name in ("from-env", "from-flag"):
        (tmp_path / name).write_text("not a folder")
    monkeypatch.setenv("MCPFUSION_BILLING_DB", str(tmp_path / "from-env" / "billing.db"))
    assert entry.main(["--db", str(tmp_path / "from-flag" / "billing.db")]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "from-flag") in err
    assert "from-env" not in err


@pytest.mark.parametrize("flags", [["--stateless"], ["--workers", "2"], ["--redis-url", "x"]])
def test_serving_flags_need_http(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--stateless, --workers and --redis-url without --http are a usage error."""
    with pytest.raises(SystemExit, match=r"^2$") as exc:  # a SystemExit's message is its code
        entry.main(flags)
    assert exc.value.code == 2
    assert "apply to --http only" in capsys.readouterr().err


def test_http_options_map_the_scale_out_flags() -> None:
    """--workers, --shutdown-timeout and --redis-url reach HttpOptions (no event store
    when stateless: there is no session to resume)."""
    from mcpfusion.redis import RedisEventStore, RedisRateLimitStore, RedisSubscriptionBus

    url = "redis://127.0.0.1:1/0"
    flags = ["--http", "--workers", "3", "--shutdown-timeout", "7", "--redis-url", url]
    options = entry.http_options(entry._parser().parse_args(flags))
    assert (options.workers, options.shutdown_timeout) == (3, 7.0)
    assert isinstance(options.subscription_bus, RedisSubscriptionBus)
    assert isinstance(options.rate_limit_store, RedisRateLimitStore)
    assert isinstance(options.event_store, RedisEventStore)
    stateless = entry.http_options(entry._parser().parse_args([*flags, "--stateless"]))
    assert stateless.event_store is None
    assert entry.http_options(entry._parser().parse_args(["--http"])).subscription_bus is None


def test_default_path_is_shown_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    """--help names the environment variable and the per-user default."""
    with pytest.raises(SystemExit, match=r"^0$"):  # a SystemExit's message is its code
        entry.main(["--help"])
    out = capsys.readouterr().out
    assert "MCPFUSION_BILLING_DB" in out
    assert "billing.db" in out


def test_database_path_prefers_flag_then_environment_then_default(tmp_path: Path) -> None:
    """--db wins over MCPFUSION_BILLING_DB, which wins over the per-user default."""
    environ = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    with_env = {**environ, "MCPFUSION_BILLING_DB": "env.db"}
    assert entry.database_path("flag.db", with_env) == "flag.db"
    assert entry.database_path(None, with_env) == "env.db"
    assert entry.database_path(None, environ) == default_path(environ)


def test_app_factory_reads_the_same_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI's ``app`` factory opens the database MCPFUSION_BILLING_DB names when it starts."""
    (tmp_path / "from-env").write_text("not a folder")
    monkeypatch.setenv("MCPFUSION_BILLING_DB", str(tmp_path / "from-env" / "billing.db"))
    app = entry.app()

    async def start() -> None:
        async with app.running():
            raise AssertionError("the lifespan should not start")

    with pytest.raises(BillingDatabaseError, match="from-env"):
        anyio.run(start)
