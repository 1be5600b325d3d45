"""Claim binding: which clause a marker cites."""

from __future__ import annotations

import re

import pytest

from sourcedesk.core.citations.sentences import SentenceIndex


def claims(text: str) -> dict[str, str]:
    spans = [(m.start(), m.end()) for m in re.finditer(r"\[\^\w+\]|\[\d+\]", text)]
    index = SentenceIndex(text, spans)
    return {text[a:b]: index.claim_for(a) for a, b in spans}


def test_marker_after_the_full_stop_binds_to_the_sentence_before():
    got = claims("Synadia raised $25M in 2022. [^1] [^2] It was founded by Derek Collison[^3]. Next one.")
    assert got == {
        "[^1]": "Synadia raised $25M in 2022.",
        "[^2]": "Synadia raised $25M in 2022.",
        "[^3]": "It was founded by Derek Collison",
    }


def test_marker_inside_a_sentence_binds_to_the_clause_before_it():
    assert claims("First. Revenue grew 40% [^a] while costs fell. Last.")["[^a]"] == "Revenue grew 40%"
    got = claims("Cresta, which raised $125 million in a Series D [^1], was founded in 2017 by Zayd Enam [^2].")
    assert got == {
        "[^1]": "Cresta, which raised $125 million in a Series D",
        "[^2]": "was founded in 2017 by Zayd Enam",
    }


def test_a_later_marker_after_the_full_stop_binds_from_the_previous_marker():
    got = claims("A raised $5M [^1] and B raised $3M. [^2] Next.")
    assert got == {"[^1]": "A raised $5M", "[^2]": "and B raised $3M."}


def test_a_semicolon_ends_a_clause():
    assert claims("Sales rose in 2021; costs fell by 9% [^1].")["[^1]"] == "costs fell by 9%"


def test_cjk_full_stops_end_sentences_without_a_space():
    got = claims("云舟科技成立于2016年。[^1]星河数据裁员15%。[^2]")
    assert got == {"[^1]": "云舟科技成立于2016年。", "[^2]": "星河数据裁员15%。"}


def test_a_clause_after_a_cjk_or_arabic_comma_does_not_start_with_it():
    got = claims("云舟科技于2016年成立[^1]，2023年完成1.25亿美元C轮融资[^2]。")
    assert got == {"[^1]": "云舟科技于2016年成立", "[^2]": "2023年完成1.25亿美元C轮融资"}
    arabic = claims("تأسست كريستا عام 2017 [^1]، وجمعت 125 مليون دولار [^2].")
    assert arabic["[^2]"] == "وجمعت 125 مليون دولار"


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("Acme Inc. raised 5.5% more [^x] than peers. Next.", "Acme Inc. raised 5.5% more"),
        ("Dr. Smith agrees with nats.io docs.[^x] Next.", "Dr. Smith agrees with nats.io docs."),
        ("It ranks No. 1 in Europe [1]. Next.", "It ranks No. 1 in Europe"),
        ('He said "it works." [^x] Then left.', 'He said "it works."'),
        ("Bought by Acme Inc. The deal closed [^x].", "The deal closed"),
        ("No terminator at all [^x]", "No terminator at all"),
        ("[^x] Leading marker sentence. Another.", "Leading marker sentence."),
    ],
)
def test_boundaries(text, claim):
    assert claims(text)["[^x]" if "[^x]" in text else "[1]"] == claim


def test_a_table_cell_s_context_is_its_row_label_then_its_column_header_once_each():
    from sourcedesk.core.citations.parse import normalise_source, parse
    from sourcedesk.core.citations.sentences import ClaimIndex

    md = (
        "| Company | Founded | Cresta |\n|---|---|---|\n| Cresta | 2017[^1] | yes[^2] |\n"
        "| | 2019[^4] | |\n\nPlain prose here.[^3]\n\n[^1]: x\n[^2]: y\n[^3]: z\n[^4]: w\n"
    )
    doc = parse(normalise_source(md), malformed=True)
    index = ClaimIndex(doc)
    contexts = {doc.markers[i].label: index.context(i) for i in range(len(doc.markers))}
    # a header that repeats the row label is said once; no row label leaves the header; prose has none
    assert contexts == {"1": "Cresta; Founded", "2": "Cresta", "4": "Founded", "3": ""}
