"""Sources for a section: retrieve, curate, judge, reject.

First network stage of the pipeline: a section's include-sources entries go to their
providers; results are checked against pins and rejections, judged for which company they are
about, packed into the context budget and numbered, and frozen as a persisted source set.
The analyst's later edits to that set (reject, keep, drop, restore) are `curation`."""
