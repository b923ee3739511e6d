"""The package order of ``src/mcpfusion``, read from its imports with ``ast``.

Kept at the top of ``tests/unit/``: it checks the whole tree, no one package. Every import
counts, at the top of a module, inside a function (deferred) or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "mcpfusion"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"_errors", "_identity", "_renderer"}),
    frozenset({"_wire"}),
    frozenset({"_present"}),
    frozenset({"_tools"}),
    frozenset({"_surface"}),
    frozenset({"_app"}),
    frozenset({"_tasks"}),
    frozenset({"_auth", "_openapi"}),
    frozenset({"_serve"}),
    frozenset({"_dev"}),
    frozenset(
        {
            "__init__",
            "auth",
            "cli",
            "integrations",
            "middleware",
            "openapi",
            "redis",
            "server",
            "terminal",
            "testing",
            "ui",
            "wire",
        }
    ),
)
"""Lowest first: a module imports from its own layer or the ones before it."""

ALLOWED: dict[tuple[str, str], str] = {
    # app.run() and app.asgi_app() serve through the public façade (a deferred import),
    # and annotate with its HttpOptions (type-only): the app's one edge to serving.
    ("mcpfusion._app.serving", "mcpfusion.server"): "the app.run() façade edge",
}
"""The only edge up the order; it is no import at the top of a module."""

SDK = frozenset({"mcp", "mcp_types", "fastmcp"})
SDK_HOMES = ("mcpfusion._serve", "mcpfusion.integrations")
"""The packages that may import the MCP SDK or FastMCP."""

TOP_LEVEL_LIMIT = 20


def module_name(path: Path) -> str:
    """``mcpfusion._wire.format`` for ``src/mcpfusion/_wire/format.py``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def may_import_the_sdk(name: str) -> bool:
    """Whether module ``name`` lies in ``_serve/`` or ``integrations/``."""
    return any(name == home or name.startswith(home + ".") for home in SDK_HOMES)


def _modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path) -> Iterator[tuple[tuple[str, ...], str, int]]:
    """``(names it may import, kind, line)``, the likeliest name first.

    ``from a import b`` imports the module ``a.b`` when there is one, else from ``a``. The
    kind is ``top``, ``deferred`` (in a function) or ``type`` (under ``TYPE_CHECKING``).
    """

    def visit(node: ast.AST, kind: str) -> Iterator[tuple[tuple[str, ...], str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from visit(child, "deferred" if kind == "top" else kind)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), "type")
                for stmt in child.orelse:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), kind)
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    yield (alias.name,), kind, child.lineno
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    package = module_name(path).split(".")
                    keep = len(package) - child.level + (path.name == "__init__.py")
                    base = ".".join([*package[:keep], *([base] if base else [])])
                for alias in child.names:
                    yield (f"{base}.{alias.name}", base), kind, child.lineno
            else:
                yield from visit(child, kind)

    yield from visit(ast.parse(path.read_text(encoding="utf-8")), "top")


def _edges() -> dict[tuple[str, str], set[str]]:
    """``(importer, imported module) -> kinds`` within mcpfusion."""
    modules = _modules()
    edges: dict[tuple[str, str], set[str]] = {}
    for name, path in modules.items():
        for candidates, kind, _ in _imports(path):
            imported = next((c for c in candidates if c in modules), None)
            if imported is None or name == imported or name.startswith(imported + "."):
                continue  # not mcpfusion's, or the importer's own package
            edges.setdefault((name, imported), set()).add(kind)
    return edges


def _layer(name: str) -> int:
    first = name.split(".")[1] if "." in name else "__init__"
    for index, layer in enumerate(LAYERS):
        if first in layer:
            return index
    raise AssertionError(f"{name} is in no layer: add its package to LAYERS")


def test_every_module_has_a_layer() -> None:
    """Every module of the package belongs to one layer of the order."""
    for name in _modules():
        _layer(name)


def test_imports_follow_the_package_order() -> None:
    """No import points up the order, except the allow-listed edges."""
    upward = sorted(
        f"{importer} -> {imported}"
        for importer, imported in _edges()
        if _layer(imported) > _layer(importer) and (importer, imported) not in ALLOWED
    )
    assert upward == []


def test_allowed_edges_exist_and_are_not_top_level_imports() -> None:
    """Each allow-listed edge is still there, and only deferred or type-only."""
    edges = _edges()
    for edge in ALLOWED:
        assert edge in edges, f"{edge} is gone: delete it from ALLOWED"
        assert "top" not in edges[edge], edge


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycle() -> None:
    """No cycle among the modules under any count of imports, the allow-listed edges aside."""
    graph: dict[str, set[str]] = {}
    for importer, imported in _edges():
        if (importer, imported) not in ALLOWED:
            graph.setdefault(importer, set()).add(imported)
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    """The cycle check reports a loop of two modules (so an empty result means something)."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_only_serve_and_integrations_import_the_sdk() -> None:
    """The MCP SDK and FastMCP are imported under ``_serve/`` and ``integrations/`` only."""
    offenders = sorted(
        f"{name}:{line}"
        for name, path in _modules().items()
        for candidates, _, line in _imports(path)
        if candidates[-1].split(".")[0] in SDK and not may_import_the_sdk(name)
    )
    assert offenders == []


def test_few_modules_at_the_top() -> None:
    """At most 20 modules sit directly in ``src/mcpfusion/``; the rest live in packages."""
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_LIMIT, top
