#!/usr/bin/env python3
"""Builds the held-out redaction corpus (issue 42, "Done when" 2) beside this file:

- shapes.jsonl: one secret per line of JSON {kind, source, text, secret, start, end}. `text` is
  what a tool, a config file or a person prints; `secret` is exactly text[start:end] (for a
  private key block, its body, several lines). Written by someone other than the author of the
  redaction rules, without reading them: every shape comes from a public secret scanner's rule
  list or from what everyday tools print, and `source` says which.
    * gitleaks: github.com/gitleaks/gitleaks config/gitleaks.toml at b58d3f1 (2026-07-22), rule
      ids as `source` ("gitleaks:<id>"); each secret is made to that rule's documented format
      (prefix, alphabet, length) and checked against the rule's own regex where Python's `re`
      can compile it (GITLEAKS_CHECKED prints how many).
    * detect-secrets: Yelp/detect-secrets 1.5 plugins (detect_secrets/plugins/*.py: AWSKey,
      Artifactory, AzureStorageKey, BasicAuth, Cloudant, DiscordBotToken, GitHubToken,
      GitLabToken, IbmCloudIam, IbmCosHmac, JwtToken, Keyword, Mailchimp, Npm, OpenAI,
      PrivateKey, PypiToken, SendGrid, Slack, Softlayer, SquareOAuth, Stripe, TelegramBotToken,
      TwilioKey, Base64/Hex high entropy), `source` "detect-secrets:<plugin>".
    * everyday: the shapes command lines, config files and HTTP traffic print every day (npmrc
      `_auth=`, `--api-token`, `::add-mask::`, `htpasswd -b`, `ssh-keygen -N`, lower-case YAML,
      JSON, cookies, quoted values with spaces, gpg, keytool, nmcli, smbclient, net use,
      ConvertTo-SecureString, ...), `source` "everyday:<tool or format>".
  Secrets are random (a fixed seed) or made-up passwords: none is real.
- ordinary.txt.gz: >= 100,000 distinct ordinary lines that a redaction must leave alone, real
  text from this machine: the Python standard library's sources (tests excluded) and its pydoc
  topics, man pages rendered by `man`, Debian changelogs under /usr/share/doc, and the git log of
  this repository. Lines that do hold a credential-like assignment, URL credentials, a bearer
  value, a key block or a known token prefix are dropped (ARGUABLE), so "touched" always means a
  false positive.

  .venv/bin/python tests/motion_runner/ingest/heldout/build_corpus.py   (about a minute)

The shapes are deterministic; the ordinary lines depend on what this machine holds (rebuilt
elsewhere they differ; the committed file is the one measured).
"""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
import string
import subprocess
import sys
import sysconfig
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
R = random.Random(4242)

ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
DIGITS = string.digits


def rs(chars: str, n: int) -> str:
    return "".join(R.choice(chars) for _ in range(n))


def hexs(n: int) -> str:
    return rs(HEX, n)


def uid() -> str:
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def b64(raw: str) -> str:
    return base64.b64encode(raw.encode()).decode()


SHAPES: list[dict] = []


def add(source: str, kind: str, template: str, secret: str) -> None:
    text = template.replace("{S}", secret)
    start = text.index(secret)
    SHAPES.append(
        {
            "kind": kind,
            "source": source,
            "text": text,
            "secret": secret,
            "start": start,
            "end": start + len(secret),
        }
    )


def gl(rule: str, template: str, secret: str, kind: str | None = None) -> None:
    add(f"gitleaks:{rule}", kind or rule, template, secret)


def ds(plugin: str, kind: str, template: str, secret: str) -> None:
    add(f"detect-secrets:{plugin}", kind, template, secret)


def ev(tool: str, kind: str, template: str, secret: str) -> None:
    add(f"everyday:{tool}", kind, template, secret)


# --- gitleaks rules --------------------------------------------------------------------------
gl(
    "1password-secret-key",
    "Secret Key: {S}",
    f"A3-{rs(UPNUM, 6)}-{rs(UPNUM, 11)}-{rs(UPNUM, 5)}-{rs(UPNUM, 5)}-{rs(UPNUM, 5)}",
)
gl("1password-service-account-token", "export OP_SERVICE_ACCOUNT_TOKEN={S}", "ops_eyJ" + rs(B64, 260))
gl("adafruit-api-key", 'adafruit_io_key = "{S}"', rs(LOWNUM + "_-", 32))
gl("adobe-client-id", "ADOBE_CLIENT_ID={S}", hexs(32))
gl("adobe-client-secret", "adobe client secret: {S}", "p8e-" + rs(ALNUM, 32))
gl("age-secret-key", "{S}", "AGE-SECRET-KEY-1" + rs("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
gl("airtable-api-key", "AIRTABLE_API_KEY={S}", "key" + rs(ALNUM, 14))
gl(
    "airtable-personnal-access-token",
    "airtable: syncing base with {S}",
    "pat" + rs(ALNUM, 14) + "." + hexs(64),
)
gl("algolia-api-key", "  algolia_api_key: {S}", hexs(32))
gl(
    "alibaba-access-key-id",
    "aliyun configure set --access-key-id {S} --region cn-hangzhou",
    "LTAI" + rs(ALNUM, 20),
)
gl("alibaba-secret-key", "alibaba_secret_key = {S}", rs(LOWNUM, 30))
gl("anthropic-admin-api-key", 'client = Anthropic(api_key="{S}")', "sk-ant-admin01-" + rs(URLSAFE, 93) + "AA")
gl("anthropic-api-key", '{"x-api-key": "{S}"}', "sk-ant-api03-" + rs(URLSAFE, 93) + "AA")
gl(
    "artifactory-api-key",
    'curl -H "X-JFrog-Art-Api:{S}" https://art.example.com/api/repositories',
    "AKCp" + rs(ALNUM, 69),
)
gl("artifactory-reference-token", "jf config add prod --access-token {S}", "cmVmd" + rs(ALNUM, 59))
gl("asana-client-secret", "asana_client_secret: {S}", rs(LOWNUM, 32))
gl("atlassian-api-token", "jira_api_token: {S}", "ATATT3xFfGF0" + rs(URLSAFE, 170) + "=" + rs(UPNUM, 8))
gl(
    "authress-service-client-access-key",
    "AUTHRESS_KEY={S}",
    f"sc_{rs(LOWNUM, 10)}.{rs(LOWNUM, 5)}.acc_{rs(LOWNUM, 20)}.{rs(URLSAFE, 48)}",
)
gl("aws-access-token", "aws_access_key_id = {S}", "AKIA" + rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16))
gl("aws-amazon-bedrock-api-key-long-lived", "AWS_BEARER_TOKEN_BEDROCK={S}", "ABSK" + rs(B64, 130))
gl("azure-ad-client-secret", 'AZURE_CLIENT_SECRET="{S}"', rs(ALNUM, 3) + "8Q~" + rs(ALNUM + "_~.-", 34))
gl("beamer-api-token", "beamer_api_key={S}", "b_" + rs(LOWNUM + "_-", 44))
gl("bitbucket-client-secret", "BITBUCKET_CLIENT_SECRET: {S}", rs(LOWNUM, 64))
gl("bittrex-secret-key", 'bittrex_secret = "{S}"', hexs(32))
gl("cisco-meraki-api-key", "X-Cisco-Meraki-API-Key: {S}", hexs(40))
gl("clickhouse-cloud-api-secret-key", "clickhouse key secret {S}", "4b1d" + rs(ALNUM, 38))
gl("clojars-api-token", "CLOJARS_PASSWORD={S}", "CLOJARS_" + rs(LOWNUM, 60))
gl("cloudflare-api-key", "CLOUDFLARE_API_TOKEN={S}", rs(LOWNUM + "_-", 40))
gl("cloudflare-global-api-key", "cloudflare_global_key: {S}", hexs(37))
gl("cloudflare-origin-ca-key", "origin_ca_key = {S}", "v1.0-" + hexs(24) + "-" + hexs(146))
gl("codecov-access-token", "CODECOV_TOKEN={S}", hexs(32))
gl("cohere-api-token", "CO_API_KEY={S}", rs(ALNUM, 40))
gl("coinbase-access-token", "coinbase_access_token: {S}", rs(LOWNUM, 64))
gl("confluent-secret-key", "confluent_secret={S}", rs(LOWNUM, 64))
gl("contentful-delivery-api-token", "CONTENTFUL_DELIVERY_TOKEN={S}", rs(URLSAFE, 43))
gl(
    "curl-auth-header",
    'curl -H "Authorization: Basic {S}" https://api.example.com/v2/builds',
    b64("deploy:" + rs(ALNUM, 14)),
)
gl("curl-auth-user", "curl -u deploy:{S} https://ci.example.com/job/build", rs(ALNUM, 16))
gl("databricks-api-token", "databricks configure --token {S}", "dapi" + hexs(32))
gl("datadog-access-token", "datadog_api_key: {S}", hexs(40))
gl("defined-networking-api-token", "DNKEY={S}", "dnkey-" + rs(LOWNUM, 26) + "-" + rs(LOWNUM, 52))
gl("digitalocean-access-token", "doctl auth init -t {S}", "doo_v1_" + hexs(64))
gl("digitalocean-pat", "DIGITALOCEAN_TOKEN={S}", "dop_v1_" + hexs(64))
gl("digitalocean-refresh-token", '"refresh_token": "{S}"', "dor_v1_" + hexs(64))
gl("discord-api-token", "DISCORD_API_TOKEN={S}", hexs(64))
gl("discord-client-secret", 'discord_client_secret = "{S}"', rs(URLSAFE, 32))
gl("doppler-api-token", "DOPPLER_TOKEN={S}", "dp.pt." + rs(ALNUM, 43))
gl("droneci-access-token", "droneci_token: {S}", hexs(32))
gl("dropbox-short-lived-api-token", "dropbox_token = {S}", "sl." + rs(URLSAFE, 135))
gl("duffel-api-token", "Authorization: Duffel {S}", "duffel_test_" + rs(URLSAFE, 43))
gl("dynatrace-api-token", "Api-Token {S}", "dt0c01." + rs(UPNUM, 24) + "." + rs(UPNUM, 64))
gl("easypost-api-token", "EASYPOST_API_KEY={S}", "EZAK" + rs(ALNUM, 54))
gl("etsy-access-token", "ETSY_API_KEY={S}", rs(LOWNUM, 24))
gl("facebook-access-token", "graph call with {S}", rs(DIGITS, 15) + "|" + rs(URLSAFE, 30))
gl("facebook-page-access-token", "page_token={S}", "EAAC" + rs(ALNUM, 110))
gl("facebook-secret", "FACEBOOK_APP_SECRET={S}", hexs(32))
gl("fastly-api-token", "Fastly-Key: {S}", rs(URLSAFE, 32))
gl("flickr-access-token", "flickr_api_secret: {S}", hexs(32))
gl("flutterwave-secret-key", "FLW_SECRET_KEY={S}", "FLWSECK_TEST-" + rs("abcdefgh0123456789", 32) + "-X")
gl("flyio-access-token", "FLY_API_TOKEN={S}", "fo1_" + rs(URLSAFE, 43))
gl("frameio-api-token", "FRAMEIO_TOKEN={S}", "fio-u-" + rs(URLSAFE, 64))
gl("freemius-secret-key", "    'secret_key' => '{S}',", "sk_" + rs(ALNUM + "!#%", 29))
gl("freshbooks-access-token", "freshbooks_token = {S}", rs(LOWNUM, 64))
gl(
    "gcp-api-key",
    "GET https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={S}",
    "AIza" + rs(URLSAFE, 35),
)
gl("generic-api-key", 'api_key = "{S}"', rs(ALNUM, 32))
gl("github-app-token", "remote: using {S}", "ghs_" + rs(ALNUM, 36))
gl("github-fine-grained-pat", "GH_TOKEN={S}", "github_pat_" + rs(ALNUM + "_", 82))
gl("github-oauth", "oauth_token: {S}", "gho_" + rs(ALNUM, 36))
gl("github-pat", "git push https://{S}@github.com/acme/app.git", "ghp_" + rs(ALNUM, 36))
gl("github-refresh-token", '"refresh_token":"{S}"', "ghr_" + rs(ALNUM, 36))
gl("gitlab-cicd-job-token", "CI_JOB_TOKEN={S}", "glcbt-" + rs(ALNUM, 3) + "_" + rs(URLSAFE, 20))
gl(
    "gitlab-deploy-token",
    "docker login -u gitlab+deploy-token-7 -p {S} registry.gitlab.com",
    "gldt-" + rs(URLSAFE, 20),
)
gl("gitlab-feature-flag-client-token", "unleash instance id {S}", "glffct-" + rs(URLSAFE, 20))
gl(
    "gitlab-feed-token",
    "https://gitlab.example.com/dashboard/projects.atom?feed_token={S}",
    "glft-" + rs(URLSAFE, 20),
)
gl("gitlab-incoming-mail-token", "incoming+{S}@gitlab.example.com", "glimt-" + rs(URLSAFE, 25))
gl("gitlab-kubernetes-agent-token", "helm upgrade agent --set config.token={S}", "glagent-" + rs(URLSAFE, 50))
gl("gitlab-oauth-app-secret", "GITLAB_APP_SECRET={S}", "gloas-" + rs(URLSAFE, 64))
gl("gitlab-pat", "PRIVATE-TOKEN: {S}", "glpat-" + rs(URLSAFE, 20))
gl("gitlab-pat-routable", "glab auth login --token {S}", "glpat-" + rs(URLSAFE, 40) + ".01" + rs(LOWNUM, 7))
gl("gitlab-ptt", "trigger token {S}", "glptt-" + hexs(40))
gl("gitlab-rrt", "registration_token = {S}", "GR1348941" + rs(URLSAFE, 20))
gl("gitlab-runner-authentication-token", "gitlab-runner register --token {S}", "glrt-" + rs(URLSAFE, 20))
gl("gitlab-scim-token", "SCIM token: {S}", "glsoat-" + rs(URLSAFE, 20))
gl("gitlab-session-cookie", "Cookie: _gitlab_session={S}", hexs(32))
gl("gitter-access-token", "GITTER_TOKEN={S}", rs(LOWNUM + "_-", 40))
gl("gocardless-api-token", "gocardless_access_token: {S}", "live_" + rs(URLSAFE, 40))
gl("grafana-api-key", "GF_API_KEY={S}", "eyJrIjoi" + rs(ALNUM, 80))
gl("grafana-cloud-api-token", "grafana cloud token {S}", "glc_" + rs(ALNUM, 80) + "==")
gl("grafana-service-account-token", "Authorization: Bearer {S}", "glsa_" + rs(ALNUM, 32) + "_" + hexs(8))
gl("harness-api-key", "x-api-key: {S}", "pat." + rs(URLSAFE, 22) + "." + rs(ALNUM, 24) + "." + rs(ALNUM, 20))
gl(
    "hashicorp-tf-api-token",
    'credentials "app.terraform.io" { token = "{S}" }',
    rs(LOWNUM, 14) + ".atlasv1." + rs(URLSAFE, 67),
)
gl("hashicorp-tf-password", '  administrator_login_password = "{S}"', rs(ALNUM, 18))
gl("heroku-api-key", "HEROKU_API_KEY={S}", uid())
gl("heroku-api-key-v2", "heroku auth:token -> {S}", "HRKU-AA" + rs(URLSAFE, 58))
gl("hubspot-api-key", "hubspot_api_key: {S}", uid().upper())
gl("huggingface-access-token", "huggingface-cli login --token {S}", "hf_" + rs(string.ascii_letters, 34))
gl("huggingface-organization-api-token", "HF_ORG_TOKEN={S}", "api_org_" + rs(string.ascii_letters, 34))
gl("infracost-api-token", "INFRACOST_API_KEY={S}", "ico-" + rs(ALNUM, 32))
gl("intercom-api-key", "INTERCOM_ACCESS_TOKEN={S}", rs(URLSAFE, 60))
gl("intra42-client-secret", "FT_SECRET={S}", "s-s4t2ud-" + hexs(64))
gl("jfrog-identity-token", "artifactory_identity_token: {S}", rs(LOWNUM, 64))
gl(
    "jwt",
    "Authorization: {S}",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    + base64.urlsafe_b64encode(b'{"sub":"4711","name":"ana","iat":1766000000}').decode().rstrip("=")
    + "."
    + rs(URLSAFE, 43),
)
gl("kraken-access-token", "KRAKEN_PRIVATE_KEY={S}", rs(B64, 88))
gl("kubernetes-secret-yaml", "  password: {S}", b64("Pr0d-" + rs(ALNUM, 16)))
gl("kucoin-secret-key", "kucoin_secret: {S}", uid())
gl("launchdarkly-access-token", "LAUNCHDARKLY_ACCESS_TOKEN={S}", "api-" + uid())
gl("linear-api-key", "LINEAR_API_KEY={S}", "lin_api_" + rs(ALNUM, 40))
gl("linkedin-client-secret", "linkedin_client_secret: {S}", rs(ALNUM, 16))
gl("lob-api-key", "lob_api_key={S}", "live_" + hexs(35))
gl("looker-client-secret", "looker_client_secret={S}", rs(ALNUM, 24))
gl("mailchimp-api-key", "MAILCHIMP_API_KEY={S}", hexs(32) + "-us14")
gl("mailgun-private-api-token", "mailgun_api_key: {S}", "key-" + hexs(32))
gl(
    "mailgun-signing-key",
    "MAILGUN_SIGNING_KEY={S}",
    rs("abcdefgh0123456789", 32) + "-" + rs("abcdefgh0123456789", 8) + "-" + rs("abcdefgh0123456789", 8),
)
gl("mapbox-api-token", "mapboxgl.accessToken = '{S}';", "pk." + rs(ALNUM, 60) + "." + rs(ALNUM, 22))
gl("mattermost-access-token", "MATTERMOST_TOKEN={S}", rs(LOWNUM, 26))
gl("maxmind-license-key", "LicenseKey {S}", rs(ALNUM, 6) + "_" + rs(ALNUM, 29) + "_mmk")
gl("messagebird-api-token", "messagebird_access_key={S}", rs(ALNUM, 25))
gl(
    "microsoft-teams-webhook",
    "POST {S}",
    f"https://acme.webhook.office.com/webhookb2/{uid()}@{uid()}/IncomingWebhook/{hexs(32)}/{uid()}",
)
gl("netlify-access-token", "NETLIFY_AUTH_TOKEN={S}", rs(URLSAFE, 43))
gl("new-relic-user-api-key", "NEW_RELIC_API_KEY={S}", "NRAK-" + rs(UPNUM, 27))
gl("new-relic-insert-key", "newrelic insert key {S}", "NRII-" + rs(URLSAFE, 32))
gl("new-relic-browser-api-token", "new_relic_browser_key: {S}", "NRJS-" + hexs(19))
gl("notion-api-token", "NOTION_TOKEN={S}", "ntn_" + rs(DIGITS, 11) + rs(ALNUM, 35))
gl("npm-access-token", "//registry.npmjs.org/:_authToken={S}", "npm_" + rs(ALNUM, 36))
gl("nuget-config-password", '    <add key="ClearTextPassword" value="{S}" />', rs(ALNUM, 20))
gl("octopus-deploy-api-key", "octo push --apiKey {S}", "API-" + rs(UPNUM, 26))
gl("okta-access-token", "Authorization: SSWS {S}", "00" + rs(URLSAFE, 40))
gl("openai-api-key", "OPENAI_API_KEY={S}", "sk-proj-" + rs(URLSAFE, 74) + "T3BlbkFJ" + rs(URLSAFE, 74))
gl(
    "openshift-user-token",
    "oc login --token={S} --server=https://api.ocp.example.com:6443",
    "sha256~" + rs(URLSAFE, 43),
)
gl("perplexity-api-key", "PPLX_API_KEY={S}", "pplx-" + rs(ALNUM, 48))
gl("plaid-api-token", "plaid access token {S}", "access-sandbox-" + uid())
gl("planetscale-api-token", "PLANETSCALE_SERVICE_TOKEN={S}", "pscale_tkn_" + rs(URLSAFE, 43))
gl("planetscale-password", "mysql://app:{S}@aws.connect.psdb.cloud/prod", "pscale_pw_" + rs(URLSAFE, 43))
gl("postman-api-token", "X-Api-Key: {S}", "PMAK-" + hexs(24) + "-" + hexs(34))
gl("prefect-api-token", "prefect cloud login -k {S}", "pnu_" + rs(ALNUM, 36))
gl("pulumi-api-token", "PULUMI_ACCESS_TOKEN={S}", "pul-" + hexs(40))
gl("pypi-upload-token", "twine upload -u __token__ -p {S} dist/*", "pypi-AgEIcHlwaS5vcmc" + rs(URLSAFE, 70))
gl("rapidapi-access-token", "X-RapidAPI-Key: {S}", rs(URLSAFE, 50))
gl("readme-api-token", "README_API_KEY={S}", "rdme_" + rs(LOWNUM, 70))
gl("rubygems-api-token", ":rubygems_api_key: {S}", "rubygems_" + hexs(48))
gl("scalingo-api-token", "scalingo login --api-token {S}", "tk-us-" + rs(URLSAFE, 48))
gl("sendgrid-api-token", "SENDGRID_API_KEY={S}", "SG." + rs(URLSAFE, 22) + "." + rs(URLSAFE, 43))
gl("sendinblue-api-token", "api-key: {S}", "xkeysib-" + hexs(64) + "-" + rs(ALNUM, 16))
gl("sentry-user-token", "SENTRY_AUTH_TOKEN={S}", "sntryu_" + hexs(64))
gl("settlemint-personal-access-token", "SETTLEMINT_ACCESS_TOKEN={S}", "sm_pat_" + rs(ALNUM, 16))
gl("shippo-api-token", "Authorization: ShippoToken {S}", "shippo_live_" + hexs(40))
gl("shopify-access-token", "X-Shopify-Access-Token: {S}", "shpat_" + hexs(32))
gl("shopify-shared-secret", "SHOPIFY_API_SECRET={S}", "shpss_" + hexs(32))
gl("sidekiq-secret", "export BUNDLE_ENTERPRISE__CONTRIBSYS__COM={S}", hexs(8) + ":" + hexs(8))
gl("sidekiq-sensitive-url", 'source "{S}" do', f"https://{hexs(8)}:{hexs(8)}@enterprise.contribsys.com/")
gl(
    "slack-app-token",
    "SLACK_APP_TOKEN={S}",
    "xapp-1-A" + rs(UPNUM, 10) + "-" + rs(DIGITS, 13) + "-" + hexs(64),
)
gl(
    "slack-bot-token",
    "SLACK_BOT_TOKEN={S}",
    "xoxb-" + rs(DIGITS, 12) + "-" + rs(DIGITS, 13) + "-" + rs(ALNUM, 24),
)
gl(
    "slack-user-token",
    "token={S}",
    "xoxp-" + rs(DIGITS, 12) + "-" + rs(DIGITS, 12) + "-" + rs(DIGITS, 13) + "-" + rs(ALNUM, 32),
)
gl("slack-config-access-token", "slack config token {S}", "xoxe.xoxp-1-" + rs(UPNUM, 164))
gl(
    "slack-webhook-url",
    "curl -X POST -d @msg.json {S}",
    "https://hooks.slack.com/services/T" + rs(UPNUM, 10) + "/B" + rs(UPNUM, 10) + "/" + rs(ALNUM, 24),
)
gl("snyk-api-token", "SNYK_TOKEN={S}", uid())
gl("sonar-api-token", "mvn sonar:sonar -Dsonar.token={S}", "squ_" + hexs(40))
gl("sourcegraph-access-token", "SRC_ACCESS_TOKEN={S}", "sgp_" + hexs(16) + "_" + hexs(40))
gl("square-access-token", "SQUARE_ACCESS_TOKEN={S}", "EAAA" + rs(URLSAFE, 60))
gl("stripe-access-token", "stripe.api_key = '{S}'", "sk_live_" + rs(ALNUM, 24))
gl(
    "stripe-access-token",
    "STRIPE_RESTRICTED_KEY={S}",
    "rk_live_" + rs(ALNUM, 24),
    kind="stripe-restricted-key",
)
gl("sumologic-access-token", "SUMO_ACCESS_KEY={S}", rs(ALNUM, 64))
gl("telegram-bot-api-token", "TELEGRAM_BOT_TOKEN={S}", rs(DIGITS, 10) + ":AA" + rs(URLSAFE, 33))
gl("travisci-access-token", "travis_token: {S}", rs(ALNUM, 22))
gl("twilio-api-key", "twilio api key sid {S}", "SK" + hexs(32))
gl("twitch-api-token", "TWITCH_CLIENT_SECRET={S}", rs(LOWNUM, 30))
gl("twitter-access-secret", "twitter_access_secret: {S}", rs(ALNUM, 45))
gl("twitter-bearer-token", "TWITTER_BEARER_TOKEN={S}", "A" * 22 + rs(ALNUM + "%", 90))
gl("typeform-api-token", "TYPEFORM_TOKEN={S}", "tfp_" + rs(URLSAFE, 59))
gl("vault-service-token", "VAULT_TOKEN={S}", "hvs." + rs(URLSAFE, 95))
gl("vault-batch-token", "X-Vault-Token: {S}", "hvb." + rs(URLSAFE, 140))
gl("yandex-api-key", "yandex_api_key: {S}", "AQVN" + rs(URLSAFE, 36))
gl("yandex-aws-access-token", "yandex_static_key={S}", "YC" + rs(URLSAFE, 38))
gl("zendesk-secret-key", "ZENDESK_API_TOKEN={S}", rs(ALNUM, 40))

# --- detect-secrets plugins ------------------------------------------------------------------
ds("AWSKeyDetector", "aws secret access key", "aws_secret_access_key = {S}", rs(B64, 40))
ds(
    "AzureStorageKeyDetector",
    "azure storage connection string",
    "DefaultEndpointsProtocol=https;AccountName=acmedata;AccountKey={S};EndpointSuffix=core.windows.net",
    rs(B64, 86) + "==",
)
ds("BasicAuthDetector", "url credentials", "https://admin:{S}@git.example.com/acme/app.git", rs(ALNUM, 14))
ds("CloudantDetector", "cloudant url", "https://acme-bx:{S}@acme-bx.cloudant.com", hexs(64))
ds(
    "DiscordBotTokenDetector",
    "discord bot token",
    "bot.run('{S}')",
    "M" + rs(URLSAFE, 23) + "." + rs(URLSAFE, 6) + "." + rs(URLSAFE, 27),
)
ds("IbmCloudIamDetector", "ibm cloud iam key", 'ibm_cloud_api_key = "{S}"', rs(URLSAFE, 44))
ds("IbmCosHmacDetector", "ibm cos hmac secret", 'cos_hmac_keys.secret_access_key: "{S}"', hexs(48))
ds("KeywordDetector", "keyword password in code", 'db_pass = "{S}"', "Winter-Harbor-" + rs(DIGITS, 4))
ds("KeywordDetector", "keyword secret in yaml", "client_secret: {S}", rs(ALNUM, 28))
ds("NpmDetector", "npmrc legacy authToken", "//registry.npmjs.org/:_authToken={S}", uid())
ds(
    "PrivateKeyDetector",
    "rsa private key block",
    "-----BEGIN RSA PRIVATE KEY-----\n{S}\n-----END RSA PRIVATE KEY-----",
    "\n".join(rs(B64, 64) for _ in range(6)),
)
ds(
    "PrivateKeyDetector",
    "openssh private key block",
    "-----BEGIN OPENSSH PRIVATE KEY-----\n{S}\n-----END OPENSSH PRIVATE KEY-----",
    "b3BlbnNzaC1rZXktdjEAAAAA" + rs(B64, 46) + "\n" + "\n".join(rs(B64, 70) for _ in range(4)),
)
ds(
    "PrivateKeyDetector",
    "pkcs8 private key block",
    "-----BEGIN PRIVATE KEY-----\n{S}\n-----END PRIVATE KEY-----",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + rs(B64, 32) + "\n" + "\n".join(rs(B64, 64) for _ in range(5)),
)
ds(
    "PrivateKeyDetector",
    "ec private key block",
    "-----BEGIN EC PRIVATE KEY-----\n{S}\n-----END EC PRIVATE KEY-----",
    "MHcCAQEEI" + rs(B64, 55) + "\n" + rs(B64, 64),
)
ds("SoftlayerDetector", "softlayer api key", "SOFTLAYER_API_KEY={S}", hexs(64))
ds("SquareOAuthDetector", "square oauth secret", "square_oauth_secret: {S}", "sq0csp-" + rs(URLSAFE, 43))
ds("TwilioKeyDetector", "twilio auth token", "TWILIO_AUTH_TOKEN={S}", hexs(32))
ds("Base64HighEntropyString", "high entropy base64 in quotes", 'signing_key: "{S}"', rs(B64, 44))
ds("HexHighEntropyString", "high entropy hex in quotes", 'HMAC_KEY="{S}"', hexs(64))
ds("PypiTokenDetector", "pypirc password", "password = {S}", "pypi-AgEIcHlwaS5vcmc" + rs(URLSAFE, 60))

# --- everyday tool output --------------------------------------------------------------------
ev(".npmrc", "npmrc _auth", "_auth={S}", b64("deploy:" + rs(ALNUM, 12)))
ev(".npmrc", "npmrc _password", "//npm.example.com/:_password={S}", b64(rs(ALNUM, 16)))
ev("cli flag", "--api-token", "flyctl deploy --api-token {S} --remote-only", rs(ALNUM, 40))
ev("GitHub Actions", "::add-mask::", "::add-mask::{S}", rs(ALNUM, 24))
ev("http header", "X-Token: Bearer", "X-Token: Bearer {S}", rs(ALNUM, 32))
ev("htpasswd", "htpasswd -b", "htpasswd -b -c /etc/nginx/.htpasswd admin {S}", "Tr0ub4dor&3")
ev("htpasswd", "htpasswd -nbB", "htpasswd -nbB admin {S}", "k1ttens-on-2-mars")
ev(
    "ssh-keygen",
    "ssh-keygen -N quoted with spaces",
    "ssh-keygen -t ed25519 -N '{S}' -f ~/.ssh/deploy_key",
    "correct horse battery staple",
)
ev(
    "ssh-keygen",
    "ssh-keygen -P old passphrase",
    "ssh-keygen -p -P '{S}' -N '' -f ~/.ssh/id_rsa",
    "old-Phrase-91",
)
ev("yaml", "lower-case yaml db_password", "  db_password: {S}", "p4ssw0rd-prod-2026")
ev("yaml", "lower-case yaml token", "  token: {S}", rs(ALNUM, 30))
ev("yaml", "lower-case yaml secret_key quoted", "  secret_key: '{S}'", rs(ALNUM, 26))
ev("json", '{"apiKey": ...}', '{"apiKey": "{S}", "region": "eu-west-1"}', rs(ALNUM, 39))
ev("json", "compact json apiSecret", '{"apiSecret":"{S}","env":"prod"}', rs(ALNUM, 32))
ev(
    "json",
    "docker inspect Env",
    '            "Env": ["POSTGRES_PASSWORD={S}", "PGDATA=/var/lib/postgresql/data"],',
    "Gr4v1ty-" + rs(ALNUM, 8),
)
ev("json", "json password", '  "password": "{S}",', "Sunset-Boulevard-77")
ev("curl", "curl -b cookie", "curl -b 'session={S}' https://app.example.com/api/me", rs(ALNUM, 32))
ev("curl", "curl --oauth2-bearer", "curl --oauth2-bearer {S} https://api.example.com/me", rs(ALNUM, 36))
ev("shell", "quoted value with spaces", 'DB_PASS="{S}"', "blue monkey orchard 42")
ev("shell", "lower-case env quoted with spaces", "export smtp_password='{S}'", "my dog has fleas 9")
ev(
    "gpg",
    "gpg --passphrase",
    "gpg --batch --yes --passphrase '{S}' --decrypt secrets.tar.gpg",
    "orange-Tiger-71!",
)
ev(
    "keytool",
    "keytool -storepass",
    "keytool -importkeystore -srckeystore client.p12 -srcstoretype PKCS12 -storepass {S} -destkeystore app.jks",
    "changeit2026x",
)
ev(
    "keytool",
    "keytool -keypass",
    "keytool -genkeypair -alias app -keypass {S} -keystore app.jks",
    "k3yP4ss-" + rs(ALNUM, 6),
)
ev("nmcli", "nmcli password", "nmcli dev wifi connect HomeNet password {S}", "sunflower2026")
ev("nmcli", "nmcli wifi-sec.psk", 'nmcli con modify HomeNet wifi-sec.psk "{S}"', "Lantern-Fjord-88")
ev("smbclient", "smbclient -U user%pass", "smbclient //fileserver/share -U alice%{S}", "Qu1ckSilver!")
ev(
    "net use",
    "net use password /user",
    "net use Z: \\\\fileserver\\share {S} /user:CORP\\alice",
    "Autumn#Leaves42",
)
ev(
    "PowerShell",
    "ConvertTo-SecureString single quotes",
    "$pw = ConvertTo-SecureString '{S}' -AsPlainText -Force",
    "P@ssw0rd-Azure-9",
)
ev(
    "PowerShell",
    "ConvertTo-SecureString double quotes",
    'New-LocalUser -Name svc -Password (ConvertTo-SecureString "{S}" -AsPlainText -Force)',
    "S3rvice-Acct-" + rs(DIGITS, 3),
)
ev("cmdkey", "cmdkey /pass", "cmdkey /add:fileserver /user:alice /pass:{S}", "Wint3r-Is-Here")
ev("mysql", "mysql -p attached", "mysql -u root -p{S} -h db.internal app", "r00tPw-" + rs(ALNUM, 6))
ev("psql", "PGPASSWORD env", "PGPASSWORD={S} psql -h db.internal -U app prod", rs(ALNUM, 18))
ev("psql", "postgres url", 'psql "postgresql://app:{S}@db.internal:5432/prod"', rs(ALNUM, 20))
ev("docker", "docker login -p", "docker login -u ci -p {S} registry.example.com", rs(ALNUM, 22))
ev(
    "docker",
    "docker run -e password",
    "docker run -d -e MYSQL_ROOT_PASSWORD={S} mysql:8",
    "my-r00t-" + rs(ALNUM, 5),
)
ev(
    "docker",
    "echo to --password-stdin",
    "echo '{S}' | docker login --username ci --password-stdin",
    rs(ALNUM, 24),
)
ev("redis-cli", "redis-cli -a", "redis-cli -h cache -a {S} ping", rs(ALNUM, 20))
ev("redis", "redis url", "REDIS_URL=redis://:{S}@cache:6379/0", rs(ALNUM, 20))
ev(
    "openssl",
    "-passout pass:",
    "openssl pkcs12 -export -in cert.pem -inkey key.pem -out cert.p12 -passout pass:{S}",
    "exp0rt-" + rs(ALNUM, 6),
)
ev(
    "openssl",
    "openssl enc -k",
    "openssl enc -aes-256-cbc -salt -k {S} -in db.sql -out db.sql.enc",
    "b4ckup-" + rs(ALNUM, 8),
)
ev("sshpass", "sshpass -p", "sshpass -p '{S}' ssh deploy@10.0.0.7", "Deploy-Me-2026")
ev(
    "git",
    "git clone with token in url",
    "git clone https://oauth2:{S}@gitlab.example.com/group/repo.git",
    rs(ALNUM, 20),
)
ev(
    "git",
    "git remote x-access-token",
    "git remote set-url origin https://x-access-token:{S}@github.com/acme/app.git",
    rs(ALNUM, 40),
)
ev(
    "git",
    "git extraheader bearer",
    'git config --global http.extraheader "AUTHORIZATION: bearer {S}"',
    rs(ALNUM, 36),
)
ev(
    "wget",
    "wget --password",
    "wget --user=deploy --password={S} https://files.example.com/release.tar.gz",
    rs(ALNUM, 14),
)
ev("httpie", "http --auth", "http --auth alice:{S} GET https://api.example.com/me", rs(ALNUM, 14))
ev(
    "az",
    "az login -p",
    "az login --service-principal -u http://deploy-app -p {S} --tenant contoso.onmicrosoft.com",
    rs(ALNUM + "~._-", 34),
)
ev("az", "--client-secret", "az ad app credential reset --id 42 --client-secret {S}", rs(ALNUM, 32))
ev(
    "mongosh",
    "mongodb+srv url",
    'mongosh "mongodb+srv://app:{S}@cluster0.abcde.mongodb.net/prod"',
    rs(ALNUM, 16),
)
ev(
    "ldapsearch",
    "ldapsearch -w",
    'ldapsearch -x -D "cn=admin,dc=example,dc=org" -w {S} -b dc=example,dc=org',
    "Ld4p-" + rs(ALNUM, 8),
)
ev(".pgpass", "pgpass line", "db.internal:5432:prod:app:{S}", rs(ALNUM, 18))
ev(".netrc", "netrc password", "machine api.heroku.com login me@example.com password {S}", rs(ALNUM, 32))
ev("http header", "Authorization: Basic", "Authorization: Basic {S}", b64("alice:" + rs(ALNUM, 12)))
ev(
    "http header",
    "Proxy-Authorization: Basic",
    "Proxy-Authorization: Basic {S}",
    b64("proxy:" + rs(ALNUM, 12)),
)
ev("http header", "Authorization: Token", "Authorization: Token {S}", hexs(40))
ev("http header", "X-API-Key", "X-API-Key: {S}", rs(ALNUM, 32))
ev("http header", "lower-case x-api-key", "x-api-key: {S}", rs(ALNUM, 32))
ev("http header", "Cookie sessionid", "Cookie: sessionid={S}; csrftoken=" + rs(ALNUM, 32), rs(LOWNUM, 32))
ev(
    "http header",
    "Set-Cookie auth_token",
    "Set-Cookie: auth_token={S}; Path=/; HttpOnly; Secure",
    rs(ALNUM, 40),
)
ev("url", "access_token query", "GET https://api.example.com/v1/items?access_token={S}&page=2", rs(ALNUM, 40))
ev("url", "ftp credentials", "ftp://deploy:{S}@ftp.example.com/site/", rs(ALNUM, 12))
ev("docker-compose", "compose environment list", "      - POSTGRES_PASSWORD={S}", "compose-" + rs(ALNUM, 10))
ev("terraform", "terraform password attribute", '  password = "{S}"', rs(ALNUM, 20))
ev("ini", "lower-case ini password", "password = {S}", "hunter2-" + rs(ALNUM, 6))
ev("xml", "xml password element", "    <password>{S}</password>", "Xml-Pa55-" + rs(ALNUM, 5))
ev("php", "php define DB_PASSWORD", "define('DB_PASSWORD', '{S}');", "wp-" + rs(ALNUM, 14))
ev("spring", "spring.datasource.password", "spring.datasource.password={S}", rs(ALNUM, 16))
ev(
    "jdbc",
    "jdbc url password",
    "jdbc:sqlserver://db:1433;databaseName=app;user=sa;password={S};",
    "Sa-" + rs(ALNUM, 12),
)
ev(
    "ado.net",
    "connection string Password",
    "Server=tcp:db.example.com,1433;Database=app;User ID=app;Password={S};Encrypt=True;",
    rs(ALNUM, 16),
)
ev("heroku", "heroku config:set", "heroku config:set SECRET_KEY_BASE={S} -a acme-prod", hexs(64))
ev(
    "vault",
    "vault login userpass",
    "vault login -method=userpass username=alice password={S}",
    "Va-" + rs(ALNUM, 12),
)
ev(
    "kubectl",
    "kubectl --from-literal",
    "kubectl create secret generic db --from-literal=password={S}",
    rs(ALNUM, 18),
)
ev("requests", "python auth tuple", 'r = requests.get(url, auth=("admin", "{S}"))', "Adm1n-" + rs(ALNUM, 8))
ev("aws", "aws configure set secret", "aws configure set aws_secret_access_key {S}", rs(B64, 40))
ev(
    "pip",
    "pip index url token",
    "pip install --index-url https://__token__:{S}@pypi.example.com/simple acme-lib",
    rs(ALNUM, 32),
)
ev(
    "rclone",
    "rclone secret_access_key",
    "rclone config create s3 s3 access_key_id minio secret_access_key {S}",
    rs(ALNUM, 30),
)
ev("mc", "minio alias set", "mc alias set local http://minio:9000 admin {S}", rs(ALNUM, 20))
ev("sudo", "echo to sudo -S", "echo '{S}' | sudo -S apt-get update", "Sud0-" + rs(ALNUM, 8))
ev("wpa_supplicant", "wpa psk", '    psk="{S}"', "coffee-and-cake-123")
ev("zip", "zip -P", "zip -P {S} backup.zip db.sql", "z1p-" + rs(ALNUM, 8))
ev("7z", "7z -p attached", "7z a -p{S} backup.7z data/", "7z-" + rs(ALNUM, 9))
ev("yarn", "yarn npmAuthToken", "yarn config set npmAuthToken {S}", uid())
ev("ruby", "ruby hash api_secret", "  api_secret => '{S}',", rs(ALNUM, 30))
ev(
    "django",
    "django-insecure SECRET_KEY",
    "SECRET_KEY = '{S}'",
    "django-insecure-" + rs(LOWNUM + "!@#$%^&*(-_=+)", 50),
)
ev(
    "bip39",
    "mnemonic in yaml",
    'mnemonic: "{S}"',
    "legal winner thank year wave sausage worth useful legal winner thank yellow",
)
ev(
    "bip39",
    "seed phrase in prose",
    "my seed phrase is {S}, keep it safe",
    "abandon ability able about above absent absorb abstract absurd abuse access accident",
)
ev("env", "lower-case env password", "db_password={S}", rs(ALNUM, 16))
ev("cli flag", "--token=", "gh auth login --hostname github.example.com --token={S}", rs(ALNUM, 40))
ev("cli flag", "--password", "argocd login argocd.example.com --username admin --password {S}", rs(ALNUM, 16))
ev("terraform", "TF_VAR password", "TF_VAR_db_password={S}", rs(ALNUM, 18))
ev(
    "log",
    "logged Authorization header",
    "DEBUG:urllib3: send: b'GET /v1/me HTTP/1.1\\r\\nAuthorization: Bearer {S}\\r\\n'",
    rs(ALNUM, 40),
)


# --- checking the gitleaks shapes against the rules' own regexes -------------------------------


def gitleaks_rules() -> dict[str, str]:
    try:
        import tomllib

        mirror = subprocess.run(
            ["git", "-C", "/work/.mirror/gitleaks+gitleaks/repo", "show", "HEAD:config/gitleaks.toml"],
            capture_output=True,
            check=True,
        ).stdout
        return {r["id"]: r.get("regex", "") for r in tomllib.loads(mirror.decode())["rules"]}
    except Exception:  # noqa: BLE001  the mirror is not everywhere: the check is skipped
        return {}


def as_python(regex: str) -> str:
    """gitleaks' Go regexes as Python's `re` reads them, where they differ simply."""
    out = regex.replace("[[:alnum:]]", "[A-Za-z0-9]").replace(r"\z", r"\Z")
    inline = "(?i)" in out
    out = out.replace("(?i)", "").replace("(?-i:", "(?:")
    return ("(?i)" if inline else "") + out


def check_gitleaks() -> tuple[int, int, list[str]]:
    rules = gitleaks_rules()
    checked = matched = 0
    unmatched = []
    for shape in SHAPES:
        rule = shape["source"].removeprefix("gitleaks:")
        if not shape["source"].startswith("gitleaks:") or not rules.get(rule):
            continue
        try:
            pattern = re.compile(as_python(rules[rule]))
        except re.error:
            continue
        checked += 1
        if pattern.search(shape["text"]):
            matched += 1
        else:
            unmatched.append(rule)
    return checked, matched, unmatched


# --- ordinary lines ----------------------------------------------------------------------------

ARGUABLE = re.compile(
    r"(?i)(?:passw(?:or)?d|passwd|passphrase|secret|token|api[_-]?key|apikey|auth|credential|psk)"
    r"\w*[\"']?\s*(?:=|:|=>)\s*[\"']?[A-Za-z0-9+/_\-.~!@#$%^&*]{6,}"
    r"|-----BEGIN|\bBearer\s+\S{8,}|\bBasic\s+[A-Za-z0-9+/=]{8,}|://[^/\s:@]+:[^/\s@]+@"
    r"|\b(?:ghp|gho|ghs|ghu|ghr|glpat|xox[abposr]|sk-|sk_live|AKIA|AIza|hf_|npm_)[A-Za-z0-9_\-]{8,}"
    r"|\b(?:mysql|7z)\b.*\s-p\S{4,}|\b(?:ssh-keygen|ldapsearch|openssl|redis-cli)\b.*\s-(?:N|P|w|k|a)\s+'?[^\s']{6,}"
)


def stdlib_lines() -> list[str]:
    base = Path(sysconfig.get_paths()["stdlib"])
    lines = []
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).as_posix()
        if "site-packages" in rel or "/test" in f"/{rel}" or "tests/" in rel or "idle_test" in rel:
            continue
        lines += path.read_text(errors="replace").splitlines()
    return lines


def man_lines(limit_pages: int = 60) -> list[str]:
    pages = sorted(Path("/usr/share/man/man1").glob("*.1*"))[
        :: max(1, len(list(Path("/usr/share/man/man1").glob("*.1*"))) // limit_pages)
    ]
    lines = []
    for page in pages[:limit_pages]:
        run = subprocess.run(
            f"MANWIDTH=100 man -P cat -l {page} 2>/dev/null | col -b",
            shell=True,
            capture_output=True,
            text=True,
            timeout=30,
        )
        lines += run.stdout.splitlines()
    return lines


def changelog_lines() -> list[str]:
    lines = []
    for path in sorted(Path("/usr/share/doc").glob("*/changelog*.gz")):
        try:
            lines += gzip.open(path, "rt", errors="replace").read().splitlines()
        except OSError:
            continue
    return lines


def git_log_lines() -> list[str]:
    return subprocess.run(
        ["git", "-C", str(ROOT), "log", "--format=%H %an %ad%n%B", "--stat"], capture_output=True, text=True
    ).stdout.splitlines()


def ordinary_lines(target: int = 120_000) -> list[str]:
    groups = {
        "stdlib": stdlib_lines(),
        "man": man_lines(),
        "changelog": changelog_lines(),
        "git log": git_log_lines(),
    }
    seen: set[str] = set()
    picked: dict[str, list[str]] = {}
    for name, lines in groups.items():
        keep = []
        for line in lines:
            line = line.rstrip()
            if len(line.strip()) < 6 or len(line) > 300 or line in seen or ARGUABLE.search(line):
                continue
            seen.add(line)
            keep.append(line)
        picked[name] = keep
    # A fixed share of each source, up to the target.
    rng = random.Random(7)
    quota = {"stdlib": 0.5, "man": 0.25, "changelog": 0.15, "git log": 0.10}
    out = []
    for name, share in quota.items():
        lines = picked[name]
        want = min(len(lines), int(target * share))
        out += rng.sample(lines, want)
    taken = set(out)
    rest = [line for name in groups for line in picked[name] if line not in taken]
    if len(out) < target:
        out += rng.sample(rest, min(len(rest), target - len(out)))
    print({name: len(lines) for name, lines in picked.items()}, file=sys.stderr)
    return out


def main() -> None:
    with open(HERE / "shapes.jsonl", "w") as f:
        for shape in SHAPES:
            assert shape["text"][shape["start"] : shape["end"]] == shape["secret"]
            f.write(json.dumps(shape, ensure_ascii=False) + "\n")
    checked, matched, unmatched = check_gitleaks()
    print(
        f"{len(SHAPES)} shapes; gitleaks rules' own regexes: {matched} of {checked} compiled match ({unmatched})"
    )
    lines = ordinary_lines()
    with gzip.open(HERE / "ordinary.txt.gz", "wt", compresslevel=9) as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} ordinary lines")


if __name__ == "__main__":
    main()
