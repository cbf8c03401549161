"""The thread as people read it: the pages (`views`), Markdown rendered once per text and cleaned
(`markup`), and the bell that wakes a long-polling reader when its Motion has something new
(`bell`, with `socket_bell` for SQLite). The JSON reads of the thread are in `motion_runner.api`.
It may import `models`, `conf`, `signals` (the page's wake parts come through hooks) and `people`.
"""
