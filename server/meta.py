"""What a page says about itself to programs: plain-text descriptions, JSON-LD, BibTeX."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from papersift.core.paper import Paper
from papersift.core.tex import plain_text, shorten
from papersift.core.urls import arxiv_abs, arxiv_pdf
from papersift.feeds.export import bibtex_fields, bibtex_key

SITE_NAME = "papersift"
SITE_DESCRIPTION = (
    "Search research papers from arXiv by keyword and by meaning: hybrid full-text and "
    "semantic search over titles, abstracts and authors."
)


def dump_jsonld(data: dict[str, Any]) -> str:
    """JSON for a ``<script type=application/ld+json>``: ``<``, ``>``, ``&`` escaped."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def website_ld(root: str) -> dict[str, Any]:
    return {
        "@context": "https://schema.org",
        "@type": "WebSite",
        "name": SITE_NAME,
        "url": root + "/",
        "description": SITE_DESCRIPTION,
        "potentialAction": {
            "@type": "SearchAction",
            "target": {
                "@type": "EntryPoint",
                "urlTemplate": root + "/search?q={search_term_string}",
            },
            "query-input": "required name=search_term_string",
        },
    }


def breadcrumbs_ld(root: str, trail: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``trail`` is (name, path) from the home page down to the current page."""
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": name, "item": root + path}
            for i, (name, path) in enumerate(trail, start=1)
        ],
    }


def article_ld(paper: Paper, url: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ScholarlyArticle",
        "@id": url,
        "url": url,
        "name": plain_text(paper.title),
        "headline": shorten(plain_text(paper.title), 110),
        "abstract": plain_text(paper.abstract),
        "author": [{"@type": "Person", "name": a.name} for a in paper.authors],
        "datePublished": paper.published.isoformat(),
        "dateModified": paper.updated.isoformat(),
        "inLanguage": "en",
        "about": list(paper.categories),
        "identifier": [{"@type": "PropertyValue", "propertyID": "arXiv", "value": paper.arxiv_id}],
        "sameAs": [arxiv_abs(paper.arxiv_id)],
        "encoding": {
            "@type": "MediaObject",
            "encodingFormat": "application/pdf",
            "contentUrl": arxiv_pdf(paper.arxiv_id),
        },
        "isAccessibleForFree": True,
    }
    if paper.doi:
        data["identifier"].append(
            {"@type": "PropertyValue", "propertyID": "DOI", "value": paper.doi}
        )
        data["sameAs"].append(f"https://doi.org/{paper.doi}")
    if paper.journal_ref:
        data["isPartOf"] = {"@type": "Periodical", "name": paper.journal_ref}
    if paper.license:
        data["license"] = paper.license
    return data


def bibtex(paper: Paper) -> str:
    """An ``@misc`` entry in the form arXiv itself suggests (eprint, archivePrefix)."""
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in bibtex_fields(paper))
    return f"@misc{{{bibtex_key(paper)},\n{body}\n}}\n"
