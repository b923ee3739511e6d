"""The pytest plugin (entry point ``pytest11``): the ``fusion_tester`` fixture."""

from __future__ import annotations

import pytest

from mcpfusion.testing._tester import FusionTester


@pytest.fixture
def fusion_tester() -> type[FusionTester]:
    """Makes testers in one line: ``tester = fusion_tester(app, context=...)``."""
    return FusionTester
