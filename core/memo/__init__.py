"""The memo spec: memo.yaml, its schema, its loader and its messages.

First stage of the pipeline: a folder's memo.yaml becomes a validated `Memo` (or one clear
error with file, line and hint). Query templates, the init outline and the pin edit live here
because they read or write that same file."""
