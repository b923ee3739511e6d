"""JSON-RPC on a line transport: reading an id back from a bad line, reasons, encoding."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfusion._serve.jsonrpc import (
    INVALID_REQUEST,
    encode,
    error,
    explain,
    recover_id,
    repeated_key,
    usable_id,
)

DEEP = b"[" * 10_000 + b"]" * 10_000
BIG = b"9" * 5_000


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":5,"method":"ping"', 5),  # cut short
        (b'  {"id" : "abc" , "method":', "abc"),
        (b'{"params":{"x":' + DEEP + b'},"id":7}', 7),
        (b'{"params":{"x":"\\ud800"},"id":7}', 7),
        (b'{"params":{"x":' + BIG + b'},"id":-7}', -7),
        (b'{"params":{"id":1,"y":["]}",{"id":2}]},"id":3,"z":', 3),  # nested ids ignored
        (b'{"id":1,"id":2,', 2),  # the last one wins, as in a JSON parser
        (b'{"id":"x\\"y"', 'x"y'),
    ],
)
def test_recover_id_reads_the_top_level_id(line: bytes, expected: Any) -> None:
    """The top-level id of a line that does not parse is found; nested ones are not."""
    assert recover_id(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b'["id",5]',
        b'{"jsonrpc":"2.0","method":"ping"',  # no id at all
        b'{"id":1.5}',
        b'{"id":true}',
        b'{"id":null}',
        b'{"id":{"a":1}}',
        b'{"id":' + BIG + b"}",
        b'{"id":"\\ud800"}',
        b'{"a" 1, "id": 5}',  # broken before the id: what follows is not trusted
        b'{"params":{"x":[1,2}, "id": 5',
        b'{"id":1, "id":[2]}',  # the last id is not usable
    ],
)
def test_recover_id_finds_no_usable_id(line: bytes) -> None:
    """A line without a usable top-level id, or broken before it, yields no id."""
    assert recover_id(line) is None


@pytest.mark.parametrize(("value", "usable"), [(1, 1), ("a", "a"), (True, None), (1.0, None)])
def test_usable_id_is_a_string_or_an_integer(value: object, usable: object) -> None:
    """Only strings and integers (not bools) identify a request."""
    assert usable_id(value) == usable


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ([], "a message must be a JSON object"),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 'jsonrpc must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, "method must be a string"),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}, "params must be an object"),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "id must be a string or an integer"),
        ({"jsonrpc": "2.0", "id": 1, "result": 5}, "result must be an object"),
        ({"jsonrpc": "2.0", "id": 1, "error": "x"}, "error must be an object with an integer"),
        ({"jsonrpc": "2.0", "result": {}}, "a response needs the string or integer id"),
        ({"jsonrpc": "2.0", "id": 1}, "a request needs a method"),
    ],
)
def test_explain_names_the_problem_without_quoting(message: Any, reason: str) -> None:
    """The reason a message is not JSON-RPC is a fixed phrase, never the input."""
    assert explain(message).startswith(reason)


def test_error_has_the_sdk_key_order() -> None:
    """An error response is jsonrpc, id, error{code, message}, as the SDK writes it."""
    line = encode(error(None, INVALID_REQUEST, "Invalid Request"))
    expected = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}'
    assert line == expected


def test_encode_writes_nan_as_null() -> None:
    """NaN and infinities become null, as pydantic models write them."""
    assert encode({"a": float("nan"), "b": float("inf")}) == b'{"a":null,"b":null}'


def test_encode_replaces_lone_surrogates() -> None:
    """A lone surrogate becomes U+FFFD instead of failing the write; the rest is kept."""
    line = encode({"text": "a\ud800b", "n": [1, None], "é": "ü"})
    assert json.loads(line) == {"text": "a\ufffdb", "n": [1, None], "é": "ü"}
    line.decode()  # valid UTF-8


REPEATS = [
    (b'{"a":1,"a":2}', "a"),
    (b'{"x":{"k":"v:w","k":"z"},"y":[{"u":1},{"u":2,"u":3}]}', "k"),
    (b'{"url":"https://x:1","p":{"q":"a\\":b","q":1}}', "q"),
    (b'[{"m":1},{"n":{"o":2,"o":3}}]', "o"),
]
DISTINCT = [
    b'{"a":1,"b":{"c":"d:e","f":[1,{"g":"h"}]}}',
    b'{"t":"\\":\\\\","u":":::"}',
    b'[{"a":1},{"a":2},[],{}]',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}',
    b'"no:object"',
]


@pytest.mark.parametrize(("text", "key"), REPEATS)
def test_a_repeated_key_is_named_with_or_without_the_parsed_value(text: bytes, key: str) -> None:
    """The first repeated key is found from the text alone or with what it parsed to."""
    assert repeated_key(text) == key
    assert repeated_key(text, json.loads(text)) == key


@pytest.mark.parametrize("text", DISTINCT)
def test_distinct_keys_are_known_without_a_second_parse(
    text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given the parsed value, a text repeating no key is never parsed again by stdlib json."""
    parsed = json.loads(text)

    def no_parse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed a second time")

    monkeypatch.setattr(json, "loads", no_parse)
    assert repeated_key(text, parsed) is None
    assert repeated_key(text.decode(), parsed) is None


JSON_KEYS = st.text(alphabet='ab:"\\{}[],', max_size=3)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='xy:"\\{}[], \n', max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.lists(st.tuples(JSON_KEYS, inner), max_size=4)
    ),  # pairs: keys may repeat
    max_leaves=12,
)


def as_json(value: Any) -> str:
    """JSON text of ``value``, a list of (key, value) pairs written as an object as it is."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        members = ",".join(f"{json.dumps(k)}:{as_json(v)}" for k, v in value)
        return "{" + members + "}"
    if isinstance(value, list):
        return "[" + ",".join(as_json(item) for item in value) + "]"
    return json.dumps(value)


@settings(max_examples=400)
@given(JSON_VALUES)
def test_counting_members_agrees_with_the_stdlib_parse(value: Any) -> None:
    """With the parsed value or without, the same repeated key (or none) is found."""
    text = as_json(value).encode()
    assert repeated_key(text, pydantic_core.from_json(text)) == repeated_key(text)
