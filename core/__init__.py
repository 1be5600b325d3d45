"""The headless product: domain and pipeline (no Textual)."""

import logging as _logging


def _clean_log_records() -> None:
    """Every log record is cleaned (keys redacted, control sequences removed) from the first
    import of ``core`` on, whatever entry point — CLI, workbench, tests — set up the handlers.
    The cleaning module loads with the first record, so a command that logs nothing pays
    nothing for it."""
    previous = _logging.getLogRecordFactory()
    if getattr(previous, "_sourcedesk_cleans", False):
        return

    def factory(*args: object, **kwargs: object) -> _logging.LogRecord:
        from sourcedesk.core.text.log_safety import clean_record

        return clean_record(previous(*args, **kwargs))

    factory._sourcedesk_cleans = True  # type: ignore[attr-defined]  # a marker, so it is installed once
    _logging.setLogRecordFactory(factory)


_clean_log_records()
