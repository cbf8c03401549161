"""Django's PostgreSQL backend with two of psycopg's pure-Python adapters replaced by faster ones.

The standalone settings name it as the ENGINE for a postgres:// DATABASE_URL; a host project may
name it too (`"ENGINE": "motion_runner.sql.backend"`) or keep Django's: the apps behave the same.
"""
