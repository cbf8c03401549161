"""The shapes redaction.py looks for, as data: tokens an issuer marks with a prefix, and secrets
known by what stands around them (a command's flag, a config file's field).

Each shape is tried only where its literal (or one of them) is in the text: a substring look
costs far less than a regex search, and most strings hold none. Measured on a corpus of secret
shapes and of ordinary tool output (tests/motion_runner/ingest/redaction_corpus.py,
bench/redaction.py); a new shape goes into that corpus first. Issue 42's shapes come from what
the field already knows: gitleaks' rule list (config/gitleaks.toml), detect-secrets' plugins and
the tools' documented password flags, each with a test and a near miss
(tests/motion_runner/ingest/test_redaction_known_shapes.py), measured on a corpus someone else
wrote (tests/motion_runner/ingest/heldout/, bench/redaction_heldout.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A key block of any kind: PEM (RSA, EC, DSA, OPENSSH, ENCRYPTED, PKCS#8) and PGP's armour.
PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"
)

# Tokens whose issuer marks them: (a literal every match holds, the shape). The match must
# start a word (redaction._tokens); an underscore before it still starts one (`x_ghp_…`).
TOKEN_SHAPES: list[tuple[str, re.Pattern]] = [
    ("PRIVATE KEY", PRIVATE_KEY_BLOCK),
    ("gh", re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}")),  # GitHub tokens
    ("github_pat_", re.compile(r"github_pat_[A-Za-z0-9_]{40,}")),
    (
        "sk-",
        re.compile(r"sk-(?:ant-[A-Za-z0-9_-]{16,}|(?:proj-|svcacct-)?[A-Za-z0-9_-]{24,})"),
    ),  # Anthropic, OpenAI, OpenRouter
    ("AKIA", re.compile(r"AKIA[0-9A-Z]{16}")),  # AWS access key ids
    ("ASIA", re.compile(r"ASIA[0-9A-Z]{16}")),
    ("xox", re.compile(r"xox[abposre](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}")),  # Slack
    ("xapp-", re.compile(r"xapp-[0-9]-[A-Za-z0-9-]{20,}")),  # Slack app-level
    ("k_live_", re.compile(r"[rs]k_live_[A-Za-z0-9]{16,}")),  # Stripe
    ("k_test_", re.compile(r"[rs]k_test_[A-Za-z0-9]{16,}")),
    ("whsec_", re.compile(r"whsec_[A-Za-z0-9+/=]{24,}")),  # Stripe webhook signing
    ("AIza", re.compile(r"AIza[0-9A-Za-z_-]{35}")),  # Google
    ("GOCSPX-", re.compile(r"GOCSPX-[A-Za-z0-9_-]{20,}")),  # Google OAuth client secret
    ("ya29.", re.compile(r"ya29\.[A-Za-z0-9_.-]{20,}")),  # Google OAuth access token
    ("1//0", re.compile(r"1//0[A-Za-z0-9_-]{40,}")),  # Google OAuth refresh token
    ("npm_", re.compile(r"npm_[A-Za-z0-9]{36}")),
    ("pypi-AgE", re.compile(r"pypi-AgE[A-Za-z0-9_-]{50,}")),
    ("rubygems_", re.compile(r"rubygems_[a-f0-9]{48}")),
    ("oy2", re.compile(r"oy2[a-z0-9]{43}")),  # NuGet
    ("CLOJARS_", re.compile(r"CLOJARS_[a-z0-9]{60}")),
    ("mrk_", re.compile(r"mrk_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}")),  # this project's own agent keys
    ("eyJ", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),  # JWTs
    ("hf_", re.compile(r"hf_[A-Za-z]{30,}")),  # Hugging Face
    (
        "gl",
        re.compile(r"gl(?:(?:pat|dt|rt|ptt|soat|cbt|oas|ft|imt|agent|ffct|wt)-|sa_|c_)[A-Za-z0-9+/=_-]{20,}"),
    ),  # GitLab, Grafana
    ("GR1348941", re.compile(r"GR1348941[A-Za-z0-9_-]{20,}")),  # GitLab runner registration
    ("AGE-SECRET-KEY-1", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{50,}")),  # age
    ("_v1_", re.compile(r"do[opr]_v1_[a-f0-9]{64}")),  # DigitalOcean
    ("hv", re.compile(r"hv[sbr]\.[A-Za-z0-9_-]{20,}")),  # Vault
    (".atlasv1.", re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}")),  # Terraform Cloud
    ("pul-", re.compile(r"pul-[a-f0-9]{40}")),  # Pulumi
    ("dapi", re.compile(r"dapi[a-f0-9]{32}(?:-[0-9]+)?")),  # Databricks
    ("tskey-", re.compile(r"tskey-[A-Za-z0-9-]{20,}")),  # Tailscale
    ("fo1_", re.compile(r"fo1_[A-Za-z0-9_-]{30,}")),  # Fly.io
    ("sbp_", re.compile(r"sbp_[a-f0-9]{40}")),  # Supabase
    ("pscale_", re.compile(r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}")),  # PlanetScale
    ("nfp_", re.compile(r"nfp_[A-Za-z0-9]{36}")),  # Netlify
    ("rnd_", re.compile(r"rnd_[A-Za-z0-9]{20,}")),  # Render
    ("dckr_pat_", re.compile(r"dckr_pat_[A-Za-z0-9_-]{20,}")),  # Docker Hub
    ("ATBB", re.compile(r"ATBB[A-Za-z0-9_=.-]{28,}")),  # Bitbucket
    ("CCIPAT_", re.compile(r"CCIPAT_[A-Za-z0-9]{20,}_[a-f0-9]{40}")),  # CircleCI
    ("bkua_", re.compile(r"bkua_[a-f0-9]{40}")),  # Buildkite
    ("sgp_", re.compile(r"sgp_(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}")),  # Sourcegraph
    ("SK", re.compile(r"SK[0-9a-fA-F]{32}")),  # Twilio API keys
    ("SG.", re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}")),  # SendGrid
    ("key-", re.compile(r"key-[a-f0-9]{32}")),  # Mailgun
    ("re_", re.compile(r"re_[A-Za-z0-9]{8,}_[A-Za-z0-9]{16,}")),  # Resend
    ("shp", re.compile(r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}")),  # Shopify
    ("sq0", re.compile(r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}")),  # Square
    ("EAAA", re.compile(r"EAAA[A-Za-z0-9_+-]{56,}")),
    ("gsk_", re.compile(r"gsk_[A-Za-z0-9]{40,}")),  # Groq
    ("xai-", re.compile(r"xai-[A-Za-z0-9]{60,}")),  # xAI
    ("pplx-", re.compile(r"pplx-[A-Za-z0-9]{40,}")),  # Perplexity
    ("r8_", re.compile(r"r8_[A-Za-z0-9]{30,}")),  # Replicate
    ("lin_api_", re.compile(r"lin_api_[A-Za-z0-9]{40}")),  # Linear
    ("ntn_", re.compile(r"ntn_[A-Za-z0-9]{40,}")),  # Notion
    ("secret_", re.compile(r"secret_[A-Za-z0-9]{43}")),
    ("ATATT3", re.compile(r"ATATT3[A-Za-z0-9_=-]{100,}")),  # Atlassian
    ("NRAK-", re.compile(r"NRAK-[A-Z0-9]{27}")),  # New Relic
    ("sntry", re.compile(r"sntry[su]_[A-Za-z0-9_=+/-]{50,}")),  # Sentry
    ("PMAK-", re.compile(r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}")),  # Postman
    ("figd_", re.compile(r"figd_[A-Za-z0-9_-]{40,}")),  # Figma
    ("dp.", re.compile(r"dp\.(?:st|pt|ct|sa|scim|audit)\.[A-Za-z0-9_.-]{40,}")),  # Doppler
    ("pat", re.compile(r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}")),  # Airtable
    ("sl.", re.compile(r"sl\.[A-Za-z0-9_-]{100,}")),  # Dropbox
    (":AA", re.compile(r"(?:bot)?[0-9]{8,10}:AA[A-Za-z0-9_-]{33}")),  # Telegram
    # From gitleaks' rule list (config/gitleaks.toml) and the issuers' documented formats.
    (
        "A3-",
        re.compile(
            r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"
        ),
    ),
    ("AKCp", re.compile(r"AKCp[A-Za-z0-9]{69}")),  # Artifactory API key
    ("LTAI", re.compile(r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])")),  # Alibaba Cloud access key id
    ("4b1d", re.compile(r"4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])")),  # ClickHouse Cloud key secret
    ("v1.0-", re.compile(r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}")),  # Cloudflare Origin CA key
    ("dt0c01.", re.compile(r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}")),  # Dynatrace
    ("HRKU-AA", re.compile(r"HRKU-AA[0-9A-Za-z_-]{58}")),  # Heroku (v2)
    ("_mmk", re.compile(r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk")),  # MaxMind license key
    ("NRII-", re.compile(r"NRII-[A-Za-z0-9-]{32}")),  # New Relic insert key
    ("NRJS-", re.compile(r"NRJS-[a-f0-9]{19}")),  # New Relic browser key
    ("API-", re.compile(r"API-[A-Z0-9]{26}(?![A-Za-z0-9])")),  # Octopus Deploy
    ("pnu_", re.compile(r"pnu_[A-Za-z0-9]{36}")),  # Prefect
    ("tk-us-", re.compile(r"tk-us-[A-Za-z0-9_-]{48}")),  # Scalingo
    ("YC", re.compile(r"YC[A-Za-z0-9_-]{38}(?![A-Za-z0-9_-])")),  # Yandex Cloud static key secret
    ("AQVN", re.compile(r"AQVN[A-Za-z0-9_-]{35,38}(?![A-Za-z0-9_-])")),  # Yandex Cloud API key
    ("ops_eyJ", re.compile(r"ops_eyJ[A-Za-z0-9+/=]{100,}")),  # 1Password service account
    (
        "access-",
        re.compile(r"access-(?:sandbox|development|production)-[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}"),
    ),  # Plaid
    ("|", re.compile(r"[0-9]{15,16}\|[0-9A-Za-z_-]{27,40}(?![A-Za-z0-9_-])")),  # Facebook app token
    # Discord bot token (detect-secrets' DiscordBotTokenDetector): id.timestamp.hmac.
    (".", re.compile(r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])")),
    (
        "webhook.office.com",
        re.compile(r"(?:https://)?[a-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{40,}"),
    ),  # Microsoft Teams
    (
        "contribsys.com",
        re.compile(r"(?:https?://)?[a-f0-9]{8}:[a-f0-9]{8}@(?:gems|enterprise)\.contribsys\.com/?"),
    ),  # Sidekiq Enterprise
    # Webhook URLs: the path is the credential.
    ("hooks.slack.com/", re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,}")),
    ("/api/webhooks/", re.compile(r"discord(?:app)?\.com/api/webhooks/[0-9]{6,}/[A-Za-z0-9_-]{16,}")),
]


@dataclass(frozen=True)
class Around:
    """A secret known by what stands around it: the group `v` of `pattern` is the secret.
    Tried where one of `literals` is in the text. Each pattern starts with a literal where it
    can (the engine then scans for it quickly; a class or a look-behind first costs a try at
    every character)."""

    literals: tuple[str, ...]
    pattern: re.Pattern
    generated: bool = False  # the value must look generated (code names a variable there)
    host_first: bool = False  # the line must start with a host, up to the match (.pgpass)
    entropy: float = 0.0  # the value's Shannon entropy (bits a character) must reach this
    again: bool = False  # a command can hold several: tried again until nothing changes (3 at most)
    lowered: bool = False  # the literals are lower case, looked for in the lowered text


AROUND: list[Around] = [
    # A URL with an empty user (`redis://:pw@host`): redaction.URL_PASSWORD wants a user.
    Around(("://:",), re.compile(r"://:(?P<v>[^\s@/\"']+)(?=@)")),
    # A key's path on an RPC host (`https://mainnet.infura.io/v3/<key>`).
    Around(
        ("infura.io", "alchemy", "quiknode.pro"),
        re.compile(
            r"(?:infura\.io|alchemy(?:api)?\.(?:com|io)|quiknode\.pro)/(?:v[0-9]+/)?(?P<v>[A-Za-z0-9_-]{20,})"
        ),
    ),
    # Azure connection strings and SAS URLs.
    Around(
        ("AccountKey=", "SharedAccessKey="),
        re.compile(r"(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/=]{20,})"),
    ),
    Around(("sig=",), re.compile(r"[?&]sig=(?P<v>[A-Za-z0-9%+/=_-]{30,})")),
    # An `Authorization:` header whose value has no scheme word, or an unusual one (SSWS, Bot).
    Around(
        ("uthorization", "UTHORIZATION"),
        re.compile(
            r"(?i)authorization[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z][A-Za-z0-9-]{1,20}\s+)?(?P<v>[A-Za-z0-9._~+/=-]{16,})"
        ),
        generated=True,
    ),
    # docker's config.json: `"auth": "<base64 of user:password>"`.
    Around(('"auth"',), re.compile(r'"auth"\s*:\s*"(?P<v>[A-Za-z0-9+/=]{8,})"')),
    # kubeconfig: the client's key, base64 of a PEM block.
    Around(("client-key-data",), re.compile(r"client-key-data\s*:\s*(?P<v>[A-Za-z0-9+/=]{20,})")),
    # PuTTY's key file: the private lines after their count.
    Around(
        ("Private-Lines:",),
        re.compile(r"Private-Lines:\s*[0-9]+\s*\n(?P<v>[A-Za-z0-9+/=\n]+?)(?=\n[A-Z][A-Za-z-]+:|\Z)"),
    ),
    # A mnemonic (BIP-39) phrase after its name: 12 to 24 lower-case words.
    Around(
        ("nemonic", "NEMONIC", "hrase", "HRASE"),
        re.compile(
            r"(?i)(?:mnemonic|phrase)[^\w\n]{0,4}\s*(?P<v>(?-i:(?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8}))\b"
        ),
    ),
    # …or under `seed` as a field's name (`"seed": "…"`; `seed` alone is in too much prose).
    Around(
        ('seed"', "seed'", "seed:", "seed=", "seed =", "SEED", "Seed"),
        re.compile(r"(?:[Ss]eed|SEED)[\"']?\s*[:=]\s*[\"']?(?P<v>(?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})\b"),
    ),
    # .pgpass: host:port:database:user:password, a line of its own, on PostgreSQL's usual ports or
    # any (`*`): a lone `:` is in nearly every text. Found by the port (a literal the engine scans
    # for quickly), the host before it checked where one is found.
    Around(
        (":*:", ":5432:", ":5433:", ":6432:"),
        re.compile(r"(?m):(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(?P<v>[^\s]+)$"),
        host_first=True,
    ),
    # .netrc: machine … login … password …, on one line or several.
    Around(
        ("machine ", "default login"),
        re.compile(r"\b(?:machine\s+\S+|default)\s+(?:login\s+\S+\s+)?(?:password|passwd)\s+(?P<v>\S+)"),
    ),
    # mysql and its kin: -p<password> (`-p` alone asks at the prompt).
    Around(
        ("mysql", "mariadb"),
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb(?:-dump)?)\b[^\n]*?\s-p['\"]?(?P<v>[^\s'\"-][^\s'\"]*)"
        ),
    ),
    Around(("sshpass",), re.compile(r"sshpass\s+-p\s*['\"]?(?P<v>[^\s'\"]+)")),
    # A password's short flag of the commands that take one there.
    Around(
        ("redis-cli", "sqlcmd", " login", "twine"),
        re.compile(
            r"\b(?:redis-cli|sqlcmd|bcp|az login|docker login|podman login|helm registry login|twine upload)\b"
            r"[^\n]*?\s-[aPp]\s+['\"]?(?P<v>[^\s'\"-][^\s'\"]{3,})"
        ),
    ),
    # libpq's conninfo (`host=… password=…`).
    Around(("dbname=", "host="), re.compile(r"\b(?:host|dbname|user)=[^\n]*?\bpassword=(?P<v>[^\s'\"]{4,})")),
    Around(("pass:",), re.compile(r"-pass(?:in|out)?\s+pass:(?P<v>[^\s'\"]{4,})")),  # openssl
    # A CLI's login that takes the key as its argument.
    Around(
        ("authtoken", "wandb login"),
        re.compile(r"(?:add-authtoken|authtoken|wandb login(?: --relogin)?)\s+(?P<v>[A-Za-z0-9_]{20,})"),
    ),
    # curl -u user:password, --user user:password.
    Around(("-u", "--user"), re.compile(r"-(?<=\s-)(?:u\s*|-user[ =])['\"]?[^\s:'\"]+:(?P<v>[^\s'\"]{4,})")),
    # A password's flag: whatever its value (`--password bluegrass`).
    Around(
        ("--pass",),
        re.compile(
            r"--(?:password|passwd|passphrase)[ =]['\"]?(?P<v>(?<=['\"])[^'\"\n]{3,200}(?=['\"])|[^\s'\"-][^\s'\"]{3,})"
        ),
    ),
    # A secret's flag followed by its value (`--token abc…`, `--private-key 0x…`).
    Around(
        ("--",),
        re.compile(
            r"--(?:password|passwd|token|auth-token|access-token|api-key|apikey|api-token|api-secret|secret|"
            r"client-secret|oauth2-bearer|secret-key|secret-access-key|"
            r"private-key|auth|authkey|auth-key)[ =]['\"]?(?P<v>[^\s'\"-][^\s'\"]{5,})"
        ),
        generated=True,
    ),
    # An Ethereum private key by what introduces it (a bare 32-byte hex is a transaction's hash).
    Around(
        ("rivate", "RIVATE", "accounts"),
        re.compile(
            r"(?:[Pp]rivate[\s_-]?[Kk]ey|PRIVATE[\s_-]?KEY|accounts\s*:\s*\[)[^\w\n]{0,20}(?:0x)?(?P<v>[0-9a-fA-F]{64})\b"
        ),
    ),
    # A secret's element in XML (`<password>…</password>`).
    Around(
        ("</",),
        re.compile(
            r"<([A-Za-z_:.-]*(?:[Pp]assword|[Pp]asswd|[Ss]ecret|[Tt]oken|[Aa]pi_?[Kk]ey))>(?P<v>[^<\s]{4,})</\1>"
        ),
    ),
]

# A value after a command's flag: quoted (spaces and all) or one word. A value already replaced
# ([REDACTED]) is not taken again, so a shape tried once more finds the command's next flag.
VALUE = r"""['"]?(?P<v>(?<=['"])[^'"\n]{3,200}(?=['"])|[^\s'"\[-][^\s'"]{2,})"""
# The end of a command's words (the password is the last of htpasswd's).
COMMAND_END = r"""(?=['"]?\s*(?:$|[;|&)]))"""
# Vendors whose keys gitleaks knows only by the vendor's name before them (its generic-shaped
# rules: `<vendor>…key = <value>`).
VENDORS = (
    "adafruit", "adobe", "algolia", "asana", "beamer", "bitbucket", "bittrex", "cloudflare", "codecov",
    "coinbase", "confluent", "contentful", "datadog", "droneci", "etsy", "fastly", "finicity", "finnhub",
    "flickr", "freshbooks", "gitter", "gocardless", "hubspot", "intercom", "kraken", "kucoin",
    "launchdarkly", "mapbox", "mattermost", "messagebird", "netlify", "okta", "plaid", "sendbird",
    "snyk", "sumologic", "travis", "twitch", "typeform", "yandex", "zendesk",
)  # fmt: skip


AROUND += [
    # A key-ish name with a quoted, high-entropy value (detect-secrets' Base64HighEntropyString,
    # narrowed to a value a name says is a key: `signing_key: "…"`).
    Around(
        ("key", "Key", "KEY"),
        re.compile(r"(?:[Kk]ey|KEY)[\"']?\s*(?:=>|[:=])\s*[\"'](?P<v>[A-Za-z0-9+/=_-]{20,})[\"']"),
        entropy=4.0,
    ),
    # Sidekiq Enterprise's gem source credentials in the environment.
    Around(
        ("CONTRIBSYS__COM",),
        re.compile(
            r"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\s*[=:]\s*[\"']?(?P<v>[a-f0-9]{8}:[a-f0-9]{8})"
        ),
    ),
    # NuGet.config: <add key="ClearTextPassword" value="…" />, and any key that names a secret.
    Around(
        ("<add key=",),
        re.compile(
            r"<add key=\"[\w.:-]*(?:[Pp]assword|[Ss]ecret|[Tt]oken|[Aa]pi[Kk]ey)\"\s*value=\"(?P<v>[^\"]{4,})\""
        ),
    ),
    # .npmrc: _auth (base64 of user:password) and _password.
    Around(("_auth", "_password"), re.compile(r"_(?:auth|password)\s*=\s*[\"']?(?P<v>[^\s'\"]{8,})")),
    # GitHub Actions: the value a step asks to be masked.
    Around(("::add-mask::",), re.compile(r"::add-mask::(?P<v>[^\s\n][^\n]{3,})")),
    # A bearer token in any header (`X-Token: Bearer …`) or flag (`curl --oauth2-bearer …`).
    Around(
        ("Bearer", "bearer", "BEARER"),
        re.compile(r"(?:[Bb]earer|BEARER)[\"']?[ =:]\s*[\"']?(?P<v>[A-Za-z0-9._~+/=-]{16,})"),
        generated=True,
    ),
    # PowerShell: ConvertTo-SecureString 'plain' -AsPlainText.
    Around(
        ("ConvertTo-SecureString", "convertto-securestring"),
        re.compile(r"(?i)convertto-securestring\s+(?:-String\s+)?['\"](?P<v>[^'\"\n]{3,200})['\"]"),
    ),
    # Windows: cmdkey /pass:…, net use … <password> /user:… or /user:… <password>.
    Around(("/pass:",), re.compile(r"/pass:(?P<v>[^\s/\"'][^\s\"']{2,})")),
    Around(
        ("net use",),
        re.compile(r"(?i)\bnet use\b[^\n]*?\s(?P<v>[^\s/\\*'\"][^\s'\"]{2,})\s+/user:"),
    ),
    Around(
        ("net use",),
        re.compile(r"(?i)\bnet use\b[^\n]*?\s/user:\S+\s+(?P<v>[^\s/*'\"\[][^\s'\"]{2,})"),
    ),
    # PHP: define('DB_PASSWORD', '…').
    Around(
        ("define(",),
        re.compile(
            r"define\(\s*['\"]\w*(?:PASSWORD|PASS|SECRET|TOKEN|KEY|SALT)['\"]\s*,\s*['\"](?P<v>[^'\"\n]{4,})['\"]"
        ),
    ),
    # Python: requests' auth=("user", "password"), HTTPBasicAuth("user", "password").
    Around(
        ("auth=", "auth =", "Auth("),
        re.compile(r"(?:\bauth\s*=\s*\(|Auth\()\s*['\"][^'\"\n]*['\"]\s*,\s*['\"](?P<v>[^'\"\n]{4,})['\"]"),
    ),
    # `… config set <a secret's name> <value>` (aws, yarn, npm, pnpm, git-credential helpers).
    Around(
        ("config set", "configure set"),
        re.compile(
            r"\bconfig(?:ure)? set\s+(?:--\S+\s+)*['\"]?[\w.:/@-]*(?:secret|[Tt]oken|password|_auth)[\w.]*['\"]?"
            r"(?:\s+|=)" + VALUE
        ),
    ),
    # rclone's key-value arguments.
    Around(
        ("rclone",),
        re.compile(
            r"\brclone\b[^\n]*?\s(?:secret_access_key|password|pass|client_secret|token|key)\s+" + VALUE
        ),
    ),
    # A command's password flag (each command's documented one).
    Around(("ssh-keygen",), re.compile(r"\bssh-keygen\b[^\n]*?\s-[NP]\s*" + VALUE), again=True),
    Around(("zip",), re.compile(r"\b(?:un)?zip\b[^\n]*?\s-P\s*" + VALUE)),
    Around(("7z",), re.compile(r"\b7z[a-z]?\b[^\n]*?\s-p" + VALUE)),
    Around(("openssl",), re.compile(r"\bopenssl\b[^\n]*?\s-k\s+" + VALUE)),
    Around(("ldap",), re.compile(r"\bldap[a-z]+\b[^\n]*?\s-[ws]\s+" + VALUE), again=True),
    Around(
        ("keytool",),
        re.compile(r"\bkeytool\b[^\n]*?\s-(?:src|dest|new)?(?:storepass|keypass)\s+" + VALUE),
        again=True,
    ),
    Around(
        ("htpasswd",),
        re.compile(
            r"(?m)\bhtpasswd\s+-[A-Za-z]*b[A-Za-z]*\s+(?:-\S+\s+)*(?:\S+\s+){1,2}" + VALUE + COMMAND_END
        ),
    ),
    Around(
        ("smbclient", "rpcclient", "smbmap", "smbget"),
        re.compile(
            r"\b(?:smbclient|rpcclient|smbmap|smbget)\b[^\n]*?\s(?:-U\s*|--user(?:name)?[ =])['\"]?[^\s%'\"]+%"
            r"(?P<v>[^\s'\"]{3,})"
        ),
    ),
    Around(
        ("nmcli",),
        re.compile(
            r"\bnmcli\b[^\n]*?\s(?:password|[\w-]*\.psk|[\w-]*\.password|[\w-]*\.wep-key[0-3])\s+" + VALUE
        ),
    ),
    # wpa_supplicant.conf: psk="…" (or 64 hex).
    Around(("psk=",), re.compile(r"\bpsk=\"?(?P<v>(?<=\")[^\"\n]{8,63}(?=\")|[0-9a-fA-F]{64})")),
    # MinIO's client: mc alias set <name> <url> <access key> <secret key>.
    Around(
        ("mc alias", "mc config host"),
        re.compile(r"\bmc\s+(?:alias\s+set|config\s+host\s+add)\s+\S+\s+\S+\s+\S+\s+" + VALUE),
    ),
    # A password piped into a command that reads it from stdin.
    Around(
        ("echo",),
        re.compile(
            r"\becho\s+(?:-[ne]+\s+)?"
            + VALUE
            + r"['\"]?\s*\|\s*(?:sudo\b[^\n|]*?\s-S\b|[^\n|]*--password-stdin)"
        ),
    ),
]

# A vendor's name, then its key (`cloudflare_global_key: 88de…`, `Fastly-Key: …`), in any case:
# one shape for each vendor, starting with its name, tried where the lowered text holds it
# (`lowered`: a literal for each spelling, or one case-blind shape of them all, cost half the
# speed, bench/redaction.py).
AROUND += [
    Around(
        (vendor,),
        re.compile(
            r"(?i:" + vendor + r")[\w.-]{0,25}[\"']?\s*(?:=>|[:=])\s*[\"']?(?P<v>[A-Za-z0-9_=+/-]{16,})"
        ),
        generated=True,
        lowered=True,
    )
    for vendor in VENDORS
]
