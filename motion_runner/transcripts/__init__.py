"""The Claude Code transcript importer: reads `~/.claude/projects/<cwd-munged>/<session>.jsonl` files
from where it last stopped (TranscriptFile keeps each file's inode and byte offset), routes a
session to its Motion only through its MotionSession claim (an unclaimed one waits in the admin's
inbox) and writes through EventWriter like the runner and the stream API, so a line's uuid is the
Message id the runner or the stream API already used and nothing is said twice. It owns the files
and their offsets (`files`), what a line says (`lines`), the routing to sessions (`routing`), the
reading of a chunk (`reader`), and the import loop (`importer`); it may import the write path
(`ingest`: its entry, writer, fit, sessions and announcer), the harness adapters, the models and
`lib`, and nothing of the runner, the API or the admin, which import it.
"""
