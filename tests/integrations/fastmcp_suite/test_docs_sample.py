"""The FastMCP sample of docs/adopting.md runs here: the docs runner's venv has no FastMCP."""

from __future__ import annotations

import asyncio
import inspect
import sys
import types
from pathlib import Path

from tests.docs.test_docs import fences

PAGE = Path(__file__).resolve().parents[3] / "docs" / "adopting.md"


def test_the_fastmcp_sample_of_the_adopting_page_runs() -> None:
    """The page's Presenter sample, then its FastMCP sample and the test it defines, pass."""
    samples = [
        fence for fence in fences(PAGE.read_text(encoding="utf-8")) if fence.info == "python"
    ]
    presenter = samples[0]
    [fastmcp_sample] = [f for f in samples if f.marker == "no-run" and "fastmcp" in f.body]
    # A registered module, so pydantic resolves the annotations of the sample's classes.
    module = types.ModuleType("docs_adopting_fastmcp")
    sys.modules[module.__name__] = module
    try:
        for fence in (presenter, fastmcp_sample):
            exec(
                compile(fence.body, f"{PAGE.name}:{fence.line}", "exec", dont_inherit=True),
                module.__dict__,
            )
        tests = [
            v for k, v in module.__dict__.items() if k.startswith("test_") and inspect.isfunction(v)
        ]
        assert tests, "the FastMCP sample defines a test"
        for test in tests:
            result = test()
            if inspect.iscoroutine(result):
                asyncio.run(result)
    finally:
        del sys.modules[module.__name__]
