"""The network layer: URLs, hosts, deadlines, retries, bounded HTTP exchanges.

Every outbound request (Exa, the writer, check-urls) goes through the same policies here:
one URL normaliser, registrable domains and pin checks, total deadlines, retry and pacing,
and a size cap on every body."""
