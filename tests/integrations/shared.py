"""One Presenter and its data, served by an mcpfusion app: the reference every host is held to.

No host framework is imported here, so the SDK suite and the FastMCP suite (in its own
venv) share it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mcpfusion import Context, Fusion, Presenter, Suggestion, ToolError, UIBlock, suggest, ui


class User(BaseModel):
    """What may leave the process about a user."""

    id: int
    name: str
    plan: str


class UserRow(BaseModel):
    """The row a database hands back: more than may be sent."""

    id: int
    name: str
    plan: str
    password_hash: str
    grants: list[dict[str, Any]] | None = None


class Grant(BaseModel):
    """An embedded permission."""

    scope: str


grant_view = Presenter("Grant", Grant, rules=["Scopes are case-sensitive."])


@grant_view.collection_ui
def _grant_table(grants: list[dict[str, Any]]) -> UIBlock:
    return ui.table(["scope"], [[g["scope"]] for g in grants])


user_view = Presenter(
    "User", User, limit=2, rules=["Plans are billed monthly."], directives=["Be brief."]
).embed("grants", grant_view)


@user_view.ui
def _user_card(user: dict[str, Any]) -> UIBlock:
    return ui.markdown(f"**{user['name']}** on {user['plan']}", title="User")


@user_view.collection_ui
def _user_table(users: list[dict[str, Any]]) -> UIBlock:
    return ui.table(["id", "name"], [[u["id"], u["name"]] for u in users])


@user_view.suggest
def _user_next(user: dict[str, Any]) -> Suggestion:
    # The reference app's flat name: an app sends a suggestion as its exposition lists the
    # target (a host sends it as written), so both send this spelling byte for byte.
    return suggest("users_upgrade", f"Move {user['name']} to a larger plan")


SECRET = "pbkdf2$SECRET-HASH"
"""The value that must never reach a client."""

ROWS: list[dict[str, Any]] = [
    {
        "id": 1,
        "name": "Ada <domain_rules>",
        "plan": "pro",
        "password_hash": SECRET,
        "grants": [{"scope": "billing:read", "token": SECRET}],
    },
    {"id": 2, "name": "Grace", "plan": "free", "password_hash": SECRET},
    {"id": 3, "name": "Linus", "plan": "free", "password_hash": SECRET},
]


def find(user_id: int) -> dict[str, Any]:
    """The row of a user, or the ``NOT_FOUND`` envelope the model reads."""
    for row in ROWS:
        if row["id"] == user_id:
            return row
    raise ToolError(
        "NOT_FOUND",
        f"There is no user {user_id}.",
        recovery="List users to find a valid id.",
        # Spelled as the reference app lists it, which a host sends as written (see
        # _user_next): the two must send the same bytes.
        available_actions=["users_list_users"],
    )


def reference_app() -> Fusion:
    """An mcpfusion app serving the same Presenter (flat tools ``users_get_user``, ...)."""
    # An integration's Presenter presents outside an app: the standalone forms (indented
    # JSON, UI blocks for everyone), which an app takes only when told.
    app = Fusion("reference", data_format="json", ui_audience="all")
    users = app.tool("users", description="Users.", exposition="flat")

    @users.action("get_user", returns=user_view, read_only=True)
    def get_user(user_id: int) -> dict[str, Any]:
        """Reads one user."""
        return find(user_id)

    @users.action("list_users", returns=user_view, read_only=True)
    async def list_users() -> list[dict[str, Any]]:
        """Lists the users."""
        return ROWS

    @users.action("upgrade", idempotent=True)
    def upgrade(user_id: int) -> str:
        """Moves a user to a larger plan (the target of the Presenter's suggestion)."""
        return f"user {user_id} upgraded"

    return app


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_user", {"user_id": 1}),
    ("get_user", {"user_id": 2}),
    ("get_user", {"user_id": 9}),
    ("list_users", {}),
]
"""Calls whose blocks every host must send byte for byte as the app does."""


def app_name(host_name: str) -> str:
    """The reference app's name for the tool a host serves as ``host_name``."""
    return f"users_{host_name}"


class Total(BaseModel):
    """A structured result."""

    total: int


def mounted_app() -> Fusion:
    """An app to mount in a host: a grouped tool (Presenter, structured output), a flat one."""
    app = Fusion("billing")
    invoices = app.tool("invoices", description="Invoices.")

    @invoices.action("get", returns=user_view, read_only=True)
    def get(user_id: int) -> dict[str, Any]:
        """Reads one."""
        return find(user_id)

    @invoices.action("total", output_schema=Total, destructive=True)
    async def total() -> dict[str, int]:
        """Sums them."""
        return {"total": 3}

    report = app.tool("report", exposition="flat")

    @report.action("run", idempotent=True)
    async def run() -> str:
        """Runs the report."""
        return "done"

    return app


MOUNTED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("invoices", {"action": "get", "user_id": 1}),
    ("invoices", {"action": "get", "user_id": 9}),
    ("invoices", {"action": "get", "user_id": "nine"}),
    ("invoices", {"action": "total"}),
    ("invoices", {"action": "pay"}),
    ("invoices", {}),
    ("report_run", {"extra": 1}),
]
"""Calls of a mounted app whose results a host must send exactly as the app does."""


def progress_app() -> Fusion:
    """An app whose action reports progress through its own context."""
    app = Fusion("progress")
    jobs = app.tool("jobs")

    @jobs.action("run")
    async def run(ctx: Context) -> str:
        await ctx.progress(1, 2, "half")
        return "done"

    return app
