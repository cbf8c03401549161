"""The pages a signed-out visitor or an outsider meets (thread/views.py, issue 25): Nadia opens the
URL bin/serve prints and is sent to sign in and back; a Motion that does not exist sends her there
too; an outsider sees a plain not-found page; the Motion list says what it hides; the header offers
the people's sign-in page."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client

from motion_runner.models import Visibility
from tests.factories import MotionFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> None:
    call_command("bootstrap_demo", stdout=open("/dev/null", "w"))


def test_the_printed_url_signed_out_leads_to_the_sign_in_page_and_back(demo):
    nadia = Client()

    response = nadia.get("/motions/demo/")

    assert response.status_code == 302
    assert response["Location"] == "/sign-in/?next=/motions/demo/"
    page = nadia.get(response["Location"])
    assert page.status_code == 200
    signed_in = nadia.post(response["Location"], {"username": "demo", "password": "demo"})
    assert signed_in.status_code == 302
    assert signed_in["Location"] == "/motions/demo/"
    assert nadia.get("/motions/demo/").status_code == 200


def test_a_motion_that_does_not_exist_also_sends_a_signed_out_visitor_to_sign_in():
    # The same answer as for a Motion that exists: no slug oracle for the signed out.
    response = Client().get("/motions/no-such-thing/")

    assert response.status_code == 302
    assert response["Location"].startswith("/sign-in/?next=")


def test_a_signed_in_outsider_sees_a_plain_not_found_page_not_the_debug_one(settings):
    settings.DEBUG = True
    MotionFactory(slug="harbor", visibility=Visibility.MEMBERS)
    outsider = Client()
    outsider.force_login(UserFactory(username="otto"))

    response = outsider.get("/motions/harbor/")

    assert response.status_code == 404
    page = response.content.decode()
    assert "No such Motion" in page
    assert "technical_404" not in page and "Django tried these URL patterns" not in page
    assert 'href="/"' in page


def test_the_motion_list_says_there_are_motions_a_signed_out_visitor_cannot_see(demo):
    page = Client().get("/").content.decode()

    assert "No Motions yet" not in page
    assert "1 Motion you cannot see" in page
    assert "/sign-in/?next=/" in page


def test_the_motion_list_says_how_many_members_only_motions_are_hidden_from_a_signed_in_person():
    MotionFactory(slug="open", visibility=Visibility.SIGNED_IN)
    MotionFactory(slug="harbor", visibility=Visibility.MEMBERS)
    MotionFactory(slug="quay", visibility=Visibility.MEMBERS)
    pete = Client()
    pete.force_login(UserFactory(username="pete"))

    page = pete.get("/").content.decode()

    assert "2 Motions you cannot see" in page


def test_the_motion_list_with_nothing_at_all_still_says_so():
    assert "No Motions yet" in Client().get("/").content.decode()


def test_the_header_offers_the_peoples_sign_in_page_not_the_admin_login(demo):
    page = Client().get("/").content.decode()

    assert "/admin/login/" not in page
    assert "/sign-in/?next=/" in page
