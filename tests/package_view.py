"""Build the package view mypy and import-linter read: ``VIEW/sourcedesk/<pkg>`` → ``<pkg>/``.

The installed package maps ``sourcedesk.core`` to ``core/`` (and so on) through
``[tool.setuptools.package-dir]`` in pyproject.toml; an editable install does that with an
import hook that static tools do not run. This view gives them the same names as plain
folders. It is rebuilt from pyproject.toml's own mapping, so the two cannot disagree.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_dirs() -> dict[str, Path]:
    """``sourcedesk.core`` → ``ROOT/core``, … as pyproject.toml declares them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def build(view: Path) -> None:
    top = view / "sourcedesk"
    if top.exists():
        shutil.rmtree(top)
    top.mkdir(parents=True)
    for name, folder in package_dirs().items():
        parts = name.split(".")
        assert parts[0] == "sourcedesk" and len(parts) == 2, name
        (top / parts[1]).symlink_to(folder, target_is_directory=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
