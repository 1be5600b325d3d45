"""Reading and writing files safely: regular files only, within a size cap; atomic writes.

Every note, store file and memo.yaml read or written by the product goes through here, so a
FIFO, a device or a crash half-way never costs the analyst a file."""
