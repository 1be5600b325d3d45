"""The workbench in a browser: ``sourcedesk serve`` (textual-serve, one app process per tab).

``access`` decides who may open the desk (token, Host, Origin, one-use session tickets),
``session`` runs and ends one tab's workbench process, ``server`` is the web server around
them, and ``desk_app`` is what each session's process runs: the same ``SourcedeskApp`` as
``sourcedesk open`` and ``sourcedesk demo``.
"""
