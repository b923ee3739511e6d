"""``python -m mcpfusion._dev TARGET``: the dev console without the ``mcpfusion`` command."""

import sys

from mcpfusion._dev.command import main_dev

sys.exit(main_dev())
