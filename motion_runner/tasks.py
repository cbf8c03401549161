"""Celery tasks of the transcript importer (autodiscovered as motion_runner.tasks)."""

from __future__ import annotations

from celery import shared_task

from .record import binding
from .transcripts.importer import import_all


@shared_task(name="motion_runner.import_transcripts", ignore_result=True)
def import_transcripts_task() -> dict[str, int]:
    """Periodic (beat, TRANSCRIPT_IMPORT_SECONDS). Never retried: every file resumes from its
    stored offset and every line is deduplicated on its id, so the next tick is the retry and a
    tick that overlaps another only finds the lines already written."""
    totals = import_all()
    return {"files": totals.files, "imported": totals.imported, "skipped": totals.skipped}


@shared_task(name="motion_runner.sweep_taken_back", ignore_result=True)
def sweep_taken_back_task() -> int:
    """Periodic (beat, every minute): posts the binding's record took back where no receiver heard
    it (memory-lane's MessageChange rows written by a shell or a bulk write) are taken back here."""
    return binding().sweep_changes()
