"""Signing in with an SSH key, with real keys and OpenSSH's own signatures."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from motion_runner.people.signin import NO_MATCH, add_key
from tests.factories import MotionFactory, UserFactory
from tests.ssh_keys import make_key, sign

pytestmark = pytest.mark.django_db


def challenge_from(response) -> str:
    return re.search(r"printf '%s' '([^']+)'", response.content.decode()).group(1)


@pytest.fixture
def justin(tmp_path):
    person = UserFactory(username="justin")
    key = make_key(tmp_path, "justin")
    add_key(person, (tmp_path / "justin.pub").read_text(), name="laptop")
    return key


def test_a_person_signs_the_challenge_and_is_signed_in_with_ssh(client: Client, justin):
    challenge = challenge_from(client.get("/sign-in/"))
    response = client.post("/sign-in/", {"username": "justin", "signature": sign(justin, challenge)})
    assert response.status_code == 302
    assert client.session["sign_in"] == "ssh"


def test_their_post_is_then_typed_by_a_person_signed_in_with_an_ssh_key(client: Client, justin):
    challenge = challenge_from(client.get("/sign-in/"))
    client.post("/sign-in/", {"username": "justin", "signature": sign(justin, challenge)})
    motion = MotionFactory(slug="trusted")
    response = client.post(
        f"/api/motions/{motion.slug}/messages/", {"text": "go"}, content_type="application/json"
    )
    assert response.status_code == 201
    from motion_runner.models import Message
    from wakes.decision.trust import decide

    assert decide(Message.objects.get()).mode == "full"


def test_someone_elses_key_is_refused(client: Client, justin, tmp_path):
    stranger = make_key(tmp_path, "stranger")
    challenge = challenge_from(client.get("/sign-in/"))
    response = client.post("/sign-in/", {"username": "justin", "signature": sign(stranger, challenge)})
    assert response.status_code == 403
    assert "does not match" in response.content.decode()
    assert "sign_in" not in client.session


def test_an_old_challenges_signature_cannot_be_replayed(client: Client, justin):
    first = challenge_from(client.get("/sign-in/"))
    signature = sign(justin, first)
    client.get("/sign-in/")  # a new challenge replaces the first
    response = client.post("/sign-in/", {"username": "justin", "signature": signature})
    assert response.status_code == 403


def test_a_password_sign_in_is_recorded_as_such(client: Client):
    person = UserFactory(username="pat")
    person.set_password("correct horse")
    person.save()
    assert client.login(username="pat", password="correct horse")
    client.get("/")
    assert client.session.get("sign_in") == "password"


def test_a_bad_public_key_is_refused_with_the_reason():
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="Not an SSH public key"):
        add_key(UserFactory(username="x"), "ssh-ed25519 notakey")


# --- what a browser sends -------------------------------------------------------------------


def test_a_signature_pasted_with_crlf_line_ends_signs_in(client: Client, justin):
    """A browser submits a textarea's lines ending in CRLF (HTML's form encoding)."""
    challenge = challenge_from(client.get("/sign-in/"))
    signature = sign(justin, challenge).replace("\n", "\r\n")
    response = client.post("/sign-in/", {"username": "justin", "signature": signature})
    assert response.status_code == 302
    assert client.session["sign_in"] == "ssh"


def test_a_signature_pasted_with_surrounding_whitespace_and_indents_signs_in(client: Client, justin):
    challenge = challenge_from(client.get("/sign-in/"))
    indented = "\n".join(f"   {line}  " for line in sign(justin, challenge).splitlines())
    response = client.post("/sign-in/", {"username": " justin ", "signature": f"\n\n{indented}\n\n"})
    assert response.status_code == 302


def test_after_an_error_the_username_and_the_challenge_are_kept(client: Client, justin, tmp_path):
    stranger = make_key(tmp_path, "stranger")
    challenge = challenge_from(client.get("/sign-in/"))
    refused = client.post("/sign-in/", {"username": "justin", "signature": sign(stranger, challenge)})
    assert refused.status_code == 403
    assert challenge_from(refused) == challenge
    assert 'value="justin"' in refused.content.decode()
    # ...so the person signs the same challenge again with the right key, without starting over.
    response = client.post("/sign-in/", {"username": "justin", "signature": sign(justin, challenge)})
    assert response.status_code == 302


def test_a_challenge_is_replaced_after_five_failed_tries(client: Client, justin, tmp_path):
    stranger = make_key(tmp_path, "stranger")
    challenge = challenge_from(client.get("/sign-in/"))
    for _ in range(5):
        refused = client.post("/sign-in/", {"username": "justin", "signature": sign(stranger, challenge)})
    assert challenge_from(refused) != challenge
    response = client.post("/sign-in/", {"username": "justin", "signature": sign(justin, challenge)})
    assert response.status_code == 403


def test_a_used_challenge_is_not_kept(client: Client, justin):
    challenge = challenge_from(client.get("/sign-in/"))
    client.post("/sign-in/", {"username": "justin", "signature": sign(justin, challenge)})
    response = client.post("/sign-in/", {"username": "justin", "signature": sign(justin, challenge)})
    assert response.status_code == 403
    assert "expired or was already used" in response.content.decode()


def test_after_signing_in_next_goes_only_to_a_path_on_this_site(client: Client, justin):
    challenge = challenge_from(client.get("/sign-in/"))
    response = client.post(
        "/sign-in/?next=https://evil.example/", {"username": "justin", "signature": sign(justin, challenge)}
    )
    assert response.status_code == 302
    assert response.headers["Location"] == "/"


def test_after_signing_in_next_goes_back_to_the_thread(client: Client, justin):
    challenge = challenge_from(client.get("/sign-in/"))
    response = client.post(
        "/sign-in/?next=/motions/harbor/", {"username": "justin", "signature": sign(justin, challenge)}
    )
    assert response.headers["Location"] == "/motions/harbor/"


def test_an_unknown_username_is_answered_as_a_wrong_signature_is(client: Client, justin, tmp_path):
    stranger = make_key(tmp_path, "stranger")
    answers = []
    for username in ("justin", "nobody-by-this-name"):
        challenge = challenge_from(client.get("/sign-in/"))
        response = client.post("/sign-in/", {"username": username, "signature": sign(stranger, challenge)})
        answers.append((response.status_code, response.content.decode()))

    assert [status for status, _ in answers] == [403, 403]
    assert all(NO_MATCH in page and "No such person" not in page for _, page in answers)


def test_an_unknown_username_is_checked_by_ssh_keygen_as_a_known_one_is(
    client: Client, tmp_path, monkeypatch
):
    """Not only the same words: the same work, so the answer's timing tells nothing either."""
    from motion_runner.people import signin

    stranger = make_key(tmp_path, "stranger")
    challenge = challenge_from(client.get("/sign-in/"))
    signature = sign(stranger, challenge)
    runs = []
    real_run = signin.subprocess.run
    monkeypatch.setattr(signin.subprocess, "run", lambda *a, **kw: runs.append(a) or real_run(*a, **kw))

    response = client.post("/sign-in/", {"username": "nobody-by-this-name", "signature": signature})

    assert response.status_code == 403 and NO_MATCH in response.content.decode()
    assert len(runs) == 1
