"""The process's stdin and stdout as lines: event-loop pipes, threads for files and ttys."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Final, Protocol

import anyio

if sys.platform != "win32":  # the module imports everywhere; only POSIX serves with it
    import fcntl

__all__ = [
    "DEFAULT_MAX_LINE",
    "LineReader",
    "LineWriter",
    "Oversized",
    "claimed_stdio",
    "open_lines",
]

logger = logging.getLogger("mcpfusion")

DEFAULT_MAX_LINE: Final = 64 * 1024 * 1024
"""The longest line read whole; a longer one is refused, and the lines after it are served."""

_HIGH_WATER: Final = 1024 * 1024
"""Bytes of complete lines waiting to be handled before stdin is no longer read."""

_HEAD: Final = 64 * 1024
"""How much of an oversized line is kept: enough to find an id near its start."""

_CHUNK: Final = 256 * 1024
"""One read on the thread path, as much as asyncio's pipe transport reads at once."""

_CLOSE_TIMEOUT: Final = 5.0
"""How long the last responses may take to leave when the server stops."""


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the limit, in place of the line: its first bytes only."""

    head: bytes


class LineReader:
    """Lines of a byte stream, without their newline, each at most ``max_line`` bytes.

    The feeder (a pipe protocol or a reading thread) pushes bytes; the consumer pulls whole
    lines. Past ``_HIGH_WATER`` queued bytes ``full`` is true and the feeder stops until
    ``on_space`` is called, so memory stays near ``max_line`` plus that mark.

    ``claim``, when set, is offered each complete line while the consumer waits in ``get``
    with nothing queued, i.e. when it would take that line next anyway: a line it returns
    true for is handled there and then, never queued. Order is kept: once a line is
    queued, the lines behind it are queued too until the consumer has caught up.
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.max_line = max_line
        self.on_space: Callable[[], None] | None = None
        self.claim: Callable[[bytes], bool] | None = None
        self._waiting = False  # the consumer is in get(), the queue empty
        self._queue: deque[bytes | Oversized] = deque()
        self._queued = 0
        self._partial = bytearray()
        self._skipping = False  # inside an oversized line: drop bytes up to its newline
        self._eof = False
        self._throttled = False
        self._ready = anyio.Event()

    @property
    def full(self) -> bool:
        """Whether the feeder should stop until ``on_space`` is called."""
        return self._queued > _HIGH_WATER

    def feed(self, data: bytes) -> None:
        """Adds bytes read from the stream."""
        start = 0
        if self._skipping:
            start = data.find(b"\n") + 1
            if start == 0:
                return
            self._skipping = False
        while (end := data.find(b"\n", start)) >= 0:
            if self._partial:
                self._partial += data[start:end]
                self._push(bytes(self._partial))
                self._partial.clear()
            else:
                self._push(data[start:end])
            start = end + 1
        if start < len(data):
            self._partial += data[start:]
            if len(self._partial) > self.max_line:
                self._push(Oversized(bytes(self._partial[:_HEAD])))
                self._partial.clear()
                self._skipping = True
        if self._queue:
            self._ready.set()
        if self.full:
            self._throttled = True

    def _push(self, line: bytes | Oversized) -> None:
        if isinstance(line, bytes):
            if len(line) > self.max_line:
                line = Oversized(line[:_HEAD])  # completed by this chunk, past the limit
            elif self._waiting and not self._queue and self.claim and self.claim(line):
                return
        self._queue.append(line)
        self._queued += len(line) if isinstance(line, bytes) else len(line.head)

    def feed_eof(self) -> None:
        """Marks the end of the stream; a last line without a newline still counts."""
        if self._eof:
            return
        if self._partial and not self._skipping:
            self._push(bytes(self._partial))
        self._partial.clear()
        self._eof = True
        self._ready.set()

    async def get(self) -> bytes | Oversized | None:
        """The next line, or ``None`` once the stream has ended and every line was read."""
        while not self._queue:
            if self._eof:
                return None
            self._ready = anyio.Event()
            self._waiting = True
            try:
                await self._ready.wait()
            finally:
                self._waiting = False
        line = self._queue.popleft()
        self._queued -= len(line) if isinstance(line, bytes) else len(line.head)
        if self._throttled and self._queued <= _HIGH_WATER // 4:
            self._throttled = False
            if self.on_space is not None:
                self.on_space()
        return line


class LineWriter(Protocol):
    """Where messages go: one line each, written in the order given."""

    @property
    def lost(self) -> anyio.Event:
        """Set once nothing more can be written (the reader went away, or it closed)."""
        ...

    def write(self, line: bytes, *, notice: bool = False) -> None:
        """Writes ``line`` and a newline now, or queues it behind earlier lines.

        ``notice`` marks a notification: a line after it that is not one (a response)
        leaves in a later write, never in the same one.
        """
        ...

    async def drain(self) -> None:
        """Waits while too much is queued; returns at once when the pipe keeps up."""
        ...


class _ReadPipe(asyncio.Protocol):
    """Feeds a ``LineReader`` from the event loop, pausing the pipe while it is full."""

    def __init__(self, lines: LineReader) -> None:
        self._lines = lines

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport
        self._lines.on_space = transport.resume_reading

    def data_received(self, data: bytes) -> None:
        self._lines.feed(data)
        if self._lines.full:
            self._transport.pause_reading()

    def eof_received(self) -> None:
        self._lines.feed_eof()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lines.feed_eof()


class _WritePipe(asyncio.Protocol):
    """Writes lines through the event loop: ``transport.write`` tries the pipe at once.

    The lines written in one turn of the loop leave together, in one write as the loop
    turns: nothing waits longer than that turn, and calls answered together (ten in
    flight) cost the pipe one system call and the client one wake-up, not ten. Measured
    on ``benchmarks/stdio.py``: each write cost the server about 87 µs under load, the
    client's wake-up mostly.

    Except a response behind a notification (a call's last progress report, then its
    answer): it leaves in the next turn's write. A client reading both in one chunk may
    handle the response first and drop the report (the TypeScript SDK's always does).
    """

    def __init__(self) -> None:
        self.lost = anyio.Event()
        self._resumed: anyio.Event | None = None
        self._transport: asyncio.WriteTransport | None = None
        self._writes: deque[list[bytes]] = deque()  # one write each, one per turn
        self._noticed = False  # the last of them holds a notification

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self._transport = transport

    def pause_writing(self) -> None:
        self._resumed = anyio.Event()

    def resume_writing(self) -> None:
        if self._resumed is not None:
            self._resumed.set()
            self._resumed = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set()
        self.resume_writing()

    def write(self, line: bytes, *, notice: bool = False) -> None:
        if self._transport is None or self._transport.is_closing():
            return  # the client stopped reading: nobody is left to answer
        self._noticed = _queue_line(self._writes, self._noticed, line, notice)
        if len(self._writes) == 1 and len(self._writes[0]) == 2:  # the first line of all
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        if not self._writes:
            return
        data = b"".join(self._writes.popleft())
        if self._writes:
            asyncio.get_running_loop().call_soon(self._flush)  # the next write, next turn
        else:
            self._noticed = False
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    async def drain(self) -> None:
        # What this turn wrote meets the transport's flow control when it leaves: a full
        # pipe then pauses the writers of the next turn.
        if self._resumed is not None:
            await self._resumed.wait()

    async def aclose(self) -> None:
        if self._transport is None:
            return
        while self._writes:
            self._flush()
        self._transport.close()  # sends what is buffered, then reports the loss
        with anyio.move_on_after(_CLOSE_TIMEOUT):
            await self.lost.wait()
        if not self.lost.is_set():
            logger.warning("stdio: the client did not read the last responses; dropped")
            self._transport.abort()


def _queue_line(writes: deque[list[bytes]], noticed: bool, line: bytes, notice: bool) -> bool:
    """Queues ``line`` and its newline in the last of ``writes``, or in a new last one when
    it is a response behind a notification there (``noticed``); returns the new ``noticed``.
    """
    if not writes or (noticed and not notice):
        writes.append([])
        noticed = False
    writes[-1] += (line, b"\n")
    return noticed or notice


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _ThreadWriter:
    """Writes lines from a worker thread, for a stdout the event loop cannot poll."""

    def __init__(self, fd: int) -> None:
        self.lost = anyio.Event()
        self._fd = fd
        self._writes: deque[list[bytes]] = deque()  # one write each (see _WritePipe)
        self._noticed = False
        self._queued = 0
        self._wake = anyio.Event()
        self._drained = anyio.Event()
        self._closing = False

    def write(self, line: bytes, *, notice: bool = False) -> None:
        if self.lost.is_set():
            return
        self._noticed = _queue_line(self._writes, self._noticed, line, notice)
        self._queued += len(line) + 1
        self._wake.set()

    async def drain(self) -> None:
        while self._queued > _HIGH_WATER and not self.lost.is_set():
            self._drained = anyio.Event()
            await self._drained.wait()

    async def run(self) -> None:
        """Writes what is queued until ``aclose``, then what is left."""
        try:
            while self._writes or not self._closing:
                if not self._writes:
                    self._wake = anyio.Event()
                    await self._wake.wait()
                    continue
                # Every line queued meanwhile leaves in one write: one thread hop for all
                # (but a response behind a notification, which waits for the next).
                data = b"".join(self._writes.popleft())
                if not self._writes:
                    self._noticed = False
                self._queued -= len(data)
                await anyio.to_thread.run_sync(_write_all, self._fd, data)
                self._drained.set()
        except OSError:
            logger.debug("stdio: stdout is gone", exc_info=True)
        finally:
            self.lost.set()
            self._drained.set()

    def close(self) -> None:
        self._closing = True
        self._wake.set()


async def _pump(fd: int, lines: LineReader) -> None:
    """Reads ``fd`` in a worker thread, a chunk at a time, into ``lines``."""
    space = anyio.Event()

    def make_space() -> None:
        space.set()

    lines.on_space = make_space
    try:
        while True:
            if lines.full:
                await space.wait()
                space = anyio.Event()
            # Abandoned on cancellation: a thread blocked in read() cannot be interrupted.
            data = await anyio.to_thread.run_sync(os.read, fd, _CHUNK, abandon_on_cancel=True)
            if not data:
                break
            lines.feed(data)
    except OSError:
        logger.debug("stdio: stdin is gone", exc_info=True)
    finally:
        lines.feed_eof()


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe or a socket, not a file or a tty."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _running_asyncio() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # another anyio backend: the thread path works on any
        return None


@asynccontextmanager
async def open_lines(
    in_fd: int, out_fd: int, *, max_line: int = DEFAULT_MAX_LINE
) -> AsyncIterator[tuple[LineReader, LineWriter]]:
    """Lines in from ``in_fd`` and out to ``out_fd`` until the block ends.

    Pipes and sockets are served by the event loop; regular files and ttys, which it
    cannot poll, by worker threads. On exit the queued output is written (for at most
    five seconds) and both descriptors are left blocking again, but open.
    """
    loop = _running_asyncio()
    lines = LineReader(max_line)
    writer: _WritePipe | _ThreadWriter
    read_transport: asyncio.ReadTransport | None = None
    async with anyio.create_task_group() as group:
        try:
            if loop is not None and _pollable(in_fd):
                # closefd=False: the descriptors are the caller's to close.
                source = open(in_fd, "rb", buffering=0, closefd=False)  # noqa: SIM115
                read_transport, _ = await loop.connect_read_pipe(lambda: _ReadPipe(lines), source)
            else:
                group.start_soon(_pump, in_fd, lines)
            if loop is not None and _pollable(out_fd):
                pipe = writer = _WritePipe()
                sink = open(out_fd, "wb", buffering=0, closefd=False)  # noqa: SIM115
                await loop.connect_write_pipe(lambda: pipe, sink)
            else:
                writer = _ThreadWriter(out_fd)
                group.start_soon(writer.run)
            yield lines, writer
        finally:
            with anyio.CancelScope(shield=True):
                if read_transport is not None:
                    read_transport.close()
                if isinstance(writer, _WritePipe):
                    await writer.aclose()
                else:
                    writer.close()
                    with anyio.move_on_after(_CLOSE_TIMEOUT):
                        await writer.lost.wait()
            group.cancel_scope.cancel()  # a reading thread still blocked is abandoned
    for fd in (in_fd, out_fd):
        with contextlib.suppress(OSError):
            os.set_blocking(fd, True)


def _private_copy(fd: int) -> int:
    if sys.platform == "win32":
        return os.dup(fd)  # not inheritable; 0-2 are open, so it lands above them
    else:  # F_DUPFD_CLOEXEC from 3: never on 0-2, never leaked into children
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private copies of file descriptors 0 and 1 for the protocol, restored on exit.

    While held, fd 0 reads the null device and fd 1 writes to stderr, so a handler (or a
    child process) reading stdin sees its end, and a stray ``print`` cannot corrupt the
    protocol stream: the same promise as the SDK's ``stdio_server``.
    """
    sys.stdout.flush()  # what was printed before serving belongs before the protocol
    in_fd = _private_copy(0)
    out_fd = _private_copy(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield in_fd, out_fd
    finally:
        os.close(null)
        with contextlib.suppress(ValueError, OSError):
            sys.stdout.flush()  # a stray print still buffered goes to stderr, not the wire
        os.dup2(out_fd, 1)
        os.dup2(in_fd, 0)
        os.close(out_fd)
        os.close(in_fd)
