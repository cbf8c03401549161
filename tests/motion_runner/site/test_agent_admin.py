"""The Agent admin's doors (issues 10 and 20; motion_runner/admin.py): a new key never rides in a
cookie, a view-only staff user reads the pages, makes no key and sees env secrets masked."""

from __future__ import annotations

from django.test import Client

from motion_runner.models import AgentKey
from tests.factories import AgentFactory, UserFactory


def test_the_admins_new_key_never_rides_in_a_cookie(db):
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    agent = AgentFactory(name="scribe")

    response = admin.post(
        "/admin/motion_runner/agent/", {"action": "create_key", "_selected_action": [agent.pk]}, follow=False
    )

    assert AgentKey.objects.filter(agent=agent).exists()
    assert all("mrk_" not in morsel.value for morsel in response.cookies.values())
    assert "messages" not in response.cookies


def test_a_view_only_staff_user_reads_the_agent_admin_pages(client, scribe):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    viewer = UserFactory(username="auditor", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(codename__in=["view_agent", "view_agentkey"]))
    client.force_login(viewer)
    pages = ["/admin/motion_runner/agent/", f"/admin/motion_runner/agent/{scribe.agent.pk}/change/"]
    assert [client.get(page).status_code for page in pages] == [200, 200]
    assert client.post(
        "/admin/motion_runner/agent/", {"action": "create_key", "_selected_action": [scribe.agent.pk]}
    ).status_code in (200, 302, 403)
    from motion_runner.models import AgentKey

    assert AgentKey.objects.filter(agent=scribe.agent).count() == 1  # the persona's own key only


def test_a_view_only_staff_user_sees_the_agents_env_secrets_masked(client, scribe):
    from django.contrib.auth.models import Permission

    from motion_runner.models import Agent
    from tests.factories import UserFactory

    Agent.objects.filter(pk=scribe.agent.pk).update(env={"OPENAI_API_KEY": "value-never-shown", "HOME": "/h"})
    viewer = UserFactory(username="auditor", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_agent"))
    client.force_login(viewer)
    page = client.get(f"/admin/motion_runner/agent/{scribe.agent.pk}/change/").content.decode()
    assert "value-never-shown" not in page and "/h" in page
