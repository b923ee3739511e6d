"""The CLI in-process: targets, ``key=value`` arguments, commands and their exit status."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpfusion._app.app import Fusion
from mcpfusion.cli import UsageError, load_app, main, parse_arguments

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
