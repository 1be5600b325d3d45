"""The one cleaning function for outside text: what a terminal would act on never survives it."""

from __future__ import annotations

import base64
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcedesk.core.text.safety import UNSAFE_CHARACTER, clean_mapped, clean_text, clean_tree
from sourcedesk.core.text.secrets import REDACTED

KEY = "sk-test-REFLECTED-0123456789"


@pytest.mark.parametrize(
    "hostile, shown",
    [
        ("Evil\x1b[2Jtitle", "Eviltitle"),  # CSI: erase the screen
        ("a\x1b[38;5;196mred\x1b[0m", "ared"),  # CSI: colours
        ("a\x1b]0;PWNED\x07b", "ab"),  # OSC 0: retitle the terminal (BEL-terminated)
        ("a\x1b]0;PWNED\x1b\\b", "ab"),  # … ST-terminated
        ("x\x1b]52;c;UFdORUQ=\x07y", "xy"),  # OSC 52: write the clipboard
        ("\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07", "click"),  # OSC 8: a hidden link
        ("open\x1b]0;never closed", "open"),  # an unterminated string ends with the line
        ("d\x1bP1$r\x1b\\e", "de"),  # DCS
        ("\x9b31mred\x9d0;t\x9cz", "redz"),  # 8-bit CSI and OSC
        ("bel\x07x\x00y\x7fz\x85w", "belxyzw"),  # lone C0, DEL, C1
        ("a\x1bcb\x1b(Bc", "abc"),  # two-byte escapes (RIS, charset)
        ("abc\u202efdp.exe", "abcfdp.exe"),  # right-to-left override
        ("\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069text", "text"),  # every embedding and isolate
    ],
)
def test_escape_sequences_go_whole_with_their_payload(hostile, shown):
    assert clean_text(hostile) == shown
    assert clean_text(hostile, multiline=True) == shown


def test_multi_line_text_keeps_newlines_and_tabs_one_line_text_gets_spaces():
    text = "one\r\ntwo\rthree\tfour\nfive"
    assert clean_text(text, multiline=True) == "one\ntwo\nthree\tfour\nfive"  # a bare CR cannot overwrite a line
    assert clean_text(text) == "one two three four five"


def test_ordinary_text_is_returned_unchanged():
    text = "Ünïcödé, emoji 🚀, CJK 日本語, Arabic العربية, quotes “x” — and a tab\tand\nnewline"
    assert clean_text(text, multiline=True) == text


def test_keys_are_redacted_and_the_known_keys_are_the_default(monkeypatch):
    monkeypatch.setenv("EXA_API_KEY", KEY)
    assert clean_text(f"token={KEY}!") == f"token={REDACTED}!"
    assert clean_text(f"a{KEY}b", secrets=["other-key-123456"]) == f"a{KEY}b"  # only what is asked for
    # a key split by an injected sequence is joined by the cleaning first, then redacted
    assert clean_text(KEY[:6] + "\x1b[0m" + KEY[6:]) == REDACTED


def test_a_value_shorter_than_a_real_key_is_never_redacted():
    """A demo key like "sandbox" would otherwise take the word out of every text."""
    assert clean_text("a sandbox test", secrets=["sandbox", "test"]) == "a sandbox test"
    assert clean_mapped("a sandbox", secrets=["sandbox"]).text == "a sandbox"


def test_trees_are_cleaned_in_keys_and_values():
    tree = {"ceo\x1b[2J": ["Jane\u202e", {"n": "x\x1b]0;t\x07y"}], "year": 2019, "ok": None}
    assert clean_tree(tree) == {"ceo": ["Jane", {"n": "xy"}], "year": 2019, "ok": None}


def test_the_log_never_carries_a_key_or_a_sequence(monkeypatch, caplog):
    monkeypatch.setenv("EXA_API_KEY", KEY)
    log = logging.getLogger("sourcedesk.test")
    with caplog.at_level(logging.INFO):
        log.info("title %s from %s", "Evil\x1b]0;x\x07", KEY)
        try:
            raise ValueError(f"server said {KEY}\x1b[2J")
        except ValueError:
            log.exception("failed")
    assert KEY not in caplog.text and "\x1b" not in caplog.text
    assert "title Evil from [redacted]" in caplog.text and "server said [redacted]" in caplog.text


# ---------------------------------------------------------------- offsets survive cleaning

_PIECES = st.sampled_from(
    ["plain ", "word", "\n", "\t", "\r\n", "\x1b[2J", "\x1b]8;;http://x/\x07", "\x1b]0;t\x07", "\u202e", "\x9b1m", KEY]
)


@given(st.lists(_PIECES, min_size=1, max_size=30))
def test_every_surviving_character_keeps_its_offset_mapping(pieces):
    text = "".join(pieces)
    cleaned = clean_mapped(text, secrets=[KEY])
    assert cleaned.text == clean_text(text, multiline=True, secrets=[KEY])
    assert not UNSAFE_CHARACTER.search(cleaned.text)
    # a span over one piece of ordinary text maps onto exactly that text in the cleaned string
    pos = 0
    for piece in pieces:
        start, end = cleaned.span(pos, pos + len(piece))
        if piece in ("plain ", "word", "\n", "\t"):
            assert cleaned.text[start:end] == piece
        elif piece == KEY:
            assert cleaned.text[start:end] == REDACTED
        pos += len(piece)
    assert cleaned.span(0, len(text)) == (0, len(cleaned.text))


def test_an_annotation_span_after_removed_sequences_points_at_the_same_words():
    text = "Acme\x1b[2J raised \x1b]0;x\x07$12M in 2024."
    start = text.index("$12M")
    cleaned = clean_mapped(text)
    s, e = cleaned.span(start, start + 4)
    assert cleaned.text == "Acme raised $12M in 2024." and cleaned.text[s:e] == "$12M"


@pytest.mark.parametrize(
    "spelled",
    [
        KEY.upper(),
        KEY[::-1],
        "".join(f"%{b:02x}" for b in KEY.encode()),
        "".join(f"%25{b:02X}" for b in KEY.encode()),  # percent-encoded twice
        "".join(f"\\u{ord(c):04x}" for c in KEY),  # a JSON escape shown raw
        "".join(f"\\x{ord(c):02x}" for c in KEY),
        "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in KEY),  # fullwidth
        "\u200b".join(KEY),
        "\U000e0020".join(KEY),  # tag characters
        "\u0301".join(KEY),  # under combining accents
        "&shy;".join(KEY),
        "&#173;".join(KEY),
        "%E2%80%8B".join(KEY),  # U+200B, percent-encoded
        base64.b64encode(KEY.encode()).decode(),
        base64.b64encode(f"user:{KEY}".encode()).decode(),  # Authorization: Basic
        base64.urlsafe_b64encode(b"xy" + KEY.encode()).decode().rstrip("="),
    ],
    ids=lambda s: repr(s[:12]),
)
def test_a_key_is_redacted_in_every_spelling_a_reader_could_still_read_it_in(spelled):
    out = clean_text(f"401: bad key {spelled} (check it)", secrets=[KEY])
    assert REDACTED in out and out.startswith("401: bad key ") and out.endswith(" (check it)"), out
    leftover = out.replace("401: bad key ", "").replace(" (check it)", "").replace(REDACTED, "")
    assert len(leftover) <= 8, out  # at most a few characters of the encoding around the key stay


def test_text_that_only_looks_encoded_is_left_alone():
    text = "growth of 40%25 in 2024 &amp; \\u00e9t\u00e9 caf\u0301e ｗｉｄｅ base64:cHBseC1ob3N0"
    assert clean_text(text, secrets=[KEY]) == text


@pytest.mark.parametrize(
    "hidden",
    ["\u200e", "\u200f", "\u061c", "\u200b", "\ufeff", "\u2060", "\U000e0041", "\ufff9", "\u3164", "\u206a", "\u17b4"],
    ids=lambda c: f"U+{ord(c):04X}",
)
def test_characters_that_hide_or_reorder_text_leave_a_title(hidden):
    assert clean_text(f"Acme{hidden}Robotics{hidden * 3}") == "AcmeRobotics"


def test_joiners_and_variation_selectors_that_scripts_and_emoji_need_are_kept():
    text = "می\u200cخواهم 👩\u200d💻 \u2764\ufe0f"
    assert clean_text(text) == text
