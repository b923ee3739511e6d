"""Whether a tool or prompt is listed: for everyone, and per tenant where that differs."""

from __future__ import annotations


class Listing:
    """Enabled for everyone or not, with per-tenant exceptions (``enable``/``disable``)."""

    __slots__ = ("_enabled", "_tenants")

    def __init__(self, enabled: bool = True) -> None:
        self._enabled = bool(enabled)
        self._tenants: dict[str, bool] = {}  # tenant -> enabled, where it differs

    def enabled_for(self, tenant: str | None) -> bool:
        """Whether callers acting for ``tenant`` (``None``: for none) see it."""
        return self._tenants.get(tenant, self._enabled) if tenant is not None else self._enabled

    def switch(self, enabled: bool, tenant: str | None) -> bool:
        """Enables or disables it for everyone (``None``) or one tenant; whether that
        changed anything (listeners are told only then).

        Raises:
            TypeError: on a tenant that is not a str or None.
        """
        if tenant is not None and not isinstance(tenant, str):
            raise TypeError(f"tenant is a str or None; got {tenant!r}")
        if tenant is None:
            if self._enabled == enabled and not self._tenants:
                return False
            self._enabled = enabled
            self._tenants.clear()
            return True
        if self.enabled_for(tenant) == enabled:
            return False
        self._tenants[tenant] = enabled
        return True
