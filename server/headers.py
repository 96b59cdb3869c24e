"""Security headers on every response (CSP allowing only the site's own assets), CORS on the API
(preflights included)."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Only the site's own scripts, styles, fonts and images; nothing may frame the site.
# One exception, style attributes (CSP Level 3's ``style-src-attr``; not <style> elements,
# not scripts): KaTeX sizes the SVGs it draws some glyphs with by one ("\vec",
# "\oiint", a tall stacked delimiter: ``setAttribute("style", "width:0.471em")``), and a
# blocked one leaves the SVG 0 wide, so $\vec{v}$ showed as a bare "v". Everything else
# KaTeX sizes through the DOM's ``element.style``, which CSP does not govern. No page sets
# a style attribute from data: every value is escaped, so a visitor cannot add one.
CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
    "Cross-Origin-Opener-Policy": "same-origin",
}
# Machine-readable resources any web page may fetch (read-only, no credentials): the API,
# its documents, and the public feeds (a feed reader that runs in the browser fetches them
# from its own origin). Not a member's private feed: its address is its credential.
CORS_PREFIXES = ("/api/", "/openapi.json", "/llms.txt", "/rss/", "/atom/", "/opensearch.xml")
# What a page on another origin may ask of them: a JSON POST (``/api/v1/similar``,
# ``/recommend``) needs a preflight for its Content-Type. Not Authorization: the admin API
# stays out of reach of other sites' scripts.
CORS_METHODS = ("GET", "HEAD", "POST")
CORS_HEADERS = ("Content-Type",)


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Starlette's own answers the preflight (OPTIONS) requests of the CORS paths.
        self.cors = CORSMiddleware(
            app, allow_origins=["*"], allow_methods=CORS_METHODS, allow_headers=CORS_HEADERS,
            max_age=86_400,
        )  # fmt: skip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cors = str(scope.get("path", "")).startswith(CORS_PREFIXES)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if cors:
                    headers.setdefault("Access-Control-Allow-Origin", "*")
            await send(message)

        await (self.cors if cors else self.app)(scope, receive, send_with_headers)
