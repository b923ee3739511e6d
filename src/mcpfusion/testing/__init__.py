"""Testing helpers: call an app's tools in-process and read each block by kind.

    from mcpfusion.testing import FusionTester

    async def test_invoice_rules() -> None:
        result = await FusionTester(app).call("billing", "get_invoice", invoice_id="INV-1")
        assert result.system_rules == ("amount_cents is in CENTS.",)

With pytest the ``fusion_tester`` fixture (registered by the package's pytest plugin) is
the same class: ``tester = fusion_tester(app)``. ``HttpTester`` drives the app over
streamable HTTP as served, in-process, with the official MCP client.
"""

from mcpfusion.testing._client import FakeClient, LogEvent
from mcpfusion.testing._http import HttpTester
from mcpfusion.testing._result import CallResult, ProgressEvent
from mcpfusion.testing._tester import FusionTester

__all__ = ["CallResult", "FakeClient", "FusionTester", "HttpTester", "LogEvent", "ProgressEvent"]
