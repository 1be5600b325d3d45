"""The Consistency view: one row per conflict, and a jump to either claim."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from sourcedesk.core.domain.models import Source
from sourcedesk.core.sources.extraction import EXTRACTION_VERSION, fact_lines
from sourcedesk.core.verify.ledger import NoteClaims, build
from sourcedesk.tui.widgets.consistency import ConsistencyView


def conflicts():
    notes = [
        NoteClaims("overview", "Pellucid was founded in 2016.[^E1]",
                   [{"marker": "E1", "url": "https://a.example.com/p", "summary": "Pellucid was founded in 2016."}]),
        NoteClaims("team", "The founders started Pellucid in [bold]2018[/bold].[^E1]",
                   [{"marker": "E1", "url": "https://b.example.com/q", "summary": "Pellucid was started in 2018."}]),
    ]  # fmt: skip
    return build(notes, ["Pellucid"]).conflicts


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.jumps: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield ConsistencyView(conflicts())

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
