"""Unit tests of ``mcpfusion._serve.stdio``."""
