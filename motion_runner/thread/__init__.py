"""The thread as people read it: the pages (`views`), Markdown rendered once per text and cleaned
(`markup`), the bell that wakes a long-polling reader when its Motion has something new (`bell`,
with `socket_bell` for SQLite), what an agent is typing (`typed`) and the holds a thread shows
(`holds_shown`), both kept in the cache so a poll reads them without a query. The JSON reads of the
thread are in `motion_runner.api`. It may import `models`, `conf`, `signals` (the page's wake parts
come through hooks) and `people`.
"""
