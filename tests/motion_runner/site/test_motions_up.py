"""The address one level up from a thread (`/motions/demo/` → `/motions/`) leads to the Motion
list: a newcomer who trims the address bin/serve printed meets the list, not a 404."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_one_level_up_from_a_thread_leads_to_the_motion_list(client):
    answer = client.get("/motions/")

    assert answer.status_code == 302
    assert answer["Location"] == reverse("motion-list")
