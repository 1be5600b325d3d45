"""The Consistency view: one row per conflict, and a jump to either claim."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from sourcedesk.core.domain.models import Source
from sourcedesk.core.memo.loader import load_memo
from sourcedesk.core.sources.extraction import EXTRACTION_VERSION, fact_lines
from sourcedesk.core.verify.ledger import NoteClaims, build, memo_ledger, memo_sections
from sourcedesk.store.memo_store import MemoStore
from sourcedesk.tui.widgets.consistency import ConsistencyView
from tests.test_facts_cli import _memo


def conflicts():
    notes = [
        NoteClaims("overview", "Pellucid was founded in 2016.[^E1]",
                   [{"marker": "E1", "url": "https://a.example.com/p", "summary": "Pellucid was founded in 2016."}]),
        NoteClaims("team", "The founders started Pellucid in [bold]2018[/bold].[^E1]",
                   [{"marker": "E1", "url": "https://b.example.com/q", "summary": "Pellucid was started in 2018."}]),
    ]  # fmt: skip
    return build(notes, ["Pellucid"]).conflicts


class Host(App[None]):
    def __init__(self, view: ConsistencyView | None = None) -> None:
        super().__init__()
        self.view = view or ConsistencyView(conflicts())
        self.jumps: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield self.view

    def on_consistency_view_jump_to_claim(self, message: ConsistencyView.JumpToClaim) -> None:
        self.jumps.append((message.section, message.claim))


def test_a_row_per_conflict_and_a_jump_to_either_claim():
    app = Host()

    async def scenario() -> None:
        async with app.run_test() as pilot:
            table = app.query_one(DataTable)
            assert table.row_count == 1
            cells = table.get_row_at(0)
            assert all(isinstance(c, Text) for c in cells)  # never read as markup
            assert cells[0].plain == "founded" and "2016 (overview, a.example.com)" in cells[1].plain
            table.focus()
            await pilot.press("b")
            await pilot.press("a")
            await pilot.pause()

    asyncio.run(scenario())
    assert [section for section, _ in app.jumps] == ["team", "overview"]
    assert "[bold]2018[/bold]" in app.jumps[0][1]


def test_the_source_reader_gets_facts_as_plain_lines():
    source = Source(provider="exa", url="https://x.example.com", summary="Lumora was valued at $1.6 billion.")
    lines = fact_lines(source, 0)
    assert lines[0] == "valuation: $1.6 billion  — summary: “$1.6 billion”"
    assert lines[-1].startswith("(read now")
    stored = source.model_copy(
        update={
            "extracted": [
                {"kind": "year", "value": "2017", "span": "2017", "field": "summary", "start": 3, "measure": "founded"}
            ]
        }
    )
    assert fact_lines(stored, EXTRACTION_VERSION) == ["founded: 2017  — summary: “2017”"]


def _summary(app: App) -> str:
    return str(app.query_one("#consistency-summary").render())


def _ledger_of(memo_dir):
    loaded = load_memo(memo_dir / "memo.yaml")
    store = MemoStore(memo_dir)
    try:
        return memo_ledger(loaded, memo_sections(loaded, store))
    finally:
        store.close()


def test_the_view_reads_a_memo_on_disk_through_its_data_functions_and_says_what_it_compared(tmp_path):
    """The memo screen's path: notes and frozen sets on disk → memo_sections → memo_ledger → view;
    after a run that removes the conflict, show_ledger says how many statements agree."""
    memo = _memo(tmp_path, "In total Ostrava Labs has raised $25M.[^E1]")
    app = Host(ConsistencyView.from_ledger(_ledger_of(memo)))
    fixed = memo / "sections" / "02-funding.md"

    async def scenario() -> None:
        async with app.run_test() as pilot:
            table = app.query_one(DataTable)
            assert table.row_count == 1
            row = [c.plain for c in table.get_row_at(0)]
            assert row[1] == "$41M (overview, techcrunch.example.com)"
            assert row[2] == "$25M (funding, crunchbase.example.com)"
            assert row[3] == "sources disagree: techcrunch.example.com $41M, crunchbase.example.com $25M"
            assert _summary(app).startswith("1 conflict(s)")
            table.focus()
            await pilot.press("b")
            await pilot.pause()
            fixed.write_text(fixed.read_text(encoding="utf-8").replace("$25M", "$41M"), encoding="utf-8")
            ledger = _ledger_of(memo)
            app.view.show_ledger(ledger)
            await pilot.pause()
            assert table.row_count == 0
            assert _summary(app) == (
                f"No conflicts among the {len(ledger.statements)} statement(s) the ledger read "
                "(figures, years, rounds, roles)."
            )
            assert len(ledger.statements) >= 2
            await pilot.press("a")  # nothing to jump to: no message, no error
            await pilot.pause()

    asyncio.run(scenario())
    assert app.jumps == [("funding", "In total Ostrava Labs has raised $25M.")]


def test_with_nothing_compared_the_view_does_not_claim_the_memo_agrees(tmp_path):
    app = Host(ConsistencyView.from_ledger(build([], ["Pellucid"])))

    async def scenario() -> None:
        async with app.run_test():
            assert _summary(app).startswith("Nothing compared yet")

    asyncio.run(scenario())
