"""The integrations suites: FastMCP's runs only in the venv that has it (``.venv-fastmcp``)."""

from __future__ import annotations

import importlib.util

# Importing FastMCP patches the MCP SDK, so it is installed in its own venv only and its
# suite is collected there (test_fastmcp_venv.py runs it); this venv skips the folder.
collect_ignore: list[str] = [] if importlib.util.find_spec("fastmcp") else ["fastmcp_suite"]
