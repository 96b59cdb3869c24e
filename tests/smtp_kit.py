"""A real SMTP server on 127.0.0.1 for the digest tests (aiosmtpd), keeping what arrives."""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from papersift.core.config import Config, MailConfig


class Inbox:
    """aiosmtpd handler: every message accepted, parsed with the stdlib ``email`` package."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.raw: list[bytes] = []  # each message as it came over the wire
        self.envelopes: list[tuple[str, list[str]]] = []
        self.lock = threading.Lock()
        self.on_data: Callable[[int], None] | None = None  # called with the message count

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = message_from_bytes(envelope.original_content, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        with self.lock:
            self.messages.append(msg)
            self.raw.append(envelope.original_content)
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            count = len(self.messages)
        if self.on_data is not None:
            self.on_data(count)
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[EmailMessage]:
        with self.lock:
            return [m for m, (_, rcpt) in zip(self.messages, self.envelopes, strict=True)
                    if address in rcpt]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def smtp_server() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def mail_config(base: Config, port: int, url: str = "http://papers.example") -> Config:
    """``base`` sending through the server on ``port``, its links to ``url``."""
    mail = MailConfig(host="127.0.0.1", port=port, security="none",
                      from_address="Lab radar <radar@lab.example>")  # fmt: skip
    return dataclasses.replace(
        base, mail=mail, server=dataclasses.replace(base.server, base_url=url)
    )


def parts(msg: EmailMessage) -> tuple[str, str]:
    """A digest's text and HTML parts."""
    plain, rich = msg.get_body(("plain",)), msg.get_body(("html",))
    assert plain is not None and rich is not None, "a digest has a text and an HTML part"
    return plain.get_content(), rich.get_content()
