"""The secret shapes of redaction_corpus.py that secret scanners know (cloud, code hosts, chat,
registries, AI providers, SaaS, tokens of any issuer, command lines, private keys, URLs), and
the makers of fakes both files use: every value is made from a seeded generator in its issuer's
shape."""

from __future__ import annotations

import base64
import random
from collections.abc import Callable

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
HEX = "0123456789abcdef"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "023456789ACDEFGHJKLMNPQRSTUVWXYZ"


def fake(alphabet: str, length: int, seed: str) -> str:
    """`length` characters of `alphabet`, the same for the same seed."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(length))


def pem_body(seed: str, lines: int = 4) -> str:
    return "\n".join(fake(B64, 64, f"{seed}{n}") for n in range(lines))


def pem(kind: str, seed: str) -> tuple[str, str]:
    body = pem_body(seed)
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----", body


def more_secrets(add: Callable[..., None]) -> None:
    # --- cloud ------------------------------------------------------------------------------------
    kid = "AKIA" + fake(UPPER, 16, "akia")
    add("AWS access key id", f"aws_access_key_id = {kid}", kid)
    sec = fake(B64, 40, "awssecret")
    add("AWS secret key, credentials file", f"[default]\naws_secret_access_key = {sec}", sec)
    sec = fake(B64, 40, "awssecret2")
    add("AWS secret key, sts JSON", f'        "SecretAccessKey": "{sec}",', sec)
    tok = "IQoJb3JpZ2luX2Vj" + fake(B64, 300, "awssession")
    add("AWS session token", f'        "SessionToken": "{tok}",', tok)
    kid = "ASIA" + fake(UPPER, 16, "asia")
    add("AWS temporary key id", f"export AWS_ACCESS_KEY_ID={kid}", kid)
    block, body = pem("PRIVATE KEY", "gcp")
    add(
        "GCP service account JSON",
        '  "private_key": "' + block.replace("\n", "\\n") + '\\n",',
        body.split("\n")[0],
    )
    key = "AIza" + fake(URLSAFE, 35, "aiza")
    add("Google API key", f"https://maps.googleapis.com/maps/api/geocode/json?address=x&key={key}", key)
    tok = "dop_v1_" + fake(HEX, 64, "do")
    add("DigitalOcean token", f"doctl auth init -t {tok}", tok)
    tok = fake(ALNUM, 40, "cf")
    add("Cloudflare API token, env", f"CLOUDFLARE_API_TOKEN={tok}", tok)
    tok = "hvs." + fake(URLSAFE, 24, "vault")
    add(
        "Vault token",
        f"Key                  Value\n---                  -----\ntoken                {tok}",
        tok,
    )
    tok = fake(ALNUM, 14, "tfc") + ".atlasv1." + fake(ALNUM, 67, "tfc2")
    add("Terraform Cloud token", f'credentials "app.terraform.io" {{ token = "{tok}" }}', tok)
    tok = "pul-" + fake(HEX, 40, "pulumi")
    add("Pulumi token", f"PULUMI_ACCESS_TOKEN={tok} pulumi up", tok)
    tok = "dapi" + fake(HEX, 32, "databricks")
    add("Databricks token", f"host = https://x.cloud.databricks.com\ntoken = {tok}", tok)
    tok = "tskey-auth-" + fake(ALNUM, 12, "ts1") + "-" + fake(ALNUM, 32, "ts2")
    add("Tailscale auth key", f"sudo tailscale up --authkey={tok}", tok)
    tok = "fo1_" + fake(URLSAFE, 43, "fly")
    add("Fly.io token", f"FLY_API_TOKEN: {tok}", tok)
    tok = "sbp_" + fake(HEX, 40, "supabase")
    add("Supabase token", f"supabase login --token {tok}", tok)
    tok = "pscale_tkn_" + fake(URLSAFE, 43, "pscale")
    add("PlanetScale token", f"PLANETSCALE_SERVICE_TOKEN={tok}", tok)
    tok = "nfp_" + fake(ALNUM, 36, "netlify")
    add("Netlify token", f"netlify deploy --auth {tok}", tok)
    tok = "rnd_" + fake(ALNUM, 32, "render")
    add("Render API key", f'curl -H "Authorization: Bearer {tok}" https://api.render.com/v1/services', tok)
    tok = "dckr_pat_" + fake(URLSAFE, 27, "dockerhub")
    add("Docker Hub token", f"echo {tok} | docker login -u cryptograss --password-stdin", tok)
    tok = "sig=" + fake(URLSAFE[:62] + "%", 43, "sas")
    add(
        "Azure SAS token",
        f"https://motionstore.blob.core.windows.net/c/b.txt?sv=2022-11-02&se=2026-12-31&sr=b&sp=r&{tok}",
        tok[4:],
    )
    sec = fake(ALNUM + "~.", 40, "azclient")
    add("Azure client secret, env", f"AZURE_CLIENT_SECRET={sec}", sec)

    # --- code hosts and CI ------------------------------------------------------------------------
    for prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"):
        tok = prefix + fake(ALNUM, 36, prefix)
        add(
            f"GitHub token {prefix}",
            f"remote: https://x-access-token:{tok}@github.com/cryptograss/memory-lane.git",
            tok,
        )
    tok = "github_pat_" + fake(ALNUM, 22, "pat1") + "_" + fake(ALNUM, 59, "pat2")
    add("GitHub fine-grained token", f"gh auth login --with-token <<< {tok}", tok)
    tok = "ghp_" + fake(ALNUM, 36, "ghhosts")
    add("GitHub token, gh hosts.yml", f"github.com:\n    oauth_token: {tok}\n    user: octocat", tok)
    tok = "ATBB" + fake(ALNUM, 32, "bitbucket")
    add("Bitbucket app password", f"BITBUCKET_APP_PASSWORD={tok}", tok)
    tok = "CCIPAT_" + fake(ALNUM, 22, "circle1") + "_" + fake(HEX, 40, "circle2")
    add("CircleCI token", f"circleci setup --token {tok} --host https://circleci.com", tok)
    tok = "bkua_" + fake(HEX, 40, "buildkite")
    add("Buildkite token", f"BUILDKITE_API_TOKEN: {tok}", tok)
    tok = "sgp_" + fake(HEX, 40, "sourcegraph")
    add("Sourcegraph token", f"export SRC_ACCESS_TOKEN={tok}", tok)

    # --- chat, mail, payments -------------------------------------------------------------------
    tok = (
        "xoxb-"
        + fake("0123456789", 12, "s1")
        + "-"
        + fake("0123456789", 13, "s2")
        + "-"
        + fake(ALNUM, 24, "s3")
    )
    add("Slack bot token", f"SLACK_BOT_TOKEN={tok}", tok)
    tok = (
        "xoxp-"
        + fake("0123456789", 12, "p1")
        + "-"
        + fake("0123456789", 12, "p2")
        + "-"
        + fake(HEX, 32, "p3")
    )
    add("Slack user token", f'{{"ok": true, "access_token": "{tok}"}}', tok)
    tok = (
        "xapp-1-A" + fake(UPPER, 10, "xa1") + "-" + fake("0123456789", 13, "xa2") + "-" + fake(HEX, 64, "xa3")
    )
    add("Slack app-level token", f"app = App(token=os.environ['X'], app_token='{tok}')", tok)
    hook = "T" + fake(UPPER, 8, "h1") + "/B" + fake(UPPER, 10, "h2") + "/" + fake(ALNUM, 24, "h3")
    add("Slack webhook", f"curl -X POST https://hooks.slack.com/services/{hook} -d @msg.json", hook)
    hook = fake("0123456789", 18, "dc1") + "/" + fake(URLSAFE, 68, "dc2")
    add("Discord webhook", f"WEBHOOK = 'https://discord.com/api/webhooks/{hook}'", hook)
    tok = fake("0123456789", 10, "tg1") + ":AA" + fake(URLSAFE, 33, "tg2")
    add("Telegram bot token", f"https://api.telegram.org/bot{tok}/getUpdates", tok)
    tok = "SK" + fake(HEX, 32, "twiliosk")
    add("Twilio API key", f"client = Client('{tok}', api_secret, account_sid)", tok)
    tok = fake(HEX, 32, "twilioauth")
    add("Twilio auth token, env", f"TWILIO_AUTH_TOKEN={tok}", tok)
    tok = "SG." + fake(URLSAFE, 22, "sg1") + "." + fake(URLSAFE, 43, "sg2")
    add("SendGrid key", f"sg = SendGridAPIClient('{tok}')", tok)
    tok = "key-" + fake(HEX, 32, "mailgun")
    add("Mailgun key", f"curl -s --user 'api:{tok}' https://api.mailgun.net/v3/x/messages", tok)
    tok = fake(HEX, 32, "mailchimp") + "-us12"
    add("Mailchimp key", f"mailchimp.set_config({{'api_key': '{tok}', 'server': 'us12'}})", tok)
    tok = "re_" + fake(ALNUM, 8, "resend1") + "_" + fake(ALNUM, 24, "resend2")
    add("Resend key", f"const resend = new Resend('{tok}');", tok)
    tok = "shpat_" + fake(HEX, 32, "shopify")
    add("Shopify access token", f"X-Shopify-Access-Token: {tok}", tok)
    tok = "sq0atp-" + fake(URLSAFE, 22, "square")
    add("Square access token", f"SQUARE_ACCESS_TOKEN={tok}", tok)
    tok = "EAAA" + fake(URLSAFE, 60, "squareeaaa")
    add("Square production token", f"client = Client(access_token='{tok}')", tok)
    tok = "SG." + fake(URLSAFE, 22, "sg3") + "." + fake(URLSAFE, 43, "sg4")
    add("SendGrid key in YAML", f"sendgrid:\n  api_key: {tok}", tok)

    # --- package registries ---------------------------------------------------------------------
    tok = "npm_" + fake(ALNUM, 36, "npm")
    add("npm token, .npmrc", f"//registry.npmjs.org/:_authToken={tok}", tok)
    tok = (
        fake(HEX, 8, "u1")
        + "-"
        + fake(HEX, 4, "u2")
        + "-"
        + fake(HEX, 4, "u3")
        + "-"
        + fake(HEX, 4, "u4")
        + "-"
        + fake(HEX, 12, "u5")
    )
    add("npm legacy token, .npmrc", f"//npm.pkg.github.com/:_authToken={tok}", tok)
    tok = "npm_" + fake(ALNUM, 36, "npm2")
    add("npm token, bare", f"npm notice Publishing with token {tok}", tok)
    tok = "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 140, "pypi")
    add("PyPI token, .pypirc", f"[pypi]\n  username = __token__\n  password = {tok}", tok)
    tok = "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 140, "pypi2")
    add("PyPI token, twine", f"twine upload -u __token__ -p {tok} dist/*", tok)
    tok = "rubygems_" + fake(HEX, 48, "gem")
    add("RubyGems key", f"---\n:rubygems_api_key: {tok}", tok)
    tok = "oy2" + fake("abcdefghijklmnopqrstuvwxyz0123456789", 43, "nuget")
    add("NuGet key", f"dotnet nuget push pkg.nupkg --api-key {tok} --source nuget.org", tok)
    tok = "CLOJARS_" + fake(HEX, 60, "clojars")
    add("Clojars token", f':password "{tok}"', tok)

    # --- AI providers ----------------------------------------------------------------------------
    tok = "sk-ant-api03-" + fake(URLSAFE, 93, "ant") + "AA"
    add("Anthropic key", f"ANTHROPIC_API_KEY={tok}", tok)
    tok = "sk-ant-admin01-" + fake(URLSAFE, 93, "antadm") + "AA"
    add("Anthropic admin key", f"x-api-key: {tok}", tok)
    tok = "sk-ant-oat01-" + fake(URLSAFE, 93, "antoat") + "AA"
    add("Anthropic OAuth token", f'{{"claudeAiOauth": {{"accessToken": "{tok}"}}}}', tok)
    tok = "sk-proj-" + fake(URLSAFE, 156, "oaiproj")
    add("OpenAI project key", f'client = OpenAI(api_key="{tok}")', tok)
    tok = "sk-svcacct-" + fake(URLSAFE, 156, "oaisvc")
    add("OpenAI service account key", f"OPENAI_API_KEY: {tok}", tok)
    tok = "sk-" + fake(ALNUM, 20, "oai1") + "T3BlbkFJ" + fake(ALNUM, 20, "oai2")
    add("OpenAI legacy key", f"openai.api_key = '{tok}'", tok)
    tok = "sk-or-v1-" + fake(HEX, 64, "openrouter")
    add("OpenRouter key", f'curl https://openrouter.ai/api/v1/chat -H "Authorization: Bearer {tok}"', tok)
    tok = "gsk_" + fake(ALNUM, 52, "groq")
    add("Groq key", f"groq = Groq(api_key='{tok}')", tok)
    tok = "xai-" + fake(ALNUM, 80, "xai")
    add("xAI key", f"XAI_API_KEY={tok}", tok)
    tok = "pplx-" + fake(ALNUM, 48, "pplx")
    add("Perplexity key", f"-H 'Authorization: Bearer {tok}'", tok)
    tok = "r8_" + fake(ALNUM, 37, "replicate")
    add("Replicate token", f"replicate.Client(api_token='{tok}')", tok)
    tok = fake(ALNUM, 32, "mistral")
    add("Mistral key, env", f"export MISTRAL_API_KEY={tok}", tok)
    tok = "hf_" + fake(ALNUM[:52], 34, "hf3")
    add("Hugging Face token, env", f"HF_TOKEN={tok}", tok)

    # --- SaaS ------------------------------------------------------------------------------------
    tok = "lin_api_" + fake(ALNUM, 40, "linear")
    add("Linear key", f"LINEAR_API_KEY={tok}", tok)
    tok = "ntn_" + fake(ALNUM, 46, "notion")
    add("Notion token", f"notion = Client(auth='{tok}')", tok)
    tok = "secret_" + fake(ALNUM, 43, "notionold")
    add("Notion legacy token", f"Authorization: Bearer {tok}", tok)
    tok = "ATATT3xFfGF0" + fake(URLSAFE, 180, "atlassian") + "=" + fake(HEX, 8, "atl2").upper()
    add(
        "Atlassian token", f"curl -u me@cryptograss.live:{tok} https://x.atlassian.net/rest/api/3/myself", tok
    )
    tok = "glsa_" + fake(ALNUM, 32, "grafana") + "_" + fake(HEX, 8, "graf2")
    add("Grafana service account token", f"grafana:\n  token: {tok}", tok)
    tok = "NRAK-" + fake(UPPER, 27, "newrelic")
    add("New Relic key", f"NEW_RELIC_API_KEY={tok}", tok)
    tok = "sntrys_" + fake(URLSAFE, 120, "sentry")
    add("Sentry auth token", f"sentry-cli --auth-token {tok} releases new 1.0", tok)
    tok = "PMAK-" + fake(HEX, 24, "postman1") + "-" + fake(HEX, 34, "postman2")
    add("Postman key", f'"apikey": "{tok}"', tok)
    tok = "figd_" + fake(URLSAFE, 40, "figma")
    add("Figma token", f"X-Figma-Token: {tok}", tok)
    tok = fake(HEX, 32, "datadog")
    add("Datadog key, env", f"DD_API_KEY={tok} datadog-agent run", tok)
    tok = "00" + fake(URLSAFE, 40, "okta")
    add("Okta token", f"Authorization: SSWS {tok}", tok)
    tok = "dp.st." + fake(ALNUM, 43, "doppler")
    add("Doppler token", f"doppler setup --token {tok}", tok)
    tok = "pat" + fake(ALNUM, 14, "air1") + "." + fake(HEX, 64, "air2")
    add("Airtable token", f"AIRTABLE_TOKEN='{tok}'", tok)
    tok = "sl." + fake(URLSAFE, 130, "dropbox")
    add("Dropbox token", f"dbx = dropbox.Dropbox('{tok}')", tok)
    tok = fake(HEX, 32, "heroku1")
    add("API key header", f"X-API-Key: {tok}", tok)

    # --- tokens of any issuer -------------------------------------------------------------------
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"
        + fake(URLSAFE, 60, "jwt1")
        + "."
        + fake(URLSAFE, 43, "jwt2")
    )
    add("JWT", f"[debug] verifying {jwt}", jwt)
    jwt = (
        "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJ"
        + fake(URLSAFE, 120, "jwt3")
        + "."
        + fake(URLSAFE, 86, "jwt4")
    )
    add("JWT in a kubeconfig", f"users:\n- name: admin\n  user:\n    token: {jwt}", jwt)
    tok = fake(ALNUM, 32, "bearer")
    add("Bearer token, curl", f"curl -H 'Authorization: Bearer {tok}' https://api.internal/me", tok)
    creds = base64.b64encode(f"admin:{fake(ALNUM, 12, 'basic')}".encode()).decode()
    add("Basic auth header", f"authorization: Basic {creds}", creds)
    tok = fake(ALNUM, 40, "proxyauth")
    add("Proxy-Authorization header", f"Proxy-Authorization: Bearer {tok}", tok)
    tok = fake(ALNUM, 32, "cookie")
    add("Cookie header", f"Cookie: _gh_sess={tok}; logged_in=yes", tok)
    tok = fake(ALNUM, 32, "setcookie")
    add("Set-Cookie header", f"< Set-Cookie: sessionid={tok}; HttpOnly; Path=/", tok)
    tok = fake(HEX, 32, "flag")
    add("--token flag with a space", f"$ vercel deploy --token {tok} --prod", tok)
    tok = fake(ALNUM, 24, "flagpw")
    add("--password flag with a space", f"$ redis-cli -h cache --password {tok} ping", tok)
    tok = "0x" + fake(HEX, 64, "ethpk")
    add("Ethereum private key, env", f"PRIVATE_KEY={tok}", tok)
    tok = "0x" + fake(HEX, 64, "ethpk2")
    add("Ethereum private key, cast flag", f"cast send 0xdead --private-key {tok} --rpc-url $RPC", tok)
    tok = fake(HEX, 64, "ethpk3")
    add("Ethereum private key, printed", f"Address:     0x{fake(HEX, 40, 'addr')}\nPrivate key: 0x{tok}", tok)
    tok = fake(HEX, 64, "ethpk4")
    add("Ethereum private key, hardhat accounts", f"    accounts: ['0x{tok}'],", tok)
    tok = fake(HEX, 32, "infura")
    add("RPC URL with a key in its path", f"RPC_URL=https://mainnet.infura.io/v3/{tok}", tok)
    tok = fake(ALNUM, 32, "alchemy")
    add("Alchemy RPC URL", f"provider = JsonRpcProvider('https://eth-mainnet.g.alchemy.com/v2/{tok}')", tok)
    tok = fake(UPPER, 34, "etherscan")
    add(
        "Etherscan key, query string",
        f"GET https://api.etherscan.io/api?module=account&action=balance&apikey={tok}",
        tok,
    )
    tok = fake(ALNUM, 24, "querytoken")
    add("access_token in a query string", f"GET /callback?code=ok&access_token={tok}&state=x 200", tok)
    sec = fake(ALNUM, 24, "yamlpw")
    add("password in YAML", f"database:\n  user: motion\n  password: {sec}\n", sec)
    sec = fake(ALNUM, 24, "jsonpw")
    add("password in JSON", f'{{"username": "motion", "password": "{sec}"}}', sec)
    sec = fake(ALNUM, 24, "tomlpw")
    add("secret in TOML", f'[auth]\nclient_secret = "{sec}"', sec)
    sec = fake(ALNUM, 20, "xmlpw")
    add("password in XML", f"<password>{sec}</password>", sec)
    sec = fake(ALNUM, 20, "propspw")
    add("password in a .properties file", f"spring.datasource.password={sec}", sec)
    sec = fake(ALNUM, 20, "iniorm")
    add("password in an ODBC string", f"Server=db;Database=motion;User Id=sa;Password={sec};", sec)
    sec = fake(ALNUM, 20, "sshpass")
    add("sshpass -p", f"sshpass -p '{sec}' ssh deploy@10.0.0.5", sec)

    # --- command lines, added after the shapes above were written (a check they generalise) ------
    pw = "bluegrass" + fake("abcdefghijklmnopqrstuvwxyz", 6, "libpq")
    add("libpq conninfo", f'psql "host=db.internal port=5432 dbname=motion user=app password={pw}"', pw)
    pw = fake(ALNUM, 14, "sqlcmd")
    add("sqlcmd -P", f"sqlcmd -S db.internal -U sa -P '{pw}' -Q 'SELECT 1'", pw)
    pw = fake(ALNUM, 20, "rediscli")
    add("redis-cli -a", f"$ redis-cli -h cache.internal -a {pw} --no-auth-warning INFO", pw)
    pw = fake(ALNUM, 16, "openssl")
    add(
        "openssl pass:",
        f"openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:{pw} -out bundle.p12",
        pw,
    )
    pw = fake(ALNUM, 16, "wget")
    add(
        "wget --http-password",
        f"wget --http-user=deploy --http-password={pw} https://files.internal/x.tgz",
        pw,
    )
    pw = fake(ALNUM, 32, "azsp")
    add("az login -p", f"az login --service-principal -u 0000-app -p {pw} --tenant cryptograss", pw)
    pw = fake(ALNUM, 49, "ngrok")
    add("ngrok authtoken", f"$ ngrok config add-authtoken {pw}", pw)
    pw = fake(HEX, 40, "wandb")
    add("wandb login", f"$ wandb login {pw}", pw)
    pw = fake(ALNUM, 20, "k8ssecret")
    add(
        "Kubernetes secret, base64",
        f"data:\n  password: {base64.b64encode(pw.encode()).decode()}",
        base64.b64encode(pw.encode()).decode(),
    )
    pw = fake(ALNUM, 24, "gitcred")
    add("git credential fill output", f"protocol=https\nhost=github.com\nusername=octocat\npassword={pw}", pw)

    # --- a second batch added after the rules, and what it took ---------------------------------
    words = "ozone drill grab fiber curtain grace pudding thank cruise elder eight picnic"
    add("seed phrase in JSON", f'{{"seed": "{words}", "index": 0}}', words)
    add(".netrc default line", "default login anonymous password bluegrassfestival", "bluegrassfestival")
    add(
        "--password flag, a plain word",
        "mysqldump --password bluegrassfestival motion > dump.sql",
        "bluegrassfestival",
    )
    words = "key token secret abandon ability able about above absent absorb abstract absurd"
    add("mnemonic of BIP-39 words that are also prose's", f'MNEMONIC="{words}"', words)

    # --- private keys -----------------------------------------------------------------------------
    for kind in (
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "DSA PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PRIVATE KEY",
    ):
        block, body = pem(kind, kind)
        add(f"PEM {kind}", f"$ cat id_key\n{block}\n", body)
    block, body = pem("RSA PRIVATE KEY", "rsaenc")
    add(
        "PEM encrypted RSA with headers",
        block.replace(body, "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C3D\n\n" + body),
        body,
    )
    body = pem_body("putty", 6)
    add(
        "PuTTY private key",
        f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\nAAAAC3Nz\nPrivate-Lines: 6\n{body}\nPrivate-MAC: {fake(HEX, 64, 'mac')}",
        body,
    )
    block, body = pem("OPENSSH PRIVATE KEY", "escaped")
    add(
        "private key in JSON, escaped newlines",
        '{"ssh_key": "' + block.replace("\n", "\\n") + '"}',
        body.split("\n")[1],
    )

    # --- URLs with credentials, every scheme ------------------------------------------------------
    for n, scheme in enumerate(
        (
            "postgres",
            "postgresql",
            "postgresql+psycopg",
            "mysql",
            "mysql+pymysql",
            "mariadb",
            "mongodb",
            "mongodb+srv",
            "redis",
            "rediss",
            "amqp",
            "amqps",
            "mssql",
            "oracle",
            "clickhouse",
            "cockroachdb",
            "ftp",
            "sftp",
            "smtp",
            "https",
            "http",
            "ldap",
            "nats",
            "kafka",
        )
    ):
        pw = fake(ALNUM, 10 + n % 7, scheme)
        add(
            f"{scheme}:// URL with a password",
            f"url: {scheme}://app_user:{pw}@db-{n}.internal:1234/motion",
            pw,
        )
    pw = fake(ALNUM, 14, "jdbc")
    add(
        "JDBC URL, password in the query",
        f"jdbc:postgresql://db:5432/motion?user=app&password={pw}&ssl=true",
        pw,
    )
    pw = fake(ALNUM + "%", 14, "pctenc")
    add("URL, password percent-encoded", f"DATABASE_URL=postgres://app:{pw}%40x@db/motion", pw)
