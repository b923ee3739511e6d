"""Unit tests of ``mcpfusion._app.app``."""
