"""``sourcedesk demo`` set-up: a scratch copy of the bundled memo and the offline sandbox.

The demo must never touch the analyst's real keys, config or rejection lists:
its settings ignore the environment and config.yaml entirely (only what is set
here counts), its global rejection list is a file inside the demo folder, and
its memo lives in a fresh numbered folder of the user data dir (``<data>/demo/3/``) on every
start; ``--keep`` reopens the newest one as it was left.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sourcedesk.core.config.settings import Settings, data_dir
from sourcedesk.sandbox.server import SandboxServer

DEMO_MEMO = Path(__file__).resolve().with_name("demo") / "nats-profile"
DEMO_NAME = "nats-profile"
# Small enough to keep the demo brisk, large enough to watch each stage go by.
DEMO_LATENCY_MS = {"exa": 150, "writer": 600}
DEMO_KEY = "sandbox-demo-key"  # the sandbox accepts any non-empty key


class DemoSettings(Settings):
    """Settings from what the demo passes in and the defaults — nothing else (providers' too)."""

    reads_outside = False


def demo_root() -> Path:
    return data_dir() / "demo"


KEPT_DEMOS = 5  # older demo folders than the newest few are removed (unless one is open)


def prepare_demo(*, keep: bool = False, root: Path | None = None) -> Path:
    """A fresh copy of the bundled memo in a folder of its own under ``root`` (``root/3/nats-profile``),
    so no other demo — open in another window, or left changed — is reused or pulled from under
    it. ``keep``: the newest demo folder as it was left (a fresh one when there is none)."""
    root = Path(root) if root is not None else demo_root()
    if keep and (newest := _demo_folders(root)):
        target = newest[-1] / DEMO_NAME
        if (target / "memo.yaml").is_file():
            return target
    root.mkdir(parents=True, exist_ok=True)
    folder = _new_folder(root)
    target = folder / DEMO_NAME
    shutil.copytree(
        DEMO_MEMO, target, ignore=shutil.ignore_patterns(".sourcedesk", "sections", "memo.md", "__pycache__")
    )
    _prune(root, keep_last=KEPT_DEMOS)
    return target


def demo_global_list(memo_dir: Path) -> Path:
    """The demo's own global rejection list: beside its memo, never the analyst's."""
    return Path(memo_dir).parent / "global.json"


def _demo_folders(root: Path) -> list[Path]:
    """The numbered demo folders under ``root``, oldest first."""
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.isdigit()]
    return sorted(found, key=lambda p: int(p.name))


def _new_folder(root: Path) -> Path:
    """The next number's folder, created here (two demos starting at once get two folders)."""
    number = int(folders[-1].name) + 1 if (folders := _demo_folders(root)) else 1
    while True:
        folder = root / str(number)
        try:
            folder.mkdir()
        except FileExistsError:
            number += 1
            continue
        return folder


def _prune(root: Path, *, keep_last: int) -> None:
    """Old demo folders go, except the newest ``keep_last`` and any another window has open."""
    for folder in _demo_folders(root)[:-keep_last]:
        memo = folder / DEMO_NAME
        if (memo / "memo.yaml").is_file() and _is_open(memo):
            continue
        shutil.rmtree(folder, ignore_errors=True)


def _is_open(target: Path) -> bool:
    """Whether another process has this demo memo open (its store's lock is held)."""
    if not (target / ".sourcedesk").is_dir():
        return False
    from sourcedesk.store.memo_store import MemoStore

    with MemoStore(target) as store:  # reading needs no lock; a window holds its sections
        return any(name.startswith("window-") for name in store.section_holders())


def demo_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "exa_url": base_url,
        "writer_url": base_url,
        "exa_api_key": DEMO_KEY,
        "perplexity_api_key": DEMO_KEY,
        "retrieval_enabled": True,
    }
    values.update(overrides)
    return DemoSettings(**values)


@contextmanager
def demo_sandbox(latency_ms: dict[str, int] | None = None, seed: int = 0) -> Iterator[SandboxServer]:
    """The sandbox on a free loopback port for as long as the demo runs."""
    server = SandboxServer(port=0, latency_ms=dict(latency_ms or DEMO_LATENCY_MS), seed=seed)
    server.start()
    try:
        yield server
    finally:
        server.stop()
