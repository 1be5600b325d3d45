"""The Exa provider: its API client, its entry options and its pin modes.

Everything that knows Exa's request and response shapes lives in this package."""
