"""The digest settings page (bad input, links from the search and researcher pages), the
unsubscribe link (one-click, a reused account id), `papersift digest`'s one-line errors
and the members file's upgrade."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.members import Members
from papersift.engine.members_schema import SCHEMA_VERSION
from papersift.engine.search import SearchEngine
from papersift.engine.subscriptions import Subscriptions
from tests.corpus import make_config
from tests.member_kit import PASSWORD, add_member, post_settings, sign_in, version_3_file
from tests.web_helpers import parse_html

pytest_plugins = ["tests.member_fixtures"]


def test_settings_page_bad_input(site: TestClient, members_root: Path) -> None:
    add_member(members_root, "lee@lab.example")
    add_member(members_root, "kim@lab.example")
    members = Members(members_root)
    try:
        kim_tag = Subscriptions(members).library.ensure_tag(
            members.existing("kim@lab.example").id, "Kim's"
        )
    finally:
        members.close()
    assert site.get("/account/digest").status_code == 303  # signed out: to the sign-in page
    assert sign_in(site, "lee@lab.example").status_code == 303
    page = site.get("/account/digest")
    assert page.status_code == 200 and page.headers["cache-control"] == "private, no-store"
    assert parse_html(page.text).cssselect(".mail-off"), "mail is off here and the page says so"
    no_token = site.post("/account/digest", data={"action": "follow", "researcher": "1"})
    assert no_token.status_code == 403
    for data, status, words in (
        ({"action": "follow", "researcher": "999999999"}, 400, "no researcher 999999999"),
        ({"action": "follow", "researcher": "qzxwv nobody"}, 400, "no researcher named"),
        ({"action": "add_search", "query": "   "}, 400, "type the search"),
        ({"action": "choices", "digest": "hourly"}, 400, "choose a digest"),
        ({"action": "nonsense"}, 400, "unknown action"),
        ({"action": "feed_new", "kind": "tag", "ref": str(kim_tag.id)}, 404, "no such feed"),
    ):
        answer = post_settings(site, **data)
        assert answer.status_code == status and words in answer.text.lower(), data
    # Another member's tag among the choices is ignored, never stored.
    chosen = post_settings(site, action="choices", digest="daily", tag=str(kim_tag.id))
    assert chosen.status_code == 303
    members = Members(members_root)
    try:
        lee = members.existing("lee@lab.example")
        assert lee.digest == "daily" and Subscriptions(members).choice(lee.id).tag_ids == ()
    finally:
        members.close()
    assert site.get("/digest/unsubscribe", params={"t": "nope"}).status_code == 404
    assert site.post("/digest/unsubscribe", data={"t": "x" * 5000}).status_code == 404


def test_search_and_researcher_pages_lead_to_the_settings(
    site: TestClient, engine: SearchEngine, members_root: Path
) -> None:
    """ "Save it for your digest" and "in your e-mail digest" pre-fill the settings forms."""
    add_member(members_root, "lee@lab.example")
    assert sign_in(site, "lee@lab.example").status_code == 303
    results = parse_html(site.get("/search", params={"q": "word & sense"}).text)
    (save,) = results.cssselect("a.save-search")
    form = parse_html(site.get(save.get("href")).text)
    assert form.cssselect("input#query")[0].get("value") == "word & sense"
    rid = engine.people.author_rids("2401.10241")[0]
    person = parse_html(site.get(f"/researchers/{rid}", follow_redirects=True).text)
    name = engine.people.get(rid).name  # type: ignore[union-attr]
    (follow,) = person.cssselect("a.follow-digest")
    form = parse_html(site.get(follow.get("href")).text)
    # The researcher by name, one button away; the box is for someone else.
    (asked,) = form.cssselect("form.follow-asked")
    assert asked.cssselect("input[name=researcher]")[0].get("value") == str(rid)
    assert " ".join(asked.cssselect("button")[0].text_content().split()) == f"Follow {name}"
    assert form.cssselect("input#researcher")[0].get("value") == ""
    done = post_settings(site, action="follow", researcher=str(rid))
    assert done.status_code == 303
    listed = parse_html(site.get("/account/digest").text).cssselect("ul.follows li a")
    assert len(listed) == 1 and str(listed[0].get("href")).startswith(f"/researchers/{rid}")


def test_a_researcher_is_followed_by_name(
    site: TestClient, engine: SearchEngine, members_root: Path
) -> None:
    """A name one researcher's spellings hold follows them; a name several hold lists them
    with their numbers (a reviewer got "a researcher is a number such as 42" for a name)."""
    add_member(members_root, "kim@lab.example")
    assert sign_in(site, "kim@lab.example").status_code == 303
    everyone, _ = engine.people.search("", 5000)
    surnames: dict[str, list[int]] = {}
    for r in everyone:
        surnames.setdefault(r.name.split()[-1].lower(), []).append(r.rid)
    # A surname that names one researcher only (as the directory finds names), and one
    # that names several.
    sole = next(s for s in surnames if s.isalpha() and engine.people.search(s)[1] == 1)
    shared = next(s for s, rids in surnames.items() if len(rids) > 1 and s.isalpha())
    (one,), _ = engine.people.search(sole)
    assert post_settings(site, action="follow", researcher=sole.title()).status_code == 303
    listed = parse_html(site.get("/account/digest").text).cssselect("ul.follows li a")
    assert [a.get("href").split("/")[2].split("-")[0] for a in listed] == [str(one.rid)]
    found, total = engine.people.search(shared)
    assert total > 1
    answer = post_settings(site, action="follow", researcher=shared)
    assert answer.status_code == 400
    assert f"names {total:,} researchers" in answer.text
    assert f"number {found[0].rid}," in answer.text


def test_cli_errors_are_one_line(
    built_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from papersift.cli import main

    config = make_config(tmp_path)  # [mail] host empty: mail is off
    shutil.copytree(built_config.data_dir, config.data_dir)
    path = str(tmp_path / "config.toml")
    assert main(["digest", "--config", path]) == 1
    assert capsys.readouterr().err == (
        f"papersift: error: no accounts in {config.data_dir}; add one with `papersift user add`\n"
    )
    add_member(config.data_dir, "lee@lab.example")
    for argv, line in (
        ([], "papersift: error: e-mail is off: set [mail] host (and from_address) in "
             "config.toml to send digests\n"),
        (["--dry-run", "--user", "nobody@lab.example"],
         "papersift: error: there is no account for 'nobody@lab.example'\n"),
    ):  # fmt: skip
        assert main(["digest", "--config", path, *argv]) == 1
        assert capsys.readouterr().err == line
    assert main(["digest", "--config", path, "--dry-run", "--user", "lee@lab.example"]) == 0
    out, err = capsys.readouterr()
    assert "e-mail is off" in err and "lee@lab.example: digests are off" in err and not out


def test_a_dry_run_prints_only_the_digests_on_stdout(
    built_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`papersift digest --dry-run > out.txt` holds the would-be messages; notes and the
    members with nothing to send go to stderr."""
    from papersift.cli import main

    config = make_config(tmp_path)  # mail off, no base_url: two notes
    shutil.copytree(built_config.data_dir, config.data_dir)
    add_member(config.data_dir, "lee@lab.example", "Lee")
    add_member(config.data_dir, "kim@lab.example")
    members = Members(config.data_dir)
    try:
        subs = Subscriptions(members)
        lee, kim = members.existing("lee@lab.example"), members.existing("kim@lab.example")
        subs.choose(lee.id, set(), {subs.add_search(lee.id, "language models").id}, set())
        members.update(lee.id, digest="weekly")
        members.update(kim.id, digest="weekly")  # nothing chosen: no message
    finally:
        members.close()
    argv = ["digest", "--config", str(tmp_path / "config.toml"), "--dry-run"]
    assert main([*argv, "--date", "2026-07-06"]) == 0
    out, err = capsys.readouterr()
    lines = out.rstrip("\n").splitlines()
    assert lines[0].startswith("lee@lab.example: would send ") and lines[0].endswith(
        " in 1 section for 2026-06-29 to 2026-07-05:"  # one saved search; not "1 sections"
    )
    assert lines[1] == "Weekly papers for Lee, 2026-06-29 to 2026-07-05"
    assert lines[-1].startswith("Unsubscribe: http://") and "/digest/unsubscribe?t=" in lines[-1]
    assert not [line for line in lines if line.startswith(("note:", "kim@"))]
    assert "note: e-mail is off" in err and "note: [server] base_url is empty" in err
    assert "kim@lab.example: nothing chosen for 2026-06-29 to 2026-07-05; no message" in err


def test_a_date_too_early_for_the_window_is_one_line(
    built_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--date`` near ``date.min`` gives a window before 0001-01-01: one line, exit 1 (not an
    OverflowError); the last day there is works."""
    from papersift.cli import main

    config = make_config(tmp_path)
    shutil.copytree(built_config.data_dir, config.data_dir)
    path = str(tmp_path / "config.toml")
    add_member(config.data_dir, "lee@lab.example")
    members = Members(config.data_dir)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        subs.choose(who.id, set(), {subs.add_search(who.id, "language").id}, set())
        for kind, day in (("weekly", "0001-01-03"), ("daily", "0001-01-01")):
            members.update(who.id, digest=kind)
            assert main(["digest", "--config", path, "--dry-run", "--date", day]) == 1
            err = capsys.readouterr().err
            assert err == (
                f"papersift: error: {day} is too early a date for a {kind} digest: its window "
                f"({'the day before' if kind == 'daily' else 'the full week before'}) "
                "would begin before 0001-01-01\n"
            )
            assert main(["digest", "--config", path, "--dry-run", "--date", "9999-12-31"]) == 0
            assert "lee@lab.example: nothing new for 9999-12-" in capsys.readouterr().err
    finally:
        members.close()


def test_a_version_1_members_file_upgrades(tmp_path: Path) -> None:
    """Accounts made before digests keep working: the new tables appear, and a send the
    old table recorded counts as done."""
    import sqlite3

    add_member(tmp_path, "lee@lab.example")
    db = sqlite3.connect(tmp_path / "members.sqlite")
    db.executescript(
        "DROP TABLE searches; DROP TABLE follows; DROP TABLE digest_tags; "
        "DROP TABLE feed_tokens; ALTER TABLE digest_sent DROP COLUMN state; "
        "INSERT INTO digest_sent (user_id, window, sent_at) "
        "SELECT id, 'weekly:2026-W27', '2026-07-06T06:00:00+00:00' FROM users; "
        "PRAGMA user_version = 1;"
    )
    db.close()
    members = Members(tmp_path)
    try:
        who = members.existing("lee@lab.example")
        subs = Subscriptions(members)
        assert subs.send_state(who.id, "weekly:2026-W27") == "sent"
        assert subs.add_search(who.id, "x").query == "x"
        assert members.query("PRAGMA user_version") == [(SCHEMA_VERSION,)]
    finally:
        members.close()


def test_one_click_unsubscribe_and_a_reused_id(site: TestClient, members_root: Path) -> None:
    """RFC 8058: the mail program posts to the List-Unsubscribe URL itself. A link made for
    a removed account does not reach the next account given the same id (as a file from
    before version 4 does)."""
    from papersift.engine.members import load_secret
    from papersift.indexer.digest_mail import unsubscribe_token

    version_3_file(members_root)
    add_member(members_root, "lee@lab.example")
    members = Members(members_root)
    try:
        lee = members.existing("lee@lab.example")
        members.update(lee.id, digest="weekly")
        token = unsubscribe_token(load_secret(members_root), lee)
        answer = site.post(f"/digest/unsubscribe?t={token}",
                           data={"List-Unsubscribe": "One-Click"})  # fmt: skip
        assert answer.status_code == 200 and members.existing("lee@lab.example").digest == "off"
        members.remove("lee@lab.example")
        again = members.add("kim@lab.example", PASSWORD)
        members.update(again.id, digest="daily")
        assert again.id == lee.id  # SQLite gave the id out again
        assert site.post(f"/digest/unsubscribe?t={token}").status_code == 404
        assert members.existing("kim@lab.example").digest == "daily"
    finally:
        members.close()
