"""The page's hits: ranked docids turned into papers from the store with HTML-escaped
title and abstract snippets, the query's terms highlighted as Tantivy does; and the answer
to a query that names one paper.

Tantivy tokenises and stems a whole abstract to find the terms to highlight, ~40 µs each.
In hybrid mode much of a page is often semantic matches that hold none of the query's
terms, so ``engine.why.text_terms`` first analyses only the tokens that start as a query
term does. A text with one of them gets Tantivy's snippet, made by ``engine.highlight``
from those tokens alone when it is ASCII (a few µs). An ASCII text is tokenised and
lowercased alike by both; any other goes to Tantivy."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Container, Mapping, Sequence

import tantivy

from papersift.core.accents import accented
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.highlight import FieldTerms, query_fields, snippet_html
from papersift.engine.results import Hit
from papersift.engine.snippet_math import excerpt, typesettable
from papersift.engine.why import (
    Evidence,
    Found,
    analysed,
    explain,
    stem_roots,
    text_tokens,
    word_terms,
)

_TAG = re.compile(r"</?b>")  # the only markup of a snippet: its text is escaped
ABSTRACT_SNIPPET = 300  # characters of abstract shown when there is no query to highlight
# A query with more terms than this is highlighted by Tantivy alone: each one's root is
# looked for on its own, and a pasted text has hundreds.
MAX_TERMS = 32


def make_hits(
    data: DataDir,
    ranked: Sequence[tuple[int, float]],
    q: tantivy.Query | None,
    fixed_ranks: dict[str, int],
    ranks_by: Mapping[str, Mapping[int, int]] | None = None,
    evidence: Evidence | None = None,
    q_words: str | None = None,
    by_words: Container[int] | None = None,
) -> list[Hit]:
    """One hit per ranked docid still in the store, with its rank in each list of
    ``ranks_by`` (retriever name -> docid -> 1-based rank) that holds it, and why it is
    there when the search gave its ``evidence`` (``engine.why``). ``q_words``: every word
    ``q`` was built from (in any field, excluded ones too: Tantivy highlights those), which
    lets a text without any of them skip Tantivy's snippet. ``by_words``: the docids among
    ``ranked`` that are keyword matches, when the search knows (``Why.keyword_match``)."""
    papers = data.store.get([d for d, _ in ranked])
    highlight = None
    if q is not None:
        terms = analysed(q_words) if q_words is not None else frozenset()
        # One searcher for the generators and the weights engine.highlight reads with them.
        searcher = data.lexical.searcher()
        gens = data.lexical.snippet_generators(q, searcher)
        if q_words is not None and 0 < len(terms) <= MAX_TERMS:
            fields = query_fields(*gens, searcher, q_words, terms)
            highlight = Highlight(*gens, terms, fields)
        else:
            highlight = Highlight(*gens)
    hits = []
    for docid, score in ranked:
        paper = papers.get(docid)
        if paper is None:  # deleted between the index read and now
            continue
        ranks = dict(fixed_ranks)
        for name, rank_of in (ranks_by or {}).items():
            if docid in rank_of:
                ranks[name] = rank_of[docid]
        found = highlight.found(paper) if highlight is not None else None
        title_html, abstract_html = snippets(paper, highlight, found)
        score = score if math.isfinite(score) else 0.0
        match = None if by_words is None else docid in by_words
        why = explain(evidence, paper, ranks, found, match) if evidence is not None else None
        hits.append(Hit(paper, float(score), title_html, abstract_html, ranks, why))
    return hits


class Highlight:
    """How one query's terms are highlighted: Tantivy's snippet generator for each field,
    ``terms``, every term of the query (None: not known), and ``fields``, each field's
    terms as its generator weighs them (``engine.highlight``; None: Tantivy for all)."""

    def __init__(
        self, title: tantivy.SnippetGenerator, abstract: tantivy.SnippetGenerator,
        terms: frozenset[str] | None = None, fields: dict[str, FieldTerms] | None = None,
    ) -> None:  # fmt: skip
        self.title = title
        self.abstract = abstract
        self.terms = terms
        self.fields = fields
        self.roots = stem_roots(terms) if terms is not None else ()
        self._tokens: dict[str, tuple[str, dict[int, str]]] = {}  # field -> last text read
        self._texts: tuple[Paper | None, str, str] = (None, "", "")  # the last paper's

    def texts(self, paper: Paper) -> tuple[str, str]:
        """The paper's title and abstract as the index read them (a word with a TeX accent
        is one word: Schr\\"odinger), worked out once for both ``found`` and ``snippets``."""
        if self._texts[0] is not paper:
            self._texts = (paper, accented(paper.title), accented(paper.abstract))
        return self._texts[1], self._texts[2]

    def found(self, paper: Paper) -> Found | None:
        """The terms of the paper's title and abstract that may be query terms (a superset
        of those ``engine.why`` looks for, so it reads them too); None if not known."""
        if self.terms is None:
            return None
        title, abstract = self.texts(paper)
        return {"ti": self._read("ti", title), "abs": self._read("abs", abstract)}

    def _read(self, field: str, text: str) -> frozenset[str]:
        """``engine.why.text_terms`` of ``text``, its tokens kept for its snippet."""
        tokens = text_tokens(text.lower(), self.roots)
        self._tokens[field] = (text, tokens)
        return frozenset(t for word in set(tokens.values()) for t in word_terms(word))

    def html(self, field: str, text: str, found: Found | None) -> str:
        """Tantivy's snippet of ``text`` in ``field`` ("ti" or "abs") as HTML, its marks
        and edges out of TeX math (``engine.snippet_math``); "" when it holds no query
        term. A title's runs to its end (``whole_title``)."""
        made = self._tantivys(field, text, found)
        return typesettable(made, text) if made else made

    def _tantivys(self, field: str, text: str, found: Found | None) -> str:
        """Tantivy's snippet, made in Python (``engine.highlight``) when it can be."""
        terms = self.terms
        if terms is not None and found is not None and text.isascii():
            if not terms & found[field]:
                return ""
            if self.fields is not None:
                read = self._tokens.get(field)
                tokens = read[1] if read is not None and read[0] is text else None
                return snippet_html(text, self.fields[field], tokens, whole=field == "ti")
        generator = self.title if field == "ti" else self.abstract
        made = str(generator.snippet_from_doc(tantivy.Document(**{field: text})).to_html())
        return whole_title(made, text) if field == "ti" and made else made


def snippets(
    paper: Paper, highlight: Highlight | None, found: Found | None = None
) -> tuple[str, str]:
    """HTML-escaped title and abstract snippet, query terms in <b> when there is a query;
    without one (or none in the abstract), its start, a formula not cut."""
    plain = excerpt(paper.abstract, ABSTRACT_SNIPPET)
    if highlight is None:
        return html.escape(paper.title), html.escape(plain)
    title_text, abstract_text = highlight.texts(paper)
    title = highlight.html("ti", title_text, found)
    abstract = highlight.html("abs", abstract_text, found)
    return title or html.escape(title_text), abstract or html.escape(plain)


def whole_title(snippet: str, title: str) -> str:
    """A title's snippet with what follows its last token (a closing bracket, a question
    mark): Tantivy's fragment ends where its last token does, and a hit shows the whole
    title."""
    shown = html.unescape(_TAG.sub("", snippet))
    return snippet + html.escape(title[len(shown) :]) if title.startswith(shown) else snippet
