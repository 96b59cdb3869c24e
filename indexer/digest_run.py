"""Sending the digests: one message per member and window, over SMTP (stdlib ``smtplib``).

Used by ``papersift digest`` and the ``digest`` job of ``serve``. Members are visited in a
fixed order (by id); each member's window is claimed in ``members.sqlite`` before their
message goes out, so a run that stops part-way leaves the rest for the next run and never
repeats the ones done. An unreachable or refusing SMTP server stops the run with one
logged line; nothing unsent is recorded, so the next run tries again.
"""

from __future__ import annotations

import contextlib
import os
import smtplib
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.message import EmailMessage

from papersift.core.config import Config, MailConfig
from papersift.core.errors import PapersiftError
from papersift.core.urls import with_query
from papersift.core.wording import counted
from papersift.engine.members import Member, Members, load_secret
from papersift.engine.search import SearchEngine
from papersift.engine.subscriptions import Subscriptions
from papersift.indexer.digest import Digest, compose, window_for
from papersift.indexer.digest_mail import digest_message, digest_text, unsubscribe_token

MAIL_OFF = "e-mail is off: set [mail] host (and from_address) in config.toml to send digests"
MAIL_OFF_SENTENCE = MAIL_OFF[0].upper() + MAIL_OFF[1:] + "."  # as a sentence of its own


class MailError(PapersiftError):
    """The SMTP server could not be reached or refused the message."""


@dataclass
class DigestReport:
    sent: int = 0
    empty: int = 0  # nothing new in the window: nothing sent
    already: int = 0  # this window's digest went out before
    unknown: int = 0  # a run stopped during this send: it may or may not have arrived
    error: str = ""
    lines: list[str] = field(default_factory=list)  # per member, for the CLI

    def counts(self) -> dict[str, int]:
        return {"sent": self.sent, "empty": self.empty, "already": self.already,
                "unknown": self.unknown}  # fmt: skip


def today_utc() -> date:
    return datetime.now(UTC).date()


def base_url(config: Config) -> str:
    """Where the links in a message point: ``[server] base_url``, else the serve address."""
    configured = config.server.base_url.strip().rstrip("/")
    return configured or f"http://{config.server.host}:{config.server.port}"


class Mailer:
    """One SMTP connection for a run, opened at the first message."""

    def __init__(self, mail: MailConfig, env: dict[str, str] | None = None) -> None:
        if not mail.host:
            raise MailError(MAIL_OFF)
        if not mail.from_address:
            raise MailError("set [mail] from_address: the digests need a From address")
        self.mail = mail
        self.password = (env if env is not None else os.environ).get(mail.password_env, "")
        self._smtp: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        m = self.mail
        smtp: smtplib.SMTP | None = None
        step = "connect"  # which one failed decides what the message asks to change
        try:
            if m.security == "tls":
                smtp = smtplib.SMTP_SSL(m.host, m.port, timeout=m.timeout_seconds,
                                        context=ssl.create_default_context())  # fmt: skip
            else:
                smtp = smtplib.SMTP(m.host, m.port, timeout=m.timeout_seconds)
                if m.security == "starttls":
                    step = "starttls"
                    smtp.starttls(context=ssl.create_default_context())
            if m.user:
                step = "login"
                smtp.login(m.user, self.password)
        except (OSError, smtplib.SMTPException) as exc:
            if smtp is not None:
                smtp.close()
            raise MailError(self._why(exc, step)) from None
        return smtp

    def _why(self, exc: OSError | smtplib.SMTPException, step: str) -> str:
        """One line for a connection or login that failed, naming the setting to change."""
        m = self.mail
        where = f"the SMTP server {m.host}:{m.port}"
        if isinstance(exc, smtplib.SMTPAuthenticationError):  # the password is never in it
            return (f"{where} refused the login of {m.user!r} (check [mail] user and "
                    f"${m.password_env}): {exc.smtp_code} {_text(exc.smtp_error)}")  # fmt: skip
        if isinstance(exc, ssl.SSLCertVerificationError):
            return (f"{where} sent a certificate this machine does not trust: "
                    f"{exc.verify_message} ([SSL: CERTIFICATE_VERIFY_FAILED])")  # fmt: skip
        # smtplib's "... extension not supported by server": the server answered, so it is
        # reachable; it does not offer what a setting asks of it.
        if isinstance(exc, smtplib.SMTPNotSupportedError) and step == "starttls":
            return (f"{where} does not offer STARTTLS, which [mail] security = \"starttls\" "
                    "needs: set security = \"tls\" if it takes TLS from the start (usually "
                    "port 465), or \"none\" to send unencrypted (only to a server on this "
                    "machine or a trusted network)")  # fmt: skip
        if isinstance(exc, smtplib.SMTPNotSupportedError) and step == "login":
            return (f"{where} does not offer a login (SMTP AUTH) on this connection, which "
                    f"[mail] user = {m.user!r} needs: leave user empty to send without one"
                    + (", or set security = \"starttls\" or \"tls\" if it offers AUTH over "
                       "TLS only" if m.security == "none" else ""))  # fmt: skip
        return f"cannot reach {where}: {exc}"

    def send(self, msg: EmailMessage) -> None:
        if self._smtp is None:
            self._smtp = self._connect()
        try:
            self._smtp.send_message(msg)
        except (OSError, smtplib.SMTPException) as exc:
            self.close()
            raise MailError(f"the SMTP server {self.mail.host} refused a digest: {exc}") from None

    def close(self) -> None:
        if self._smtp is not None:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                self._smtp.quit()
            self._smtp = None


def _text(reply: bytes | str) -> str:
    """An SMTP reply's text on one line."""
    text = reply.decode(errors="replace") if isinstance(reply, bytes) else reply
    return " ".join(text.split())


def _due(members: Members, user: str | None) -> list[Member]:
    if user:
        return [members.existing(user)]
    return sorted((m for m in members.all() if m.digest != "off"), key=lambda m: m.id)


def run_digests(
    engine: SearchEngine,
    config: Config,
    *,
    today: date | None = None,
    user: str | None = None,
    dry_run: bool = False,
    say: Callable[[str], None] | None = None,
    show: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
) -> DigestReport:
    """Send (or with ``dry_run`` describe) every due digest; see the module docstring.

    ``say`` takes the per-member lines, ``show`` a dry run's would-be messages, each after
    the line naming its member ("... would send 3 papers in 1 section for ...:"; default:
    ``say``; both default to ``report.lines``)."""
    today = today or today_utc()
    report = DigestReport()
    out = say or report.lines.append
    would_send = show or out
    root = config.data_dir
    members = Members(root)
    mailer: Mailer | None = None
    try:
        secret = load_secret(root, config.accounts.secret_key)
        subs = Subscriptions(members)
        if not dry_run:
            mailer = Mailer(config.mail, env)
        for member in _due(members, user):
            if not member.confirmed:
                out(f"{member.email}: address not confirmed yet (the link mailed at sign-up, "
                    "or 'Send the link again' at /account)")  # fmt: skip
                continue
            if member.digest == "off":
                out(f"{member.email}: digests are off (choose daily or weekly at /account/digest)")
                continue
            window = window_for(member.digest, today)
            state = subs.send_state(member.id, window.key)
            if state is not None:
                report.already += 1
                if state == "sending":
                    report.unknown += 1
                note = "sent" if state == "sent" else "begun by a run that stopped (not resent)"
                out(f"{member.email}: {window.kind} digest for {window.label()} already {note}")
                continue
            digest = compose(engine, subs, member, window, config.mail.papers)
            if digest.empty:
                report.empty += 1
                why = "nothing chosen" if not digest.chosen else "nothing new"
                if digest.chosen and digest.weighed:
                    new = counted(digest.weighed, "new paper")
                    why = f"nothing close to the tags' papers among {new}"
                out(f"{member.email}: {why} for {window.label()}; no message")
                continue
            if dry_run:
                token = unsubscribe_token(secret, member)
                link = with_query(f"{base_url(config)}/digest/unsubscribe", {"t": token})
                papers = counted(digest.papers, "paper")
                sections = counted(len(digest.sections), "section")
                would_send(
                    f"{member.email}: would send {papers} in {sections} for {window.label()}:"
                )
                would_send(digest_text(digest, base_url(config), link))
                continue
            assert mailer is not None
            _send_one(subs, mailer, digest, config, secret)
            report.sent += 1
            out(f"{member.email}: sent {counted(digest.papers, 'paper')} for {window.label()}")
    except MailError as exc:
        report.error = str(exc)  # the caller logs or prints it: one line per run
    finally:
        if mailer is not None:
            mailer.close()
        members.close()
    return report


def _send_one(
    subs: Subscriptions, mailer: Mailer, digest: Digest, config: Config, secret: str
) -> None:
    """Claim the window, send, mark it sent.

    The claim is written first, on purpose. Writing it after the send would risk a
    duplicate: a crash between the server's "250 OK" and the record would send the same
    digest again on the next run. Writing it first risks the opposite, a crash between the
    claim and the send leaves the window claimed ("sending") and unsent. We take that risk
    because the issue asks for "never twice", and the lost case is visible (the run reports
    it as "begun by a run that stopped") where a duplicate is not. A send the SMTP server
    refuses or cannot take is known to have failed, so its claim is released for a retry.
    """
    member, window = digest.member, digest.window
    if not subs.claim(member.id, window.key):
        return  # another run (serve's job and a CLI run at once) took it
    msg = digest_message(digest, sender=config.mail.from_address, base_url=base_url(config),
                         secret=secret)  # fmt: skip
    try:
        mailer.send(msg)
    except MailError:
        subs.release(member.id, window.key)
        raise
    subs.sent(member.id, window.key)
