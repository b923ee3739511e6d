"""Unit tests of ``mcpfusion._openapi``."""
