"""The secret shapes redaction is measured on: lines as tools print them (config dumps, shell
history, logs, JSON, YAML, .env, curl commands), each with the secret inside it.

Every value is fake: made here from a seeded generator in the shape its issuer uses (prefix,
alphabet, length), so no real credential is in the repository and no push protection trips on
a literal. `Secret.leaked_in` says whether a redacted line still shows any of it: every piece of
the secret of four characters or more must be gone (a mnemonic's words, a key block's lines).

Read by tests/motion_runner/ingest/test_redaction_corpus.py (the figure pinned) and
bench/redaction.py (the figure beside the old module's, and the speed).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from .redaction_corpus_more import ALNUM, B64, BECH32, URLSAFE, fake, more_secrets, pem


@dataclass(frozen=True)
class Secret:
    shape: str  # what kind of secret, the name a failing test shows
    line: str  # as a tool prints it
    secret: str  # what must not survive redaction
    item6: bool = False  # one of the shapes issue 30's item 6 names

    def leaked_in(self, redacted: str) -> bool:
        pieces = [piece for piece in self.secret.split() if len(piece) >= 4] or [self.secret]
        return any(piece in redacted for piece in pieces)


def _secrets() -> list[Secret]:
    s: list[Secret] = []

    def add(shape: str, line: str, secret: str, item6: bool = False) -> None:
        assert secret in line, shape
        s.append(Secret(shape, line, secret, item6))

    # --- issue 30, item 6: the shapes the red team saw stored as written -------------------------
    pw = fake(ALNUM, 14, "redis")
    add("redis URL, empty user", f"CELERY_BROKER_URL: redis://:{pw}@cache.internal:6379/0", pw, True)
    pw = fake(ALNUM, 18, "rediss")
    add("rediss URL, empty user", f"connecting to rediss://:{pw}@redis-12345.cloud.io:6380 ...", pw, True)
    block, body = pem("PGP PRIVATE KEY BLOCK", "pgp")
    pgp = block.replace(body, "Version: GnuPG v2\n\n" + body + "\n=" + fake(B64, 4, "crc"))
    add("PGP private key block", "$ gpg --export-secret-keys --armor me\n" + pgp, body, True)
    pw = fake(ALNUM, 16, "spaced")
    add("NAME = 'value', spaces around =", f"DB_PASSWORD = '{pw}'", pw, True)
    add(
        "NAME = 'a plain word', spaces around =",
        "ADMIN_PASSWORD = 'bluegrassharmony'",
        "bluegrassharmony",
        True,
    )
    pw = "django-insecure-" + fake(ALNUM + "!@#%^&*(-_=+)", 50, "django")
    add("Django SECRET_KEY = '...'", f"SECRET_KEY = '{pw}'", pw, True)
    add(
        "quoted value with spaces (.env)",
        'SMTP_PASSWORD="correct horse battery staple"',
        "correct horse battery staple",
        True,
    )
    add(
        "quoted value with spaces (export)",
        "export API_TOKEN='open sesame 4 ever'",
        "open sesame 4 ever",
        True,
    )
    words = "legal winner thank year wave sausage worth useful legal winner thank yellow"
    add("mnemonic phrase, env", f'MNEMONIC="{words}"', words, True)
    words = "letter advice cage absurd amount doctor acoustic avoid letter advice cage above"
    add("mnemonic phrase, hardhat config", f'    accounts: {{ mnemonic: "{words}" }},', words, True)
    words = "scheme spot photo card baby mountain device kick cradle pact join borrow"
    add(
        "mnemonic phrase, printed by a wallet",
        f"Successfully generated a new mnemonic.\nPhrase:\n{words}\n",
        words,
        True,
    )
    words = "hamster diagram private dutch cause delay private meat slide toddler razor book happy fancy gospel tennis maple dilemma loan word shrug inflict delay length"
    add("seed phrase (24 words)", f"Your recovery phrase: {words}", words, True)
    pw = fake(ALNUM, 15, "pgpass")
    add(".pgpass line", f"$ cat ~/.pgpass\ndb.internal:5432:motion:motion_rw:{pw}", pw, True)
    pw = fake(ALNUM, 15, "pgpass2")
    add(".pgpass line, wildcards", f"*:*:*:replicator:{pw}", pw, True)
    pw = fake(ALNUM, 16, "netrc")
    add(".netrc line", f"machine api.heroku.com login ops@cryptograss.live password {pw}", pw, True)
    pw = fake(ALNUM, 16, "netrc2")
    add(".netrc, one field a line", f"machine github.com\n  login octocat\n  password {pw}\n", pw, True)
    pw = fake(ALNUM, 12, "mysql")
    add("mysql -p<password>", f"$ mysql -u root -p{pw} -h db.internal motion", pw, True)
    pw = fake(ALNUM, 12, "mysqldump")
    add("mysqldump --password=", f"mysqldump --user=backup --password={pw} --all-databases", pw, True)
    pw = fake(ALNUM, 12, "curlu")
    add("curl -u user:pass", f"curl -u admin:{pw} https://ci.internal/api/json", pw, True)
    pw = fake(ALNUM, 12, "curluser")
    add(
        "curl --user user:pass",
        f"curl -sS --user 'deploy:{pw}' -X POST https://registry.internal/v2/",
        pw,
        True,
    )
    key = fake(B64, 86, "azure") + "=="
    add(
        "Azure storage AccountKey=",
        f"DefaultEndpointsProtocol=https;AccountName=motionstore;AccountKey={key};EndpointSuffix=core.windows.net",
        key,
        True,
    )
    key = fake(B64, 43, "azuresb") + "="
    add(
        "Azure SharedAccessKey=",
        f"Endpoint=sb://motion.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={key}",
        key,
        True,
    )
    tok = "hf_" + fake(ALNUM[:52], 34, "hf")
    add("Hugging Face token", f"Token is valid (permission: write). Your token: {tok}", tok, True)
    tok = "hf_" + fake(ALNUM[:52], 34, "hf2")
    add("Hugging Face token, CLI", f"$ huggingface-cli login --token {tok}", tok, True)
    tok = "glpat-" + fake(URLSAFE, 20, "glpat")
    add(
        "GitLab personal access token",
        f'git remote set-url origin "https://oauth2:{tok}@gitlab.com/x/y.git"',
        tok,
        True,
    )
    tok = "glpat-" + fake(URLSAFE, 20, "glpat2")
    add(
        "GitLab token in a PRIVATE-TOKEN header",
        f'curl --header "PRIVATE-TOKEN: {tok}" https://gitlab.com/api/v4/projects',
        tok,
        True,
    )
    tok = "glrt-" + fake(URLSAFE, 20, "glrt")
    add("GitLab runner token", f'  token = "{tok}"', tok, True)
    tok = "gldt-" + fake(URLSAFE, 20, "gldt")
    add("GitLab deploy token", f"docker login registry.gitlab.com -u deployer -p {tok}", tok, True)
    tok = "sk_live_" + fake(ALNUM, 24, "stripe")
    add("Stripe live secret key", f"stripe.api_key = {tok!r}", tok, True)
    tok = "sk_test_" + fake(ALNUM, 24, "stripet")
    add("Stripe test secret key", f"Stripe::StripeClient.new('{tok}')", tok, True)
    tok = "rk_live_" + fake(ALNUM, 24, "striper")
    add("Stripe restricted key", f"STRIPE_RESTRICTED={tok}", tok, True)
    tok = "whsec_" + fake(ALNUM, 32, "whsec")
    add(
        "Stripe webhook signing secret",
        f"> Ready! Your webhook signing secret is {tok} (^C to quit)",
        tok,
        True,
    )
    tok = "GOCSPX-" + fake(URLSAFE, 28, "gocspx")
    add(
        "Google OAuth client secret",
        f'{{"installed":{{"client_id":"1234-abc.apps.googleusercontent.com","client_secret":"{tok}"}}}}',
        tok,
        True,
    )
    tok = "ya29." + fake(URLSAFE, 120, "ya29")
    add("Google OAuth access token", f"$ gcloud auth print-access-token\n{tok}", tok, True)
    tok = "1//0" + fake(URLSAFE, 99, "refresh")
    add("Google OAuth refresh token", f'  "refresh_token": "{tok}",', tok, True)
    tok = "AGE-SECRET-KEY-1" + fake(BECH32, 58, "age")
    add(
        "age secret key",
        f"# created: 2026-12-01T10:00:00Z\n# public key: age1{fake('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58, 'agepub')}\n{tok}",
        tok,
        True,
    )
    auth = base64.b64encode(f"deployer:{fake(ALNUM, 14, 'docker')}".encode()).decode()
    add(
        "docker config auths",
        f'{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{auth}"}}}}}}',
        auth,
        True,
    )
    auth = base64.b64encode(f"ci:{fake(ALNUM, 20, 'ghcr')}".encode()).decode()
    add("docker config auths, pretty", f'\t\t"ghcr.io": {{\n\t\t\t"auth": "{auth}"\n\t\t}}', auth, True)
    data = base64.b64encode(pem("RSA PRIVATE KEY", "kube")[0].encode()).decode()
    add(
        "kubeconfig client-key-data",
        f"    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n    client-key-data: {data}",
        data,
        True,
    )
    tok = fake(ALNUM, 32, "cookieup")
    add("upper-case COOKIE header", f"COOKIE: _gh_sess={tok}; theme=dark", tok, True)
    tok = fake(ALNUM, 40, "authup")
    add("upper-case AUTHORIZATION header", f"> AUTHORIZATION: Bearer {tok}", tok, True)
    tok = fake(ALNUM, 40, "authraw")
    add("AUTHORIZATION header without a scheme", f"AUTHORIZATION: {tok}", tok, True)

    more_secrets(add)
    return s


SECRETS: list[Secret] = _secrets()


# Ordinary tool output, no secret in it: a line altered by redaction is a false positive. Made
# once from this checkout (its Python and JS, package-lock.json, `git log --stat`, `pip freeze`,
# pip's install output, recorded harness lines, GitHub-API-shaped JSON, UUIDs, data URIs, `ls -la`,
# `find`, sha256sums, worker and access logs, pytest and docker output); "### " lines name the parts.
ORDINARY_OUTPUT = Path(__file__).with_name("ordinary_output.txt")
ORDINARY_LINES: list[str] = [
    line for line in ORDINARY_OUTPUT.read_text().splitlines() if line.strip() and not line.startswith("### ")
]
