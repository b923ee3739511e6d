"""The provider's tokens sealed for the store."""

from __future__ import annotations

from mcpfusion._auth.signin.sealed import Sealer


def test_a_sealed_value_opens_with_its_key_and_purpose_only() -> None:
    """The value comes back with the same secret and purpose; another secret, another
    purpose or a changed byte opens nothing, and the sealed text shows no value."""
    sealer = Sealer("client secret")
    sealed = sealer.seal({"access_token": "provider-token"}, "upstream:g1")
    assert "provider-token" not in str(sealed)
    assert sealer.open(sealed, "upstream:g1") == {"access_token": "provider-token"}
    assert Sealer("client secret").open(sealed, "upstream:g1") is not None
    assert Sealer("another secret").open(sealed, "upstream:g1") is None
    assert sealer.open(sealed, "upstream:g2") is None
    text = sealed["sealed"]
    tampered = {"sealed": text[:-2] + ("A" if text[-2] != "A" else "B") + text[-1]}
    assert sealer.open(tampered, "upstream:g1") is None
    assert sealer.open({"sealed": "not base64!"}, "upstream:g1") is None
    assert sealer.open(None, "upstream:g1") is None
