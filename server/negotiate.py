"""Content negotiation: the q-values an ``Accept`` or ``Accept-Encoding`` header gives, and
the ``Vary`` header that tells caches a response was chosen by them."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders


def qualities(header: str) -> dict[str, float]:
    """``text/markdown, text/html;q=0.5`` -> ``{"text/markdown": 1.0, "text/html": 0.5}``.

    Names are lower-cased; a missing q is 1, a malformed one 0; a name listed twice keeps
    its highest q."""
    out: dict[str, float] = {}
    for part in header.split(","):
        name, *params = (p.strip() for p in part.split(";"))
        if not name:
            continue
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        key = name.lower()
        out[key] = max(q, out.get(key, q))
    return out


def add_vary(headers: MutableHeaders, *names: str) -> None:
    """Add ``names`` to ``Vary`` unless it lists them already (Starlette's
    ``add_vary_header`` appends blindly: a page's ``Accept, Accept-Encoding`` became
    ``Accept, Accept-Encoding, Accept-Encoding`` once compressed)."""
    listed = [v.strip() for v in ",".join(headers.getlist("vary")).split(",") if v.strip()]
    seen = {v.lower() for v in listed}
    new = [n for n in names if n.lower() not in seen and "*" not in seen]
    if new:
        headers["Vary"] = ", ".join([*listed, *new])
