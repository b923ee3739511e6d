"""The two-clinic server of ``benchmarks.six_calls``, built in mcpfusion and in FastMCP."""
