"""Unit tests of the per-credential session cap and the batch bound: options and flags."""

from __future__ import annotations

import pytest
from mcp.server import Server
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext

from mcpfusion import HttpOptions
from mcpfusion._serve.http.streams import SessionManager
from mcpfusion.cli import build_parser, http_options


def test_the_batch_bound_has_a_documented_default_and_is_checked() -> None:
    """max_batch_size defaults to 100 and must be a positive int."""
    assert HttpOptions().max_batch_size == 100
    with pytest.raises(ValueError, match="max_batch_size must be positive; got 0"):
        HttpOptions(max_batch_size=0)
    with pytest.raises(TypeError, match="max_batch_size must be a int"):
        HttpOptions(max_batch_size=True)


def test_the_batch_bound_flag_maps_onto_the_option() -> None:
    """--max-batch-size sets HttpOptions.max_batch_size; without it, the default."""
    base = ["run", "app.py", "--http"]
    assert http_options(build_parser().parse_args(base)).max_batch_size == 100
    given = http_options(build_parser().parse_args([*base, "--max-batch-size", "7"]))
    assert given.max_batch_size == 7


def test_the_session_cap_per_credential_has_a_documented_default_and_is_checked() -> None:
    """max_sessions_per_credential defaults to 100 and must be a positive int."""
    assert HttpOptions().max_sessions_per_credential == 100
    with pytest.raises(ValueError, match="max_sessions_per_credential must be positive"):
        HttpOptions(max_sessions_per_credential=-1)
    with pytest.raises(TypeError, match="max_sessions_per_credential must be a int"):
        HttpOptions(max_sessions_per_credential=1.5)  # type: ignore[arg-type]


def test_the_session_cap_flag_maps_onto_the_option() -> None:
    """--max-sessions-per-credential sets the option; without it, the default."""
    base = ["run", "app.py", "--http"]
    assert http_options(build_parser().parse_args(base)).max_sessions_per_credential == 100
    flag = ["--max-sessions-per-credential", "3"]
    assert http_options(build_parser().parse_args([*base, *flag])).max_sessions_per_credential == 3


def test_the_manager_counts_sessions_by_credential_and_frees_them() -> None:
    """A credential's sessions count against its cap until discarded; anonymous ones never."""
    manager = SessionManager(app=Server("x"), max_sessions=10, max_sessions_per_credential=2)
    alice = AuthorizationContext(client_id="alice", issuer=None, subject="alice")
    bob = AuthorizationContext(client_id="bob", issuer=None, subject="bob")
    first, second = manager._admit_session(alice), manager._admit_session(alice)
    assert first is not None and second is not None
    assert manager._admit_session(alice) is None
    assert manager._admit_session(bob) is not None
    assert all(manager._admit_session(None) is not None for _ in range(3))
    assert first.mcp_session_id is not None
    manager._server_instances.pop(first.mcp_session_id)
    manager._session_owners.pop(first.mcp_session_id)
    assert manager._admit_session(alice) is not None
