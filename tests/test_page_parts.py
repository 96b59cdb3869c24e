"""Pure parts of the pages: TeX decoding of titles and snippets, the SVG charts' layout."""

from __future__ import annotations

import itertools

from lxml import etree

from papersift.core.tex import plain_text, tex_text
from papersift.server.svg import FONT, Bar, Node, bar_chart, label_width, network
from papersift.server.templating import tex_html, tex_markup

SVG = "{http://www.w3.org/2000/svg}"


def test_tex_text_decodes_text_mode_and_keeps_math() -> None:
    # Real demo titles (1810.06998, 1006.1993, 2606.26530, cs/0506049).
    assert tex_text("h{\\alpha}: The Scientist as Chimpanzee or Bonobo") == (
        "hα: The Scientist as Chimpanzee or Bonobo"
    )
    assert tex_text("Rozw\\'oj bibliotek cyfrowych").startswith("Rozwój")
    assert tex_text("\\textsc{DiARC}: Distinguishing").startswith("DiARC:")
    assert tex_text("dictionnaires \\'{e}lectroniques pour la d\\'{e}sambigu\\\"{i}sation") == (
        "dictionnaires électroniques pour la désambiguïsation"
    )
    # Math is KaTeX's: untouched, with the spaces around it.
    assert tex_text("Zero $\\alpha$-Pipeline and \\'etude") == "Zero $\\alpha$-Pipeline and étude"
    assert tex_text("p < $10^{-5}$ for {\\'e}") == "p < $10^{-5}$ for é"
    # A bare % or & is text in a title, not a TeX comment or table cell.
    assert tex_text("50% of {A} & B") == "50% of A & B"
    assert tex_text("no TeX at all") == "no TeX at all"
    assert plain_text("Rozw\\'oj $\\alpha$") == "Rozwój α"


def test_font_and_box_commands_keep_their_text() -> None:
    """pylatexenc 2.11 has no text for these and dropped their argument (real demo
    abstracts 2606.02837 and 2605.22843); a bare one with no argument becomes nothing."""
    assert tex_text("the validation split of \\textsf{FOLIO} and a subset of \\textsf{MALLS}") == (
        "the validation split of FOLIO and a subset of MALLS"
    )
    assert (
        tex_text("annotated \\texttt{<question, SQL>} pairs") == "annotated <question, SQL> pairs"
    )
    assert tex_text("a \\mbox{non-trivial} \\textup{up} \\textmd{md} bound") == (
        "a non-trivial up md bound"
    )
    assert tex_text("a bare \\texttt here") == "a bare here"
    assert plain_text("\\texttt{a\\_b} at 50\\%") == "a_b at 50%"


def test_an_authors_own_macro_is_shown_as_written_and_switches_are_dropped() -> None:
    """A macro pylatexenc does not know was dropped: "an $N=2$ non-linear ." (real abstract
    hep-th/9503208), "DeepAgentRank ()" (a demo abstract). It is the author's own, shown as
    arXiv shows it; font and size switches still have no text, and siunitx's and mhchem's
    macros read as their text (real physics abstracts of the bench snapshot)."""
    assert tex_text("target space of an $N=2$ non-linear \\sm. This") == (
        "target space of an $N=2$ non-linear \\sm. This"
    )
    assert tex_text("a \\sm model") == "a \\sm model"  # the space after it kept
    assert tex_text("\\textbf{De}ep\\textbf{A}gent\\textbf{R}ank (\\textbf{\\DeAR}), an") == (
        "DeepAgentRank (\\DeAR), an"
    )
    assert tex_text("the {\\it topic} of {\\bf bitext maps} and {\\sc Math-PT}") == (
        "the topic of bitext maps and Math-PT"
    )
    assert tex_text("in excess of \\SI{1000}{G/cm} at \\SI{2}{mm} from") == (
        "in excess of 1000 G/cm at 2 mm from"
    )
    assert tex_text("Yb\\textsuperscript{+} and \\ce{Na+} ions, a \\num{2e-13} shift") == (
        "Yb+ and Na+ ions, a 2e-13 shift"
    )
    assert plain_text("SL(3,\\C) over \\V") == "SL(3,\\C) over \\V"


def test_tex_html_keeps_highlights_or_drops_them_when_they_split_tex() -> None:
    title = "Rozw\\'oj bibliotek cyfrowych"
    assert tex_html("Rozw\\'oj <b>bibliotek</b> cyfrowych", title) == (
        "Rozwój <b>bibliotek</b> cyfrowych"
    )
    # A mark inside a command cannot be kept: the decoded title without marks.
    assert tex_html("d\\'{<b>e</b>}sambigu", "d\\'{e}sambigu") == "désambigu"
    # Escaping survives decoding.
    assert tex_html("&lt;x&gt; {\\'e}", "<x> {\\'e}") == "&lt;x&gt; é"
    assert tex_html("<script>") == "&lt;script>"
    # A mark around a command's whole argument moves outside it: the spaces stay.
    assert tex_html("split of \\textsf{<b>FOLIO</b>} and") == "split of <b>FOLIO</b> and"
    assert tex_html("plain {<b>Bayes</b>} here") == "plain <b>Bayes</b> here"


# Real abstracts (excerpts) with a currency \$ outside math.
RASPBERRY = (  # 1405.2517
    r"low-cost platforms, such as Raspberry Pi (\$35) and Cubieboard (\$59), can be used to "
    r"implement security mechanisms. [...] while only consuming less than $2.5 worth of "
    r"electricity"
)
SEXTORTION = r"yielded a lower-bound revenue between \$1,300,620 and \$1,352,266. We"  # 1908.01051
SUPERSCATTERING = (  # hep-th/9401109: \$ inside math, the superscattering operator
    r"the superscattering operator $\$ $ in the RST model for states with a constant flux "
    r"of energy. The $\$ $ operator is CPT invariant."
)


def test_an_escaped_dollar_outside_math_is_a_dollar_and_never_opens_math() -> None:
    """KaTeX's auto-render took each for a delimiter: 1405.2517 showed "Raspberry Pi (\\n
    35)andCubieboard($59),canbeusedtoimplement..." as one formula, 1908.01051
    "between$1,300,620 and \\$1,352,266"; the math finder paired $\\$ with the next $,
    and hep-th/9401109's second operator read "$$ $"."""
    dollar = '<span class="dollar">$</span>'
    assert tex_markup(RASPBERRY) == (
        f"low-cost platforms, such as Raspberry Pi ({dollar}35) and Cubieboard ({dollar}59), "
        "can be used to implement security mechanisms. [...] while only consuming less than "
        "$2.5 worth of electricity"  # a bare $ never closed: text, as the page shows it
    )
    assert tex_markup(SEXTORTION) == (
        f"yielded a lower-bound revenue between {dollar}1,300,620 and {dollar}1,352,266. We"
    )
    assert tex_markup(SUPERSCATTERING) == SUPERSCATTERING  # both formulas as written
    assert (
        tex_text(SEXTORTION)
        == "yielded a lower-bound revenue between $1,300,620 and $1,352,266. We"
    )
    assert plain_text(RASPBERRY).startswith(
        "low-cost platforms, such as Raspberry Pi ($35) and Cubieboard ($59), can"
    )
    assert plain_text(SUPERSCATTERING) == (
        "the superscattering operator $ in the RST model for states with a constant flux of "
        "energy. The $ operator is CPT invariant."
    )
    # In a snippet, between marks, alike.
    assert tex_html("Raspberry <b>Pi</b> (\\$35) and", "Raspberry Pi (\\$35) and") == (
        f"Raspberry <b>Pi</b> ({dollar}35) and"
    )


def test_an_equation_environment_is_left_to_katex() -> None:
    """1608.03580's ``\\begin{equation}``: the page decoded it as text ("c^2 √(ρ_q) + (c^2
    - 1) √(ρ_u) = √(2c^2 - 1)."), where KaTeX typesets it in display mode (math.js)."""
    equation = (
        r"\begin{equation} c^2 \sqrt{\rho_q} + (c^2 - 1) \sqrt{\rho_u} = \sqrt{2c^2 - 1}. "
        r"\end{equation}"
    )
    text = rf"for every $\rho_u, \rho_q \geq 0$ such that: {equation} This is the first"
    assert tex_text(text) == text
    assert plain_text(text) == (
        "for every ρ_u, ρ_q ≥0 such that: c^2 √(ρ_q) + (c^2 - 1) √(ρ_u) = √(2c^2 - 1). This is "
        "the first"
    )
    eqnarray = r"\begin{eqnarray} a \end{eqnarray}"  # one KaTeX does not know: text, as was
    assert tex_text(eqnarray) == "a"


def _boxes(svg: etree._Element) -> list[tuple[float, float, float, float, str]]:
    """Estimated label boxes (left, top, right, bottom) of an SVG's name labels."""
    out = []
    for t in svg.iter(SVG + "text"):
        if t.get("class") != "name":
            continue
        x, y, w = float(t.get("x")), float(t.get("y")), label_width(t.text or "")
        left = x if t.get("text-anchor") == "start" else x - w
        out.append((left, y - FONT, left + w, y + 3, t.text or ""))
    return out


def test_network_labels_never_collide_and_stay_inside() -> None:
    names = [
        "Lutz Bornmann",
        "Loet Leydesdorff",
        "Robin Haunschild",
        "Bakthavachalam Elango",
        "A",
        "Félix de Moya-Anegón-Somebody-Long",
    ]
    for count in (1, 2, 5, 11, 24, 40):
        others = [Node(i + 2, names[i % len(names)] + f" {i}", 40 - i, f"/r/{i}")
                  for i in range(count)]  # fmt: skip
        edges = [(a.key, b.key, 1) for a, b in itertools.combinations(others, 2)]
        svg = etree.fromstring(str(network(Node(1, "Centre Person", 0), others, edges, "t")))
        _, _, width, height = (float(v) for v in svg.get("viewBox").split())
        assert svg.get("width") is None  # scales with the page
        boxes = _boxes(svg)
        assert len(boxes) == min(count, 24)
        for a, b in itertools.combinations(boxes, 2):
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (count, a, b)
        centre = next(c for c in svg.iter(SVG + "circle") if "centre" in c.get("class", ""))
        cx, cy, r = (float(centre.get(k)) for k in ("cx", "cy", "r"))
        for left, top, right, bottom, name in boxes:
            assert left >= 0 and right <= width and top >= 0 and bottom <= height, name
            assert right < cx - r or left > cx + r or bottom < cy - r or top > cy + r


def test_bar_chart_scales_and_its_labels_do_not_overlap() -> None:
    bars = [Bar(str(y), y % 7, f"/y/{y}") for y in range(1990, 2027)]
    svg = etree.fromstring(str(bar_chart(bars, "Papers per year", 320, 150)))
    assert svg.get("width") is None and svg.get("viewBox") == "0 0 320 150"
    labels = [t for t in svg.iter(SVG + "text") if t.get("class") == "label"]
    xs = [float(t.get("x")) for t in labels]
    assert all(b - a >= label_width("2026") for a, b in itertools.pairwise(xs))
    assert len(svg.findall(f"{SVG}a")) == len(bars)
