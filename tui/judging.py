"""The ``about`` verdicts the screens show, judged once per source and kept for the session.

Judging a source reads all of its stored text, which adds up on a section of hundreds of
sources. A verdict depends only on the judge (the memo's subject, its declared and learned
namesakes, the rejected names) and on the source's text, so the app keeps one judge per state
of those and each verdict it gave; a curation that changes the namesakes makes a new judge.
"""

from __future__ import annotations

import threading

from sourcedesk.core.sources.about import About, AboutJudge, SourceText
from sourcedesk.core.sources.name_uses import PageWords


class CachedJudge(AboutJudge):
    """An ``AboutJudge`` that remembers its verdicts (safe to share between threads)."""

    def __init__(self, inner: AboutJudge, key: tuple[object, ...]) -> None:
        self.__dict__.update(inner.__dict__)  # the same judge: its names, hosts and context
        self.key = key
        self._verdicts: dict[tuple[str, str, int, int], About] = {}
        self._lock = threading.Lock()

    def judge(self, source: SourceText | object, page: PageWords | None = None) -> About:
        src = source if isinstance(source, SourceText) else SourceText.of(source)
        key = (src.url, src.title, len(src.body), hash(src.body))
        with self._lock:
            found = self._verdicts.get(key)
        if found is None:
            found = super().judge(src, page)
            with self._lock:
                self._verdicts[key] = found
        return found

    def known(self, source: SourceText | object) -> About | None:
        """The verdict already given for ``source``, without judging it."""
        src = source if isinstance(source, SourceText) else SourceText.of(source)
        with self._lock:
            return self._verdicts.get((src.url, src.title, len(src.body), hash(src.body)))
