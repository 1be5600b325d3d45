"""A memo.yaml that is not an ordinary small text file is refused with a message naming it.

Each of these once hung `sourcedesk` for good, read until memory ran out, or ended in a
traceback instead of the clear exit-2 message every other bad memo gets."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from sourcedesk.core.domain.errors import MemoError
from sourcedesk.core.memo.loader import MAX_MEMO_BYTES, load_memo
from sourcedesk.tui.cli import main

MEMO = """\
title: T
subject: {name: NATS, url: https://nats.io}
sections:
  - id: overview
    title: Overview
    include-sources: [{provider: exa, query: "NATS overview"}]
"""


def _refused(folder: Path) -> MemoError:
    """load_memo's error, given a few seconds (a FIFO used to block its open forever)."""
    outcome: list[BaseException | object] = []

    def load() -> None:
        try:
            outcome.append(load_memo(folder))
        except BaseException as exc:  # handed to the test thread to assert on
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        fifo = folder / "memo.yaml"
        os.close(os.open(fifo, os.O_WRONLY))  # let the blocked open return so the thread ends
        worker.join(10)
        pytest.fail("loading the memo blocked")
    (result,) = outcome
    assert isinstance(result, MemoError), result
    return result


def test_a_fifo_named_memo_yaml_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "memo.yaml")
    err = _refused(tmp_path)
    assert "memo.yaml is not a regular file" in str(err)
    assert err.hint


def test_a_link_to_a_device_is_refused_without_reading_it(tmp_path):
    (tmp_path / "memo.yaml").symlink_to("/dev/zero")  # read to the end, this never ends
    err = _refused(tmp_path)
    assert "memo.yaml is not a regular file" in str(err)


@pytest.mark.parametrize("links", [["memo.yaml"], ["other.yaml", "memo.yaml"]], ids=["self", "pair"])
def test_a_symlink_loop_is_named_with_a_hint(tmp_path, links):
    (tmp_path / "memo.yaml").symlink_to(links[0])
    if len(links) > 1:
        (tmp_path / links[0]).symlink_to(links[1])
    err = _refused(tmp_path)
    assert "memo.yaml is a symbolic link that leads back to itself" in str(err)
    assert "replace the link" in (err.hint or "")


def test_a_dangling_symlink_names_the_link_and_its_target(tmp_path):
    (tmp_path / "memo.yaml").symlink_to("gone.yaml")
    err = _refused(tmp_path)
    assert "memo.yaml is a symbolic link to gone.yaml, which does not exist" in str(err)


def test_a_nul_byte_names_its_line(tmp_path):
    (tmp_path / "memo.yaml").write_bytes(MEMO.replace("Overview", "Over\0view").encode())
    err = _refused(tmp_path)
    assert "memo.yaml:5: contains the control character U+0000" in str(err)


def test_an_oversized_memo_is_refused_before_it_is_parsed(tmp_path):
    with open(tmp_path / "memo.yaml", "w", encoding="utf-8") as f:
        f.write(MEMO + "# " + "x" * 50_000_000 + "\n")  # a valid memo, 50 MB of comment
    err = _refused(tmp_path)
    assert "memo.yaml is 50.0 MB; a memo file may be at most" in str(err)
    assert err.hint


def test_a_memo_just_under_the_cap_still_loads(tmp_path):
    (tmp_path / "memo.yaml").write_text(MEMO + "# " + "x" * (MAX_MEMO_BYTES - len(MEMO) - 10) + "\n")
    assert [s.id for s in load_memo(tmp_path).memo.sections] == ["overview"]


def test_the_cli_reports_a_bad_memo_file_as_bad_input(tmp_path, capsys):
    (tmp_path / "memo.yaml").symlink_to("memo.yaml")
    assert main(["export", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert "symbolic link that leads back to itself" in out.err
    assert "Traceback" not in out.err + out.out


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ("9" * 5000, "memo.yaml:7: a number thousands of digits long"),
        ("0x" + "f" * 5000, "a number thousands of digits long"),
    ],
    ids=["decimal", "hex"],
)
def test_a_number_thousands_of_digits_long_is_named_not_a_python_limit(tmp_path, value, where):
    """Python refuses to read or print an int over 4300 digits; the message said to call
    sys.set_int_max_str_digits() and named no line."""
    (tmp_path / "memo.yaml").write_text(MEMO + f"vars: {{n: {value}}}\n")
    err = _refused(tmp_path)
    assert where in str(err)
    assert "set_int_max_str_digits" not in str(err) + (err.hint or "")
    assert "quote it" in str(err) + (err.hint or "")


def test_a_raw_control_character_gets_a_hint_that_fits_it(tmp_path):
    (tmp_path / "memo.yaml").write_text(MEMO.replace("Overview", "Over\x1b[2Jview"))
    err = _refused(tmp_path)
    assert "memo.yaml:5: contains the control character U+001B" in str(err)
    assert "double quotes" in (err.hint or "")
