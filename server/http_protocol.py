"""uvicorn's httptools protocol with a limit on a request head, as h11 had one.

The server parses HTTP with httptools (C; about 0.7 ms less CPU per request than uvicorn's
pure-Python h11). h11 refused a request whose head (request line and headers) was still
unfinished after 16 KB (with a 400; a longer head read whole in one go got through), while
httptools buffers a head of any size. ``HeadLimitProtocol`` puts a limit back, for any
head over ``MAX_HEAD`` bytes however it arrives: it is answered ``431 Request Header Fields
Too Large`` and the connection closed, before the app sees the request and without reading
much more of it: as JSON (the API's Error) for an ``/api/`` path, as plain text for a page.
A body (forms, JSON) is not counted.

How a head is measured: httptools reports neither where a head starts nor where it ends in
the bytes it is fed, only callbacks. A chunk of bytes that begins and ends inside the same
head (or before one) counts in full; that covers a client sending a head in many small
pieces. A head that begins inside a chunk (after a body, or a request before it on the same
connection) counts what the callbacks passed of it (URL and complete headers) until its
next chunk. When a head is complete, its URL and headers are counted in their usual form
(``name: value`` and CRLF), which is its size on the wire.
"""

from __future__ import annotations

import httptools
import msgspec
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from papersift.server.bodies import error_body
from papersift.server.schemas import ERROR_CODES

# Room for the search form's longest text (``[search] max_text_length``, 20,000 characters,
# up to 3 bytes each URL-encoded) so that a pasted text meets the app's own limit and its
# message; a browser sent such a head whole, which h11 let through.
MAX_HEAD = 64 * 1024
# The request line's parts besides the URL and method (two spaces, "HTTP/1.1", CRLF) and the
# empty line that ends the head.
_LINE_PARTS = 2 + 8 + 2 + 2
LINGER = 2.0  # seconds a refused connection is still read (and dropped) after its 431
_BODY = (
    b"Request Header Fields Too Large: the request line and headers are over %d KB. To find "
    b"papers like a long text, paste it into the form at /similar, which posts it.\n"
    % (MAX_HEAD // 1024)
)
# The API's answer is its Error object (``server.schemas``), with CORS as its other errors
# have, and names the API's way to send a long text.
# What the API's ``q`` says of its limit, and the 431's advice.
URL_LIMIT = (
    f"A query fits only while the URL stays under {MAX_HEAD // 1024} KB (the request line "
    "and headers): percent-encoded, a character outside ASCII takes 6 to 12 bytes (9 for "
    "CJK: about 7,000 such characters fill it). To find papers like a long text, send it as "
    "JSON to POST /api/v1/similar."
)
_API_MESSAGE = f"The request line and headers are over {MAX_HEAD // 1024} KB. {URL_LIMIT}"
_API_BODY = msgspec.json.encode(error_body(431, ERROR_CODES[431], _API_MESSAGE))
_API_HEADERS = (
    b"content-type: application/json\r\n"
    b"access-control-allow-origin: *\r\n"
    b"x-content-type-options: nosniff\r\n"
    b"cache-control: no-store\r\n"
)


def _api_target(url: bytes) -> bool:
    """Whether a request target (perhaps only its start, or absolute-form) is an API path."""
    if url[:1] != b"/":  # http://host/api/...
        parts = url.split(b"/", 3)
        url = b"/" + parts[3] if len(parts) == 4 else b"/"
    return url.startswith(b"/api/")


class _HeadTooLarge(Exception):
    """Raised in a parser callback to stop parsing a refused request."""


class HeadLimitProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that answers a request head over ``MAX_HEAD`` bytes with 431."""

    # Per connection (class defaults, so uvicorn's constructor is left as it is).
    _in_head = True  # reading a request head, or waiting for one; False in a body
    _head_bytes = 0  # bytes of the current head read so far (a lower bound)
    _head_seen = 0  # its URL and complete headers as the parser callbacks passed them
    _heads_done = 0  # heads completed on this connection
    _refused = False  # a 431 is sent, or waits for the answers to the requests before it

    def data_received(self, data: bytes) -> None:
        """uvicorn's, plus the count of the current head's bytes after the parser has them."""
        if self._refused:
            return  # dropped: the 431 is the connection's last answer
        whole = self._in_head  # the chunk begins in a head or before one
        heads_done = self._heads_done
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError:
            if self._refused:
                return  # on_headers_complete stopped the parser
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return
        if not self._in_head:
            return
        if whole and self._heads_done == heads_done:
            self._head_bytes += len(data)  # every byte of the chunk is in this head
        else:
            self._head_bytes = self._head_seen  # the head began inside the chunk
        if self._head_bytes > MAX_HEAD:
            self._refuse()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        self._head_seen += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        self._head_seen += len(name) + len(value) + 4  # "name: value\r\n"

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._heads_done += 1
        size = self._head_seen + len(self.parser.get_method()) + _LINE_PARTS
        if max(size, self._head_bytes) > MAX_HEAD:
            self._refuse()
            raise _HeadTooLarge  # the parser stops: the app never sees this request
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True  # what follows is the next request's head
        self._head_bytes = self._head_seen = 0

    def on_response_complete(self) -> None:
        last = not self.pipeline  # no request waits behind the one just answered
        super().on_response_complete()
        if self._refused and last and not self.transport.is_closing():
            self._send_431()

    def _refuse(self) -> None:
        self._refused = True
        peer = f"{self.client[0]}:{self.client[1]} - " if self.client else ""
        self.logger.warning(
            "%sRequest head over %d KB: 431 Request Header Fields Too Large",
            peer,
            MAX_HEAD // 1024,
        )
        if self.cycle is None or self.cycle.response_complete:
            self._send_431()
        # else a request before it is still being answered: answers go out in order, so
        # on_response_complete sends the 431 after the last of them.

    def _send_431(self) -> None:
        content = [STATUS_LINE[431]]
        for name, value in self.server_state.default_headers:
            content += [name, b": ", value, b"\r\n"]
        api = _api_target(self.url)  # the refused request's (partial) target
        body = _API_BODY if api else _BODY
        content += [
            _API_HEADERS if api else b"content-type: text/plain; charset=utf-8\r\n",
            b"content-length: %d\r\n" % len(body),
            b"connection: close\r\n",
            b"\r\n",
            body,
        ]
        self.transport.write(b"".join(content))
        if self.transport.can_write_eof():
            # Closing outright with the rest of the head still arriving would make the kernel
            # answer it with a reset, which can destroy the 431 before the client reads it.
            # Half-close instead, read and drop what still comes, and close when the client
            # does (eof_received) or after LINGER seconds.
            self.transport.write_eof()
            self.loop.call_later(LINGER, self.transport.close)
        else:
            self.transport.close()
