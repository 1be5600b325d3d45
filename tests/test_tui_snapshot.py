"""Pictures of the memo screen, compared with the accepted SVGs in tests/__snapshots__/.

Fixed terminal size, a fresh demo memo (every section never run), no sandbox
(nothing is run), so nothing in view depends on time, ports or paths. After an
intended change to the look: `pytest tests/test_tui_snapshot.py --snapshot-update`,
then look at the new SVGs before accepting them.
"""

from __future__ import annotations

from sourcedesk.store.global_store import GlobalStore
from sourcedesk.tui.app import SourcedeskApp
from sourcedesk.tui.demo import demo_settings, prepare_demo

UNUSED_URL = "http://127.0.0.1:9"  # nothing is run in these pictures


def _app(tmp_path) -> SourcedeskApp:
    memo = prepare_demo(root=tmp_path / "demo")
    return SourcedeskApp(memo, settings=demo_settings(UNUSED_URL), global_store=GlobalStore(tmp_path / "g.json"))


def test_memo_screen_dark(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path), terminal_size=(140, 20))


def test_memo_screen_light_with_help(snap_compare, tmp_path):
    assert snap_compare(_app(tmp_path), press=["t", "question_mark"], terminal_size=(140, 40))
