"""The records every stage passes along, and the errors that reach the analyst.

Sources and source sets, run records and section state, reported costs, and the storage
protocols the pipeline needs from persistence (fulfilled by `sourcedesk.store`). Nothing
here talks to the network or the disk."""
