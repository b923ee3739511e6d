"""The requirements manifest covers SPEC.md: well-formed ids, every section, real tests."""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

from tests.conformance.requirements import CLAUSES, PENDING_REASONS, Clause

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "SPEC.md"

CLAUSE_ID = re.compile(r"S(\d{2})\.(\d+)(?:\.(\d+))?")
NODE_ID = re.compile(r"(tests/(?:\w+/)*test_\w+\.py)::((?:Test\w*::)?test_\w+)")
SECTION = re.compile(r"^## (\d+)\. ", re.MULTILINE)
SUBSECTION = re.compile(r"^### (\d+)\.(\d+) ", re.MULTILINE)


def _key(clause: Clause) -> tuple[int, ...]:
    """The clause id as numbers, ``S04.1.3`` -> ``(4, 1, 3)``, which sort in SPEC order."""
    found = CLAUSE_ID.fullmatch(clause.id)
    assert found is not None, f"malformed id {clause.id!r}"
    return tuple(int(part) for part in found.groups() if part is not None)


def _spec_sections() -> tuple[set[int], set[tuple[int, int]]]:
    """The numbers of SPEC.md's ``## N.`` sections and ``### N.M`` subsections."""
    text = SPEC.read_text(encoding="utf-8")
    sections = {int(n) for n in SECTION.findall(text)}
    subsections = {(int(n), int(m)) for n, m in SUBSECTION.findall(text)}
    return sections, subsections


def _pending_by_reason() -> str:
    """The pending clause ids, one line per reason, for failure messages."""
    groups: dict[str, list[str]] = defaultdict(list)
    for clause in CLAUSES:
        if clause.pending is not None:
            groups[clause.pending].append(clause.id)
    return "\n".join(f"  {reason}: {', '.join(ids)}" for reason, ids in sorted(groups.items()))


def test_ids_are_unique_well_formed_and_in_spec_order() -> None:
    """Every clause id is S<NN>.<n> or S<NN>.<sub>.<n>, appears once, and ids only increase."""
    malformed = [c.id for c in CLAUSES if CLAUSE_ID.fullmatch(c.id) is None]
    assert malformed == []
    ids = [c.id for c in CLAUSES]
    assert sorted(set(ids)) == sorted(ids), "duplicate clause ids"
    keys = [_key(c) for c in CLAUSES]
    out_of_order = [ids[i] for i in range(1, len(keys)) if keys[i] <= keys[i - 1]]
    assert out_of_order == [], "clauses must follow SPEC order"
    assert all(c.summary.strip() and "\n" not in c.summary for c in CLAUSES)


def test_every_spec_section_has_a_clause_and_no_clause_invents_one() -> None:
    """Each '## N.' of SPEC.md has a clause, and each clause's section and subsection exist."""
    sections, subsections = _spec_sections()
    assert sections, f"no '## N.' headings found in {SPEC}"
    named = {_key(c)[0] for c in CLAUSES}
    assert sorted(sections - named) == [], "sections of SPEC.md without a clause"
    with_subsections = {section for section, _ in subsections}
    for clause in CLAUSES:
        key = _key(clause)
        assert key[0] in sections, f"{clause.id}: SPEC.md has no section {key[0]}"
        if len(key) == 3:
            assert key[1] == 0 or key[:2] in subsections, f"{clause.id}: no subsection {key[:2]}"
        else:
            assert key[0] not in with_subsections, f"{clause.id}: section has subsections"


def test_every_clause_has_a_test_unless_pending() -> None:
    """A clause lists a test or says why it is pending (a known reason), never both."""
    untested = [c.id for c in CLAUSES if not c.tests and c.pending is None]
    both = [c.id for c in CLAUSES if c.tests and c.pending is not None]
    unknown = [c.id for c in CLAUSES if c.pending is not None and c.pending not in PENDING_REASONS]
    assert (untested, both, unknown) == ([], [], []), (
        f"without tests and not pending: {untested}; pending with tests: {both}; "
        f"unknown pending reason: {unknown}\npending clauses:\n{_pending_by_reason()}"
    )


def _source_defines(path: Path, name: str) -> bool:
    """Whether the module at ``path`` defines ``name`` (``func`` or ``Class::method``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    defined = {node.name for node in tree.body if isinstance(node, functions)}
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        defined |= {f"{cls.name}::{node.name}" for node in cls.body if isinstance(node, functions)}
    return name in defined


def _defines(path: str, name: str) -> bool:
    """Whether the test module at ``path`` defines the test ``name``."""
    if path.startswith("tests/e2e/"):
        # Importing an e2e module loads the MCP client SDK (about 0.7 s), which alone would
        # break this check's one-second budget; their tests are plain defs, so read the source.
        return _source_defines(ROOT / path, name)
    target: object = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    for part in name.split("::"):
        target = getattr(target, part, None)
    return callable(target)


def test_every_listed_test_exists() -> None:
    """Each node id is path::test_function, without parameters, and its module defines it."""
    missing: list[str] = []
    for clause in CLAUSES:
        assert len(set(clause.tests)) == len(clause.tests), f"{clause.id}: a test listed twice"
        for node in clause.tests:
            found = NODE_ID.fullmatch(node)
            assert found is not None, f"{clause.id}: malformed node id {node!r}"
            path, name = found.groups()
            assert (ROOT / path).is_file(), f"{clause.id}: no file {path}"
            if not _defines(path, name):
                missing.append(f"{clause.id}: {node}")
    assert missing == [], "listed tests that do not exist"
