"""Unit tests of ``mcpfusion._wire``."""
