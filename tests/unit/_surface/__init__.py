"""Unit tests of ``mcpfusion._surface``."""
