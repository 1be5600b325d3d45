"""Curating a section in the workbench: untrusted text stays literal; un-reject and keep
put sources back into the frozen set with contiguous markers."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable, Static

from sourcedesk.core.domain.models import RemovedSource, Source, SourceSet
from sourcedesk.core.notes.note import NoteRecord, render_note
from sourcedesk.sandbox.server import SandboxServer
from sourcedesk.screens.section_screen import SectionScreen
from tests.test_tui_support import SIZE, cells, control, make_app, run_and_wait, screen_text, select_row, settle

INJECTED_TITLE = "[bold red]pwn[/] [link=x]"
MARKER_TITLE = "[^E1]"


@pytest.fixture(scope="module")
def sandbox():
    with SandboxServer(port=0, seed=0) as server:
        yield server


@pytest.fixture
def sb(sandbox):
    control(sandbox.url, "/_sandbox/reset")
    yield sandbox


def _plant(app) -> None:
    """A frozen set and a note whose text tries to smuggle in markup."""
    sources = [
        Source(
            provider="exa",
            url="https://evil.example.org/a",
            title=INJECTED_TITLE,
            marker="E1",
            summary="[bold]summary[/] with [link=https://x.invalid]a link[/link]",
        ),
        Source(provider="exa", url="https://nats.io/b", title=MARKER_TITLE, marker="E2", rank=1),
    ]
    app.store.save_source_set(
        SourceSet(
            section="overview",
            fingerprint="f" * 64,
            sources=sources,
            budget_chars=12000,
            namesakes=[
                RemovedSource(
                    url="https://www.nats.aero/x",
                    host="www.nats.aero",
                    title="[i]namesake[/i]",
                    reason="namesake",
                    rule="nats.io",
                )
            ],
        )
    )
    note = render_note(
        NoteRecord(
            section="overview",
            title="Company overview",
            run_id="run-x",
            model="sonar-pro",
            generated_at="2026-01-01T00:00:00Z",
        ),
        "Revenue grew [bold red]fast[/] [^E1]. See [link=https://x.invalid]here[/link] [^E2]",
    )
    path = app.loaded.dir / "sections" / "01-overview.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note, encoding="utf-8")


def test_titles_summaries_and_notes_are_shown_literally(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        _plant(app)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            table = app.screen.query_one("#sources", DataTable)
            title_cell = table.get_row("kept:0")[1]
            assert str(title_cell) == INJECTED_TITLE and title_cell.spans == []
            assert str(table.get_row("kept:1")[1]) == MARKER_TITLE
            assert "[i]namesake[/i]" in str(table.get_row("namesake:0")[1])
            shown = screen_text(app)
            assert INJECTED_TITLE[:24] in shown  # the cell is cut with an ellipsis; the brackets are there
            detail = str(app.screen.query_one("#detail", Static).render())
            assert INJECTED_TITLE in detail and "[link=https://x.invalid]a link[/link]" in detail
            await pilot.press("4")
            note = str(app.screen.query_one("#note", Static).render())
            assert "[bold red]fast[/] [^E1]" in note and "[link=https://x.invalid]here[/link]" in note
            assert "Revenue grew [bold red]fast[/]" in screen_text(app)

    asyncio.run(scenario())


def test_unreject_puts_the_sources_back_and_keep_adds_a_web_result(sb, tmp_path):
    async def scenario():
        app = make_app(tmp_path, sb.url)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the rows are read off the event loop
            table = app.screen.query_one("#sections", DataTable)
            table.move_cursor(row=4)  # news: a wide search that picks up nats.aero
            await run_and_wait(pilot, "r", "news")
            original = [(s.marker, s.url) for s in app.store.latest_source_set("news").sources]
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            sources = app.screen.query_one("#sources", DataTable)
            await select_row(
                pilot, sources, lambda r: r[2] == "www.nats.aero" and r[6].startswith("held out")
            )  # issue 17
            await pilot.press("x")
            await settle(pilot)
            assert not isinstance(app.screen, SectionScreen)
            await pilot.press("g")  # global scope
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, SectionScreen)
            assert app.global_store.rejects() == ["nats.aero"] and app.store.rejects() == []
            await select_row(pilot, sources, lambda r: r[6] == "rejected (global)")
            await pilot.press("u")
            await settle(pilot)
            assert app.global_store.rejects() == []
            assert [(s.marker, s.url) for s in app.store.latest_source_set("news").sources] == original
            assert any("3 source(s) back" in m for _s, m in app.notices), app.notices

            # keep one of the writer's web results that is not in the set yet
            await pilot.press("5")
            web = app.screen.query_one("#web", DataTable)
            key = await select_row(pilot, web, lambda r: r[4] == "")
            assert isinstance(app.screen, SectionScreen)
            result = app.screen.web_results[int(key.split(":")[1])]
            await pilot.press("k")
            await settle(pilot)
            latest = app.store.latest_source_set("news")
            kept = [s for s in latest.sources if s.provider == "writer"]
            assert [(s.marker, s.url) for s in kept] == [("W1", result["url"])]
            assert cells(web, key)[4] == "W1"
            await pilot.press("k")  # the same result again: refused, nothing changes
            await settle(pilot)
            assert app.store.latest_source_set("news").version == latest.version
            assert any(s == "error" and "already in the set as W1" in m for s, m in app.notices)

            # drop one source from this set only, then restore it
            await pilot.press("1")
            sources = app.screen.query_one("#sources", DataTable)
            before = [(s.marker, s.url) for s in app.store.latest_source_set("news").sources]
            # (issue 17: the namesake's pages are held out, so E1 is the writer's one Exa source)
            await select_row(pilot, sources, lambda r: r[0] == "E1")
            await pilot.press("d")
            await settle(pilot)
            after = app.store.latest_source_set("news").sources
            assert [s.url for s in after] == [u for _m, u in before if u != before[0][1]]
            assert [s.marker for s in after if s.provider == "exa"] == [f"E{i}" for i in range(1, len(after))]
            await select_row(pilot, sources, lambda r: r[6] == "dropped (this set)")
            await pilot.press("u")
            await settle(pilot)
            assert [(s.marker, s.url) for s in app.store.latest_source_set("news").sources] == before

    asyncio.run(scenario())
