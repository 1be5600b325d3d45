"""Claim context: which sentence a marker cites."""

from __future__ import annotations

import re

import pytest

from core.citations.sentences import SentenceIndex


def claims(text: str) -> dict[str, str]:
    spans = [(m.start(), m.end()) for m in re.finditer(r"\[\^\w+\]|\[\d+\]", text)]
    index = SentenceIndex(text, spans)
    return {text[a:b]: index.claim_for(a) for a, b in spans}


def test_marker_after_the_full_stop_binds_to_the_sentence_before():
    got = claims("Synadia raised $25M in 2022. [^1] [^2] It was founded by Derek Collison[^3]. Next one.")
    assert got == {
        "[^1]": "Synadia raised $25M in 2022.",
        "[^2]": "Synadia raised $25M in 2022.",
        "[^3]": "It was founded by Derek Collison.",
    }


def test_marker_inside_a_sentence_binds_to_the_whole_sentence():
    assert claims("First. Revenue grew 40% [^a] while costs fell. Last.")["[^a]"] == (
        "Revenue grew 40% while costs fell."
    )


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("Acme Inc. raised 5.5% more [^x] than peers. Next.", "Acme Inc. raised 5.5% more than peers."),
        ("Dr. Smith agrees with nats.io docs.[^x] Next.", "Dr. Smith agrees with nats.io docs."),
        ("It ranks No. 1 in Europe [1]. Next.", "It ranks No. 1 in Europe."),
        ('He said "it works." [^x] Then left.', 'He said "it works."'),
        ("Bought by Acme Inc. The deal closed [^x].", "The deal closed."),
        ("No terminator at all [^x]", "No terminator at all"),
        ("[^x] Leading marker sentence. Another.", "Leading marker sentence."),
    ],
)
def test_boundaries(text, claim):
    assert claims(text)["[^x]" if "[^x]" in text else "[1]"] == claim
