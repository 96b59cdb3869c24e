"""The OpenSearch description document, so browsers can add the site as a search engine."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

CONTENT_TYPE = "application/opensearchdescription+xml; charset=utf-8"
NAMESPACE = "http://a9.com/-/spec/opensearch/1.1/"


def description(root: str, icon: str, name: str = "papersift") -> bytes:
    """The document for a site at ``root`` (no trailing slash); ``icon``: the URL of its SVG
    icon itself (not /favicon.ico, a redirect to it: the type given is the file's)."""
    html = quoteattr(f"{root}/search?q={{searchTerms}}")
    rss = quoteattr(f"{root}/rss/search.xml?q={{searchTerms}}")
    atom = quoteattr(f"{root}/atom/search.xml?q={{searchTerms}}")
    me = quoteattr(f"{root}/opensearch.xml")
    text = f"""<?xml version="1.0" encoding="UTF-8"?>
<OpenSearchDescription xmlns="{NAMESPACE}">
<ShortName>{escape(name)}</ShortName>
<Description>Search research papers by keyword and by meaning.</Description>
<InputEncoding>UTF-8</InputEncoding>
<Image type="image/svg+xml">{escape(icon)}</Image>
<Url type="text/html" method="get" template={html}/>
<Url type="application/rss+xml" template={rss}/>
<Url type="application/atom+xml" template={atom}/>
<Url type="application/opensearchdescription+xml" rel="self" template={me}/>
</OpenSearchDescription>
"""
    return text.encode()
