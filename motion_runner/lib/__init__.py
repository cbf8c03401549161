"""The neutral lower layer (healthchecks' `hc/lib/` is the model): ids, the outbound HTTP wrapper
(`http/`), the settings mechanism, a task by its name (`tasks`), the one JSON reader and depth
check (`json_text`, `json_depth`), taking words out of a copy (`scrubbing`), a wiki page's address
(`wiki_urls`) and the stand-in model a first run without a key answers through (`standin_model`).
It imports Django, httpx and the standard library, never an app: not motion_runner outside lib/,
not wakes, not watchlist (import-linter holds it to that, see pyproject.toml). Every layer above
may import it."""
