"""The section note and the assembled memo: what the analyst reads.

A section's note is written in the house format, atomically, only after a run succeeded or
degraded; `export` assembles every note into memo.md."""
