"""Who may call: Host and Origin headers parsed and compared exactly (DNS rebinding)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from starlette.types import Scope

__all__ = ["LOOPBACK_HOSTS", "Address", "HostPolicy", "Origin"]

LOOPBACK_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
"""Host header values a loopback bind accepts, on any port, besides its own address."""

_PORT = re.compile(r"[0-9]{1,5}")
_NAME = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=%-]+")  # a reg-name or IPv4 (RFC 3986)
_DEFAULT_PORTS: Final = {"http": "80", "https": "443"}


@dataclass(frozen=True, slots=True)
class Address:
    """A host (lower case, IPv6 without brackets) and its port, ``None`` when absent."""

    host: str
    port: str | None

    @classmethod
    def parse(cls, text: str) -> Address | None:
        """Reads ``host``, ``host:port``, ``[v6]`` or ``[v6]:port``; ``None`` if malformed.

        A port is ``*`` in a pattern (any port, or none), else 1-5 digits.
        """
        if text.startswith("["):
            end = text.find("]")
            if end < 0:
                return None
            host, rest = text[1:end], text[end + 1 :]
            try:
                ipaddress.IPv6Address(host)
            except ValueError:
                return None
            if rest and not rest.startswith(":"):
                return None
            port = rest[1:] if rest else None
        else:
            host, sep, port_text = text.rpartition(":")
            host, port = (host, port_text) if sep else (port_text, None)
            if not _NAME.fullmatch(host):
                return None
        if port is not None and port != "*" and not _PORT.fullmatch(port):
            return None
        # A trailing dot is kept: "localhost." is another name (and browser origin) than
        # "localhost", and matches only a pattern that spells it.
        return cls(host.lower(), port)

    def matches(self, allowed: Address, default_port: str | None = None) -> bool:
        """Whether this concrete address is allowed by the pattern ``allowed``."""
        if self.host != allowed.host:
            return False
        if allowed.port == "*":
            return True
        port = self.port if self.port is not None else default_port
        wanted = allowed.port if allowed.port is not None else default_port
        return port == wanted


@dataclass(frozen=True, slots=True)
class Origin:
    """An ``Origin`` header value: scheme and address."""

    scheme: str
    address: Address

    @classmethod
    def parse(cls, text: str) -> Origin | None:
        """Reads ``scheme://host[:port]`` (nothing after it); ``None`` otherwise."""
        scheme, sep, rest = text.partition("://")
        if not sep or scheme.lower() not in _DEFAULT_PORTS or not rest or "/" in rest:
            return None
        address = Address.parse(rest)
        return None if address is None else cls(scheme.lower(), address)

    def matches(self, allowed: Origin) -> bool:
        """Whether this origin is allowed by the pattern ``allowed``."""
        return self.scheme == allowed.scheme and self.address.matches(
            allowed.address, _DEFAULT_PORTS[self.scheme]
        )


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """Which ``Host`` and ``Origin`` headers a server accepts (DNS-rebinding protection).

    ``None`` for ``hosts`` turns the checks off (a proxy checks them).
    """

    hosts: tuple[str, ...] | None
    origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for host in self.hosts or ():
            if Address.parse(host) is None:
                raise ValueError(f"not a host or host:port pattern: {host!r}")
        for origin in self.origins:
            if Origin.parse(origin) is None:
                raise ValueError(f"not an origin (scheme://host[:port]): {origin!r}")

    @property
    def protected(self) -> bool:
        """Whether Host and Origin are checked."""
        return self.hosts is not None

    def host_allowed(self, values: Sequence[str]) -> bool:
        """Whether the one ``Host`` header (none or more than one is refused) is allowed."""
        address = Address.parse(values[0]) if len(values) == 1 else None
        allowed = (Address.parse(host) for host in self.hosts or ())
        return address is not None and any(a is not None and address.matches(a) for a in allowed)

    def origin_allowed(self, values: Sequence[str]) -> bool:
        """Whether the ``Origin`` headers (none is fine; more than one is not) are allowed."""
        if not values:
            return True  # not a browser, or a same-origin request
        if len(values) > 1:
            return False
        origin = Origin.parse(values[0])
        allowed = (Origin.parse(o) for o in self.origins)
        return origin is not None and any(a is not None and origin.matches(a) for a in allowed)


def _headers(scope: Scope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope["headers"] if key.lower() == name]


def _is_json(values: Sequence[str]) -> bool:
    """Whether the one ``Content-Type`` given is ``application/json`` (any case, any params)."""
    return len(values) == 1 and values[0].split(";", 1)[0].strip().lower() == "application/json"
