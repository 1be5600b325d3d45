"""core/ and store/ are the headless product: they must never pull in Textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_core_and_store_import_no_textual():
    modules = sorted(
        "sourcedesk." + ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for pkg in ("core", "store")
        for p in (ROOT / pkg).rglob("*.py")
    )
    modules = [m.removesuffix(".__init__") for m in modules]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(n for n in sys.modules if n == 'textual' or n.startswith('textual.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert len(modules) > 30
    assert out.stdout.strip() == "[]"
