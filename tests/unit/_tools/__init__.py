"""Unit tests of ``mcpfusion._tools``."""
