"""Settings and where sourcedesk keeps things outside a memo folder.

Owns the one settings object every stage receives (environment first, then the user's
config file, then defaults) and the platform directories for config, global lists and logs."""
