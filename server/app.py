"""Assemble the Starlette app: routes, static assets, middleware and error handling."""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import PathLike, StaticFiles
from starlette.types import Scope

from papersift.core.config import Config
from papersift.core.errors import QueryError
from papersift.engine.search import SearchEngine
from papersift.server import (
    account_pages,
    admin,
    api,
    confirm_pages,
    digest_pages,
    errors,
    export_routes,
    feed_routes,
    graph_api,
    institutions_api,
    library_pages,
    pages,
    private_feeds,
    recommend_api,
    similar_page,
)
from papersift.server.compress import CompressionMiddleware
from papersift.server.context import AppContext
from papersift.server.headers import SecurityHeadersMiddleware
from papersift.server.library_offer import LibraryOfferMiddleware
from papersift.server.page_cache import PageCache
from papersift.server.params import ParamError
from papersift.server.people_pages import install as install_people
from papersift.server.ratelimit import RateLimiter, RequestLimitMiddleware
from papersift.server.templating import STATIC_DIR, compile_templates, make_environment
from papersift.server.urlguard import UrlGuardMiddleware

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "public, max-age=3600"


def _large_bodies(max_text: int) -> dict[str, int]:
    """The routes that read a pasted text, each capped at its own limit for the longest
    text a search accepts (not the 64 KB of forms)."""
    form = similar_page.FORM_LIMIT_FACTOR * max_text + 4096
    return {"/api/v1/similar": graph_api.body_limit(max_text), "/similar": form}


class CachedStatic(StaticFiles):
    """Versioned URLs (``?v=<content hash>``, as the templates write them) are immutable."""

    def file_response(
        self, full_path: PathLike, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        versioned = b"v=" in scope.get("query_string", b"")
        response.headers["Cache-Control"] = IMMUTABLE if versioned else REVALIDATE
        return response


def create_app(engine: SearchEngine, config: Config) -> Starlette:
    """The web app over an open engine; the caller keeps ownership of the engine."""
    app = Starlette(
        routes=[
            *pages.routes,
            *similar_page.routes,
            *graph_api.routes,  # before api's /api/v1/papers/{rest:path}
            *export_routes.routes,
            *api.routes,
            *feed_routes.routes,
            *admin.routes,
            *account_pages.routes,  # members sign in (issue 19); their libraries:
            *confirm_pages.routes,
            *library_pages.routes,
            *digest_pages.routes,  # digest choices, private feeds, unsubscribe
            *private_feeds.routes,
            *recommend_api.routes,
            Mount("/static", app=CachedStatic(directory=STATIC_DIR), name="static"),
        ],
        middleware=[
            Middleware(SecurityHeadersMiddleware),
            Middleware(
                RequestLimitMiddleware,
                per_minute=config.server.rate_limit,
                large=_large_bodies(config.search.max_text_length),
            ),
            Middleware(CompressionMiddleware),
            Middleware(UrlGuardMiddleware),
            Middleware(LibraryOfferMiddleware),  # after the guard: refused URLs read nothing
        ],
        exception_handlers={
            HTTPException: errors.http_exception,
            ParamError: errors.param_error,
            QueryError: errors.query_error,
            ClientDisconnect: errors.client_gone,
            500: errors.server_error,
        },
    )
    app.state.ctx = AppContext(engine, config)
    app.state.config = config
    app.state.templates = make_environment()
    app.state.page_cache = PageCache()  # the search and paper pages, as sent (server.pages)
    # Wrong admin tokens per client address, throttled as sign-ins are (server.admin_auth).
    app.state.admin_guesses = RateLimiter(config.accounts.signin_per_minute)
    install_people(app)  # /researchers pages and API; author names link to them
    institutions_api.install(app)  # /api/v1/institutions; the institution filter chips
    compile_templates(app.state.templates)  # its globals set: the templates it keeps
    return app
