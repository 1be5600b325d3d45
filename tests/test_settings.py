"""Settings come from the environment first, then config.yaml; keys never print."""

from __future__ import annotations

from sourcedesk.core.config.settings import config_path, load_settings
from sourcedesk.core.sources.providers import get_provider
from sourcedesk.core.sources.providers.exa.provider import exa_settings
from sourcedesk.tui.cli import main


def test_env_keys_and_base_urls(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCEDESK_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("EXA_API_KEY", "exa-secret-123456")
    monkeypatch.setenv("SOURCEDESK_EXA_URL", "http://127.0.0.1:9")
    s = load_settings()
    exa = exa_settings(s)
    assert exa.exa_api_key.get_secret_value() == "exa-secret-123456"
    assert exa.exa_url == "http://127.0.0.1:9"
    assert (s.exa_url, s.exa_api_key) == (exa.exa_url, exa.exa_api_key)  # still readable where they used to be
    for shown in (repr(s), str(s.model_dump()), repr(exa), str(exa.model_dump())):
        assert "exa-secret-123456" not in shown


def test_config_file_is_read_and_env_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("SOURCEDESK_CONFIG_DIR", str(tmp_path))
    monkeypatch.delenv("SOURCEDESK_WRITER_URL", raising=False)
    (tmp_path / "config.yaml").write_text("writer-url: http://cfg.local\nbudget-chars: 5000\n")
    s = load_settings()
    assert s.writer_url == "http://cfg.local" and s.budget_chars == 5000
    monkeypatch.setenv("SOURCEDESK_BUDGET_CHARS", "7000")
    assert load_settings().budget_chars == 7000


def test_config_path_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SOURCEDESK_CONFIG_DIR", str(tmp_path))
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "config.yaml") == str(config_path())


def test_help_lists_commands(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert "config" in out


def test_key_from_config_file_is_redacted_from_the_store(monkeypatch, tmp_path):
    from sourcedesk.store.memo_store import MemoStore

    monkeypatch.setenv("SOURCEDESK_CONFIG_DIR", str(tmp_path / "cfg"))
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.yaml").write_text("exa-api-key: cfg-only-key-987654\n")
    assert get_provider("exa").api_key(load_settings()).get_secret_value() == "cfg-only-key-987654"
    memo = tmp_path / "memo"
    memo.mkdir()
    with MemoStore(memo) as store:
        run_id = store.save_run(
            {"section": "s", "error": {"kind": "auth", "message": "Exa said: bad key cfg-only-key-987654"}}
        )
        assert store.get_run(run_id).error.message == "Exa said: bad key [redacted]"
    on_disk = b"".join(p.read_bytes() for p in (memo / ".sourcedesk").rglob("*") if p.is_file())
    assert b"cfg-only-key-987654" not in on_disk
