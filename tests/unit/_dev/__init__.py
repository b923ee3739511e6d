"""Unit tests of ``mcpfusion._dev``."""
