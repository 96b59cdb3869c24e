"""Jinja2 (autoescape on) and the HTML response every page goes through: ETag, caching."""

from __future__ import annotations

import hashlib
import re
from datetime import date
from html import unescape
from pathlib import Path
from typing import Any

import msgspec
from jinja2 import BytecodeCache, Environment, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from papersift.core import tex, urls
from papersift.core.taxonomy import category_name
from papersift.engine.direct import doi_in
from papersift.engine.results import Hit
from papersift.server import meta, people_views
from papersift.server.admin_auth import admin_view, for_visitor
from papersift.server.guide import llms_txt
from papersift.server.library_offer import offers_library
from papersift.server.markdown import MARKDOWN, wants_markdown
from papersift.server.negotiate import add_vary
from papersift.server.urls import site_root

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
TEMPLATE_DIR = HERE / "templates"
PAGE_CACHE = "public, max-age=60"
PRIVATE = "private, no-store"  # a page for one reader (the admin's view of a page)
API_CACHE = "public, max-age=60"
_UNSAFE_TAG = re.compile(r"<(?!/?b>)")
_MARK = re.compile(r"(</?b>)")
# A mark around all of a braced group's text (``\\textsf{<b>FOLIO</b>}``): moved outside the
# group with its command, so each stretch between marks is whole TeX (not an accent's group,
# ``\\'{<b>e</b>}``: a mark inside a word cannot be kept anyway).
_MARKED_GROUP = re.compile(r"(\\[A-Za-z]+\s*)?(?<!\\[^A-Za-z])\{<b>([^{}<]*)</b>\}")


def snippet(html: str) -> Markup:
    """Engine snippets are escaped text with ``<b>`` marks; keep only those marks, as text
    can never open another tag (defence in depth should an escape ever be missed)."""
    return Markup(_UNSAFE_TAG.sub("&lt;", html))


# An escaped dollar outside math (``Raspberry Pi (\\$35)``): a "$" in an element of its own.
# KaTeX's auto-render reads each run of text between elements apart and takes any "$" in
# one for a delimiter, escaped or not: in the text, it paired one with the next "$" and
# typeset the words between as one formula ("(35)andCubieboard($59),canbe...").
DOLLAR = Markup('<span class="dollar">$</span>')


def tex_markup(text: str) -> Markup:
    """A title or abstract for HTML: TeX outside math decoded, math left to KaTeX
    (``core.tex.tex_runs``), escaped, with ``DOLLAR`` for each escaped dollar outside math."""
    return DOLLAR.join(tex.tex_runs(text))  # each run escaped


def tex_html(html: str, whole: str | None = None) -> Markup:
    """An engine snippet (escaped text, ``<b>`` marks) with TeX outside math decoded in each
    stretch between the marks (as :func:`tex_markup`). ``whole`` is the raw text the snippet
    shows in full (a title): when the decoded stretches do not add up to it decoded (a mark
    fell inside a TeX command), the decoded text is shown without marks instead."""
    if "\\" not in html and "{" not in html:
        return snippet(html)
    pieces = _MARK.split(_MARKED_GROUP.sub(r"<b>\1{\2}</b>", html))
    # Each stretch is unescaped and escaped again: no tag of the engine's is kept but <b>.
    out = [p if p in ("<b>", "</b>") else tex_markup(unescape(p)) for p in pieces]
    if whole is not None:
        decoded = tex_markup(whole)
        if "".join(p for p in out if p not in ("<b>", "</b>")) != decoded:
            return decoded
    return Markup("".join(out))


def hit_title(hit: Hit) -> Markup:
    """A hit's title for HTML: highlighted, TeX outside math decoded."""
    return tex_html(hit.title_html, hit.paper.title)


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:10]


class StaticVersions:
    """``/static/style.css?v=<hash>``: content-addressed URLs, so assets can be cached forever."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self._cache:
            path = (self.root / name).resolve()
            if not path.is_relative_to(self.root.resolve()) or not path.is_file():
                raise FileNotFoundError(name)
            self._cache[name] = f"/static/{name}?v={_file_hash(path)}"
        return self._cache[name]


def _date(value: date) -> str:
    return f"{value.day} {value:%b %Y}"


class _CompiledTemplates(BytecodeCache):
    """Each template's compiled code, kept for the process: an app made after the first
    (tests make dozens) loads them all in ~7 ms instead of compiling them in ~250 ms. Jinja
    checks the source's checksum, so a template changed on disk is compiled again."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


_COMPILED = _CompiledTemplates()


def make_environment(template_dir: Path = TEMPLATE_DIR) -> Environment:
    """The server's Jinja environment over ``template_dir``, which reads each template once
    (``compile_templates`` reads them all at start-up): a running server renders with the
    templates it started with. With Jinja's auto-reload, an in-place update of the code
    made the running server render new templates against its old modules (a 500: a value
    the new search.html shows was undefined), and every render cost a stat() of its
    template and those it extends."""
    env = Environment(
        loader=FileSystemLoader(template_dir),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
        cache_size=-1,  # never evicted (and then read from disk again)
        bytecode_cache=_COMPILED,
    )
    env.globals.update(
        static=StaticVersions(STATIC_DIR),
        site_name=meta.SITE_NAME,
        paper_path=urls.paper_path,
        doi_in=doi_in,  # a search that named a paper by its DOI says so
        researcher_path=urls.name_search_path,
        # Replaced with store-backed versions by server.people_pages.install.
        author_links=people_views.author_links(None),
        researcher_filters=people_views.researcher_filters(None),
        offers_library=offers_library,  # "Save" and "Library" only where one can sign in
        admin_view=admin_view,  # the commands that fill an empty part: for the admin only
        category_path=urls.category_path,
        category_name=category_name,
        arxiv_abs=urls.arxiv_abs,
        arxiv_pdf=urls.arxiv_pdf,
    )
    env.filters.update(
        snippet=snippet,
        date=_date,
        number=lambda n: f"{n:,}",
        jsonld=lambda data: Markup(meta.dump_jsonld(data)),
        plain=tex.plain_text,
        tex=tex_markup,
        tex_html=tex_html,
        hit_title=hit_title,
        note=_note,
    )
    return env


def _note(text: str, request: Request) -> str:
    """An engine note as this reader sees it: a visitor's without the admin's command."""
    return text if admin_view(request) else for_visitor(text)


def compile_templates(env: Environment) -> None:
    """Compile every template of ``env`` now, once its globals are all set (Jinja advises
    against changing them after a template is loaded); with auto-reload off and nothing
    evicted, none is read from disk again."""
    for name in env.list_templates():
        env.get_template(name)


def etag_for(body: bytes) -> str:
    return 'W/"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def not_modified(request: Request, etag: str) -> bool:
    header = request.headers.get("if-none-match", "")
    tags = {t.strip() for t in header.split(",")}
    return etag in tags or "*" in tags


def cached_response(
    request: Request,
    body: str | bytes,
    media_type: str,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    cache: str = PAGE_CACHE,
) -> Response:
    """A response with a weak ETag; ``If-None-Match`` with it gets a bodiless 304."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    all_headers = dict(headers or {})
    if status_code == 200:
        etag = etag_for(data)
        all_headers["ETag"] = etag
        all_headers["Cache-Control"] = cache
        if not_modified(request, etag):
            return Response(status_code=304, headers=all_headers)
    else:
        all_headers["Cache-Control"] = "no-store"
    return Response(data, status_code=status_code, media_type=media_type, headers=all_headers)


_JSON = msgspec.json.Encoder()


def json_response(
    request: Request, data: Any, cache: str = API_CACHE, *, etag: bool = True
) -> Response:
    """``data`` (a response Struct of ``server.schemas*``, or builtins) as compact UTF-8 JSON
    with an ETag (``etag=False``: without, for a body that is never the same twice).
    msgspec: the stdlib encoder took a third of the event loop's time under load on a
    24-hit search page; see bench/serialize_bench.py for msgspec against orjson.
    Non-finite floats are the caller's to map to null; msgspec would write them as null too."""
    body = _JSON.encode(data)
    if not etag:
        return Response(body, 200, {"Cache-Control": cache}, "application/json")
    return cached_response(request, body, "application/json", cache=cache)


NO_STORE = {"Cache-Control": "no-store"}


def fresh_json(data: Any, status_code: int = 200) -> Response:
    """``data`` as JSON that no cache keeps (errors, health, admin): no ETag, ``no-store``."""
    return Response(_JSON.encode(data), status_code, dict(NO_STORE), "application/json")


# What a page's answer depends on besides its URL: HTML or markdown (``Accept``), compressed
# or not (``Accept-Encoding``). Every form of a page says so, or a shared cache that kept
# one form would hand it to readers that asked for the other.
NEGOTIATED = "Accept, Accept-Encoding"


def markdown_response(
    request: Request, text: str, headers: dict[str, str] | None = None
) -> Response:
    """The markdown form of a page (for ``Accept: text/markdown``): its URL answers HTML
    too, so it varies as the HTML does (``headers``' own ``Vary`` replaces it)."""
    return cached_response(request, text, MARKDOWN, headers={"Vary": NEGOTIATED, **(headers or {})})


def render(
    request: Request,
    template: str,
    context: dict[str, Any],
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """Render a page; ``context`` must carry what base.html needs (see ``page_meta``).

    A GET that prefers markdown gets the site guide instead (llms.txt): the developers page
    and the guide promise markdown from every page, and a page with a markdown form of its
    own (a paper, a search, a list) answers before it renders."""
    if status_code == 200 and request.method in ("GET", "HEAD") and wants_markdown(request):
        c = request.app.state.ctx
        guide = llms_txt(site_root(request), c.last_stats(), c.last_examples())
        return markdown_response(request, guide, headers)
    env: Environment = request.app.state.templates
    html = env.get_template(template).render(request=request, **context)
    all_headers = {"Vary": NEGOTIATED, **(headers or {})}
    response = cached_response(request, html, "text/html; charset=utf-8", status_code, all_headers)
    if request.app.state.config.server.admin_token:
        # The admin's view differs: a browser that kept a visitor's copy asks again once it
        # sends the token, and the admin's copy is kept by no cache.
        add_vary(response.headers, "Authorization")
        if admin_view(request):
            response.headers["Cache-Control"] = PRIVATE
    return response


def page_meta(
    request: Request,
    *,
    title: str,
    description: str,
    path: str,
    trail: list[tuple[str, str]] | None = None,
    feeds: list[tuple[str, str]] | None = None,
    og_type: str = "website",
    extra_ld: list[dict[str, Any]] | None = None,
    robots: str = "index,follow",
) -> dict[str, Any]:
    """What base.html puts in <head>: title, description, canonical, OpenGraph, JSON-LD."""
    root = site_root(request)
    ld: list[dict[str, Any]] = [meta.website_ld(root)]
    if trail:
        ld.append(meta.breadcrumbs_ld(root, [("Home", "/"), *trail]))
    ld += extra_ld or []
    return {
        "title": title,
        "description": tex.shorten(description, 300),
        "canonical": root + path,
        "og_type": og_type,
        "jsonld": ld,
        "feeds": feeds or [],
        "trail": trail or [],
        "robots": robots,
    }


def html_response(content: str, status_code: int) -> HTMLResponse:
    return HTMLResponse(content, status_code=status_code, headers={"Cache-Control": "no-store"})
