"""Re-vendors the renderer's JavaScript libraries from pinned npm releases (run by hand).

    python scripts/vendor_renderer.py

For each pin it runs ``npm pack NAME@VERSION`` in a temporary folder (npm checks the
tarball against the registry's integrity hash), copies the listed files and their license
files into ``src/mcpfusion/_renderer/vendor/NAME/`` and writes ``vendor/manifest.json``
with every file's sha256, which ``mcpfusion._renderer.verify_vendor()`` checks. Bump a
version here, run the script, run ``make test``, commit the result.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

VENDOR = Path(__file__).resolve().parents[1] / "src" / "mcpfusion" / "_renderer" / "vendor"


@dataclass(frozen=True)
class Pin:
    """One npm release: the script it provides and the license files shipped beside it."""

    name: str
    version: str
    script: str
    """The browser build inlined into the document, relative to the package root."""
    licenses: tuple[str, ...]


ECHARTS_LICENSES = ("LICENSE", "NOTICE", "licenses/LICENSE-d3")

# Inlined in this order: the renderer needs DOMPurify and marked before the charts.
PINS = (
    Pin("dompurify", "3.5.0", "dist/purify.min.js", ("LICENSE", "LICENSE-MPL")),
    Pin("marked", "18.2.1", "lib/marked.umd.js", ("LICENSE",)),
    # The publisher's common build (line, bar, pie, scatter; grid, tooltip, legend, title,
    # markers, dataZoom, toolbox, dataset): 0.7 MB against 1.1 MB for every series, so the
    # MCP App document stays under the 1 MiB that SSE clients accept in one event.
    Pin("echarts", "6.1.0", "dist/echarts.common.min.js", ECHARTS_LICENSES),
    Pin("mermaid", "12.3.0", "dist/mermaid.min.js", ("LICENSE",)),
)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pack(pin: Pin, scratch: Path) -> tuple[Path, dict[str, str]]:
    """Downloads and unpacks one release; returns its package folder and npm's metadata."""
    done = subprocess.run(
        ["npm", "pack", "--json", f"{pin.name}@{pin.version}"],
        cwd=scratch,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    [info] = json.loads(done.stdout)
    target = scratch / pin.name
    with tarfile.open(scratch / info["filename"]) as tar:
        tar.extractall(target, filter="data")
    return target / "package", {"integrity": info["integrity"], "shasum": info["shasum"]}


def main() -> int:
    """Vendors every pin; returns the exit status."""
    if shutil.which("npm") is None:
        print("vendor_renderer: npm is not installed", file=sys.stderr)
        return 1
    manifest: dict[str, object] = {"packages": []}
    packages: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for pin in PINS:
            root, tarball = _pack(pin, scratch)
            version = json.loads((root / "package.json").read_text())["version"]
            if version != pin.version:
                raise SystemExit(f"{pin.name}: npm gave {version}, expected {pin.version}")
            folder = VENDOR / pin.name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            files: dict[str, str] = {}
            for relative in (pin.script, *pin.licenses):
                target = folder / Path(relative).name
                shutil.copyfile(root / relative, target)
                files[target.name] = _sha256(target)
            packages.append(
                {
                    "name": pin.name,
                    "version": pin.version,
                    "script": Path(pin.script).name,
                    "source": pin.script,
                    "tarball": tarball,
                    "files": files,
                }
            )
            print(f"{pin.name} {pin.version}: {', '.join(files)}")
    manifest["packages"] = packages
    (VENDOR / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
