"""E-mail digests end to end: choices made on the settings page, sent through a real SMTP
server on 127.0.0.1 (aiosmtpd), parsed with the ``email`` package, links followed over HTTP
against the real app, unsubscribed without a session, never sent twice for one window."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from papersift.core.config import Config
from papersift.engine.members import Members
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.subscriptions import Subscriptions
from papersift.indexer.digest import window_for
from papersift.indexer.digest_run import run_digests
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.member_kit import PASSWORD, add_member, member_config, post_settings, sign_in
from tests.smtp_kit import Inbox, free_port, mail_config, parts, smtp_server
from tests.web_helpers import parse_html, serving

pytest_plugins = ["tests.member_fixtures"]

TODAY = date(2026, 7, 6)  # a Monday: the weekly window is 2026-06-29 .. 2026-07-05
WEEK = window_for("weekly", TODAY)
FOLLOWED_PAPER = "2606.28057"  # in the window; its third author is followed
TAG_NAME = "RAG <b>&amp; co"  # must arrive escaped in the HTML part


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as found:
        yield found


def older_papers(engine: SearchEngine, query: str, n: int) -> list[str]:
    req = SearchRequest(query=query, filters=Filters(date_to=date(2026, 6, 1)), page_size=n)
    return [h.paper.arxiv_id for h in engine.search(req).hits]


def weekly_search_digest(members: Members, member_id: int) -> None:
    """The member gets a weekly digest of one saved search ("language models")."""
    subs = Subscriptions(members)
    subs.choose(member_id, set(), {subs.add_search(member_id, "language models").id}, set())
    members.update(member_id, digest="weekly")


@pytest.mark.slow  # a real uvicorn server, every link fetched: ~10 s at load 11
def test_digest_sent_once_with_working_links(
    engine: SearchEngine, built_config: Config, members_root: Path, inbox: tuple[Inbox, int]
) -> None:
    box, port = inbox
    app_config = member_config(built_config, members_root)
    with serving(create_app(engine, app_config)) as url, httpx.Client(base_url=url) as lee:
        config = mail_config(app_config, port, url)
        for email, name in (("lee@lab.example", "Lee"), ("kim@lab.example", "Kim"),
                            ("pat@lab.example", "Pat"), ("off@lab.example", "")):  # fmt: skip
            add_member(members_root, email, name)
        members = Members(members_root)
        subs = Subscriptions(members)
        try:
            # Lee chooses everything on the settings page, as a member would.
            assert sign_in(lee, "lee@lab.example").status_code == 303
            seeds = older_papers(engine, "retrieval augmented generation", 5)
            tag = subs.library.ensure_tag(members.existing("lee@lab.example").id, TAG_NAME)
            subs.library.save(members.existing("lee@lab.example").id, tag.id, seeds)
            assert (
                post_settings(lee, action="add_search", query="language models").status_code == 303
            )
            rid = engine.people.author_rids(FOLLOWED_PAPER)[2]
            assert rid is not None
            followed = post_settings(lee, action="follow", researcher=f"/researchers/{rid}-x")
            assert followed.status_code == 303
            search_id = subs.searches(members.existing("lee@lab.example").id)[0].id
            chosen = post_settings(lee, action="choices", digest="weekly", tag=str(tag.id),
                                   search=str(search_id), researcher=str(rid))  # fmt: skip
            assert chosen.status_code == 303
            # Kim: a saved search only; Pat: weekly with nothing chosen; the last: off.
            kim = members.existing("kim@lab.example")
            s = subs.add_search(kim.id, "language models")
            subs.choose(kim.id, set(), {s.id}, set())
            members.update(kim.id, digest="weekly")
            members.update(members.existing("pat@lab.example").id, digest="weekly")
        finally:
            members.close()

        report = run_digests(engine, config, today=TODAY)
        assert (report.error, report.sent, report.empty, report.already) == ("", 2, 1, 0)
        assert len(box.messages) == 2 and not box.to("pat@lab.example")
        (msg,) = box.to("lee@lab.example")
        assert msg["To"] == "Lee <lee@lab.example>" and "radar@lab.example" in msg["From"]
        text, rich = parts(msg)

        # The HTML part: the tag name escaped, one list per section, the papers' links.
        tree = parse_html(rich)
        titles = [h.text_content() for h in tree.cssselect("h2")]
        assert titles[0] == f"Recommended for {TAG_NAME}" and not tree.cssselect("h2 b")
        assert "New for “language models”" in titles
        assert any(t.startswith("New papers by ") for t in titles)
        expected = engine.search(SearchRequest(
            query="language models", filters=Filters(date_from=WEEK.start, date_to=WEEK.end),
            sort="newest", page_size=config.mail.papers))  # fmt: skip
        assert expected.hits, "the window must hold matches for the test to mean anything"
        papers = [a.get("href") for a in tree.cssselect("li a")]
        ids = [urlsplit(h).path.removeprefix("/papers/")[:10] for h in papers]
        by_section = {
            h.text_content(): [urlsplit(a.get("href")).path.removeprefix("/papers/")[:10]
                               for a in h.getnext().cssselect("li a")]
            for h in tree.cssselect("h2")
        }  # fmt: skip
        # The search's matches, but those the tag's list has above only once (there).
        earlier = set(by_section[titles[0]])
        searched = [h.paper.arxiv_id for h in expected.hits]
        assert by_section["New for “language models”"] == [i for i in searched if i not in earlier]
        assert len(ids) == len(set(ids)), "no paper listed twice"
        assert FOLLOWED_PAPER in ids and not set(ids) & set(seeds)
        for i in set(ids):  # every paper is one of the window's
            paper = engine.paper(i)
            assert paper is not None and WEEK.start <= paper.published <= WEEK.end
        # Every link resolves over HTTP against the real app (Lee is signed in).
        links = {a.get("href") for a in tree.cssselect("a")}
        assert all(str(h).startswith(url) for h in links)
        for href in links - {msg["List-Unsubscribe"].strip("<>")}:
            answer = lee.get(str(href), follow_redirects=True)
            assert answer.status_code == 200, href
        # The text part carries the same paper links.
        assert all(str(h) in text for h in papers)

        # A second run in the same window sends nothing.
        again = run_digests(engine, config, today=TODAY)
        assert (again.sent, again.already, again.empty) == (0, 2, 1) and len(box.messages) == 2

        # Unsubscribing needs no session: GET shows the button, POST stops the digests.
        link = msg["List-Unsubscribe"].strip("<>")
        assert link in text and link in {a.get("href") for a in tree.cssselect("a")}
        with httpx.Client() as stranger:
            page = stranger.get(link)
            assert page.status_code == 200 and "lee@lab.example" in page.text
            form = parse_html(page.text).cssselect("form[action='/digest/unsubscribe']")[0]
            token = form.cssselect("input[name=t]")[0].get("value")
            done = stranger.post(url + "/digest/unsubscribe", data={"t": token})
            assert done.status_code == 200 and "no more digests" in done.text
            forged = stranger.post(url + "/digest/unsubscribe", data={"t": token[:-2] + "xx"})
            assert forged.status_code == 404
        members = Members(members_root)
        try:
            assert members.existing("lee@lab.example").digest == "off"
        finally:
            members.close()
        # A new week: Kim gets the next one; Lee, unsubscribed, does not.
        later = run_digests(engine, config, today=date(2026, 7, 13))
        assert later.sent == 0 and later.empty == 2 and len(box.messages) == 2


def test_list_unsubscribe_is_one_plain_line_on_the_wire(
    engine: SearchEngine, built_config: Config, members_root: Path, inbox: tuple[Inbox, int]
) -> None:
    """RFC 2369 and 8058: ``List-Unsubscribe: <https://...>`` as it is, not the RFC 2047
    encoded words the email package makes of a URL longer than a 78-character line."""
    box, port = inbox
    add_member(members_root, "lee@lab.example")
    members = Members(members_root)
    try:
        weekly_search_digest(members, members.existing("lee@lab.example").id)
    finally:
        members.close()
    base = member_config(built_config, members_root)
    config = mail_config(base, port, "https://papers.example.org")
    assert run_digests(engine, config, today=TODAY).sent == 1
    head = box.raw[0].split(b"\r\n\r\n", 1)[0].split(b"\r\n")  # the header lines as sent
    (at,) = [i for i, line in enumerate(head) if line.lower().startswith(b"list-unsubscribe:")]
    text, _ = parts(box.messages[0])
    (link,) = [line.removeprefix("Unsubscribe: ") for line in text.splitlines()
               if line.startswith("Unsubscribe: ")]  # fmt: skip
    assert link.startswith("https://papers.example.org/digest/unsubscribe?t=") and len(link) > 78
    assert head[at] == f"List-Unsubscribe: <{link}>".encode()
    assert not head[at + 1].startswith((b" ", b"\t")), "no continuation line"
    assert b"List-Unsubscribe-Post: List-Unsubscribe=One-Click" in head
    # Every other header still folds at 78.
    assert max(len(line) for i, line in enumerate(head) if i != at) <= 78


def test_daily_window_and_nothing_new(
    engine: SearchEngine, built_config: Config, members_root: Path, inbox: tuple[Inbox, int]
) -> None:
    box, port = inbox
    config = mail_config(member_config(built_config, members_root), port)
    add_member(members_root, "day@lab.example")
    members = Members(members_root)
    try:
        who = members.existing("day@lab.example")
        subs = Subscriptions(members)
        subs.choose(who.id, set(), {subs.add_search(who.id, "language").id}, set())
        members.update(who.id, digest="daily")
    finally:
        members.close()
    # 2026-07-05 (a Sunday) has no papers: nothing new, nothing sent, the dry run says so.
    quiet = run_digests(engine, config, today=TODAY, dry_run=True)
    assert quiet.empty == 1 and "nothing new for 2026-07-05" in quiet.lines[0]
    assert run_digests(engine, config, today=TODAY).sent == 0 and not box.messages
    # 2026-07-01 has papers: the dry run shows them and sends nothing; the real run sends.
    dry = run_digests(engine, config, today=date(2026, 7, 2), dry_run=True)
    assert "would send" in dry.lines[0] and "/papers/" in dry.lines[1] and not box.messages
    sent = run_digests(engine, config, today=date(2026, 7, 2))
    assert sent.sent == 1 and len(box.messages) == 1
    assert box.messages[0]["X-Papersift-Window"] == "daily:2026-07-01"


def test_a_tag_with_nothing_close_has_no_section(
    engine: SearchEngine, built_config: Config, members_root: Path, inbox: tuple[Inbox, int]
) -> None:
    """A tag of bibliometrics papers has nothing close among the week's papers (language
    models): no section, and with nothing else chosen no message. A tag on retrieval-augmented
    generation has: its section alone goes out."""
    box, port = inbox
    config = mail_config(member_config(built_config, members_root), port)
    add_member(members_root, "lee@lab.example")
    req = SearchRequest(filters=Filters(categories=("cs.DL",), date_to=date(2016, 12, 31)),
                        sort="newest", page_size=5)  # fmt: skip
    bibliometrics = [h.paper.arxiv_id for h in engine.search(req).hits]
    members = Members(members_root)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        far = subs.library.ensure_tag(who.id, "Bibliometrics")
        subs.library.save(who.id, far.id, bibliometrics)
        subs.choose(who.id, {far.id}, set(), set())
        members.update(who.id, digest="weekly")
    finally:
        members.close()
    quiet = run_digests(engine, config, today=TODAY)
    assert (quiet.sent, quiet.empty) == (0, 1) and not box.messages
    # It says why: the week had papers, none close to the tag's (not "nothing new").
    assert "nothing close to the tags' papers among " in quiet.lines[0]
    assert "new papers for 2026-06-29 to 2026-07-05; no message" in quiet.lines[0]
    members = Members(members_root)
    try:
        subs = Subscriptions(members)
        near = subs.library.ensure_tag(who.id, "RAG")
        subs.library.save(
            who.id, near.id, older_papers(engine, "retrieval augmented generation", 5)
        )
        subs.choose(who.id, {far.id, near.id}, set(), set())
    finally:
        members.close()
    sent = run_digests(engine, config, today=TODAY)
    assert sent.sent == 1 and len(box.messages) == 1
    _, rich = parts(box.messages[0])
    assert [h.text_content() for h in parse_html(rich).cssselect("h2")] == ["Recommended for RAG"]


def test_a_paper_in_two_sections_is_listed_and_counted_once(
    engine: SearchEngine, built_config: Config, members_root: Path, inbox: tuple[Inbox, int]
) -> None:
    """A new paper that a saved search and a followed researcher both match: listed in the
    first section with "Also in" the other, which says it is listed above; the subject and
    the dry run count distinct papers."""
    box, port = inbox
    paper = engine.paper(FOLLOWED_PAPER)
    rid = engine.people.author_rids(FOLLOWED_PAPER)[2]
    person = engine.people.get(rid) if rid is not None else None
    assert paper is not None and person is not None
    query = paper.title  # a search that finds the followed researcher's paper
    add_member(members_root, "lee@lab.example")
    members = Members(members_root)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        subs.follow(who.id, person.rid)
        subs.choose(who.id, set(), {subs.add_search(who.id, query).id}, {person.rid})
        members.update(who.id, digest="weekly")
    finally:
        members.close()
    config = mail_config(member_config(built_config, members_root), port)
    week, size = Filters(date_from=WEEK.start, date_to=WEEK.end), config.mail.papers
    found = [
        h.paper.arxiv_id
        for h in engine.search(
            SearchRequest(
                query=" ".join(query.split()), filters=week, sort="newest", page_size=size
            )
        ).hits
    ]
    theirs = [h.paper.arxiv_id for h in engine.search(SearchRequest(
        filters=dataclasses.replace(week, researcher_ids=(person.rid,)), sort="newest",
        page_size=size)).hits]  # fmt: skip
    assert FOLLOWED_PAPER in found and FOLLOWED_PAPER in theirs, "the sections must overlap"
    distinct = len(set(found) | set(theirs))
    assert distinct < len(found) + len(theirs)
    papers = f"{distinct} paper" + ("s" if distinct > 1 else "")

    dry = run_digests(engine, config, today=TODAY, dry_run=True)
    assert dry.lines[0] == f"lee@lab.example: would send {papers} in 2 sections for {WEEK.label()}:"
    assert run_digests(engine, config, today=TODAY).sent == 1
    (msg,) = box.messages
    assert (
        msg["Subject"] == f"papersift: {distinct} new {papers.split()[1]} (weekly, {WEEK.label()})"
    )
    text, rich = parts(msg)
    tree = parse_html(rich)
    listed = [urlsplit(a.get("href")).path.removeprefix("/papers/")[:10]
              for a in tree.cssselect("li > a")]  # fmt: skip
    assert sorted(listed) == sorted(set(found) | set(theirs)), "each paper once"
    searched, by = tree.cssselect("h2")
    assert by.text_content() == f"New papers by {person.name}"
    first = searched.getnext().cssselect("li")
    (mine,) = [li for li in first if FOLLOWED_PAPER in li.cssselect("a")[0].get("href")]
    assert mine.cssselect(".also")[0].text_content() == f"Also in: New papers by {person.name}"
    above = tree.cssselect("p.listed-above")
    assert len(above) == 1 and paper.title.split()[0] in above[0].text_content()
    assert text.count(f"/papers/{FOLLOWED_PAPER}") == 1
    assert f"   Also in: New papers by {person.name}" in text.splitlines()


def test_smtp_unreachable_records_nothing(
    engine: SearchEngine, built_config: Config, members_root: Path, inbox: tuple[Inbox, int]
) -> None:
    box, port = inbox
    add_member(members_root, "lee@lab.example")
    members = Members(members_root)
    try:
        who = members.existing("lee@lab.example")
        weekly_search_digest(members, who.id)
    finally:
        members.close()
    base = member_config(built_config, members_root)
    down = run_digests(engine, mail_config(base, free_port()), today=TODAY)
    assert down.sent == 0 and down.error.startswith("cannot reach the SMTP server 127.0.0.1")
    members = Members(members_root)
    try:
        assert Subscriptions(members).send_state(who.id, WEEK.key) is None
    finally:
        members.close()
    up = run_digests(engine, mail_config(base, port), today=TODAY)
    assert (up.error, up.sent) == ("", 1) and len(box.messages) == 1


@pytest.mark.slow
def test_killed_run_resumes_with_the_rest(built_config: Config, tmp_path: Path) -> None:
    """`papersift digest` killed while the 2nd message is delivered: the next run sends the
    3rd and 4th, and neither the 1st nor the 2nd again."""
    with smtp_server() as (box, port):
        config = make_config(tmp_path, mail={"host": "127.0.0.1", "port": port,
                             "security": "none", "from_address": "radar@lab.example"})  # fmt: skip
        shutil.copytree(built_config.data_dir, config.data_dir)
        addresses = [f"m{i}@lab.example" for i in range(1, 5)]
        members = Members(config.data_dir)
        try:
            for address in addresses:
                weekly_search_digest(members, members.add(address, PASSWORD).id)
        finally:
            members.close()
        command = [sys.executable, "-m", "papersift", "digest", "--config",
                   str(tmp_path / "config.toml"), "--date", TODAY.isoformat()]  # fmt: skip
        env = {**os.environ, "PAPERSIFT_MAIL_PASSWORD": "unused"}
        dry = subprocess.run([*command, "--dry-run", "--user", addresses[0]], env=env,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert dry.returncode == 0 and "would send" in dry.stdout and not box.messages
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)

        def kill_at(count: int) -> None:
            if count == 2:
                os.kill(proc.pid, signal.SIGKILL)

        box.on_data = kill_at
        proc.wait(timeout=300)
        assert proc.returncode == -signal.SIGKILL and len(box.messages) == 2
        box.on_data = None
        rest = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert rest.returncode == 0, rest.stderr
        assert "begun by a run that stopped" in rest.stdout
        got = sorted(rcpt for _, rcpts in box.envelopes for rcpt in rcpts)
        assert got == addresses  # each member exactly once


def test_scheduler_job_logs_one_line_and_retries(
    engine: SearchEngine,
    built_config: Config,
    members_root: Path,
    inbox: tuple[Inbox, int],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The `digest` job of serve: SMTP down is one error line (no password in it) and a
    failed run; the next run, with the server up, sends."""
    from papersift.indexer.scheduler import JobRunner

    box, port = inbox
    add_member(members_root, "lee@lab.example")
    members = Members(members_root)
    try:
        who = members.existing("lee@lab.example")
        weekly_search_digest(members, who.id)
    finally:
        members.close()
    base = member_config(built_config, members_root)
    secret = "s3cret-smtp-password"
    monkeypatch.setenv("PAPERSIFT_MAIL_PASSWORD", secret)
    down_config = mail_config(base, free_port())  # nothing listens there
    down_config = dataclasses.replace(
        down_config, mail=dataclasses.replace(down_config.mail, user="radar")
    )
    runner = JobRunner(engine, down_config, today=lambda: TODAY)  # a week with papers
    with caplog.at_level("INFO", logger="papersift"):
        assert runner.run("digest")
    status = runner.status["digest"]
    assert status.outcome == "error" and "cannot reach the SMTP server" in status.message
    failed = [r for r in caplog.records if "event=failed" in r.getMessage()]
    assert len(failed) == 1 and not any(secret in r.getMessage() for r in caplog.records)
    up = JobRunner(engine, mail_config(base, port), today=lambda: TODAY)
    assert up.run("digest") and up.status["digest"].outcome == "ok"
    assert up.status["digest"].counts["sent"] == 1 and len(box.messages) == 1
    assert up.run("digest") and up.status["digest"].counts["already"] == 1
    assert len(box.messages) == 1
