"""Unit tests of ``mcpfusion.testing``."""
