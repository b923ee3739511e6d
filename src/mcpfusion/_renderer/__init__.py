"""The result renderer: one self-contained HTML document that shows tool results to people."""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "APP_MIME_TYPE",
    "DIAGRAMS",
    "PART_LIMIT",
    "VENDOR",
    "VendorError",
    "VendoredPackage",
    "diagram_parts",
    "renderer_document",
    "verify_vendor",
]

HERE: Final = Path(__file__).resolve().parent
VENDOR: Final = HERE / "vendor"
"""The vendored npm releases, written by ``scripts/vendor_renderer.py``."""

APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an MCP Apps ``ui://`` resource (``io.modelcontextprotocol/ui``)."""

DIAGRAMS: Final = "mermaid"
"""The vendored package a document with ``diagram_parts`` leaves out: 5.5 MB of the 6.2."""

PART_LIMIT: Final = 786_432
"""The most characters in one part of the diagram library. JSON's escapes add about 3% to
mermaid's text, so a ``resources/read`` of a part stays well under the 1 MiB that SSE
clients (the official Python SDK's, FastMCP's) accept in one event."""

# Either would let the HTML tokenizer end an inlined script early or never (a script that
# holds neither "<script" nor "</script" is closed by exactly the tag after it).
_SCRIPT_TAG = re.compile(r"<\s*/?\s*script", re.IGNORECASE)


class VendorError(RuntimeError):
    """A vendored file is missing, altered, or cannot be inlined into the document."""


@dataclass(frozen=True, slots=True)
class VendoredPackage:
    """One vendored npm release: the script inlined into the document and its checksums."""

    name: str
    version: str
    script: str
    """The file inlined into the document, in the package's folder under ``vendor/``."""
    files: Mapping[str, str]
    """Every vendored file of the release (script and licenses) with its sha256."""


def _packages(vendor: Path) -> tuple[VendoredPackage, ...]:
    try:
        manifest = json.loads((vendor / "manifest.json").read_text(encoding="utf-8"))
        return tuple(
            VendoredPackage(p["name"], p["version"], p["script"], dict(p["files"]))
            for p in manifest["packages"]
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise VendorError(f"cannot read {vendor / 'manifest.json'}: {exc}") from None


def verify_vendor(vendor: Path = VENDOR) -> tuple[VendoredPackage, ...]:
    """Checks every vendored file against the sha256 in ``manifest.json``.

    Returns:
        The vendored packages, in the order their scripts are inlined.

    Raises:
        VendorError: naming every file that is missing or differs from its checksum.
    """
    packages = _packages(vendor)
    problems = []
    for package in packages:
        if package.script not in package.files:
            problems.append(f"{package.name}: its script {package.script} has no checksum")
        for name, expected in package.files.items():
            path = vendor / package.name / name
            try:
                actual = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                problems.append(f"{package.name}/{name}: missing")
                continue
            if actual != expected:
                problems.append(f"{package.name}/{name}: sha256 {actual}, expected {expected}")
    if problems:
        raise VendorError(
            "vendored renderer files do not match manifest.json: " + "; ".join(problems)
        )
    return packages


def _script_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def content_security_policy(scripts: tuple[str, ...]) -> str:
    """The document's policy: only its own inline scripts run, and nothing is fetched.

    Scripts are allowed by hash, so an inline event handler or a ``javascript:`` URL that
    slipped through sanitizing would still be blocked.
    """
    return "; ".join(
        [
            "default-src 'none'",
            "script-src " + " ".join(_script_hash(s) for s in scripts),
            "style-src 'unsafe-inline'",
            "img-src data:",
            "font-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def _inline(name: str, text: str) -> str:
    if _SCRIPT_TAG.search(text):
        raise VendorError(f"{name} contains a script tag and cannot be inlined")
    return text


@functools.cache
def _scripts() -> tuple[tuple[str, str], ...]:
    """Every script of the document, by name, in inlining order (read and checked once)."""
    packages = verify_vendor()
    sources = [(p.name, VENDOR / p.name / p.script) for p in packages]
    sources.append(("renderer.js", HERE / "renderer.js"))
    return tuple((name, _inline(name, path.read_text(encoding="utf-8"))) for name, path in sources)


@functools.cache
def diagram_parts() -> tuple[str, ...]:
    """The diagram library's script cut into even parts of at most ``PART_LIMIT`` characters.

    Joined in order they are the script exactly, whose hash every document's policy holds.

    Raises:
        VendorError: if a vendored file is missing or altered.
    """
    [text] = [script for name, script in _scripts() if name == DIAGRAMS]
    size = math.ceil(len(text) / math.ceil(len(text) / PART_LIMIT))
    return tuple(text[start : start + size] for start in range(0, len(text), size))


@functools.cache
def renderer_document(part_uris: tuple[str, ...] | None = None) -> str:
    """The renderer as one HTML document, its scripts inlined (built once, then cached).

    The page shows ``#mcpfusion-root`` and exposes ``window.mcpfusion.render(result)``; in a
    frame it also speaks the MCP Apps protocol with its host (see ``renderer.js``).

    Args:
        part_uris: ``None`` inlines every script (6.2 MB, for the dev console). Else the
            URIs of ``diagram_parts()``, in order: the diagram library is left out (the
            document is under 1 MiB, for an MCP App) and read through the host from those
            URIs when a result has a diagram; the policy allows it once the parts are joined.

    Raises:
        VendorError: if a vendored file is missing or altered.
    """
    scripts = _scripts()
    inlined = [s for name, s in scripts if part_uris is None or name != DIAGRAMS]
    css = (HERE / "renderer.css").read_text(encoding="utf-8")
    if "</style" in css.lower():
        raise VendorError("renderer.css cannot hold a closing style tag")
    body = "".join(f"<script>{script}</script>\n" for script in inlined)
    policy = content_security_policy(tuple(script for _, script in scripts))
    parts = (
        ""
        if part_uris is None
        else '<meta name="mcpfusion-diagram-parts" '
        f'content="{html.escape(json.dumps(list(part_uris)))}">\n'
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f"{parts}"
        "<title>mcpfusion result</title>\n"
        f"<style>\n{css}</style>\n</head>\n<body>\n"
        '<main id="mcpfusion-root" aria-live="polite">'
        '<p class="mf-muted">Waiting for a tool result…</p></main>\n'
        f"{body}</body>\n</html>\n"
    )
