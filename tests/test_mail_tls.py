"""The digest mailer over TLS, as labs' mail servers want it: STARTTLS on 587 and TLS from
the start on 465, each with a login, against a real aiosmtpd server on 127.0.0.1 whose
certificate a throw-away CA (trustme) signed. The mailer uses the system's trust store,
so the tests point OpenSSL's ``SSL_CERT_FILE`` at that CA. A plain server (no STARTTLS, no
AUTH) gets lines that name the setting to change, not "cannot reach"."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from papersift.core.config import MailConfig
from papersift.indexer.digest_run import Mailer, MailError
from tests.smtp_kit import Inbox, free_port, smtp_server

USER, PASSWORD = "radar", "s3cret-pass"


def _check_login(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
        USER.encode(),
        PASSWORD.encode(),
    )
    return AuthResult(success=ok, handled=False)  # handled=False: the server replies 535


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@contextmanager
def tls_server(ca: trustme.CA, *, implicit: bool) -> Iterator[tuple[Inbox, int]]:
    """A server asking for a login; STARTTLS required before it, or TLS from the start."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    inbox, port = Inbox(), free_port()
    options: dict[str, Any] = {"authenticator": _check_login, "auth_require_tls": True}
    if implicit:
        # aiosmtpd ties auth_require_tls to STARTTLS and would not offer AUTH at all on a
        # connection that is TLS from the start.
        options.update(ssl_context=context, auth_require_tls=False)
    else:
        options.update(tls_context=context, require_starttls=True)
    controller = Controller(inbox, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def _message(to: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "radar@lab.example", to, "New for you"
    msg.set_content("Three new papers.")
    return msg


def _mailer(port: int, security: str, password: str = PASSWORD) -> Mailer:
    mail = MailConfig(
        host="127.0.0.1", port=port, security=security, user=USER,
        from_address="radar@lab.example", timeout_seconds=10,
    )  # fmt: skip
    return Mailer(mail, env={mail.password_env: password})


@pytest.fixture
def trusted(ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system trust store, as OpenSSL reads it, is the test CA alone."""
    pem = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(pem))
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.mark.parametrize("security", ["starttls", "tls"])
@pytest.mark.usefixtures("trusted")
def test_digest_goes_out_encrypted_after_a_login(ca: trustme.CA, security: str) -> None:
    with tls_server(ca, implicit=security == "tls") as (inbox, port):
        mailer = _mailer(port, security)
        try:
            mailer.send(_message("ada@lab.example"))
            mailer.send(_message("grace@lab.example"))  # the same connection
        finally:
            mailer.close()
        assert [m["To"] for m in inbox.messages] == ["ada@lab.example", "grace@lab.example"]
        assert inbox.messages[0].get_content().strip() == "Three new papers."


@pytest.mark.parametrize("security", ["starttls", "tls"])
@pytest.mark.usefixtures("trusted")
def test_a_wrong_password_is_one_clear_line(ca: trustme.CA, security: str) -> None:
    with tls_server(ca, implicit=security == "tls") as (inbox, port):
        mailer = _mailer(port, security, password="wrong")
        with pytest.raises(MailError) as err:
            mailer.send(_message("ada@lab.example"))
        text = str(err.value)
        assert text.startswith(f"the SMTP server 127.0.0.1:{port} refused the login of 'radar'")
        assert "$PAPERSIFT_MAIL_PASSWORD" in text and " 535 " in text and "\n" not in text
        assert "wrong" not in text  # the password is never shown
        assert not inbox.messages


@pytest.mark.parametrize("security", ["starttls", "tls"])
def test_an_untrusted_certificate_is_refused(
    ca: trustme.CA, security: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose certificate no trusted CA signed (a man in the middle, or a
    self-signed server) gets no password and no mail."""
    other = trustme.CA()  # the store trusts this CA, not the server's
    pem = tmp_path / "other.pem"
    other.cert_pem.write_to_path(str(pem))
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with tls_server(ca, implicit=security == "tls") as (inbox, port):
        with pytest.raises(MailError, match="certificate this machine does not trust"):
            _mailer(port, security).send(_message("ada@lab.example"))
        assert not inbox.messages


def test_a_server_without_starttls_is_named_as_such() -> None:
    """security = "starttls" against a server that answers but offers no STARTTLS: the line
    says so and which setting to change, not "cannot reach"; nothing goes out in the clear."""
    with smtp_server() as (inbox, port):  # a plain server: no STARTTLS, no AUTH
        with pytest.raises(MailError) as err:
            _mailer(port, "starttls").send(_message("ada@lab.example"))
        assert not inbox.messages
    text = str(err.value)
    assert text.startswith(f"the SMTP server 127.0.0.1:{port} does not offer STARTTLS, which "
                           '[mail] security = "starttls" needs: set security = "tls"')  # fmt: skip
    assert "cannot reach" not in text and "\n" not in text


def test_a_login_the_server_does_not_offer_is_named_as_such() -> None:
    """[mail] user set for a server that offers no AUTH (as many only do after STARTTLS)."""
    with smtp_server() as (inbox, port):
        with pytest.raises(MailError) as err:
            _mailer(port, "none").send(_message("ada@lab.example"))
        assert not inbox.messages
    assert str(err.value) == (
        f"the SMTP server 127.0.0.1:{port} does not offer a login (SMTP AUTH) on this "
        f"connection, which [mail] user = '{USER}' needs: leave user empty to send without "
        'one, or set security = "starttls" or "tls" if it offers AUTH over TLS only'
    )
