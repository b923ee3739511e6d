"""The local dev console of ``mcpfusion dev``: forms, blocks with token counts, rendered results."""

from mcpfusion._dev.command import add_dev_command, main_dev, run_dev

__all__ = ["add_dev_command", "main_dev", "run_dev"]
