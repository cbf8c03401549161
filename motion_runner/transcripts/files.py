"""Where transcripts lie and how one is read: the configured directories, a file's locked
TranscriptFile row (its inode and byte offset), a chunk of its bytes, a runner turn's own file."""

from __future__ import annotations

from pathlib import Path

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..harnesses.env import harness_environment
from ..models import TranscriptFile, Turn
from .lines import HARNESS


def locked_record(path: Path) -> TranscriptFile:
    """The file's TranscriptFile, its row locked until this transaction ends; created when new.

    One statement for a file read before, three for a new one, in the transaction that reads it.
    Two imports of one new file at once: the second's insert does nothing; its lock then waits
    for the first's commit and finds the row as the first left it.
    """
    files = TranscriptFile.objects.select_for_update()
    record = files.filter(path=str(path)).first()
    if record is None:
        TranscriptFile.objects.bulk_create(
            [TranscriptFile(path=str(path), session_id=path.stem)], ignore_conflicts=True
        )
        record = files.get(path=str(path))
    return record


def read_chunk(path: Path, offset: int, size: int) -> bytes:
    """Up to `size` bytes of `path` from `offset`."""
    with path.open("rb") as handle:
        handle.seek(offset)
        return handle.read(size)


def transcript_dirs() -> list[Path]:
    return [Path(d).expanduser() for d in settings.TRANSCRIPT_DIRS]


def allowed_path(path: str) -> Path | None:
    """A transcript path a hook named, if it lies inside a configured transcript directory."""
    try:
        resolved = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    for directory in transcript_dirs():
        if resolved.suffix == ".jsonl" and resolved.is_relative_to(directory.resolve()):
            return resolved
    return None


def transcript_of(turn: Turn) -> Path | None:
    """Where Claude Code kept a runner turn's transcript: under the HOME its harness ran with
    (`.claude/projects/<cwd-munged>/<session>.jsonl`), or a configured transcript directory."""
    if turn.agent.harness != HARNESS or not turn.session_id:
        return None
    home = harness_environment(turn.agent).get("HOME")
    roots = ([Path(home) / ".claude" / "projects"] if home else []) + transcript_dirs()
    for root in roots:
        for path in sorted(root.glob(f"*/{turn.session_id}.jsonl")):
            return path
    return None
