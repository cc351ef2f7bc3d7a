"""The incremental SSE parser (runtime/mcpbind/transports/sse.py).

Spec: 2025-11-25 basic/transports.mdx §Streamable HTTP points to the WHATWG SSE standard
(event stream interpretation); every test below names the rule it checks.
"""

from __future__ import annotations

import pytest

from mcpbind.http.client.sse import ServerSentEvent, SSEParser, SSETooLarge


def parse(data: bytes, *, split: int | None = None) -> tuple[list[ServerSentEvent], SSEParser]:
    parser = SSEParser()
    events: list[ServerSentEvent] = []
    if split is None:
        events += parser.feed(data)
    else:
        for i in range(0, len(data), split):
            events += parser.feed(data[i : i + split])
    return events, parser


STREAM = (
    b"\xef\xbb\xbf: keep-alive comment\r\n"
    b"id: 1\r\n"
    b"retry: 1500\r\n"
    b"data:\r\n"
    b"\r\n"
    b"event: message\n"
    b"id: 2\n"
    b'data: {"a":\n'
    b"data:  1}\n"
    b"\n"
    b"event: endpoint\r"
    b"data: /messages?x=1\r"
    b"\r"
    b"data\n"
    b"\n"
)
EXPECTED = [
    ServerSentEvent(data="", event="message", id="1"),
    ServerSentEvent(data='{"a":\n 1}', event="message", id="2"),
    ServerSentEvent(data="/messages?x=1", event="endpoint", id="2"),
    ServerSentEvent(data="", event="message", id="2"),
]


def test_whole_stream() -> None:
    """Comments, BOM, CRLF/LF/CR line ends, multi-line data, a field without a colon.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, parser = parse(STREAM)
    assert events == EXPECTED
    assert parser.retry == 1500
    assert parser.last_event_id == "2"


@pytest.mark.parametrize("split", [1, 2, 3, 5, 7])
def test_any_chunking_gives_the_same_events(split: int) -> None:
    """Incremental: a CRLF or the BOM split across chunks changes nothing.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, parser = parse(STREAM, split=split)
    assert events == EXPECTED
    assert parser.retry == 1500


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    """A CR ending one chunk and the LF starting the next are a single line end.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    parser = SSEParser()
    assert parser.feed(b"data: x\r") == []
    assert parser.feed(b"\n") == []  # not an empty line: the LF belongs to the CR
    assert parser.feed(b"\r\n") == [ServerSentEvent(data="x")]


def test_events_without_data_are_not_dispatched_but_set_the_id() -> None:
    """WHATWG dispatch: an empty data buffer dispatches nothing; the id still counts.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, parser = parse(b"id: 7\nevent: ping\n\nretry: 10\n\n")
    assert events == []
    assert parser.last_event_id == "7"
    assert parser.retry == 10


def test_event_type_resets_after_each_event() -> None:
    """The ``event`` field applies to one event only.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, _ = parse(b"event: endpoint\ndata: a\n\ndata: b\n\n")
    assert [e.event for e in events] == ["endpoint", "message"]


def test_retry_must_be_digits_and_id_must_not_contain_nul() -> None:
    """``retry`` with non-digits and ``id`` with NUL are ignored.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, parser = parse(b"retry: 12a\nretry: -1\nid: a\x00b\ndata: x\n\n")
    assert parser.retry is None
    assert parser.last_event_id == ""
    assert events == [ServerSentEvent(data="x")]


def test_empty_id_resets_last_event_id() -> None:
    """An empty ``id`` field resets the last event id.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, parser = parse(b"id: 3\ndata: a\n\nid\ndata: b\n\n")
    assert [e.id for e in events] == ["3", ""]
    assert parser.last_event_id == ""


def test_only_one_leading_space_is_stripped_and_unknown_fields_ignored() -> None:
    """One space after the colon is stripped; unknown fields are ignored.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, _ = parse(b"data:  two spaces\nfoo: bar\ndata:no space\n\n")
    assert events == [ServerSentEvent(data=" two spaces\nno space")]


def test_incomplete_event_at_end_is_not_dispatched() -> None:
    """An event not terminated by an empty line when the stream ends is discarded.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, _ = parse(b"data: complete\n\ndata: partial\n")
    assert events == [ServerSentEvent(data="complete")]


def test_bom_only_at_stream_start() -> None:
    """Only a leading BOM is dropped; a later one is data.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, _ = parse(b"\xef\xbb\xbfdata: a\n\n")
    assert events == [ServerSentEvent(data="a")]
    parser = SSEParser()
    parser.feed(b"data: a\n\n")
    assert parser.feed(b"\xef\xbb\xbfdata: b\n\n") == []  # the field name is now "\ufeffdata"


def test_partial_bom_prefix_then_data() -> None:
    """Bytes that start like a BOM but are not one are data.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    parser = SSEParser()
    assert parser.feed(b"\xef") == []
    assert parser.feed(b"\xbb\xbfdata: z\n\n") == [ServerSentEvent(data="z")]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    """Invalid UTF-8 is replaced, never fatal.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream (UTF-8 decode).
    """
    events, _ = parse(b"data: \xff\n\n")
    assert events == [ServerSentEvent(data="\ufffd")]


def test_unicode_data() -> None:
    """Non-ASCII data survives.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    events, _ = parse("data: héllo ✓\n\n".encode(), split=1)
    assert events == [ServerSentEvent(data="héllo ✓")]


def test_size_limit_on_a_line_and_on_event_data() -> None:
    """An unbounded line or event must not exhaust memory.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream (a bounded client).
    """
    parser = SSEParser(max_size=16)
    with pytest.raises(SSETooLarge):
        parser.feed(b"data: " + b"x" * 32)
    parser = SSEParser(max_size=16)
    with pytest.raises(SSETooLarge):
        parser.feed(b"data: 12345\ndata: 12345\ndata: 12345\n")


def test_many_events_in_one_chunk() -> None:
    """Many events in one chunk all come out, in order.

    Spec: WHATWG HTML §9.2.6 Interpreting an event stream.
    """
    body = b"".join(b"id: %d\ndata: %d\n\n" % (i, i) for i in range(1000))
    events, parser = parse(body)
    assert [e.data for e in events] == [str(i) for i in range(1000)]
    assert parser.last_event_id == "999"
