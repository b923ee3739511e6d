"""The renderer document: vendored scripts inlined, checked against their checksums."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from mcp.server.apps import APP_MIME_TYPE as SDK_APP_MIME_TYPE

from mcpfusion import _renderer
from mcpfusion._renderer import (
    APP_MIME_TYPE,
    DIAGRAMS,
    PART_LIMIT,
    VENDOR,
    VendorError,
    content_security_policy,
    diagram_parts,
    renderer_document,
    verify_vendor,
)

_SCRIPTS = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def test_verify_vendor_accepts_the_shipped_files() -> None:
    """The vendored files match the manifest; scripts come in inlining order."""
    packages = verify_vendor()
    assert [p.name for p in packages] == ["dompurify", "marked", "echarts", "mermaid"]
    for package in packages:
        assert package.script in package.files
        assert any(name.startswith("LICENSE") for name in package.files)


def test_verify_vendor_names_an_altered_and_a_missing_file(tmp_path: Path) -> None:
    """A changed byte or a deleted file is reported by name."""
    copy = tmp_path / "vendor"
    shutil.copytree(VENDOR, copy)
    script = copy / "marked" / "marked.umd.js"
    script.write_bytes(script.read_bytes() + b"\n")
    (copy / "echarts" / "NOTICE").unlink()
    with pytest.raises(VendorError, match="sha256") as caught:
        verify_vendor(copy)
    assert "marked/marked.umd.js: sha256" in str(caught.value)
    assert "echarts/NOTICE: missing" in str(caught.value)


def test_verify_vendor_rejects_a_missing_manifest(tmp_path: Path) -> None:
    """Without manifest.json nothing can be checked, so nothing is trusted."""
    with pytest.raises(VendorError, match=r"manifest\.json"):
        verify_vendor(tmp_path)


def test_manifest_pins_the_versions_the_script_vendors() -> None:
    """manifest.json and scripts/vendor_renderer.py name the same releases."""
    manifest = json.loads((VENDOR / "manifest.json").read_text())
    script = (Path(__file__).parents[2] / "scripts" / "vendor_renderer.py").read_text()
    for package in manifest["packages"]:
        assert f'Pin("{package["name"]}", "{package["version"]}"' in script


def test_document_inlines_every_vendored_script_and_the_renderer() -> None:
    """The document is self-contained: each script is inlined whole, nothing is linked."""
    document = renderer_document()
    scripts = _SCRIPTS.findall(document)
    expected = [(VENDOR / p.name / p.script).read_text(encoding="utf-8") for p in verify_vendor()]
    expected.append((Path(_renderer.__file__).parent / "renderer.js").read_text(encoding="utf-8"))
    assert scripts == expected
    assert "src=" not in re.sub(_SCRIPTS, "", document)
    assert document.startswith("<!DOCTYPE html>\n")


def test_document_policy_allows_exactly_its_scripts() -> None:
    """The CSP lists one sha256 per inline script and allows no inline handlers or fetches."""
    document = renderer_document()
    [policy] = _POLICY.findall(document)
    hashes = re.findall(r"'sha256-([^']+)'", policy)
    digests = [
        base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()
        for s in _SCRIPTS.findall(document)
    ]
    assert hashes == digests
    assert "default-src 'none'" in policy
    assert "unsafe-inline" not in policy.split("style-src")[0]
    assert "unsafe-eval" not in policy


def test_content_security_policy_hashes_each_script() -> None:
    """The policy of two scripts names two hashes, in order."""
    policy = content_security_policy(("a", "b"))
    assert policy.count("'sha256-") == 2
    assert policy.index(base64.b64encode(hashlib.sha256(b"a").digest()).decode()) < policy.index(
        base64.b64encode(hashlib.sha256(b"b").digest()).decode()
    )


def test_document_is_built_once() -> None:
    """The assembled document is cached: later calls return the same string."""
    assert renderer_document() is renderer_document()


def test_app_mime_type_is_the_sdk_one() -> None:
    """The MCP Apps MIME type matches the SDK's constant."""
    assert APP_MIME_TYPE == SDK_APP_MIME_TYPE == "text/html;profile=mcp-app"


PARTS = ("ui://a/x.html/diagrams/1", "ui://a/x.html/diagrams/2")


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_diagram_parts_join_into_the_library() -> None:
    """Even parts of at most PART_LIMIT characters, which are the vendored script in order."""
    [package] = [p for p in verify_vendor() if p.name == DIAGRAMS]
    script = (VENDOR / package.name / package.script).read_text(encoding="utf-8")
    parts = diagram_parts()
    assert "".join(parts) == script
    assert len(parts) > 1 and all(len(part) <= PART_LIMIT for part in parts)
    assert max(map(len, parts)) - min(map(len, parts)) <= 2


def test_app_document_leaves_the_diagram_library_out_and_names_its_parts() -> None:
    """Under 1 MiB as JSON; the parts' URIs in a meta; the policy allows the joined library."""
    document = renderer_document(PARTS)
    assert len(json.dumps(document).encode()) < 1024 * 1024
    scripts = _SCRIPTS.findall(document)
    library = "".join(diagram_parts())
    assert library not in scripts and len(scripts) == len(verify_vendor())
    assert (
        '<meta name="mcpfusion-diagram-parts" content="[&quot;ui://a/x.html/diagrams/1&quot;'
        in (document)
    )
    [policy] = _POLICY.findall(document)
    assert re.findall(r"'sha256-([^']+)'", policy) == [
        *map(_digest, scripts[:-1]),
        _digest(library),
        _digest(scripts[-1]),
    ]


def test_part_uris_are_escaped_in_the_document() -> None:
    """A quote or markup in an App URI cannot end the meta that names the parts."""
    document = renderer_document(('ui://a/"><script>x</script>',))
    assert '"><script>x' not in document
    assert "&quot;&gt;&lt;script&gt;x" in document
