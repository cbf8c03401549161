"""`manage.py enroll_signers` (issue 40, item 2): memory-lane's MOOD_ALLOWED_SIGNERS keys brought
here, so a row its key-signed people write on its page counts here (docs/memory-lane.md)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from motion_runner.models import SshKey
from motion_runner.people.signers import read
from motion_runner.people.signin import add_key
from tests.ssh_keys import make_key

pytestmark = pytest.mark.django_db


def public(folder, name: str) -> str:
    return (make_key(folder, name).with_suffix(".pub")).read_text().strip()


def run(**options) -> str:
    out = StringIO()
    call_command("enroll_signers", stdout=out, **options)
    return out.getvalue()


def test_each_listed_person_gets_an_account_without_a_password_and_the_key(tmp_path, settings):
    justin = public(tmp_path, "justin")
    signers = tmp_path / "allowed_signers"
    signers.write_text(f'justin namespaces="magenta-moods" {justin}\n')
    settings.MOOD_ALLOWED_SIGNERS = str(signers)
    said = run()
    user = get_user_model().objects.get(username="justin")
    assert not user.has_usable_password()
    assert SshKey.objects.get(user=user).public_key.split()[:2] == justin.split()[:2]
    assert "1 enrolled" in said and "new accounts: justin" in said


def test_a_person_already_here_keeps_their_account_and_gains_the_key(tmp_path, settings):
    person = get_user_model().objects.create_user("skyler", password="pw")
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"skyler {public(tmp_path, 'skyler')}\n")
    run(file=str(signers))
    person.refresh_from_db()
    assert person.check_password("pw") and SshKey.objects.filter(user=person).count() == 1


def test_running_it_again_adds_nothing(tmp_path):
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"justin {public(tmp_path, 'justin')}\n")
    run(file=str(signers))
    said = run(file=str(signers))
    assert SshKey.objects.count() == 1 and "0 enrolled, 1 already here" in said


def test_a_key_for_another_namespace_a_pattern_and_an_authority_are_skipped_saying_why(tmp_path):
    key = public(tmp_path, "k")
    listed, skipped = read(
        f'git namespaces="git" {key}\n*@example.com {key}\nops cert-authority {key}\n# comment\n'
    )
    assert listed == []
    assert skipped == [
        "line 1: for git, not magenta-moods",
        "line 2: *@example.com is a pattern, not a name",
        "line 3: a certificate authority, not one person's key",
    ]


def test_a_key_already_someone_elses_here_is_not_moved(tmp_path):
    key = public(tmp_path, "shared")
    add_key(get_user_model().objects.create_user("owner"), key)
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"justin {key}\n")
    said = run(file=str(signers))
    assert "is owner's key here" in said and not get_user_model().objects.filter(username="justin").exists()


def test_no_file_named_is_an_error_that_says_what_to_set(settings):
    settings.MOOD_ALLOWED_SIGNERS = ""
    with pytest.raises(CommandError, match="MOOD_ALLOWED_SIGNERS"):
        run()
