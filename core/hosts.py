"""Stable import path for the pin checks scripts and tests rely on.

The code lives in ``sourcedesk.core.net.hosts``; this module keeps
``sourcedesk.core.hosts.host_matches_pin`` and ``registrable_domain`` importable
wherever that module moves.
"""

from sourcedesk.core.net.hosts import host_matches_pin, registrable_domain

__all__ = ["host_matches_pin", "registrable_domain"]
