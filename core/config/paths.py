"""Where sourcedesk keeps things outside a memo folder: config, global state, logs.

Each may be moved with an environment variable (tests and the demo do), else the
platform's user directories are used.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir, user_log_dir

APP = "sourcedesk"


def config_dir() -> Path:
    return Path(os.environ.get("SOURCEDESK_CONFIG_DIR") or user_config_dir(APP))


def config_path() -> Path:
    return config_dir() / "config.yaml"


def data_dir() -> Path:
    """Where global state lives (the global rejection list)."""
    return Path(os.environ.get("SOURCEDESK_DATA_DIR") or user_data_dir(APP))


def log_dir() -> Path:
    """Where unexpected errors are written down with their tracebacks."""
    return Path(os.environ.get("SOURCEDESK_LOG_DIR") or user_log_dir(APP))
