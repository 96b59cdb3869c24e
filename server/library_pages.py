"""A member's library: tags of saved papers, saving from any result or paper page, notes,
removal, and BibTeX/RIS import. Every page is the signed-in member's own and private."""

from __future__ import annotations

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.engine.library import LibraryError, Saved
from papersift.engine.members import Member
from papersift.engine.recommend import recommend
from papersift.engine.results import Hit
from papersift.engine.search import SearchEngine
from papersift.feeds.export import EXPORT_FORMATS, render_export
from papersift.indexer.bibimport import (
    MAX_BYTES,
    BibImportError,
    ImportReport,
    match_entries,
    parse_library,
)
from papersift.server.account_pages import _page, _text
from papersift.server.context import ctx
from papersift.server.export_routes import LABELS
from papersift.server.params import ParamError, parse_search
from papersift.server.sessions import accounts, checked_form, signed_in
from papersift.server.urls import parse_paper_path

TAG_SORTS = {"saved": "Recently saved", "newest": "Newest", "oldest": "Oldest"}


def _tag_id(request: Request, who: Member) -> int:
    """The tag of the URL, if it is this member's; 404 for any other (another member's
    tag is not told apart from one that does not exist)."""
    raw: str = request.path_params["tag"]
    tag = (
        accounts(request).library.tag(who.id, int(raw)) if raw.isdigit() and len(raw) < 12 else None
    )
    if tag is None:
        raise HTTPException(404, "You have no such tag; see /library for yours.")
    return tag.id


def saved_hits(engine: SearchEngine, saved: list[Saved], sort: str = "saved") -> list[Hit]:
    """The saved papers still in the index as result cards, in ``sort`` order."""
    hits = engine.hits_of([s.arxiv_id for s in saved])
    if sort in ("newest", "oldest"):
        hits.sort(key=lambda h: (h.paper.published, h.paper.arxiv_id), reverse=sort == "newest")
    return hits


@signed_in
async def library(request: Request, who: Member) -> Response:
    acc = accounts(request)
    tags = await ctx(request).call(acc.library.tags, who.id)
    return _page(request, "library.html", "Your library", member=who, tags=tags,
                 max_mib=MAX_BYTES // 2**20)  # fmt: skip


@signed_in
async def create_tag(request: Request, who: Member) -> Response:
    form = await checked_form(request)
    try:
        tag = await ctx(request).call(
            accounts(request).library.ensure_tag, who.id, _text(form, "name", 200)
        )
    except LibraryError as exc:
        raise HTTPException(400, str(exc).capitalize() + ".") from None
    return RedirectResponse(f"/library/{tag.id}", status_code=303)


@signed_in
async def tag_page(request: Request, who: Member) -> Response:
    tag_id = _tag_id(request, who)
    c, lib = ctx(request), accounts(request).library
    sort = request.query_params.get("sort", "saved")
    sort = sort if sort in TAG_SORTS else "saved"
    tag = lib.tag(who.id, tag_id)
    saved = await c.call(lib.saved, who.id, tag_id)
    hits = await c.call(saved_hits, ctx(request).engine, saved, sort)
    notes = {s.arxiv_id: s.note for s in saved}
    exports = [(LABELS[f], f"/library/{tag_id}/export?format={f}") for f in EXPORT_FORMATS]
    return _page(request, "tag.html", f"{tag.name if tag else ''} - your library", tag=tag,
                 hits=hits, notes=notes, sort=sort, sorts=TAG_SORTS, exports=exports,
                 missing=len(saved) - len(hits))  # fmt: skip


@signed_in
async def export_tag(request: Request, who: Member) -> Response:
    """The tag's papers (in the order saved) as BibTeX, RIS or CSL-JSON."""
    tag_id = _tag_id(request, who)
    fmt = request.query_params.get("format", "")
    if fmt not in EXPORT_FORMATS:
        raise ParamError("format", f"Give one 'format': {', '.join(EXPORT_FORMATS)}.")
    c, lib = ctx(request), accounts(request).library
    saved = await c.call(lib.saved, who.id, tag_id)
    hits = await c.call(c.engine.hits_of, [s.arxiv_id for s in saved])
    text, media, ext = render_export([h.paper for h in hits], fmt)
    disposition = f'attachment; filename="papersift-tag-{tag_id}.{ext}"'
    return Response(
        text,
        media_type=media,
        headers={"Content-Disposition": disposition, "Cache-Control": "private, no-store"},
    )


@signed_in
async def delete_tag(request: Request, who: Member) -> Response:
    tag_id = _tag_id(request, who)
    await checked_form(request)
    await ctx(request).call(accounts(request).library.delete_tag, who.id, tag_id)
    return RedirectResponse("/library", status_code=303)


@signed_in
async def remove(request: Request, who: Member) -> Response:
    tag_id = _tag_id(request, who)
    form = await checked_form(request)
    await ctx(request).call(
        accounts(request).library.remove, who.id, tag_id, _text(form, "id", 100)
    )
    return RedirectResponse(f"/library/{tag_id}", status_code=303)


def _paper_id(text: str) -> str:
    parsed = parse_paper_path(text.strip())
    if parsed is None or parsed.ext:
        raise HTTPException(400, f"“{text[:100]}” is not an arXiv id such as 2401.10241.")
    return parsed.arxiv_id


@signed_in
async def save(request: Request, who: Member) -> Response:
    """GET: the form to pick tags and a note for one paper. POST: save it."""
    c, lib = ctx(request), accounts(request).library
    if request.method == "GET":
        arxiv_id = _paper_id(request.query_params.get("id", ""))
        paper = await c.call(c.engine.paper, arxiv_id)
        if paper is None:
            raise HTTPException(404, f"There is no paper {arxiv_id} in this index.")
        tags = await c.call(lib.tags, who.id)
        current = await c.call(lib.tags_of, who.id, paper.arxiv_id)
        return _page(request, "save.html", "Save a paper", paper=paper, tags=tags,
                     chosen={t.id for t, _ in current},
                     note=next((n for _, n in current if n), ""))  # fmt: skip
    form = await checked_form(request)
    arxiv_id = _paper_id(_text(form, "id", 100))
    if await c.call(c.engine.paper, arxiv_id) is None:
        raise HTTPException(404, f"There is no paper {arxiv_id} in this index.")
    chosen = [v for v in form.getlist("tag") if isinstance(v, str) and v.isdigit() and len(v) < 12]
    new_name = _text(form, "new_tag", 200).strip()
    tag_ids = [int(v) for v in chosen if lib.tag(who.id, int(v)) is not None]
    if len(tag_ids) < len(chosen):
        raise HTTPException(404, "You have no such tag; see /library for yours.")
    try:  # all or nothing: a refused note leaves no new tag behind
        last = await c.call(
            lib.save_to, who.id, tag_ids, new_name, [arxiv_id], _text(form, "note", 4000)
        )
    except LibraryError as exc:
        raise HTTPException(400, str(exc).capitalize() + ".") from None
    except LookupError:  # a tag deleted meanwhile
        raise HTTPException(404, "You have no such tag; see /library for yours.") from None
    return RedirectResponse(f"/library/{last}", status_code=303)


@signed_in
async def import_file(request: Request, who: Member) -> Response:
    """A BibTeX or RIS upload into a tag, with the report of what matched."""
    form = await checked_form(request)
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise HTTPException(400, "Choose a BibTeX (.bib) or RIS (.ris) file to import.")
    data = await upload.read(MAX_BYTES + 1)
    c, lib = ctx(request), accounts(request).library
    try:
        fmt, entries, skipped = parse_library(data, upload.filename or "")
        tag = await c.call(lib.ensure_tag, who.id, _text(form, "tag", 200) or "Imported")
        matches = await c.call(match_entries, ctx(request).engine, entries)
        found = [m.arxiv_id for m in matches if m.arxiv_id]
        added = await c.call(lib.save, who.id, tag.id, found)
    except (BibImportError, LibraryError) as exc:
        raise HTTPException(400, f"Cannot import {upload.filename or 'the file'}: {exc}.") from None
    report = ImportReport(fmt, matches, skipped)
    return _page(request, "import.html", "Import report", report=report, tag=tag, added=added,
                 filename=upload.filename or "")  # fmt: skip


@signed_in
async def recommended(request: Request, who: Member) -> Response:
    """The window's papers most like the tag's (``engine.recommend``); dates and filters
    as on the search page (``from``, ``to``, ``category``, ...)."""
    tag_id = _tag_id(request, who)
    c, lib = ctx(request), accounts(request).library
    req = parse_search(
        request.query_params, c.config.search, known_categories=await c.known_categories(),
        known_institution=c.engine.holds_institution,
    )  # fmt: skip
    saved = await c.call(lib.saved, who.id, tag_id)
    tag = lib.tag(who.id, tag_id)
    result = None
    if saved:
        ids = [s.arxiv_id for s in saved]
        result = await c.call(
            recommend, ctx(request).engine, ids, req.filters, req.page, req.page_size
        )
    first = (req.page - 1) * (result.page_size if result else 1) + 1
    title = f"Recommended for {tag.name if tag else ''}"
    return _page(request, "recommended.html", title, tag=tag, result=result, first=first)


routes = [
    Route("/library", library),
    Route("/library/tags", create_tag, methods=["POST"]),
    Route("/library/save", save, methods=["GET", "POST"]),
    Route("/library/import", import_file, methods=["POST"]),
    Route("/library/{tag}", tag_page),
    Route("/library/{tag}/recommended", recommended),
    Route("/library/{tag}/export", export_tag),
    Route("/library/{tag}/delete", delete_tag, methods=["POST"]),
    Route("/library/{tag}/remove", remove, methods=["POST"]),
]
