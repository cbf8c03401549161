"""Issue 42, "What to build" 2: shapes built from what the field already knows (gitleaks' rule
list, detect-secrets' plugins, the tools' documented flags). Each rule: a secret in its shape is
taken out, and a near miss (the same words with no secret, or a value that is not one) is left
as it is. The values are made up here, in each issuer's documented format."""

from __future__ import annotations

import pytest

from motion_runner.ingest.redaction import MARK, redact

A = "Xq7rT2mK9pL4vB8nZ3wY6cD1"  # 24 generated characters, reused to make each shape's value


def hexes(n: int) -> str:
    return ("9f3a6c0b2d71e85" * 20)[:n]


def alnum(n: int) -> str:
    return (A * 10)[:n]


# (shape, line, secret)
SHAPES = [
    ("1password secret key", "Secret Key: A3-ABC123-DEF456GHJ78-K1L2M-N3P4Q-R5S6T", None),
    ("artifactory key", f"X-JFrog-Art-Api: AKCp{alnum(69)}", None),
    ("alibaba access key id", f"--access-key-id LTAI{alnum(20)} --region x", None),
    ("clickhouse cloud secret", f"key 4b1d{alnum(38)}", None),
    ("cloudflare origin ca key", f"v1.0-{hexes(24)}-{hexes(146)}", None),
    ("dynatrace token", f"Api-Token dt0c01.{alnum(24).upper()}.{alnum(64).upper()}", None),
    ("heroku v2", f"HRKU-AA{alnum(58)}", None),
    ("maxmind license key", f"LicenseKey {alnum(6)}_{alnum(29)}_mmk", None),
    ("new relic insert key", f"NRII-{alnum(32)}", None),
    ("new relic browser key", f"NRJS-{hexes(19)}", None),
    ("octopus deploy key", "octo push --apiKey API-ABCDEFGHIJ0123456789KLMNOP", None),
    ("prefect key", f"prefect cloud login -k pnu_{alnum(36)}", None),
    ("scalingo token", f"tk-us-{alnum(48)}", None),
    ("yandex static key", f"YC{alnum(38)}", None),
    ("plaid token", "access-production-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", None),
    ("facebook app token", f"123456789012345|{alnum(30)}", None),
    (
        "discord bot token",
        f"client.run('N{alnum(23)}.Ab-1_c.{alnum(27)}')",
        f"N{alnum(23)}.Ab-1_c.{alnum(27)}",
    ),
    (
        "teams webhook",
        "https://co.webhook.office.com/webhookb2/0a1b2c3d-0000-4000-8000-00000000000a@"
        "0a1b2c3d-0000-4000-8000-00000000000b/IncomingWebhook/"
        + hexes(32)
        + "/0a1b2c3d-0000-4000-8000-0000000000cc",
        hexes(32),
    ),
    ("sidekiq url", 'source "https://0a1b2c3d:4e5f6a7b@gems.contribsys.com/" do', "0a1b2c3d:4e5f6a7b"),
    ("sidekiq env", "BUNDLE_GEMS__CONTRIBSYS__COM=0a1b2c3d:4e5f6a7b", "0a1b2c3d:4e5f6a7b"),
    ("vendor-named key", f"cloudflare_global_key: {hexes(37)}", hexes(37)),
    ("vendor-named header", f"Fastly-Key: {alnum(32)}", alnum(32)),
    (
        "key-ish name, quoted high entropy",
        'signing_key: "kJ8s/Qw2+Zx9Lm4Np7Rt1Vb3Yc6Hd0Fg"',
        "kJ8s/Qw2+Zx9Lm4Np7Rt1Vb3Yc6Hd0Fg",
    ),
    ("lower-case pass name", 'db_pass = "Winter-Harbor-3831"', "Winter-Harbor-3831"),
    ("ruby hash rocket", "  api_secret => 'Kp2vR8sT4wX6yZ1a'", "Kp2vR8sT4wX6yZ1a"),
    ("php array rocket", "'secret_key' => 'sk_%5PcM%UIaFki8QVvRLpIP'", "sk_%5PcM%UIaFki8QVvRLpIP"),
    ("nuget config", '<add key="ClearTextPassword" value="n0t-Sh0wn-2026" />', "n0t-Sh0wn-2026"),
    ("npmrc _auth", "_auth=dXNlcjpwYXNzd29yZDEy", "dXNlcjpwYXNzd29yZDEy"),
    ("github add-mask", "::add-mask::s3cr3t-V4lue", "s3cr3t-V4lue"),
    ("bearer in any header", f"X-Token: Bearer {alnum(32)}", alnum(32)),
    ("curl oauth2 bearer", f"curl --oauth2-bearer {alnum(32)} https://api", alnum(32)),
    ("--api-token", f"flyctl deploy --api-token {alnum(40)} --remote-only", alnum(40)),
    ("gpg --passphrase quoted", "gpg --batch --passphrase 'blue moon 7!' -d f.gpg", "blue moon 7!"),
    ("ConvertTo-SecureString", "ConvertTo-SecureString 'P@ss-w0rd' -AsPlainText -Force", "P@ss-w0rd"),
    ("cmdkey", "cmdkey /add:srv /user:alice /pass:Wint3r-Is", "Wint3r-Is"),
    ("net use, password first", r"net use Z: \\srv\share Aut#42x /user:CORP\alice", "Aut#42x"),
    ("net use, password last", r"net use \\srv\share /user:alice Aut#42x", "Aut#42x"),
    ("php define", "define('DB_PASSWORD', 'wp-pass-99');", "wp-pass-99"),
    ("requests auth tuple", 'requests.get(u, auth=("admin", "Adm1n-pw"))', "Adm1n-pw"),
    ("aws configure set", f"aws configure set aws_secret_access_key {alnum(40)}", alnum(40)),
    ("yarn config set", "yarn config set npmAuthToken 8b865968-ebd8-4f53-b159-6bd9a6b8785c", "8b865968-ebd8"),
    (
        "rclone",
        "rclone config create s3 s3 access_key_id minio secret_access_key Hz5xk99n3SSQ",
        "Hz5xk99n3SSQ",
    ),
    (
        "ssh-keygen -N quoted",
        "ssh-keygen -t ed25519 -N 'correct horse battery' -f k",
        "correct horse battery",
    ),
    ("ssh-keygen -P and -N", "ssh-keygen -p -P old-Phr4se -N new-Phr4se -f k", "Phr4se"),
    ("zip -P", "zip -P z1p-pass backup.zip db.sql", "z1p-pass"),
    ("7z -p", "7z a -p7zPass-9 backup.7z data/", "7zPass-9"),
    ("openssl enc -k", "openssl enc -aes-256-cbc -k b4ckup-pw -in a -out b", "b4ckup-pw"),
    ("ldapsearch -w", 'ldapsearch -x -D "cn=admin" -w Ld4p-pw -b dc=x', "Ld4p-pw"),
    ("keytool -storepass -keypass", "keytool -genkeypair -storepass st0re-pw -keypass k3y-pw", "-pw"),
    ("htpasswd -b", "htpasswd -b -c /etc/.htpasswd admin Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("htpasswd -nbB", "htpasswd -nbB admin k1ttens-2", "k1ttens-2"),
    ("smbclient -U user%pass", "smbclient //fs/share -U alice%Qu1ck!", "Qu1ck!"),
    ("nmcli password", "nmcli dev wifi connect HomeNet password sunflower26", "sunflower26"),
    ("nmcli psk", 'nmcli con modify HomeNet wifi-sec.psk "Lantern-88"', "Lantern-88"),
    ("wpa_supplicant psk", '    psk="coffee-and-cake"', "coffee-and-cake"),
    ("mc alias set", "mc alias set local http://minio:9000 admin PM3FGm0cGF0C", "PM3FGm0cGF0C"),
    ("echo to sudo -S", "echo 'Sud0-pw' | sudo -S apt-get update", "Sud0-pw"),
    ("echo to --password-stdin", "echo 'ejgOmZ5daE' | docker login -u ci --password-stdin", "ejgOmZ5daE"),
]

NEAR_MISSES = [
    "A3-ABC123 is the part number",
    "AKCp is Artifactory's prefix",
    "LTAI prefix, then 20 characters",
    "4b1d is a hex word",
    "v1.0-beta-1 released",
    "dt0c01. is Dynatrace's prefix",
    "HRKU-AA tokens are Heroku's",
    "geoip_mmk is a name",
    "NRII- and NRJS- are New Relic's",
    "API-Version: 2",
    "pnu_ is Prefect's prefix",
    "tk-us- is Scalingo's region prefix",
    "YC is Yandex Cloud's prefix",
    "access-sandbox is Plaid's sandbox environment",
    "| 123456789012345 | total |",
    "Module.method.call() returned None",
    "see https://co.webhook.office.com/ for the docs",
    "gems.contribsys.com is Sidekiq's gem server",
    "BUNDLE_GEMS__CONTRIBSYS__COM is set in CI",
    "cloudflare_zone_name: example-site",
    'cache_key: "motion:list:recent:page"',
    'sort_key: "created_at_descending_order"',
    'etag_key: "9f86d081884c7d659a2feaa0c55ad015"',
    'compass_heading = "N0rth-42"',
    "db_pass = form.cleaned_data",
    "  label => 'Password'",
    '<add key="Source" value="https://api.nuget.org/v3/index.json" />',
    "_auth is read from .npmrc",
    "::add-mask:: hides a value in the log",
    "Authorization uses a Bearer token",
    "curl --oauth2-bearer $TOKEN https://api",
    "flyctl deploy --api-token $FLY_API_TOKEN",
    "gpg --passphrase-fd 0 -d f.gpg",
    "ConvertTo-SecureString $plain -AsPlainText -Force",
    "cmdkey /list",
    r"net use Z: \\srv\share /persistent:yes",
    "define('WP_DEBUG', true);",
    "requests.get(u, auth=auth)",
    "aws configure set region eu-west-1",
    "yarn config set registry https://registry.npmjs.org",
    "rclone copy s3:bucket/path /data --progress",
    "ssh-keygen -t ed25519 -N '' -f key",
    "zip -r backup.zip data",
    "7z x -y archive.7z",
    "openssl enc -d -aes-256-cbc -in a -out b",
    'ldapsearch -x -b "dc=example,dc=org"',
    "keytool -list -keystore app.jks",
    "htpasswd -c /etc/.htpasswd admin",
    "smbclient -L //fs -N",
    "nmcli dev wifi list",
    "psk=$WIFI_PSK is read at boot",
    "mc alias list",
    "echo 'done' | tee log.txt",
    "the bypass = route is taken",
]


@pytest.mark.parametrize("shape, line, secret", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_known_shape_is_redacted(shape, line, secret):
    got = redact(line)
    assert MARK in got, got
    if secret is not None:
        assert secret not in got, got


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_a_near_miss_is_left_as_it_is(line):
    assert redact(line) == line


def test_a_lower_case_quoted_passphrase_is_redacted():
    """The issue's surviving mutation: drop the rule that a quoted value with spaces under a
    secret's lower-case name is a passphrase, and this goes red (the words look generated to no
    other rule)."""
    assert redact('password: "correct horse battery staple"') == f'password: "{MARK}"'
    assert redact("db_passphrase = 'river lantern quiet meadow'") == f"db_passphrase = '{MARK}'"


def test_a_sentence_about_a_password_in_quotes_is_left_as_it_is():
    line = 'password: "is required for this account"'
    assert redact(line) == line


def test_a_rename_in_git_output_is_no_hash_rocket():
    line = " ...ord_pass_and_note_kind.py => 0020_turn_record_pass_and_note_kind.py} | 2 +-"
    assert redact(line) == line


# --- a BIP-39 seed phrase with nothing naming it (memory-lane's people keep wallets) -----------

SEED_12 = "ozone drill grab fiber curtain grace pudding thank cruise elder eight picnic"
SEED_24 = (
    "legal winner thank year wave sausage worth useful legal winner thank year "
    "wave sausage worth useful legal winner thank year wave sausage worth title"
)


@pytest.mark.parametrize(
    "line, secret",
    [
        (SEED_12, SEED_12),
        (f"here, before I lose it: {SEED_12}. thanks", SEED_12),
        (SEED_24, SEED_24),
        (SEED_12.upper(), SEED_12.upper()),
        (", ".join(SEED_12.split()), None),  # comma-separated
        ("\n".join(SEED_12.split()), None),  # one a line, as a wallet shows it
        ("\n".join(f"{n}. {word}" for n, word in enumerate(SEED_12.split(), 1)), None),  # numbered
    ],
    ids=["alone", "in-prose", "24-words", "upper-case", "commas", "one-a-line", "numbered"],
)
def test_a_seed_phrase_with_no_name_is_redacted(line, secret):
    got = redact(line)
    assert MARK in got
    assert not any(word in got.lower().split() for word in ("ozone", "picnic", "sausage", "title")), got
    if secret is not None:
        assert secret not in got


@pytest.mark.parametrize(
    "line",
    [
        " ".join(SEED_12.split()[:11]),  # eleven words: no seed is that short
        "We walked across the garden and found a small wooden bridge over the quiet river today",
        "Ozone Drill Grab Fiber Curtain Grace Pudding Thank Cruise Elder Eight Picnic",  # Names, a title
        "ozone drill grab fiber curtain grace pudding thank cruise elder eight picnicking",
    ],
    ids=["eleven-words", "prose", "title-case", "a-word-off-the-list"],
)
def test_words_that_are_no_seed_phrase_are_left_as_they_are(line):
    assert redact(line) == line
