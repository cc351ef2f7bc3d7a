"""An incremental Server-Sent Events parser: bytes in, events out, no I/O.

Follows the WHATWG "event stream interpretation" rules, because MCP servers differ in the
details the HTTP transports depend on: CRLF, CR or LF line ends (a CR may end one chunk
and its LF start the next), a leading UTF-8 BOM, comments (``:`` lines, used as
keep-alives), fields without a colon, multi-line ``data``, ``id`` (kept across events, the
``Last-Event-ID`` to resume with) and ``retry`` (the reconnection delay a server asks for).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEParser", "SSETooLarge", "ServerSentEvent"]

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event. ``id`` is the stream's last event id when it was dispatched."""

    data: str
    event: str = "message"
    id: str = ""


class SSETooLarge(Exception):
    """One line or one event's data exceeded the parser's size limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"server-sent event larger than {limit} bytes")
        self.limit = limit


class SSEParser:
    """Feed it the bytes of one stream with :meth:`feed`; it returns the complete events.

    ``last_event_id`` and ``retry`` (milliseconds, ``None`` until the server sends one) are
    updated as fields arrive, also by events that carry no data and so are not dispatched,
    such as the priming event a Streamable HTTP server sends first.
    """

    def __init__(self, max_size: int | None = None) -> None:
        self.max_size = max_size
        self.last_event_id = ""
        self.retry: int | None = None
        self._buffer = bytearray()
        self._started = False  # the BOM check is done
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF belongs to it
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Consume ``chunk``; return the events it completed, in order."""
        if not chunk:
            return []
        buffer = self._buffer
        buffer += chunk
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(bytes(buffer)):
                return []  # could still be the start of a BOM
            self._started = True
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
        events: list[ServerSentEvent] = []
        start = 0
        end = len(buffer)
        if self._skip_lf and start < end:
            if buffer[0] == 0x0A:
                start = 1
            self._skip_lf = False
        while start < end:
            cr = buffer.find(b"\r", start)
            lf = buffer.find(b"\n", start)
            if cr < 0 and lf < 0:
                break
            if cr < 0 or (0 <= lf < cr):
                line_end, next_start = lf, lf + 1
            else:
                line_end, next_start = cr, cr + 1
                if next_start < end:
                    if buffer[next_start] == 0x0A:
                        next_start += 1
                else:
                    self._skip_lf = True  # the LF of a CRLF may come with the next chunk
            event = self._line(bytes(buffer[start:line_end]))
            if event is not None:
                events.append(event)
            start = next_start
        del buffer[:start]
        if self.max_size is not None and len(buffer) > self.max_size:
            raise SSETooLarge(self.max_size)
        return events

    def _line(self, raw: bytes) -> ServerSentEvent | None:
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", "replace")
        if line[0] == ":":
            return None  # a comment
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_size += len(raw) + 1
            if self.max_size is not None and self._data_size > self.max_size:
                self._data.clear()
                self._data_size = 0
                raise SSETooLarge(self.max_size)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None  # other field names are ignored

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(
            data="\n".join(self._data), event=self._event or "message", id=self.last_event_id
        )
        self._data = []
        self._data_size = 0
        self._event = ""
        return event
