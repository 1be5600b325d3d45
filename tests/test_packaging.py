"""The distribution installs under ``sourcedesk`` only, and the stable import paths answer.

The folders stay at the top of the repository (``core/``, ``store/``, …); pyproject.toml maps
them to ``sourcedesk.core``, ``sourcedesk.store``, …. These tests build the real wheel and
import it with nothing of the repository on the path, as a user's site-packages would hold it.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("core", "store", "screens", "tui", "themes", "sandbox")


def _declared() -> tuple[list[str], dict[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    return setuptools["packages"], setuptools["package-dir"]


def test_every_package_folder_is_declared_and_nothing_else():
    packages, mapping = _declared()
    found = {"sourcedesk.providers"}
    for top in TOPS:
        for init in (ROOT / top).rglob("__init__.py"):
            folder = init.parent.relative_to(ROOT)
            if folder.parts[:2] == ("core", "plugin_api"):
                continue  # installed as sourcedesk.providers
            found.add("sourcedesk." + ".".join(folder.parts))
    assert sorted(packages) == sorted(found)
    assert mapping["sourcedesk.providers"] == "core/plugin_api"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("sourcedesk-*.whl")
    return built


def test_the_wheel_holds_only_the_sourcedesk_namespace(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"sourcedesk", next(t for t in tops if t.endswith(".dist-info"))}
    assert "sourcedesk/core/hosts.py" in names
    assert "sourcedesk/providers/__init__.py" in names
    assert not any(n.startswith("sourcedesk/core/plugin_api/") for n in names)  # one copy of the plugin API
    assert "sourcedesk/sandbox/corpus/third_party.yaml" in names and "sourcedesk/themes/sourcedesk.tcss" in names
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "sourcedesk = sourcedesk.tui.cli:main" in entry


def test_the_installed_wheel_answers_the_stable_imports_with_no_repository_on_the_path(wheel: Path, tmp_path: Path):
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert not (site / "core").exists() and not (site / "store").exists()
    code = (
        "import sys\n"
        f"sys.path[:0] = [{str(site)!r}]\n"
        f"sys.path.append({sysconfig.get_paths()['purelib']!r})\n"
        "from sourcedesk.core.hosts import host_matches_pin, registrable_domain\n"
        "from sourcedesk.core.citations import reconcile, tidy\n"
        "from sourcedesk.providers import Provider, PluginEntry, ProviderSettings, Source\n"
        "import sourcedesk.core.hosts as hosts\n"
        "assert hosts.__file__.startswith(sys.path[0]), hosts.__file__\n"
        "assert host_matches_pin('docs.cresta.com', 'cresta.com') and not host_matches_pin('alcresta.com', 'cresta.com')\n"
        "assert registrable_domain('a.b.example.co.uk') == 'example.co.uk'\n"
        "assert tidy('Revenue grew[^1].\\n\\n[^1]: https://a.example/x\\n').startswith('Revenue grew. [^1]')\n"
        "try:\n"
        "    import core\n"
        "except ImportError:\n"
        "    print('no top-level core')\n"
    )
    # -S: no site processing, so the editable install of this checkout is not on the path
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no top-level core"
