"""``sourcedesk demo`` set-up: a scratch copy of the bundled memo and the offline sandbox.

The demo must never touch the analyst's real keys, config or rejection lists:
its settings ignore the environment and config.yaml entirely (only what is set
here counts), its global rejection list is a file inside the demo folder, and
its memo lives in the user data dir (``<data>/demo/``), reset on every start
unless ``--keep``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sourcedesk.core.config.settings import Settings, data_dir
from sourcedesk.core.domain.errors import UserError
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


def prepare_demo(*, keep: bool = False, root: Path | None = None) -> Path:
    """The demo memo folder, fresh from the bundled copy (or as left last time with ``keep``)."""
    root = Path(root) if root is not None else demo_root()
    target = root / DEMO_NAME
    if keep and (target / "memo.yaml").is_file():
        return target
    if target.exists():
        if not (target / "memo.yaml").is_file() and any(target.iterdir()):
            raise UserError(
                f"{target} exists and is not a sourcedesk demo memo; not deleting it",
                hint="move it away or pass --dir to put the demo elsewhere",
            )
        _fail_if_open(target)
        shutil.rmtree(target)
    (root / "global.json").unlink(missing_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(
        DEMO_MEMO, target, ignore=shutil.ignore_patterns(".sourcedesk", "sections", "memo.md", "__pycache__")
    )
    return target


def _fail_if_open(target: Path) -> None:
    """Resetting a demo another window has open would pull the files from under it."""
    if not (target / ".sourcedesk").is_dir():
        return
    from sourcedesk.store.memo_store import MemoStore

    with MemoStore(target) as store:
        windows = [name for name in store.section_holders() if name.startswith("window-")]
    if windows:
        raise UserError(
            "another `sourcedesk demo` is running on the demo memo",
            hint="close it first, or run `sourcedesk demo --keep` to open the same memo",
        )


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
