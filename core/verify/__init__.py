"""Verify a finished memo: are the cited pages alive, and do they say it? (Reconciling
proves a URL was retrieved; only a fetch proves it still answers, and only the stored
text proves a quotation or figure is really in it.)

``check-urls`` runs here. Modules, one concept each:

* ``targets`` — which notes PATH means, and every cited URL and grounded item in them;
* ``claims`` — quotations and statistics in a sentence of prose;
* ``evidence`` — the stored text of each retrieved page (frozen sets, writer snippets);
* ``stored`` — reading that evidence from a memo's store;
* ``grounding`` — does a quotation/statistic appear verbatim in a source's text;
* ``addresses`` — never fetch private, loopback or link-local addresses;
* ``sniff`` — soft-404 and paywall stubs that answer 200;
* ``liveness`` — one URL fetched for real (redirects, retries) and classified;
* ``check`` — all of the above for a PATH, as one report (``check_path``).
"""
