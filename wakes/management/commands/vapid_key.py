"""Prints a fresh VAPID private key for WAKES_VAPID_PRIVATE_KEY (Web Push of notices): keep it in
the environment or a vault, never in the repository. Changing it orphans every browser's
subscription (they were made for the old public key): people opt in again."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from wakes.notices.push import new_private_key


class Command(BaseCommand):
    help = "Print a new VAPID private key (base64url) for WAKES_VAPID_PRIVATE_KEY."

    def handle(self, *args, **options) -> None:
        self.stdout.write(new_private_key())
