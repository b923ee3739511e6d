"""The CLI in-process: targets, ``key=value`` arguments, commands and their exit status."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pytest

from mcpfusion import HttpOptions
from mcpfusion._app.app import Fusion
from mcpfusion._serve.http.app import uvicorn_config
from mcpfusion.auth import JWTVerifier
from mcpfusion.cli import UsageError, build_parser, http_options, load_app, main, parse_arguments

APP_SOURCE = '''
from mcpfusion._app.app import Fusion

app = Fusion("tiny", data_format="json", ui_audience="all", definitions="full", version="0.0.1")
other = 42
tool = app.tool("math", description="Arithmetic.")


@tool.action("add", read_only=True)
async def add(a: int, b: int = 0) -> int:
    """Adds."""
    return a + b


@tool.action("say")
async def say(text: str) -> str:
    """Says."""
    return text


@tool.action("note")
async def note(note: str | None = None) -> dict[str, str | None]:
    """Echoes an optional note."""
    return {"note": note}


flat = app.tool("misc", exposition="flat")


@flat.action("now")
async def now() -> str:
    """The time."""
    return "noon"
'''

GROUPED = {
    "name": "math",
    "inputSchema": {
        "type": "object",
        "properties": {"action": {}, "a": {"type": "integer"}, "text": {"type": "string"}},
    },
}
FLAT = {"name": "misc_now", "inputSchema": {"type": "object", "properties": {}}}


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A file target for a small app, imported under a fresh module name."""
    path = tmp_path / "tinyapp.py"
    path.write_text(APP_SOURCE)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "tinyapp", raising=False)
    return f"{path}:app"


def test_action_then_json_values() -> None:
    """The first bare word is the action; values are JSON when they parse, else strings."""
    words = ["add", "a=2", "b=[1, 2]", "c=hello", "d=null", "e={}"]
    arguments = parse_arguments(GROUPED, words)
    assert arguments == {"action": "add", "a": 2, "b": [1, 2], "c": "hello", "d": None, "e": {}}


def test_string_parameters_keep_what_was_typed() -> None:
    """A parameter declared as a string keeps digits and words as typed, unless quoted."""
    assert parse_arguments(GROUPED, ["text=0042"]) == {"text": "0042"}
    assert parse_arguments(GROUPED, ["text=true"]) == {"text": "true"}
    assert parse_arguments(GROUPED, ['text="quoted"']) == {"text": "quoted"}
    assert parse_arguments(GROUPED, ["text=a=b"]) == {"text": "a=b"}


OPTIONAL = {
    "name": "notes",
    "inputSchema": {
        "type": "object",
        "properties": {
            "code": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "ref": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
            "nullable": {"type": ["string", "null"]},
            "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
    },
}


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("code=42", "42"),
        ("code=0042", "0042"),
        ("code=true", "true"),
        ("code=null", None),
        ('code="x"', "x"),
        ("ref=7", "7"),
        ("ref=null", "null"),
        ("nullable=12", "12"),
        ("nullable=null", None),
        ("count=3", 3),
        ("count=null", None),
    ],
)
def test_optional_and_union_strings_keep_what_was_typed(word: str, expected: object) -> None:
    """A parameter with a string branch in anyOf/oneOf keeps digits as typed; null stays None."""
    key = word.partition("=")[0]
    assert parse_arguments(OPTIONAL, [word]) == {key: expected}


def test_optional_string_from_a_real_action(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``str | None`` as Fusion declares it: ``note=42`` reaches the handler as ``"42"``."""
    assert main(["call", target, "math", "note", "note=42"]) == 0
    assert '"note": "42"' in capsys.readouterr().out


def test_run_chooses_the_transport_through_fusion_run(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run`` serves through ``Fusion.run``: stdio by default, HTTP with ``--http``."""
    calls: list[tuple[str, HttpOptions | None]] = []

    def record(self: Fusion, transport: str = "stdio", options: HttpOptions | None = None) -> None:
        calls.append((transport, options))

    monkeypatch.setattr(Fusion, "run", record)
    assert main(["run", target]) == 0
    assert main(["run", target, "--http", "--port", "0", "--path", "/x", "--stateless"]) == 0
    assert [transport for transport, _ in calls] == ["stdio", "http"]
    http = calls[1][1]
    assert http is not None
    assert (http.port, http.path, http.stateless) == (0, "/x", True)


def test_page_size_reaches_the_app_on_every_transport(
    target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--page-size N`` sets the served app's page size, over stdio and HTTP alike, and
    a size that is not a positive int is a usage error."""
    sizes: list[int | None] = []

    def record(self: Fusion, transport: str = "stdio", options: HttpOptions | None = None) -> None:
        sizes.append(self.page_size)

    monkeypatch.setattr(Fusion, "run", record)
    monkeypatch.setattr(load_app(target), "page_size", None)  # restored for later tests
    assert main(["run", target]) == 0  # the app's own: none
    assert main(["run", target, "--page-size", "3"]) == 0
    assert main(["run", target, "--http", "--page-size", "7"]) == 0
    assert sizes == [None, 3, 7]
    for bad in ("0", "-2", "x"):
        with pytest.raises(SystemExit, match="2"):
            main(["run", target, "--page-size", bad])
    assert "--page-size: invalid" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("tool", "words", "message"),
    [
        (GROUPED, ["add", "a"], "bad argument 'a': expected key=value"),
        (GROUPED, ["add", "=1"], "bad argument '=1'"),
        (GROUPED, ["a=1", "a=2"], "argument 'a' given twice"),
        (FLAT, ["now"], "tool 'misc_now' has no actions"),
    ],
)
def test_bad_words_are_usage_errors(
    tool: dict[str, object], words: list[str], message: str
) -> None:
    """Malformed words, repeated keys and an action for a flat tool are usage errors."""
    with pytest.raises(UsageError, match=message):
        parse_arguments(tool, words)


def test_load_app_from_a_file(target: str) -> None:
    """``path/to/file.py:app`` loads the app; the attribute defaults to ``app``."""
    app = load_app(target)
    assert isinstance(app, Fusion) and app.name == "tiny"
    assert load_app(target.removesuffix(":app")) is app


def test_load_app_from_a_module() -> None:
    """``package.module:app`` imports the module (dotted attributes work)."""
    app = load_app("tests.e2e.sample_app:app")
    assert app.name == "sample"


@pytest.mark.parametrize(
    ("suffix", "message"),
    [(":other", "is a int, not an mcpfusion app"), (":missing", "has no attribute 'missing'")],
)
def test_load_app_rejects_what_is_not_an_app(target: str, suffix: str, message: str) -> None:
    """An attribute that is missing or not an app is a usage error."""
    with pytest.raises(UsageError, match=message):
        load_app(target.removesuffix(":app") + suffix)


def test_load_app_reports_import_failures(tmp_path: Path) -> None:
    """An exception raised by the target module is one line naming the module."""
    broken = tmp_path / "broken_target.py"
    broken.write_text("raise RuntimeError('no database')\n")
    with pytest.raises(UsageError, match=r"importing .* failed: RuntimeError: no database"):
        load_app(f"{broken}:app")


def test_inspect_json(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``inspect --json`` prints the tools/list result."""
    assert main(["inspect", target, "--json"]) == 0
    tools = json.loads(capsys.readouterr().out)["tools"]
    assert [t["name"] for t in tools] == ["math", "misc_now"]


def test_call_prints_blocks_and_status(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``call`` prints the labelled data block; an isError result exits with 1."""
    assert main(["call", target, "math", "add", "a=2", "b=3"]) == 0
    assert "── data json" in capsys.readouterr().out
    assert main(["call", target, "math", "add", "a=x"]) == 1
    assert "error code=VALIDATION_ERROR" in capsys.readouterr().out


def test_usage_errors_exit_2(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A usage error prints one ``mcpfusion:`` line to stderr and returns 2."""
    assert main(["call", target, "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "mcpfusion: unknown tool 'nope'; tools: math, misc_now\n"


def test_load_app_calls_a_factory(tmp_path: Path) -> None:
    """A target naming a function without arguments loads the app that function returns."""
    module = tmp_path / "factory_target.py"
    module.write_text(
        "from mcpfusion import Fusion\n\n\n"
        "def create_app():\n"
        "    app = Fusion('made')\n"
        "    app.tool('t').action('ping')(lambda: 'pong')\n"
        "    return app\n\n\n"
        "def broken():\n"
        "    raise RuntimeError('no database')\n\n\n"
        "def not_an_app():\n"
        "    return 42\n"
    )
    assert load_app(f"{module}:create_app").name == "made"
    with pytest.raises(UsageError, match=r"factory .* failed: RuntimeError: no database"):
        load_app(f"{module}:broken")
    with pytest.raises(UsageError, match="is a int, not an mcpfusion app"):
        load_app(f"{module}:not_an_app")


@pytest.mark.parametrize("command", ["run", "inspect"])
def test_definition_mistake_is_one_line_and_status_2(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An app with a tool without actions stops before serving, with one line on stderr."""
    module = tmp_path / "empty_tool_target.py"
    module.write_text("from mcpfusion import Fusion\n\napp = Fusion('e')\napp.tool('empty')\n")
    assert main([command, f"{module}:app"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("mcpfusion: tool 'empty' has no actions")


def test_run_http_passes_allowed_hosts_and_origins(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--allowed-host`` and ``--allowed-origin`` repeat and reach the HTTP server."""
    calls: list[HttpOptions] = []
    monkeypatch.setattr("mcpfusion.server.run_http", lambda app, options: calls.append(options))
    words = ["--allowed-host", "a.example:*", "--allowed-host", "b.example"]
    assert main(["run", target, "--http", "--host", "0.0.0.0", *words]) == 0
    assert main(["run", target, "--http", "--allowed-origin", "https://ui.example"]) == 0
    first, second = calls
    assert first.host == "0.0.0.0"
    assert first.allowed_hosts == ("a.example:*", "b.example")
    assert first.allowed_origins is None
    assert (second.allowed_hosts, second.allowed_origins) == (None, ("https://ui.example",))


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
