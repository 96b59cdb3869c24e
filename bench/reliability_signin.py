"""Sign-in under hostile traffic, the campaign of ``bench/reliability.py`` (issue 19): a
``papersift serve`` process with a few members takes account traffic from several loopback
clients at once: right and wrong passwords, unknown addresses, missing and foreign CSRF
tokens, forged cookies, malformed and oversized forms, hostile text (markup, NUL, invalid
UTF-8, 100,000 characters), sign-ups inside and outside the allowed domain, sign-outs.
Each kind of request has the statuses it may get; anything else, any 5xx, a markup echo or
a traceback in the server log is a failure. Then, on a server with the default limit, a
burst of wrong passwords must be answered 429 with a Retry-After. Afterwards the members
file holds exactly the members made, and every one still signs in.
"""

from __future__ import annotations

import random
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from papersift.engine.datadir import DataDir  # noqa: E402
from papersift.engine.members import Members  # noqa: E402
from papersift.indexer.build import import_files  # noqa: E402
from tests.corpus import make_config, sample_records, write_jsonl  # noqa: E402
from tests.load_kit import serve  # noqa: E402

PASSWORD = "correct horse battery"
DOMAIN = "lab.example"
MARKUP = '<script>alert("x")</script>'
SCHEDULE = {"embed": "", "maintenance": "", "digest": ""}
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _csrf(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    return found.group(1) if found else ""


def _form(client: httpx.Client, path: str = "/signin") -> str:
    return _csrf(client.get(path))


class Attempts:
    """The kinds of request, each returning (kind, status, allowed statuses, body)."""

    def __init__(self, url: str, members: list[str], rng: random.Random) -> None:
        self.url, self.members, self.rng = url, members, rng
        self.signed_up: list[str] = []
        self.lock = threading.Lock()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, follow_redirects=False)

    def right(self, c: httpx.Client) -> tuple[int, set[int], str]:
        email = self.rng.choice(self.members)
        r = c.post("/signin", data={"csrf": _form(c), "email": email.upper(),
                                    "password": PASSWORD, "next": "/library"})  # fmt: skip
        if r.status_code == 303 and c.get("/library").status_code != 200:
            return 599, {303}, "signed in but /library is not the member's"
        return r.status_code, {303}, r.text

    def wrong(self, c: httpx.Client) -> tuple[int, set[int], str]:
        email = self.rng.choice([*self.members, "nobody@lab.example", ""])
        r = c.post("/signin", data={"csrf": _form(c), "email": email, "password": "wrong"})
        return r.status_code, {401}, r.text

    def no_csrf(self, c: httpx.Client) -> tuple[int, set[int], str]:
        r = c.post("/signin", data={"email": self.members[0], "password": PASSWORD})
        return r.status_code, {403}, r.text

    def foreign_csrf(self, c: httpx.Client) -> tuple[int, set[int], str]:
        with self.client() as other:
            token = _form(other)
        r = c.post("/signin", data={"csrf": token, "email": self.members[0],
                                    "password": PASSWORD})  # fmt: skip
        return r.status_code, {403}, r.text

    def forged_cookie(self, c: httpx.Client) -> tuple[int, set[int], str]:
        c.get("/signin")
        for name, value in list(c.cookies.items()):
            c.cookies.set(name, value[:-3] + "AAA")
        r = c.get("/library")
        return r.status_code, {303}, r.text  # a forged session is no session

    def hostile(self, c: httpx.Client) -> tuple[int, set[int], str]:
        text = self.rng.choice([MARKUP, "a\x00b@lab.example", "é" * 100_000, "'; DROP TABLE--",
                                "\u202e" + self.members[0], " " * 50])  # fmt: skip
        data = {"csrf": _form(c), "email": text, "password": text, "next": "//evil.example"}
        r = c.post("/signin", data=data)
        return r.status_code, {401, 413}, r.text

    def bad_bytes(self, c: httpx.Client) -> tuple[int, set[int], str]:
        body = f"csrf={_form(c)}&email=%ED%A0%80%FF&password=%C3%28".encode()
        headers = {"content-type": "application/x-www-form-urlencoded"}
        r = c.post("/signin", content=body, headers=headers)
        return r.status_code, {400, 401}, r.text

    def malformed(self, c: httpx.Client) -> tuple[int, set[int], str]:
        _form(c)
        headers = {"content-type": "multipart/form-data; boundary=x"}
        r = c.post("/signin", content=b"--x\r\nnot a part", headers=headers)
        return r.status_code, {400, 403}, r.text

    def signup(self, c: httpx.Client) -> tuple[int, set[int], str]:
        n = self.rng.randrange(10**9)
        inside = self.rng.random() < 0.5
        email = f"new{n}@{DOMAIN if inside else 'elsewhere.example'}"
        password = self.rng.choice([PASSWORD, "short"])
        r = c.post("/signup", data={"csrf": _form(c, "/signup"), "email": email,
                                    "password": password, "name": MARKUP})  # fmt: skip
        if r.status_code == 303:
            with self.lock:
                self.signed_up.append(email)
        return r.status_code, {303, 400} if inside else {400}, r.text

    def signout(self, c: httpx.Client) -> tuple[int, set[int], str]:
        r = c.post("/signout", data={"csrf": _form(c)})
        return r.status_code, {303}, r.text

    def kinds(self) -> dict[str, Callable[[httpx.Client], tuple[int, set[int], str]]]:
        return {k: getattr(self, k) for k in ("right", "wrong", "no_csrf", "foreign_csrf",
                                              "forged_cookie", "hostile", "bad_bytes",
                                              "malformed", "signup", "signout")}  # fmt: skip


def _hammer(attempts: Attempts, count: int, clients: int) -> tuple[Counter[str], list[str]]:
    kinds = attempts.kinds()
    done: Counter[str] = Counter()
    failures: list[str] = []
    lock = threading.Lock()
    names = [attempts.rng.choice(list(kinds)) for _ in range(count)]

    def worker(mine: list[str]) -> None:
        for name in mine:
            with attempts.client() as c:
                try:
                    status, allowed, body = kinds[name](c)
                except httpx.HTTPError as exc:
                    status, allowed, body = 598, set(), f"{type(exc).__name__}: {exc}"
            bad = status not in allowed or MARKUP in body
            with lock:
                done[f"{name} {status}"] += 1
                if bad and len(failures) < 20:
                    why = "markup echoed" if MARKUP in body else f"status {status}"
                    failures.append(f"{name}: {why} (allowed {sorted(allowed)})")

    threads = [threading.Thread(target=worker, args=(names[i::clients],)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done, failures


def _config(root: Path, per_minute: int) -> Path:
    accounts = {"signin_per_minute": per_minute, "signup_domains": DOMAIN}
    make_config(root, accounts=accounts, schedule=SCHEDULE)
    return root / "config.toml"


def signin_campaign(
    root: Path, attempts: int, rng: random.Random, clients: int = 6
) -> dict[str, Any]:
    """``attempts`` requests of every kind at once, then a throttled burst; the figures."""
    root.mkdir(parents=True, exist_ok=True)
    config = make_config(root)
    data = DataDir(config)
    try:
        import_files(data, [write_jsonl(root / "papers.jsonl", sample_records(every=200))])
    finally:
        data.close()
    emails = [f"member{i}@{DOMAIN}" for i in range(5)]
    members = Members(config.data_dir)
    try:
        for email in emails:
            members.add(email, PASSWORD, f"Member {email[:7]}")
    finally:
        members.close()
    failures: list[str] = []
    log_path = root / "serve.log"
    with serve(_config(root, 100_000), log_path) as url:
        hits = Attempts(url, emails, rng)
        done, failures = _hammer(hits, attempts, clients)
    throttled = Counter[int]()
    with (
        serve(_config(root, 10), root / "serve-limited.log") as url,
        httpx.Client(base_url=url, timeout=60) as c,
    ):
        for _ in range(30):
            r = c.post("/signin", data={"csrf": _form(c), "email": emails[0], "password": "x"})
            throttled[r.status_code] += 1
            if r.status_code == 429 and not r.headers.get("retry-after"):
                failures.append("429 without Retry-After")
    if not throttled[429] or throttled[401] > 10:
        failures.append(f"the burst was not throttled: {dict(throttled)}")
    members = Members(config.data_dir)
    try:
        expected = {*emails, *hits.signed_up}
        stored = {m.email for m in members.all()}
        if stored != expected:
            failures.append(f"members file: {len(stored)} members, {len(expected)} expected")
        bad = [e for e in expected if members.authenticate(e, PASSWORD) is None]
        failures += [f"{e} no longer signs in" for e in bad[:5]]
    finally:
        members.close()
    for path in (log_path, root / "serve-limited.log"):
        if "Traceback" in path.read_text(errors="replace"):
            failures.append(f"a traceback in {path.name}")
    return {
        "ok": not failures,
        "requests": sum(done.values()),
        "by_kind": dict(sorted(done.items())),
        "server_errors": sum(n for k, n in done.items() if k.split()[-1].startswith("5")),
        "signed_up": len(hits.signed_up),
        "throttled": dict(throttled),
        "failures": failures,
    }
