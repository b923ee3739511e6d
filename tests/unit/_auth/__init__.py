"""Unit tests of the verifiers under ``mcpfusion._auth``."""
