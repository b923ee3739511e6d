"""The conformance runner's bookkeeping, and the fixture's side of the suite's contract.

These run offline with the unit tests; ``make conformance`` runs the suite itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpfusion.testing import FakeClient, FusionTester
from tests.conformance_suite import run
from tests.conformance_suite.fixture import JSON_SCHEMA_2020_12, app

ENTRY = "- `tools-call-image:tools-call-image` — needs image content blocks."


def write_checks(results: Path, scenario: str, checks: list[tuple[str, str]]) -> None:
    """Writes a results folder the way the suite does, one check per (id, status)."""
    folder = results / f"server-{scenario}-2026-12-02T15-16-34-020Z"
    folder.mkdir(parents=True)
    body = [{"id": check, "status": status} for check, status in checks]
    (folder / "checks.json").write_text(json.dumps(body))


def test_an_entry_without_scope_covers_every_run() -> None:
    """An entry with no scope applies to both modes over both transports."""
    [entry] = run.parse_expected(f"# Title\n\nProse.\n\n{ENTRY}\n")
    assert entry.check == "tools-call-image:tools-call-image"
    assert entry.reason == "needs image content blocks."
    assert all(entry.applies(m, t) for m in run.MODES for t in run.TRANSPORTS)


def test_a_scope_narrows_an_entry_to_its_modes_and_transports() -> None:
    """A scope of one mode and one transport covers exactly that run."""
    [entry] = run.parse_expected("- `a:b` (2025-11-25, stateless) — why.\n")
    covered = [(m, t) for m in run.MODES for t in run.TRANSPORTS if entry.applies(m, t)]
    assert covered == [("2025-11-25", "stateless")]


@pytest.mark.parametrize(
    "text",
    [
        "- `a:b` why, without the dash\n",
        "- `a:b` (2024-01-01) — an unknown mode.\n",
        "- `a:b` — once.\n- `a:b` (stateless) — twice for the stateless runs.\n",
    ],
)
def test_a_malformed_or_doubled_entry_is_refused(text: str) -> None:
    """A bullet naming a check must fit the form, with known scope words, once per run."""
    with pytest.raises(ValueError, match="line"):
        run.parse_expected(text)


def test_the_committed_list_parses() -> None:
    """EXPECTED_FAILURES.md is well formed, and names each check once."""
    entries = run.parse_expected(run.EXPECTED_FAILURES.read_text(encoding="utf-8"))
    assert entries
    assert len({e.check for e in entries}) == len(entries)


def test_repeated_checks_collapse_to_the_most_severe(tmp_path: Path) -> None:
    """A check id reported twice takes its worse status; WARNING fails, INFO is neutral."""
    write_checks(tmp_path, "ping", [("ping", "SUCCESS"), ("ping", "WARNING"), ("x", "INFO")])
    write_checks(tmp_path, "tools-list", [("tools-list", "SUCCESS"), ("y", "SKIPPED")])
    assert run.read_verdicts(tmp_path) == {
        "ping:ping": run.FAIL,
        "ping:x": run.NEUTRAL,
        "tools-list:tools-list": run.PASS,
        "tools-list:y": run.NEUTRAL,
    }


def test_judging_finds_unlisted_shortfalls_and_stale_entries() -> None:
    """Unlisted failures and reference-only passes are unexpected; a listed pass is stale."""
    entries = run.parse_expected("- `s:listed` — why.\n- `s:fixed` — why.\n- `s:gone` — why.\n")
    fixture = {"s:listed": run.FAIL, "s:fixed": run.PASS, "s:new": run.FAIL, "s:skip": run.NEUTRAL}
    reference = {"s:skip": run.PASS, "s:listed": run.PASS}
    verdict = run.judge(fixture, entries, "2026-07-28", "stateless", reference)
    assert verdict.unexpected == ("s:new", "s:skip")
    assert verdict.stale == ("s:fixed",)
    assert (verdict.passed, verdict.short, verdict.expected) == (1, 3, 1)


def test_the_fixture_lists_the_tools_the_suite_calls() -> None:
    """The fixture's tools carry the names the suite's scenarios call."""
    names = {tool["name"] for tool in app.list_tools()}
    assert (
        names
        == {
            "test_simple_text",
            "test_error_handling",
            "test_tool_with_progress",
            "test_x_mcp_header",
            "json_schema_2020_12_tool",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
        }
        | TALKING
        | TASKS
    )


TASKS = {
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
}
"""The tools the tasks extension's scenarios (SEP-2663) call."""


TALKING = (
    {f"test_{name}" for name in ("tool_with_logging", "logging_tool", "sampling")}
    | {
        f"test_{name}"
        for name in (
            "elicitation",
            "elicitation_sep1034_defaults",
            "elicitation_sep1330_enums",
            "streaming_elicitation",
            "missing_capability",
            "trigger_tool_change",
            "trigger_prompt_change",
            "reconnection",
        )
    }
    | {
        f"test_input_required_result_{name}"
        for name in (
            "elicitation",
            "sampling",
            "list_roots",
            "request_state",
            "multiple_inputs",
            "multi_round",
            "tampered_state",
            "capabilities",
        )
    }
)
"""The tools that talk to the client (logging, questions, sampling, list changes)."""


def test_the_talking_tools_answer_as_the_suite_expects() -> None:
    """Logs, questions and sampling go through the client; the answers come back as the
    reference server writes them."""
    client = FakeClient(
        answers=[("accept", {"response": "yes"}), ("decline", None)], replies=["Paris"]
    )
    tester = FusionTester(app, client=client)
    assert tester.call_sync("test_tool_with_logging").text == (
        "Tool with logging executed successfully"
    )
    assert [log.data for log in client.logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert tester.call_sync("test_elicitation", message="Hi?").text == (
        'User response: action=accept, content={"response":"yes"}'
    )
    assert tester.call_sync("test_elicitation_sep1330_enums").text == (
        "Elicitation completed: action=decline, content={}"
    )
    assert tester.call_sync("test_sampling", prompt="Capital?").text == "LLM response: Paris"
    refused = FusionTester(app).call_sync("test_missing_capability")
    assert refused.error_code == "UNSUPPORTED_BY_CLIENT"
    assert tester.call_sync("test_trigger_tool_change").text == "tool list changed"
    assert "dynamic_tool" not in {t["name"] for t in app.list_tools()}
    assert tester.call_sync("test_trigger_prompt_change").text == "prompt list changed"
    assert "test_dynamic_prompt" not in {p["name"] for p in app.list_prompts()}


def test_the_fixture_answers_as_the_suite_expects() -> None:
    """Simple text comes back verbatim, the error tool as isError, progress thrice."""
    tester = FusionTester(app)
    assert tester.call_sync("test_simple_text").text == (
        "This is a simple text response for testing."
    )
    assert tester.call_sync("test_error_handling").is_error
    progress = tester.call_sync("test_tool_with_progress").progress
    assert [event.done for event in progress] == [0, 50, 100]


def test_the_schema_tool_advertises_and_enforces_its_declared_schema() -> None:
    """json_schema_2020_12_tool lists its schema as declared ($schema, allOf, if/then/else)
    and refuses arguments the schema refuses."""
    [tool] = [t for t in app.list_tools() if t["name"] == "json_schema_2020_12_tool"]
    assert tool["inputSchema"] == JSON_SCHEMA_2020_12
    tester = FusionTester(app)
    assert tester.call_sync("json_schema_2020_12_tool", email="a@example.com").text == (
        "json_schema_2020_12_tool"
    )
    refused = tester.call_sync("json_schema_2020_12_tool", contactMethod="phone", email="x")
    assert refused.error_code == "VALIDATION_ERROR"
    assert '<field name="phone">Field required.' in refused.raw["content"][0]["text"]


def test_the_fixture_sends_content_beyond_text() -> None:
    """Image, audio and embedded resource alone; the mixed tool's text comes first."""
    tester = FusionTester(app)
    kinds = {
        name: [item["type"] for item in tester.call_sync(name).raw["content"]]
        for name in (
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
        )
    }
    assert kinds == {
        "test_image_content": ["image"],
        "test_audio_content": ["audio"],
        "test_embedded_resource": ["resource"],
        "test_multiple_content_types": ["text", "image", "resource"],
    }


@pytest.mark.anyio
async def test_the_fixture_serves_the_suites_resources_and_prompts() -> None:
    """The four resources read as the suite expects; prompts and completion answer."""
    tester = FusionTester(app)
    assert {r["uri"] for r in tester.list_resources()} == {
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    }
    assert all(r["description"] for r in tester.list_resources())
    text = await tester.read_resource("test://static-text")
    assert text.contents[0] == {
        "uri": "test://static-text",
        "mimeType": "text/plain",
        "text": "This is the content of the static text resource.",
    }
    binary = await tester.read_resource("test://static-binary")
    assert binary.contents[0]["mimeType"] == "image/png" and "blob" in binary.contents[0]
    templated = await tester.read_resource("test://template/123/data")
    assert '"id": "123"' in templated.contents[0]["text"]
    prompt = await tester.get_prompt("test_prompt_with_arguments", arg1="hello", arg2="world")
    assert [m.text for m in prompt.messages] == [
        "Prompt with arguments: arg1='hello', arg2='world'"
    ]
    asking = FusionTester(app, client=FakeClient(answers=[("accept", {"context": "tests"})]))
    asked = await asking.get_prompt("test_input_required_result_prompt")
    assert [m.text for m in asked.messages] == ["Use the following context: tests"]
    assert await tester.complete("test_prompt_with_arguments", "arg1", "par") == [
        "paris",
        "park",
        "party",
    ]
