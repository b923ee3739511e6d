"""Unit tests of ``mcpfusion._tasks``."""
