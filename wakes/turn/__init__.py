"""A woken turn: what it is told and what it may do.

Its words: the prompt (context), the footer, the line that says why it woke (wake),
the screen that reads the same posts first and summarizes the older ones (screen). What it may
use and for how long (tool_policy). What it asks back: requests (`<tools to=…/>`, merge,
deploy) and the thread's commands (`/compact`, `/context`, `/usage`). The tool-loop guard that
watches it and the compaction after a stop (loop_guard, compaction).

Imports decision/ and money/, never consider_loop/ or web/.
"""
