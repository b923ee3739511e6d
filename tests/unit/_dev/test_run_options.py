"""``mcpfusion run``'s flags mapped onto ``HttpOptions``: hot path, access log, auth, sign-in."""

from __future__ import annotations

import pickle

import pytest

from mcpfusion import HttpOptions
from mcpfusion._app.app import Fusion
from mcpfusion._dev.run_options import http_options
from mcpfusion._dev.target import UsageError
from mcpfusion._serve.http.app import uvicorn_config
from mcpfusion.auth import JWTVerifier
from mcpfusion.cli import build_parser


def test_no_hot_path_turns_the_http_hot_path_off() -> None:
    """The HTTP hot path is on unless --no-hot-path is given."""
    base = ["run", "app.py", "--http"]
    assert http_options(build_parser().parse_args(base)).hot_path is True
    off = http_options(build_parser().parse_args([*base, "--no-hot-path"]))
    assert off.hot_path is False


def test_the_access_log_is_off_unless_asked_for() -> None:
    """uvicorn logs no line per request unless --access-log (or access_log=True) asks."""
    base = ["run", "app.py", "--http"]
    quiet = http_options(build_parser().parse_args(base))
    loud = http_options(build_parser().parse_args([*base, "--access-log"]))
    assert (quiet.access_log, loud.access_log) == (False, True)
    app = Fusion("x")
    assert uvicorn_config(app, quiet).access_log is False
    assert uvicorn_config(app, loud).access_log is True
    with pytest.raises(TypeError, match="access_log must be a bool"):
        HttpOptions(access_log="yes")  # type: ignore[arg-type]


def test_auth_flags_map_onto_http_options() -> None:
    """--auth-* flags become a JWT verifier in HttpOptions.auth; none of them, no auth."""
    base = ["run", "app.py", "--http"]
    plain = http_options(build_parser().parse_args(base))
    assert plain.auth is None
    flags = [
        "--auth-issuer=https://id.example",
        "--auth-jwks-url=https://id.example/jwks.json",
        "--auth-resource=https://mcp.example/mcp",
        "--auth-scope=mcp",
    ]
    auth = http_options(build_parser().parse_args([*base, *flags])).auth
    assert auth is not None and isinstance(auth.verifier, JWTVerifier)
    assert auth.verifier.audience == ["https://mcp.example/mcp"]
    assert auth.authorization_servers == ("https://id.example",)
    assert auth.required_scopes == ("mcp",)
    with pytest.raises(UsageError, match="go together"):
        http_options(build_parser().parse_args([*base, "--auth-issuer=https://id.example"]))


def test_signin_flags_map_onto_http_options(monkeypatch: pytest.MonkeyPatch) -> None:
    """--signin-* flags become HttpOptions.signin, the secret read from the environment;
    without the secret, or with only some flags, the command is refused."""
    base = ["run", "app.py", "--http"]
    flags = [
        "--signin-issuer=https://login.example",
        "--signin-client-id=facade",
        "--signin-resource=https://mcp.example/mcp",
        "--signin-scope=billing:read",
    ]
    monkeypatch.delenv("MCPFUSION_SIGNIN_SECRET", raising=False)
    with pytest.raises(UsageError, match=r"secret in \$MCPFUSION_SIGNIN_SECRET"):
        http_options(build_parser().parse_args([*base, *flags]))
    monkeypatch.setenv("MCPFUSION_SIGNIN_SECRET", "s3cret")
    signin = http_options(build_parser().parse_args([*base, *flags])).signin
    assert signin is not None and signin.client_secret == "s3cret"
    assert signin.scopes_supported == ("billing:read",) and "s3cret" not in repr(signin)
    assert signin.tenant is None
    mapped = http_options(
        build_parser().parse_args([*base, *flags, "--signin-tenant-claim=tid"])
    ).signin
    assert mapped is not None and callable(mapped.tenant)
    assert mapped.tenant({"tid": "contoso"}) == "contoso" and mapped.tenant({"tid": 7}) is None
    assert pickle.loads(pickle.dumps(mapped)).tenant({"tid": "x"}) == "x"  # reaches workers
    with pytest.raises(UsageError, match="go together"):
        http_options(build_parser().parse_args([*base, "--signin-client-id=facade"]))


def test_signin_provider_scopes_come_from_their_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """--signin-provider-scope (repeatable) sets the scopes asked of the provider, so that a
    CLI deployment can ask for offline_access; without it the default stays."""
    monkeypatch.setenv("MCPFUSION_SIGNIN_SECRET", "s3cret")
    base = [
        "run",
        "app.py",
        "--http",
        "--signin-issuer=https://login.example",
        "--signin-client-id=facade",
        "--signin-resource=https://mcp.example/mcp",
    ]
    asked = ["--signin-provider-scope=openid", "--signin-provider-scope=offline_access"]
    signin = http_options(build_parser().parse_args([*base, *asked])).signin
    default = http_options(build_parser().parse_args(base)).signin
    assert signin is not None and signin.provider_scopes == ("openid", "offline_access")
    assert default is not None and default.provider_scopes == ("openid", "email", "profile")
    with pytest.raises(UsageError, match="openid among them"):
        http_options(build_parser().parse_args([*base, "--signin-provider-scope=email"]))


def test_signin_github_and_on_behalf_of_come_from_their_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--signin-github signs in at GitHub without an issuer (and pickles to workers);
    --signin-token-exchange picks Entra's on-behalf-of; GitHub with an issuer is refused."""
    monkeypatch.setenv("MCPFUSION_SIGNIN_SECRET", "s3cret")
    base = [
        "run",
        "app.py",
        "--http",
        "--signin-client-id=facade",
        "--signin-resource=https://mcp.example/mcp",
    ]
    signin = http_options(build_parser().parse_args([*base, "--signin-github"])).signin
    assert signin is not None and signin.oauth is not None and signin.issuer == ""
    assert signin.oauth.token_url == "https://github.com/login/oauth/access_token"
    assert pickle.loads(pickle.dumps(signin)).oauth == signin.oauth
    entra = http_options(
        build_parser().parse_args(
            [*base, "--signin-issuer=https://login.example", "--signin-token-exchange=on_behalf_of"]
        )
    ).signin
    assert entra is not None and entra.token_exchange == "on_behalf_of"
    both = [*base, "--signin-github", "--signin-issuer=https://login.example"]
    with pytest.raises(UsageError, match="not both"):
        http_options(build_parser().parse_args(both))
    with pytest.raises(UsageError, match="--signin-github"):
        http_options(build_parser().parse_args(["run", "app.py", "--http", "--signin-github"]))
