"""The lenient query parser: what is an operator, what is text, and what earns a warning."""

from __future__ import annotations

import pytest

from papersift.engine.query import WEB_ADDRESS, Clause, parse_user_query


def clauses(query: str) -> list[tuple[str, str | None, str]]:
    return [(c.sign, c.field, c.text) for c in parse_user_query(query).clauses]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("-cancer", [("-", None, "cancer")]),
        ('+"gene therapy"', [("+", None, "gene therapy")]),
        ("-Ünicode", [("-", None, "Ünicode")]),
        # A sign before a digit is part of a number, not an operator (SciFact claims say
        # "+1 increase", "-2 degrees"): requiring or excluding a bare number was wrong.
        (
            "a -2 degree drop",
            [("", None, "a"), ("", None, "2"), ("", None, "degree"), ("", None, "drop")],
        ),
        ("+1 increase", [("", None, "1"), ("", None, "increase")]),
        ("a -5% drop", [("", None, "a"), ("", None, "5"), ("", None, "drop")]),
        ("CD4+ T cells", [("", None, "CD4"), ("", None, "T"), ("", None, "cells")]),
    ],
)
def test_signs_are_operators_only_before_words(
    query: str, expected: list[tuple[str, str | None, str]]
) -> None:
    assert clauses(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "Exposure to cold increases risk.",
        "Does aspirin (ASA) reduce risk, in adults?",
        "p53; mutations: a review.",
    ],
)
def test_ordinary_punctuation_is_dropped_silently(query: str) -> None:
    parsed = parse_user_query(query)
    assert parsed.warnings == ()
    assert all("." not in c.text and "," not in c.text for c in parsed.clauses)


@pytest.mark.parametrize(
    ("query", "field", "kept"),
    [("au:", "au:", []), ('ti:""', "ti:", []), ("cat: cs.CL", "cat:", ["cs.CL"]),
     ("parsing title:", "title:", ["parsing"])],
)  # fmt: skip
def test_a_field_without_a_value_is_dropped_with_a_warning(
    query: str, field: str, kept: list[str]
) -> None:
    """Not searched as the word "au" or "cat": said, and left out."""
    parsed = parse_user_query(query)
    assert [c.text for c in parsed.clauses] == kept
    assert len(parsed.warnings) == 1 and f"'{field}' has no value" in parsed.warnings[0]


@pytest.mark.parametrize(
    ("query", "char"), [("transform*", "*"), ("bert~2", "~"), ("title^3", "^")]
)
def test_other_engines_syntax_is_reported(query: str, char: str) -> None:
    warnings = parse_user_query(query).warnings
    assert len(warnings) == 1 and char in warnings[0]


@pytest.mark.parametrize(
    ("query", "expected", "mark"),
    [
        ("graph^5", '"graph"', "'^5'"),
        ("graph^2.5 neural", '"graph" "neural"', "'^2.5'"),
        ("-bert~2 ti:graph^3", '-"bert" ti:"graph"', "'~2', '^3'"),
        ('"neural network"~2 parsing', '"neural network" "parsing"', "'~2'"),
        ("cat:cs.AI^2", 'cat:"cs.AI"', "'^2'"),
    ],
)
def test_boosts_and_fuzzy_marks_are_dropped_whole(query: str, expected: str, mark: str) -> None:
    """Lucene's ``^N`` and ``~N`` go with their number: "graph^5" searches graph, not the
    phrase "graph 5" (which matched nothing)."""
    parsed = parse_user_query(query)
    assert " ".join(c.sign + c.tantivy_string() for c in parsed.clauses) == expected
    assert len(parsed.warnings) == 1 and mark in parsed.warnings[0], parsed.warnings


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Unsigned hyphenated words are their parts (Lucene's default; engine.hyphens
        # decides which of them a match needs).
        ("non-coding RNA", '"non" "coding" "RNA"'),
        ("ti:x-ray", 'ti:"x" ti:"ray"'),
        # A sign or quotes keep the word whole: a phrase to require or exclude.
        ("+x-ray -self-supervised", '+"x-ray" -"self-supervised"'),
        ('"x-ray binary"', '"x-ray binary"'),
    ],
)
def test_hyphenated_words(query: str, expected: str) -> None:
    clauses = parse_user_query(query).clauses
    assert " ".join(c.sign + c.tantivy_string() for c in clauses) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Mathematics is not a boost: after one letter or a digit, or inside a phrase.
        ("L^2 estimates", '"L 2" "estimates"'),
        ('"L^2 norm"', '"L 2 norm"'),
        ("O(n^2)", '"O n 2"'),
        ("N~100", '"N 100"'),
        ("10^5 samples", '"10 5" "samples"'),
        # An escaped quote is a quote; a TeX umlaut after a letter is an umlaut.
        ('ti:\\"deep learning\\"', 'ti:"deep learning"'),
        ('Schr\\"odinger equation', '"Schrödinger" "equation"'),
    ],
)
def test_marks_that_are_not_boosts(query: str, expected: str) -> None:
    parsed = parse_user_query(query)
    assert " ".join(c.sign + c.tantivy_string() for c in parsed.clauses) == expected
    assert not any("boosts" in w or "unclosed" in w for w in parsed.warnings), parsed.warnings


def signed(clauses: tuple[Clause, ...]) -> list[str]:
    return [c.sign + (f"{c.field}:" if c.field else "") + c.text for c in clauses]


@pytest.mark.parametrize(
    ("query", "kept", "ignored"),
    [
        # A clause to exclude or require that is only stop words analyses to nothing: it
        # is left out, as Lucene's parser leaves it out, and the operator with it.
        ("NOT the", [], ["-the"]),
        ("transformers NOT the", ["transformers"], ["-the"]),
        ("-the transformers", ["transformers"], ["-the"]),
        ("+the graph", ["graph"], ["+the"]),
        ("graph AND the", ["graph"], ["+the"]),
        ("ti:the graph", ["graph"], ["+ti:the"]),
        ('-"to be" graph', ["graph"], ["-to be"]),
        # "TO BE OR NOT TO BE" is its lowercase form, less the excluded "TO".
        ("TO BE OR NOT TO BE", ["TO", "BE", "BE"], ["-TO"]),
        # A free stop word stays (it may score in authors, and makes "the query has only
        # common words"); it is not made required by an AND.
        ("the AND graph", ["the", "+graph"], []),
        ("a NOT the", ["a"], ["-the"]),
        # Words that are not all stop words, and fields that keep stop words, are searched.
        ("graph NOT neural", ["graph", "-neural"], []),
        ("-neural graph", ["-neural", "graph"], []),
        ("NOT the-graph", ["-the-graph"], []),
        ("au:to -cat:the", ["au:to", "-cat:the"], []),
    ],
)
def test_clauses_of_only_stop_words_to_require_or_exclude_are_ignored(
    query: str, kept: list[str], ignored: list[str]
) -> None:
    parsed = parse_user_query(query)
    assert signed(parsed.clauses) == kept
    assert signed(parsed.ignored) == ignored
    assert parsed.warnings == ()  # engine.match words the note, knowing the whole query
    assert not parsed.empty  # "NOT the" asked for something: not a browse


def test_an_operator_goes_with_the_clause_ignored() -> None:
    """An OR next to an ignored clause joins nothing and earns no warning about +/-."""
    assert parse_user_query("graph OR -the").warnings == ()
    parsed = parse_user_query("neural ti:the OR graph")
    assert signed(parsed.clauses) == ["neural", "graph"]
    assert len(parsed.groups()) == 2  # not "neural OR graph"
    # As before: OR joins plain clauses, and next to a +/- clause of real words is ignored.
    assert len(parse_user_query("graph OR network").groups()) == 1
    assert parse_user_query("graph OR -neural").warnings == (
        "'OR' next to a +/- clause was ignored",
    )


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("https://www.nature.com/articles/s41586-021-03819-2", WEB_ADDRESS),
        ("http://example.org/a-paper", WEB_ADDRESS),
        ("foo:bar", "unknown field 'foo:' was searched as text"),
    ],
)
def test_a_pasted_web_address_is_not_an_unknown_field(query: str, note: str) -> None:
    """A web address read "unknown field 'https:' was searched as text" (review, session
    37): its words are searched, and the note says what goes straight to a paper."""
    parsed = parse_user_query(query)
    assert parsed.warnings == (note,)
    assert parsed.clauses and all(c.field is None for c in parsed.clauses)
