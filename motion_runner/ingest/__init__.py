"""The write path: every event and line the apps keep becomes a Message here, once.

It owns the one way in for a producer's lines (`entry`: the stream API, the transcript importer,
memory-lane's posted lines and the hooks hand their lines there), turning harness events into
Messages (`writer`), fitting and redacting them before they are stored (`fit`, `redaction`),
matching a line written twice under two ids (`twins`), every question of how a session is claimed
(`sessions`), the lines the runner says itself (`system_lines`) and the words a
tool call or a turn's end is shown with (`display`). It stores through `motion_runner.record` (the
record binding) and announces what it stored through `motion_runner.signals`, a paced batch per
Motion (`announcing`); it may import
`models`, `conf`, `signals`, `lib`, `harnesses.base` and `record`, and nothing in `record` imports it.
"""
