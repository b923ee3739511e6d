"""Sealed request state: its keys (option, flag, variable, workers), whom it is bound to,
and the scopes a listen stream's resources need."""

from __future__ import annotations

import secrets
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcpfusion import Fusion, HttpOptions, Identity
from mcpfusion._serve.sdk import principal
from mcpfusion.cli import build_parser, http_options, main
from mcpfusion.server import build_server, run_workers
from tests.attack.request_state_app import app as orders_app

pytestmark = pytest.mark.anyio

KEY = secrets.token_hex(32)


@pytest.mark.parametrize(
    ("keys", "error", "message"),
    [
        (KEY, TypeError, "request_state_keys is a list of str"),
        ([b"x" * 32], TypeError, "request_state_keys is a list of str"),
        (["short"], ValueError, r"request_state_keys\[0\] is 5 bytes; a key is at least 32"),
        ([KEY, "\ud800" * 40], ValueError, r"request_state_keys\[1\] has a character not"),
        ([KEY + "\n"], ValueError, r"request_state_keys\[0\] has a character not printable"),
        ([KEY, KEY], ValueError, "request_state_keys holds the same key twice"),
    ],
)
def test_request_state_keys_are_checked(keys: Any, error: type[Exception], message: str) -> None:
    """A key is a str of 32 printable bytes or more, each once; the message never shows it."""
    with pytest.raises(error, match=message) as raised:
        HttpOptions(request_state_keys=keys)
    assert KEY not in str(raised.value)


def test_request_state_keys_stay_out_of_the_repr() -> None:
    """The keys are kept as a tuple and never printed with the options."""
    options = HttpOptions(request_state_keys=[KEY])
    assert options.request_state_keys == (KEY,)
    assert KEY not in repr(options)


def test_the_flag_and_the_variable_give_the_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """--request-state-key (repeatable) wins over MCPFUSION_REQUEST_STATE_KEY, whose keys
    are separated by commas; neither: no key."""
    other = secrets.token_hex(32)
    base = ["run", "x:app", "--http"]
    monkeypatch.delenv("MCPFUSION_REQUEST_STATE_KEY", raising=False)
    assert http_options(build_parser().parse_args(base)).request_state_keys == ()
    monkeypatch.setenv("MCPFUSION_REQUEST_STATE_KEY", f" {KEY} ,{other},")
    assert http_options(build_parser().parse_args(base)).request_state_keys == (KEY, other)
    flags = [*base, "--request-state-key", other, "--request-state-key", KEY]
    assert http_options(build_parser().parse_args(flags)).request_state_keys == (other, KEY)


def test_the_key_flag_needs_http(capsys: pytest.CaptureFixture[str]) -> None:
    """--request-state-key over stdio is a usage error."""
    assert main(["run", "no_such_module:app", "--request-state-key", KEY]) == 2
    assert "--request-state-key and --task-queue apply to --http only" in capsys.readouterr().err


class _Started(Exception):
    """Stands in for the supervisor: the options it was given."""


@pytest.mark.parametrize("given", [(), (KEY,)])
def test_run_workers_gives_its_workers_one_key(
    monkeypatch: pytest.MonkeyPatch, given: tuple[str, ...]
) -> None:
    """Without keys, run_workers makes one for every worker; given keys are kept."""
    seen: list[HttpOptions] = []

    def supervisor(factory: Any, options: HttpOptions, sock: Any) -> Any:
        sock.close()
        seen.append(options)
        raise _Started("started")

    monkeypatch.setattr("mcpfusion._serve.http.workers.Supervisor", supervisor)
    target = "tests.attack.request_state_app:app"
    with pytest.raises(_Started, match="started"):
        run_workers(target, port=0, workers=2, stateless=True, request_state_keys=given)
    (keys,) = [options.request_state_keys for options in seen]
    if given:
        assert keys == given
    else:
        assert len(keys) == 1 and len(keys[0]) == 64  # secrets.token_hex(32)


def _ctx() -> Any:
    """A request context without an HTTP request under it: the app's local caller."""
    return SimpleNamespace(request=None)


def test_the_state_is_bound_to_subject_client_issuer_and_tenant() -> None:
    """Each part of the caller changes whom the state belongs to; anonymous: no one."""
    alice = Identity("alice", client_id="agent", claims={"iss": "https://id"}, tenant="acme")
    others = [
        Identity("mallory", client_id="agent", claims={"iss": "https://id"}, tenant="acme"),
        Identity("alice", client_id="other", claims={"iss": "https://id"}, tenant="acme"),
        Identity("alice", client_id="agent", claims={"iss": "https://evil"}, tenant="acme"),
        Identity("alice", client_id="agent", claims={"iss": "https://id"}, tenant="globex"),
        Identity("alice", client_id="agent", claims={"iss": "https://id"}),
    ]
    bound = {principal(Fusion("x", local_identity=who), _ctx()) for who in [alice, *others]}
    assert len(bound) == 6
    again = Identity("alice", client_id="agent", claims={"iss": "https://id"}, tenant="acme")
    assert principal(Fusion("x", local_identity=again), _ctx()) in bound
    assert principal(Fusion("x"), _ctx()) is None


async def test_listen_needs_the_resources_scopes() -> None:
    """Over a transport without HTTP (the local caller), listen to a resource the caller
    may not read is refused; to one it may read, acknowledged."""
    reader = Fusion("vault", local_identity=Identity("op", scopes={"vault:read"}))
    reader.resource("vault://keys", requires={"vault:read"})(lambda: "k-1")
    assert orders_app.local_identity is None  # anonymous: holds no scope
    with anyio.fail_after(20):
        async with Client(build_server(orders_app), mode="2026-07-28") as client:
            with pytest.raises(MCPError, match="Resource not found: vault://keys"):
                async with client.listen(resource_subscriptions=["vault://keys"]):
                    pass
        async with (
            Client(build_server(reader), mode="2026-07-28") as client,
            client.listen(resource_subscriptions=["vault://keys"]),
        ):
            pass
