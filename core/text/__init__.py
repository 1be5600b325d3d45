"""Outside text made safe, and the phrases an analyst reads.

The one cleaning function for every string that enters from outside (control characters,
bidi overrides), the secret values that must never be printed, log-record cleaning, and
whole-word phrase matching."""
