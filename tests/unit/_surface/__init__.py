"""Unit tests of ``mcpfusion._surface.surface``."""
