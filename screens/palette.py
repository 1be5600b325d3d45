"""Command palette (ctrl+p): the main actions, and every section by name.

Each command goes through the app's one error path (``SourcedeskApp.guarded``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from sourcedesk.screens.workbench import workbench_app


class SourcedeskCommands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        app = workbench_app(self.app)
        commands: list[tuple[str, Callable[[], Any], str]] = [
            (
                "Run all sections",
                app.action_run_all,
                "run every section (each reuses its frozen sources unless memo.yaml changed or they expired)",
            ),
            ("Export memo.md", app.action_export, "assemble the section notes into memo.md"),
            ("Toggle light/dark theme", app.action_toggle_theme, "switch between the two themes"),
            ("Namesakes", app.action_namesakes, "what the subject is not: declared in memo.yaml or learned"),
        ]
        for section in app.loaded.memo.sections:
            label = f"{section.title} ({section.id})"
            commands += [
                (f"Open section: {label}", partial(app.open_section, section.id), "show sources, report and note"),
                (
                    f"Run section: {label}",
                    partial(app.start_run, section.id),
                    "write it (reusing the frozen set unless memo.yaml changed or it expired)",
                ),
                (
                    f"Refresh retrieval and run: {label}",
                    partial(app.start_run, section.id, refresh=True),
                    "search again, then write",
                ),
            ]
            if section.id in app.jobs:
                commands.append((f"Cancel: {label}", partial(app.cancel_run, section.id), "stop the running section"))
        return commands

    async def discover(self) -> Hits:
        app = workbench_app(self.app)
        for text, command, help_text in self._commands():
            if text.startswith(("Run all", "Export", "Toggle", "Open section")):
                yield DiscoveryHit(Content(text), app.guarded(command, text), text=text, help=help_text)

    async def search(self, query: str) -> Hits:
        app = workbench_app(self.app)
        matcher = self.matcher(query)
        for text, command, help_text in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), app.guarded(command, text), text=text, help=help_text)
