"""One section's run from end to end, and what the memo screen says about it.

`run` chains the stages (resolve sources → write → reconcile → save the note) over a
`SectionRun`; `section_state` derives each section's status from the store and the disk."""
