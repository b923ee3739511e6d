"""Example mcpfusion servers; `python -m examples.billing` runs the billing one."""
