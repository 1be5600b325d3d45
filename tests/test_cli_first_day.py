"""The command line beside an open workbench, and its wording (issue 19's first-day bugs)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.cli import main

REPO = Path(__file__).resolve().parents[1]

_HOLDER = textwrap.dedent(
    """
    import sys
    from sourcedesk.store.memo_store import MemoStore
    store = MemoStore(sys.argv[1])
    print("ready", flush=True)
    sys.stdin.readline()
    store.close()
    print("closed", flush=True)
    """
)


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("SOURCEDESK_DATA_DIR", str(d))
    return d


@pytest.fixture
def memo(tmp_path, data_dir) -> Path:
    d = tmp_path / "kestra"
    assert main(["init", str(d), "--subject", "Kestra", "--url", "https://kestra.io"]) == 0
    assert main(["reject", "kestramedical.com", "--memo", str(d)]) == 0
    return d


@pytest.fixture
def holder(memo):
    """Another process holding the memo, as the workbench does for its whole session."""
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(memo)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    yield child
    if child.poll() is None:
        child.communicate("\n", timeout=60)


def test_read_only_commands_work_while_the_memo_is_open_elsewhere(memo, holder, capsys):
    capsys.readouterr()
    assert main(["rejects", "--memo", str(memo), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["domain"] for e in listed["memo"]["rejects"]] == ["kestramedical.com"]
    assert main(["export", str(memo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"].endswith("memo.md")
    assert holder.poll() is None  # the holder kept the memo throughout


def _with_closed_stdout(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``sourcedesk ARGV | head -0``: stdout is a pipe whose reader has already gone."""
    import os

    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "sourcedesk.tui.cli", *argv],
            cwd=REPO,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [("rejects", "--global", "--json"), ("--help",), ("config", "path")])
def test_a_closed_pipe_is_no_error(argv, data_dir, tmp_path):
    import os

    env = {**os.environ, "SOURCEDESK_DATA_DIR": str(data_dir), "SOURCEDESK_LOG_DIR": str(tmp_path / "logs")}
    done = _with_closed_stdout(*argv, env=env)
    assert done.stderr == ""  # no "unexpected error: BrokenPipeError", no "Exception ignored"
    assert done.returncode in (0, 141)


def test_each_demo_gets_a_fresh_folder_unless_keep(tmp_path):
    from sourcedesk.tui.demo import prepare_demo

    first = prepare_demo(root=tmp_path)
    (first / "sections").mkdir()
    (first / "sections" / "01-overview.md").write_text("changed by the first demo")
    second = prepare_demo(root=tmp_path)
    assert second != first and not (second / "sections").exists()
    assert (first / "sections" / "01-overview.md").exists()  # the other demo's folder is left alone
    assert prepare_demo(root=tmp_path, keep=True) == second  # --keep: the newest, as left
    with MemoStore(first) as store:  # a demo still open in another window is never pruned
        window = store.hold_section("window-1", purpose="open in the workbench")  # what a workbench holds
        for _ in range(6):
            prepare_demo(root=tmp_path)
        window.release()
    assert (first / "memo.yaml").is_file() and not (second / "memo.yaml").exists()


class _HungUp:
    """A terminal that was closed: every write is EIO."""

    def write(self, _text: str) -> int:
        raise OSError(5, "Input/output error")

    def flush(self) -> None:
        raise OSError(5, "Input/output error")


def test_the_demo_exit_message_names_its_dir_and_a_closed_terminal_is_no_error(tmp_path, data_dir, monkeypatch):
    import contextlib
    import logging

    import sourcedesk.tui.app as app_module
    import sourcedesk.tui.demo as demo_module

    monkeypatch.setattr(app_module.SourcedeskApp, "run", lambda self, *a, **k: None)  # closed at once

    @contextlib.contextmanager
    def no_sandbox(*_a, **_k):
        yield type("Server", (), {"url": "http://127.0.0.1:9"})()

    monkeypatch.setattr(demo_module, "demo_sandbox", no_sandbox)
    out = tmp_path / "said.txt"
    with out.open("w") as said:
        monkeypatch.setattr(sys, "stdout", said)
        assert main(["demo", "--dir", str(tmp_path / "demos")]) == 0
    assert f"`sourcedesk demo --keep --dir {tmp_path / 'demos'}` reopens it" in out.read_text()
    errors: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            errors.append(record)

    handler = Kept(logging.WARNING)
    logging.getLogger("sourcedesk").addHandler(handler)
    try:
        monkeypatch.setattr(sys, "stdout", _HungUp())
        monkeypatch.setattr(sys, "stderr", _HungUp())
        assert main(["demo", "--dir", str(tmp_path / "demos")]) == 0  # the goodbye meets a closed terminal
    finally:
        logging.getLogger("sourcedesk").removeHandler(handler)
    assert errors == []


def test_every_command_describes_itself_and_the_list_says_names_too(capsys):
    import argparse

    from sourcedesk.tui.cli import COMMANDS, build_parser

    with pytest.raises(SystemExit):
        main(["--help"])
    listing = capsys.readouterr().out
    for name in ("reject", "unreject", "rejects"):
        line = next(ln for ln in listing.splitlines() if ln.split()[:1] == [name])
        assert "names" in line, line
    parser = build_parser(None)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    undescribed = [c.name for c in COMMANDS if not sub.choices[c.name].description]
    assert undescribed == []


def test_template_variables_agree_in_the_readme_inits_file_and_the_hints(tmp_path, data_dir):
    import re

    from sourcedesk.core.domain.errors import UserError
    from sourcedesk.core.memo.loader import load_memo
    from sourcedesk.core.memo.templates import BUILTIN_VARIABLES

    names = set(BUILTIN_VARIABLES)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("Query templates may use") :].split("\n\n")[0]
    assert set(re.findall(r"\{\{(\w+)\}\}", paragraph)) == names
    memo = tmp_path / "m"
    assert main(["init", str(memo), "--subject", "Kestra", "--url", "https://kestra.io"]) == 0
    yaml_text = (memo / "memo.yaml").read_text(encoding="utf-8")
    header = "\n".join(ln for ln in yaml_text.splitlines() if ln.startswith("#"))
    assert set(re.findall(r"\{\{(\w+)\}\}", header[header.index("Query templates") :])) - {"name"} == names
    (memo / "memo.yaml").write_text(
        yaml_text.replace('query: "{{subject}}', 'query: "{{subjekt}}', 1), encoding="utf-8"
    )
    with pytest.raises(UserError) as err:
        load_memo(memo)
    assert names <= set(re.findall(r"\{\{(\w+)\}\}", str(err.value)))


def test_the_memos_placeholder_for_an_unwritten_section_names_the_folder(tmp_path, data_dir, capsys):
    memo = tmp_path / "m"
    assert main(["init", str(memo), "--subject", "Kestra", "--url", "https://kestra.io"]) == 0
    assert main(["export", str(memo)]) == 0
    text = (memo / "memo.md").read_text(encoding="utf-8")
    assert "`sourcedesk run . --section overview`" in text and "`sourcedesk run --section" not in text
