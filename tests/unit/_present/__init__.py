"""Unit tests of ``mcpfusion._present``."""
