"""The team store: everything a memo store keeps, on a PostgreSQL server (psycopg 3 + pool).

Chosen by ``SOURCEDESK_STORE_URL=postgresql://…`` (or ``store-url`` in config.yaml) through
``sourcedesk.store.backend``; imported only then, so a one-analyst install never loads psycopg.
"""
