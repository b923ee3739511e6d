"""Unit tests of ``mcpfusion.integrations``."""
