"""The command line's one error path, its start-up, and --json / --version.

What an analyst would notice: a typo in a setting is one clean message naming the
variable or file, the field and a fix, whatever the command; a crash is a line
pointing at a log file, never a traceback; `sourcedesk --help` answers at once.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from sourcedesk.store.global_store import GlobalStore
from sourcedesk.tui import cli
from sourcedesk.tui.cli import COMMANDS, Command, CommandTableError, build_parser, main

REPO = Path(__file__).resolve().parents[1]
FIXTURE_MEMO = REPO / "tests" / "fixtures" / "run" / "nats-memo"


@pytest.fixture
def memo(tmp_path) -> Path:
    import shutil

    target = tmp_path / "memo"
    shutil.copytree(FIXTURE_MEMO, target)
    return target


def _every_command(memo: Path, tmp_path: Path) -> dict[str, list[str]]:
    draft = tmp_path / "draft.md"
    draft.write_text("Text.[^1]\n\n[^1]: https://example.org\n")
    sources = tmp_path / "sources.json"
    sources.write_text("[]")
    return {
        "demo": ["demo", "--dir", str(tmp_path / "demo")],
        "open": ["open", str(memo)],
        "init": ["init", str(tmp_path / "new"), "--subject", "NATS", "--url", "nats.io"],
        "retrieve": ["retrieve", str(memo)],
        "run": ["run", str(memo)],
        "reconcile": ["reconcile", str(draft), "--sources", str(sources)],
        "tidy": ["tidy", str(draft)],
        "check-urls": ["check-urls", str(draft)],
        "reject": ["reject", "kestra.com", "--memo", str(memo)],
        "unreject": ["unreject", "kestra.com", "--memo", str(memo)],
        "rejects": ["rejects", "--memo", str(memo)],
        "export": ["export", str(memo)],
        "sandbox": ["sandbox", "--port", "0"],
    }


def test_the_table_lists_every_command_and_each_module_defines_exactly_its_commands():
    parser = build_parser(None)  # imports every module and checks each against the table
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == [c.name for c in COMMANDS]


def test_a_missing_command_module_is_an_error_at_start_up(capsys, monkeypatch):
    broken = (*COMMANDS, Command("status", "statsu", "show the memo's status"))
    with pytest.raises(CommandTableError, match=r"tui\.commands\.statsu .*sourcedesk status.* is missing"):
        build_parser(["--help"], broken)
    monkeypatch.setattr(cli, "COMMANDS", broken)
    assert main(["--help"]) == 2  # before any help is printed: the installation is broken
    err = capsys.readouterr().err
    assert "broken installation" in err and "statsu" in err


def test_a_module_that_does_not_define_its_listed_command_is_an_error(monkeypatch):
    wrong = tuple(Command(c.name, "export" if c.name == "tidy" else c.module, c.help) for c in COMMANDS)
    with pytest.raises(CommandTableError, match=r"tui\.commands\.export defines \['export'\] .*\['export', 'tidy'\]"):
        build_parser(["tidy", "x.md"], wrong)


def test_help_loads_no_command_module():
    """What --help costs in CPU is a speed figure: `make bench` prints it (sourcedesk.sandbox.bench_speed)."""
    code = (
        "import resource, sys, contextlib, io\n"
        "from sourcedesk.tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert 'check-urls' in out.getvalue() and 'unreject' in out.getvalue()\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('sourcedesk.tui.commands.', 'textual', 'pydantic', 'sourcedesk.core.', 'sourcedesk.store.')))\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['sourcedesk.core.domain', 'sourcedesk.core.domain.errors']"


def test_a_bad_environment_value_is_the_same_clean_message_and_exit_2_in_every_command(
    memo, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SOURCEDESK_BUDGET_CHARS", "lots")
    for name, argv in _every_command(memo, tmp_path).items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("sourcedesk: invalid setting budget_chars in the environment variable "), (name, err)
        assert "SOURCEDESK_BUDGET_CHARS" in err and "'lots'" in err and "Hint: " in err and "whole number" in err
        assert "Traceback" not in err
    assert not (tmp_path / "new").exists()  # nothing ran


def test_a_bad_value_of_a_providers_own_setting_stops_every_command_the_same_way(memo, tmp_path, monkeypatch, capsys):
    """Exa's settings belong to its provider, and are still read and checked at start-up."""
    monkeypatch.setenv("SOURCEDESK_EXA_MAX_RESPONSE_BYTES", "huge")
    for name, argv in _every_command(memo, tmp_path).items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("sourcedesk: invalid setting exa_max_response_bytes in the environment variable "), err
        assert "SOURCEDESK_EXA_MAX_RESPONSE_BYTES" in err and "'huge'" in err and "whole number" in err
        assert "Traceback" not in err
    assert not (tmp_path / "new").exists()


def test_a_broken_config_file_names_the_file_and_line_in_every_command_but_config_path_answers(memo, tmp_path, capsys):
    from sourcedesk.core.config.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("writer-url: http://x\nbudget-chars: [12000\n")
    for name, argv in _every_command(memo, tmp_path).items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert f"the config file {path} is not valid YAML (line 3" in err, (name, err)
        assert "`sourcedesk config path`" in err and "Traceback" not in err
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(path)
    path.write_text("budget-chars: lots\n")
    assert main(["run", str(memo)]) == 2
    err = capsys.readouterr().err
    assert f"invalid setting budget_chars in the config file {path}" in err and "'lots'" in err


def test_a_misspelt_or_out_of_range_config_value_stops_every_command_with_a_hint(memo, tmp_path, capsys):
    """A typo'd key was silently ignored and a negative budget or zero concurrency accepted:
    the analyst believed a setting took effect that never did."""
    from sourcedesk.core.config.settings import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("budget_char: 5000\n")
    for name, argv in _every_command(memo, tmp_path).items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert f"unknown setting 'budget_char' in the config file {path}" in err, (name, err)
        assert "did you mean budget-chars?" in err and "Traceback" not in err
    assert main(["config", "path"]) == 0
    capsys.readouterr()
    path.write_text("budget-chars: -5\n")
    assert main(["export", str(memo)]) == 2
    err = capsys.readouterr().err
    assert "invalid setting budget_chars" in err and "(got -5)" in err and "a whole number above 0" in err
    path.write_text("max-concurrent-sections: 0\n")
    assert main(["export", str(memo)]) == 2
    assert "a whole number of at least 1" in capsys.readouterr().err
    # every provider's own keys, and keys written as their variable, are known
    path.write_text("exa-url: http://127.0.0.1:1\nPERPLEXITY_API_KEY: k\nbudget_chars: 9000\n")
    assert main(["export", str(memo)]) == 0


def test_an_unexpected_error_is_logged_with_its_traceback_and_shown_as_one_line(memo, monkeypatch, capsys):
    import sourcedesk.core.notes.export

    def broken(*args, **kwargs):
        raise RuntimeError("the disk said no")

    monkeypatch.setattr(sourcedesk.core.notes.export, "export_memo", broken)
    assert main(["export", str(memo)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("sourcedesk: unexpected error: RuntimeError: the disk said no\n")
    from sourcedesk.tui.logs import log_file

    path = log_file()
    assert f"The details, with the traceback, are in {path}" in err
    for handler in logging.getLogger("sourcedesk").handlers:
        handler.flush()
    written = path.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in written and "RuntimeError: the disk said no" in written
    assert "sourcedesk export" in written


def test_the_log_file_never_holds_an_api_key(memo, monkeypatch, capsys):
    import sourcedesk.core.notes.export

    key = "pplx-secret-key-0123456789"
    monkeypatch.setenv("PERPLEXITY_API_KEY", key)

    def broken(*args, **kwargs):
        raise RuntimeError(f"bad header Authorization: Bearer {key}")

    monkeypatch.setattr(sourcedesk.core.notes.export, "export_memo", broken)
    assert main(["export", str(memo)]) == 1
    assert key not in capsys.readouterr().err
    from sourcedesk.tui.logs import log_file

    for handler in logging.getLogger("sourcedesk").handlers:
        handler.flush()
    assert key not in log_file().read_text(encoding="utf-8")


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out.strip()
    from importlib.metadata import version

    assert out == f"sourcedesk {version('sourcedesk')}"


def test_json_from_init_export_tidy_and_config(tmp_path, capsys):
    memo = tmp_path / "m"
    assert main(["init", str(memo), "--subject", "NATS", "--url", "nats.io", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["memo"] == str(memo / "memo.yaml") and made["url"] == "https://nats.io"
    assert made["sections"][0] == "overview" and len(made["sections"]) == 7

    assert main(["export", str(memo), "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["path"] == str(memo / "memo.md") and exported["sections"] == 0
    assert exported["missing"] == made["sections"] and (memo / "memo.md").is_file()

    draft = tmp_path / "d.md"
    draft.write_text("Growth was fast[^2].\n\n[^2]: https://a.example/x\n")
    assert main(["tidy", str(draft), "--check", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] and not report["written"] and report["renames"] == {"2": "1"}
    assert main(["tidy", str(draft), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["written"] and "[^1]" in draft.read_text()
    assert main(["tidy", str(draft), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "file": str(draft),
        "changed": False,
        "written": False,
        "respaced": 0,
        "moved_punctuation": 0,
        "duplicates_removed": 0,
        "renumbered": 0,
        "renames": {},
        "cleaned": False,
    }

    assert main(["config", "path", "--json"]) == 0
    from sourcedesk.core.config.settings import config_path

    assert json.loads(capsys.readouterr().out) == {"path": str(config_path()), "exists": False}


def test_json_from_reject_and_unreject(memo, capsys):
    assert main(["reject", "https://www.kestra.com/x", "--memo", str(memo), "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done == {
        "domain": "kestra.com",
        "scope": "memo",
        "memo": str(memo),
        "changed": True,
        "sections": [],
        "still_rejected": [],
        "domains": [{"domain": "kestra.com", "added": True}],
        "names": [],
        "learned_namesakes": [],
    }
    assert main(["reject", "kestra.com", "--memo", str(memo), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["changed"] is False
    assert main(["unreject", "kestra.com", "--memo", str(memo), "--json"]) == 0
    undone = json.loads(capsys.readouterr().out)
    assert undone["changed"] is True and undone["domain"] == "kestra.com" and undone["still_rejected"] == []
    assert undone["domains"] == [{"domain": "kestra.com", "removed": True, "still_rejected": []}]
    assert undone["names"] == [] and undone["namesakes_forgotten"] == [] and undone["refresh"] == []


@pytest.mark.parametrize("where", [["--memo"], ["--global"], ["--global", "--memo"]])
def test_reject_json_has_one_shape_whatever_the_number_of_domains_or_names(memo, capsys, where):
    flags = [x for w in where for x in ([w, str(memo)] if w == "--memo" else [w])]
    shapes = []
    for given in (["a-one.com"], ["b-two.com", "c-three.com"], ["--name", "Kestra Medical"]):
        assert main(["reject", *given, *flags, "--json"]) == 0
        shapes.append(set(json.loads(capsys.readouterr().out)))
        assert main(["unreject", *given, *flags, "--json"]) == 0
        shapes.append(set(json.loads(capsys.readouterr().out)) | {"reject"})
    rejects, unrejects = shapes[0::2], shapes[1::2]
    assert all(s == rejects[0] for s in rejects), rejects
    assert all(s == unrejects[0] for s in unrejects), unrejects
    assert {"domain", "domains", "names", "changed", "sections", "still_rejected"} <= rejects[0]


def test_unreject_of_what_is_not_rejected_is_no_error_as_reject_of_what_is(memo, capsys):
    assert main(["reject", "kestra.com", "--global"]) == 0
    capsys.readouterr()
    for argv in (["kestra.com", "--memo", str(memo)], ["--name", "Kestra Medical", "--global"]):
        assert main(["unreject", *argv, "--json"]) == 0
        document = json.loads(capsys.readouterr().out)
        assert document["changed"] is False
        assert main(["unreject", *argv]) == 0
        said = capsys.readouterr()
        assert "is not rejected" in said.out and "nothing changed" in said.out and said.err == ""
    assert main(["unreject", "kestra.com", "--memo", str(memo)]) == 0
    assert "It is rejected globally: `sourcedesk unreject kestra.com --global`" in capsys.readouterr().out
    assert GlobalStore().rejects() == ["kestra.com"]  # the other scope's rejection is untouched
    assert main(["unreject", "x", "--global"]) == 2  # junk is still bad input, as for reject
    assert main(["unreject", "--name", "x", "--global"]) == 2


def test_the_workbench_log_exception_calls_reach_the_log_file():
    from sourcedesk.tui.logs import log_file, setup_logging

    assert setup_logging() == log_file()
    try:
        raise ValueError("a worker tripped")
    except ValueError:
        logging.getLogger("sourcedesk.tui").exception("section overview failed while writing")
    for handler in logging.getLogger("sourcedesk").handlers:
        handler.flush()
    written = log_file().read_text(encoding="utf-8")
    assert "sourcedesk.tui" in written and "section overview failed while writing" in written
    assert "Traceback (most recent call last)" in written and "ValueError: a worker tripped" in written


@pytest.mark.parametrize(
    "argv, usage",
    [
        (["run", "DIR", "--bogus"], "usage: sourcedesk run "),
        (["reject", "a.com", "--bogus"], "usage: sourcedesk reject "),
        (["config", "path", "--bogus"], "usage: sourcedesk config path "),
        (["--bogus"], "usage: sourcedesk [-h]"),
    ],
)
def test_an_unknown_argument_shows_the_usage_of_the_command_it_was_given_to(capsys, argv, usage):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(usage) and "unrecognized arguments: --bogus" in err


def test_unreject_refuses_a_non_domain_before_lifting_anything(memo, capsys):
    assert main(["reject", "kestra.com", "--memo", str(memo)]) == 0
    capsys.readouterr()
    assert main(["unreject", "kestra.com", "not a domain", "--memo", str(memo)]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert main(["rejects", "--memo", str(memo), "--json"]) == 0
    assert [e["domain"] for e in json.loads(capsys.readouterr().out)["memo"]["rejects"]] == ["kestra.com"]
