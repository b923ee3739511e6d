"""The billing example served by the CLI with sign-in, each user seeing their tenant's data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from examples.billing.seed import MAIN_TENANT, SECOND_TENANT
from tests.e2e.signin_servers import (
    CLIENT_ID,
    CLIENT_SECRET,
    Browser,
    Stack,
    browser,
    oidc_provider,
    settings_for,
)
from tests.e2e.test_signin import call
from tests.scale.services import cli, free_port, replicas

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


async def sign_in_as(user: Browser, login: str, scope: str) -> dict[str, Any]:
    """Registers a client, signs ``login`` in at the provider for ``scope``; the tokens."""
    _, answer = await user.signed_in(login, scope=scope)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def test_the_billing_example_signs_users_in_and_keeps_tenants_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mcpfusion run examples.billing.__main__:app --http --signin-*`` against the real
    provider: a user of each tenant signs in and lists invoices, each sees their own
    tenant's only; a read-only token cannot record a payment (FORBIDDEN)."""
    port = free_port()  # the resource URL names the port before the server binds it
    mcp = f"http://127.0.0.1:{port}/mcp"
    monkeypatch.setenv("MCPFUSION_SIGNIN_SECRET", CLIENT_SECRET)
    monkeypatch.setenv("MCPFUSION_BILLING_DB", str(tmp_path / "billing.db"))
    with anyio.fail_after(180):
        async with oidc_provider() as provider:
            command = cli(
                "examples.billing.__main__:app",
                "--port",
                str(port),
                f"--signin-issuer={provider.issuer}",
                f"--signin-client-id={CLIENT_ID}",
                f"--signin-resource={mcp}",
                "--signin-scope=billing:read",
                "--signin-scope=billing:write",
                "--signin-tenant-claim=tenant",
            )
            with replicas([command], tmp_path / "logs"):
                await provider.allow(f"http://127.0.0.1:{port}/oauth/callback")
                stack = Stack(provider.issuer, port, settings_for(provider.issuer, mcp))
                # One browser each: the provider's session cookie would sign the first
                # user in again.
                async with browser(stack) as carol, browser(stack) as dave:
                    main = await sign_in_as(carol, f"carol+{MAIN_TENANT}", "billing:read")
                    second = await sign_in_as(
                        dave, f"dave+{SECOND_TENANT}", "billing:read billing:write"
                    )
                    main_list = await call(mcp, main["access_token"])
                    second_list = await call(mcp, second["access_token"])
                    forbidden = await call(
                        mcp, main["access_token"], "mark_paid", invoice_id="INV-00001"
                    )
    main_text, second_text = main_list.content[0].text, second_list.content[0].text
    assert not main_list.is_error and "INV-0" in main_text and "INV-9" not in main_text
    assert not second_list.is_error and "INV-9" in second_text and "INV-0" not in second_text
    assert forbidden.is_error and "FORBIDDEN" in forbidden.content[0].text
