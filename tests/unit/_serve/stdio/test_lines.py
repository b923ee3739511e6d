"""Lines in and out of file descriptors: splitting, the length limit, pipes and threads."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from mcpfusion._serve.stdio.lines import LineReader, Oversized, _queue_line, _WritePipe, open_lines

pytestmark = pytest.mark.anyio


def read_all(lines: LineReader) -> list[bytes | Oversized]:
    """Every line already fed, without waiting."""
    found = []
    while lines._queue:
        found.append(lines._queue.popleft())
    return found


def test_lines_are_split_across_chunks() -> None:
    """A line split over several reads comes out whole; several lines in one read too."""
    lines = LineReader()
    for chunk in (b'{"a":', b'1}\n{"b":2}\n{"c"', b":3}\n"):
        lines.feed(chunk)
    assert read_all(lines) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


async def test_the_last_line_needs_no_newline() -> None:
    """At the end of the stream a last line without a newline still counts."""
    lines = LineReader()
    lines.feed(b"one\ntwo")
    lines.feed_eof()
    assert [await lines.get(), await lines.get(), await lines.get()] == [b"one", b"two", None]


def test_an_oversized_line_is_replaced_and_skipped() -> None:
    """A line over the limit becomes its head only; the lines after it are intact."""
    lines = LineReader(max_line=100)
    lines.feed(b'{"id":7,' + b"x" * 150)
    lines.feed(b"y" * 500)
    lines.feed(b'z"}\n{"ok":1}\n')
    first, second = read_all(lines)
    assert isinstance(first, Oversized) and first.head.startswith(b'{"id":7,')
    assert second == b'{"ok":1}'


def test_a_line_completed_past_the_limit_is_oversized() -> None:
    """A line under the limit until its last chunk completes it is still refused."""
    lines = LineReader(max_line=10)
    lines.feed(b"12345678")
    lines.feed(b"90123\nok\n")
    first, second = read_all(lines)
    assert isinstance(first, Oversized) and first.head == b"1234567890123"
    assert second == b"ok"


async def test_a_claim_takes_only_the_lines_the_waiting_reader_would_take_next() -> None:
    """Claimed lines skip the queue only while get() waits on it empty; order is kept."""
    lines = LineReader()
    claimed: list[bytes] = []

    def claim(line: bytes) -> bool:
        if line.startswith(b"hot"):
            claimed.append(line)
            return True
        return False

    lines.claim = claim
    lines.feed(b"hot0\n")  # nobody waits yet: queued
    got: list[bytes | Oversized | None] = []

    async def consume() -> None:
        while (line := await lines.get()) is not None:
            got.append(line)

    async with anyio.create_task_group() as group:
        group.start_soon(consume)
        with anyio.fail_after(5):
            while got != [b"hot0"]:
                await anyio.sleep(0)
        lines.feed(b"hot1\ncold\nhot2\n")  # waiting and empty: hot1 is claimed, not hot2
        with anyio.fail_after(5):
            while len(got) < 3:
                await anyio.sleep(0)
        lines.feed(b"hot3\n")
        lines.feed_eof()
    assert claimed == [b"hot1", b"hot3"]
    assert got == [b"hot0", b"cold", b"hot2"]


async def test_a_full_reader_asks_for_a_pause_and_then_for_more() -> None:
    """Past the high-water mark the reader is full; reading it down calls on_space once."""
    lines = LineReader()
    calls = []
    lines.on_space = lambda: calls.append(1)
    line = b"x" * 1023 + b"\n"
    for _ in range(2048):
        lines.feed(line)
    assert lines.full
    while lines._queue:
        await lines.get()
    assert not lines.full and calls == [1]


async def test_pipes_are_served_by_the_event_loop() -> None:
    """Lines written to a pipe come out of the reader; lines written go out of the pipe."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    try:
        os.write(in_write, b'{"a":1}\n{"b":2}\n')
        os.close(in_write)
        with anyio.fail_after(10):
            async with open_lines(in_read, out_write) as (lines, out):
                got = [await lines.get(), await lines.get(), await lines.get()]
                out.write(b'{"c":3}')
                await out.drain()
        assert got == [b'{"a":1}', b'{"b":2}', None]
        assert os.read(out_read, 100) == b'{"c":3}\n'
        assert os.get_blocking(in_read) and os.get_blocking(out_write)
    finally:
        for fd in (in_read, out_read, out_write):
            os.close(fd)


async def test_files_are_served_by_threads(tmp_path: Path) -> None:
    """Regular files, which the event loop cannot poll, are read and written by threads."""
    source, sink = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_bytes(b"one\n" + b"t" * 300_000 + b"\nthree")
    in_fd = os.open(source, os.O_RDONLY)
    out_fd = os.open(sink, os.O_WRONLY | os.O_CREAT)
    try:
        with anyio.fail_after(10):
            async with open_lines(in_fd, out_fd) as (lines, out):
                got = [await lines.get() for _ in range(4)]
                out.write(b"first")
                out.write(b"second")
                await out.drain()
    finally:
        os.close(in_fd)
        os.close(out_fd)
    assert got == [b"one", b"t" * 300_000, b"three", None]
    assert sink.read_bytes() == b"first\nsecond\n"


def test_claimed_stdio_points_fd_1_at_stderr_while_held() -> None:
    """While held, a print reaches stderr and stdin reads empty; afterwards both are back."""
    code = (
        "import os, sys\n"
        "from mcpfusion._serve.stdio.lines import claimed_stdio\n"
        "print('before', flush=True)\n"
        "with claimed_stdio() as (i, o):\n"
        "    print('stray', flush=True)\n"
        "    assert sys.stdin.read() == ''\n"
        "    os.write(o, b'wire\\n')\n"
        "print('after', flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input="never read", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before\nwire\nafter\n"
    assert done.stderr == "stray\n"


class Transport(asyncio.WriteTransport):
    """A write transport that keeps each write apart."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        """Keeps one write."""
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        """Never closing."""
        return False


async def test_a_response_behind_a_notification_leaves_in_a_later_write() -> None:
    """Lines of one turn share a write, but a response never shares one with a notification
    written before it; what follows that response waits behind it, in order."""
    pipe, transport = _WritePipe(), Transport()
    pipe.connection_made(transport)
    pipe.write(b"answer 1")
    pipe.write(b"progress", notice=True)
    pipe.write(b"progress", notice=True)
    pipe.write(b"answer 2")
    pipe.write(b"log", notice=True)
    pipe.write(b"answer 3")
    pipe.write(b"answer 4")
    with anyio.fail_after(10):
        while len(transport.writes) < 3:
            await anyio.lowlevel.checkpoint()
    assert transport.writes == [
        b"answer 1\nprogress\nprogress\n",
        b"answer 2\nlog\n",
        b"answer 3\nanswer 4\n",
    ]


async def test_a_thread_writer_keeps_a_response_apart_from_the_notification_before_it(
    tmp_path: Path,
) -> None:
    """Writing to a file, a response behind a notification is queued for a later write."""
    writes: deque[list[bytes]] = deque()
    noticed = False
    for line, notice in [(b"p", True), (b"a", False), (b"b", False), (b"n", True)]:
        noticed = _queue_line(writes, noticed, line, notice)
    assert list(writes) == [[b"p", b"\n"], [b"a", b"\n", b"b", b"\n", b"n", b"\n"]]
    sink = tmp_path / "out.jsonl"
    out_fd = os.open(sink, os.O_WRONLY | os.O_CREAT)
    in_fd = os.open(os.devnull, os.O_RDONLY)
    try:
        with anyio.fail_after(10):
            async with open_lines(in_fd, out_fd) as (_, out):
                out.write(b"progress", notice=True)
                out.write(b"answer")
    finally:
        os.close(in_fd)
        os.close(out_fd)
    assert sink.read_bytes() == b"progress\nanswer\n"
