"""Units that are one quantity at another scale (``sourcedesk.core.citations.figures``): 640 megawatts is
0.64 gigawatts, never 640 gigawatts. Keyed by the unit as the figure reader keeps it (lower case,
stemmed: "petabytes" → "petabyt", or the lexicon's term: "MW" → "megawatts"); the value is the base unit and the factor to it."""

from __future__ import annotations

SCALED_UNITS = {
    **dict.fromkeys(("kw", "kilowatt", "kilowatts"), ("W", 1000.0)),
    **dict.fromkeys(("mw", "megawatt", "megawatts"), ("W", 1000000.0)),
    **dict.fromkeys(("gw", "gigawatt", "gigawatts"), ("W", 1000000000.0)),
    **dict.fromkeys(("tw", "terawatt"), ("W", 1000000000000.0)),
    **dict.fromkeys(("kwh",), ("Wh", 1000.0)),
    **dict.fromkeys(("mwh",), ("Wh", 1000000.0)),
    **dict.fromkeys(("gwh",), ("Wh", 1000000000.0)),
    **dict.fromkeys(("twh",), ("Wh", 1000000000000.0)),
    **dict.fromkeys(("kb", "kilobyt"), ("B", 1000.0)),
    **dict.fromkeys(("mb", "megabyt"), ("B", 1000000.0)),
    **dict.fromkeys(("gb", "gigabyt"), ("B", 1000000000.0)),
    **dict.fromkeys(("tb", "terabyt"), ("B", 1000000000000.0)),
    **dict.fromkeys(("pb", "petabyt"), ("B", 1000000000000000.0)),
}
