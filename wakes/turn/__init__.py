"""A woken turn: what it is told and what it may do.

Its words: the prompt (context), the footer, the line that says why it woke (wake), issue 33's
wake lines (wake_lines: a first session's letter, to-dos, arrivals), handoffs to another Motion
(handoff), the screen that reads the same posts first and summarizes the older ones (screen,
through the agent's own CLI in screen_cli). What it may use and for how long (tool_policy), its
memory server (memory_server) and ultracode (ultracode). What it asks back: requests
(`<tools to=…/>`, merge, deploy) and the thread's commands (`/compact`, `/context`, `/usage`:
commands; for Codex and Pi answered from the record, commands_elsewhere). The tool-loop guard
that watches it and the compaction after a stop (loop_guard, compaction).

Imports decision/ and money/, never consider_loop/ or web/.
"""
