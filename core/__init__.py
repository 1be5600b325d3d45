"""The headless product: domain and pipeline (no Textual)."""

from core import log_safety

# Log records are cleaned (keys redacted, control sequences removed) from the first
# import on, whatever entry point — CLI, workbench, tests — configured the handlers.
log_safety.install()
