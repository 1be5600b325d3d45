"""Placeholder and fabrication URL patterns (``example.com``, ``XXXX``, ``/path/to/``, ``{…}``).

They can never be in a real ground truth, so the reconciler drops or substitutes
them like any unretrieved URL; it counts them separately because 65 of them once
shipped in a "validated" memo and the analyst should see the number.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sourcedesk.core.net.urls import host_of, strip_www

_PLACEHOLDER_HOSTS = re.compile(r"(^|\.)(example\.(com|org|net|edu)|example|test|invalid|localhost)$")
_PLACEHOLDER_TEXT = re.compile(r"x{4,}|/path/to/|\{[^}]*\}|<[^>]*>|your[-_]?(domain|site|company|url)", re.I)


@lru_cache(maxsize=4096)
def is_placeholder_url(url: str) -> bool:
    host = strip_www(host_of(url) or "")
    if host and _PLACEHOLDER_HOSTS.search(host):
        return True
    return bool(_PLACEHOLDER_TEXT.search(url))
