"""The provider's tokens at rest: sealed with AES-GCM before they reach the sign-in store."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mcpfusion._auth.signin.store import Record

_INFO: Final = b"mcpfusion sign-in: the provider's tokens at rest"
_NONCE_BYTES: Final = 12


class Sealer:
    """Encrypts the provider's token answer of a sign-in for the store, and opens it again.

    The key is derived (HKDF-SHA256) from the facade's client secret at the provider: every
    worker of one configuration derives the same key, and a dump of the store (a Redis
    backup, a replica) holds no usable provider token without the configuration. Codes and
    refresh tokens are kept by their hash instead; these must be read back, for token
    exchange. Each value is bound to what it belongs to (``purpose``): a sealed value moved
    under another grant does not open.

    Args:
        secret: the facade's client secret at the provider.
    """

    def __init__(self, secret: str) -> None:
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(
            secret.encode()
        )
        self._aead = AESGCM(key)

    def seal(self, value: Mapping[str, Any], purpose: str) -> Record:
        """``value`` encrypted and authenticated, for the store."""
        nonce = os.urandom(_NONCE_BYTES)
        plain = json.dumps(dict(value), separators=(",", ":")).encode()
        sealed = nonce + self._aead.encrypt(nonce, plain, purpose.encode())
        return {"sealed": base64.urlsafe_b64encode(sealed).decode()}

    def open(self, record: Mapping[str, Any] | None, purpose: str) -> Record | None:
        """The value ``seal`` sealed for ``purpose``, or ``None`` when it does not open."""
        text = record.get("sealed") if record is not None else None
        if not isinstance(text, str):
            return None
        try:
            raw = base64.urlsafe_b64decode(text)
            plain = self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], purpose.encode())
            found = json.loads(plain)
        except (ValueError, InvalidTag):
            return None
        return found if isinstance(found, dict) else None
