"""Confirming a signed-up member's address: a signed link mailed to it.

Anyone at an allowed domain (``[accounts] signup_domains``) may sign up, so an account's
address is not known to be its owner's until the link sent there is opened; digests go to
confirmed addresses only, so sign-up cannot be used to mail someone else. The link carries
the member's id and address, signed with the accounts key (``itsdangerous``, as session
cookies are) and valid for ``CONFIRM_DAYS``; nothing is stored until it is opened.
"""

from __future__ import annotations

from email.message import EmailMessage

from itsdangerous import BadSignature, URLSafeTimedSerializer

from papersift.core.config import Config
from papersift.core.urls import with_query
from papersift.engine.members import Member
from papersift.indexer.digest_run import Mailer, base_url

CONFIRM_DAYS = 7
_SALT = "papersift-confirm"


def confirm_token(secret: str, member: Member) -> str:
    return URLSafeTimedSerializer(secret, salt=_SALT).dumps([member.id, member.email])


def read_confirm_token(secret: str, token: str) -> tuple[int, str] | None:
    """(member id, address) of a link signed here within ``CONFIRM_DAYS``; None otherwise."""
    try:
        found = URLSafeTimedSerializer(secret, salt=_SALT).loads(
            token, max_age=CONFIRM_DAYS * 86400
        )
    except BadSignature:  # also an expired one (SignatureExpired is a BadSignature)
        return None
    match found:
        case [int(member_id), str(email)]:
            return member_id, email
    return None


def confirm_message(config: Config, secret: str, member: Member) -> EmailMessage:
    link = with_query(f"{base_url(config)}/confirm", {"t": confirm_token(secret, member)})
    msg = EmailMessage()
    msg["From"], msg["To"] = config.mail.from_address, member.email
    msg["Subject"] = "Confirm your address for papersift"
    msg.set_content(
        f"Someone (we hope you) made a papersift account for {member.email}.\n\n"
        f"Open this link within {CONFIRM_DAYS} days to confirm the address; digests are "
        f"sent to it only once it is confirmed:\n\n{link}\n\n"
        "If you did not sign up, ignore this message: nothing is sent to you unless the "
        "link is opened.\n"
    )
    return msg


def send_confirmation(
    config: Config, secret: str, member: Member, env: dict[str, str] | None = None
) -> None:
    """Mail the confirmation link; MailError (one line) when mail is off or fails."""
    mailer = Mailer(config.mail, env)  # MailError when [mail] host is not set
    try:
        mailer.send(confirm_message(config, secret, member))
    finally:
        mailer.close()
