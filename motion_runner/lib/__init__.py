"""The neutral lower layer (healthchecks' `hc/lib/` is the model): ids, the outbound HTTP wrapper
and the settings mechanism. It imports Django, httpx and the standard library, never an app:
not motion_runner outside lib/, not wakes, not watchlist (import-linter holds it to that, see
pyproject.toml). Every layer above may import it."""
