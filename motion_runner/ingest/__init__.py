"""The write path: every event and line the apps keep becomes a Message here, once.

It owns turning harness events into Messages (`writer`), fitting and redacting them before they are
stored (`fit`, `redaction`), matching a line written twice under two ids (`twins`), which Motion a
session belongs to (`sessions`), the lines the runner says itself (`system_lines`) and the words a
tool call or a turn's end is shown with (`display`). It stores through `motion_runner.record` (the
record binding) and announces what it stored through `motion_runner.signals`; it may import
`models`, `conf`, `signals`, `lib`, `harnesses.base` and `record`, and nothing in `record` imports it.
"""
