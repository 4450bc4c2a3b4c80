#!/usr/bin/env python3
"""Generate the redaction corpus: crates/safety/tests/data/redaction/corpus.jsonl.

Each line is one JSON object:
    {"id": "printenv-0007", "source": "printenv", "text": "...",
     "secrets": [{"kind": "aws-secret-access-key", "value": "..."}],  # must disappear
     "keep": ["PWD=/srv/app", "..."]}                                 # must stay verbatim

A secret is LEAKED when the redacted text contains its value or any fragment of it of
min(len, 8) or more bytes; a keep item is a FALSE POSITIVE when it is not verbatim in the
redacted text (docs/redaction.md, "The corpus and the measured figures").

The texts are shaped like the real output of real tools (printenv, git config -l, kubectl
config view --raw, docker config.json, terraform plan, curl -v, database errors, key files,
...). Every credential is fake: random characters of the right shape from random.Random(SEED),
never a real key. Deterministic: standard library only, no clock, no other randomness, so
re-running the script reproduces the file byte for byte (a test checks this).

Decisions a reader may question:
- bcrypt/sha-crypt password hashes (`$2b$12$...`, `$6$...`) are SECRETS (kind
  `password-hash`): a leaked hash of a weak password is cracked offline, and /etc/shadow and
  .htpasswd lines are treated as credentials by every operator. Plain sha1/sha256/sha512 hex
  or base64 digests (checksums, git SHAs, image digests, `integrity` fields) are benign.
- A GCP `private_key_id` or an AWS access key id is an identifier; the access key id is listed
  as a secret (every scanner does, and it names the account), `private_key_id` is in neither
  list.
- The key name of a secret line (`DB_PASSWORD=`) is not a keep item: a redactor may or may
  not leave it; the benign lines around it are.

Usage: scripts/redaction_corpus.py [OUTPUT]   (default: the corpus path above)
"""

import base64
import json
import os
import random
import string
import sys
import urllib.parse

# REDACTION_CORPUS_SEED makes another corpus of the same shapes (a check that the rules were
# not fitted to these exact values); the committed corpus uses the default.
SEED = int(os.environ.get("REDACTION_CORPUS_SEED", 16_2026))
R = random.Random(SEED)

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"

N_SECRET_TEXTS = 820
N_BENIGN_TEXTS = 880
FRAGMENT = 8


def rs(n, alphabet=ALNUM):
    return "".join(R.choice(alphabet) for _ in range(n))


def pick(seq):
    return R.choice(seq)


def b64(data):
    return base64.b64encode(data.encode()).decode()


def b64url_nopad(data):
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


# --- names, hosts, paths --------------------------------------------------------------------

USERS = ["dev", "alice", "bob", "deploy", "ci", "app", "svc-build", "maria", "kenji", "ops"]
ORGS = ["acme", "initech", "globex", "umbrella", "hooli", "vandelay", "stark-labs", "wayne-ent"]
REPOS = ["api", "web", "infra", "billing", "search", "mobile", "data-pipeline", "auth-service"]
HOSTS = ["db.internal", "10.0.3.17", "pg-primary.prod.svc.cluster.local", "mysql-1.eu-west-1.rds.amazonaws.com",
         "cache.internal", "mq.internal", "127.0.0.1", "localhost", "cluster0.x1y2z.mongodb.net"]
REGIONS = ["eu-west-1", "us-east-1", "us-west-2", "ap-southeast-2", "eu-central-1"]
DBNAMES = ["app", "shop", "orders", "analytics", "users", "prod"]
APPS = ["/srv/app", "/opt/service", "/home/dev/src/api", "/workspace", "/app", "/var/www/html"]


def user():
    return pick(USERS)


def org():
    return pick(ORGS)


def repo():
    return pick(REPOS)


def uuid():
    h = rs(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{pick('89ab')}{h[17:20]}-{h[20:]}"


def sha1():
    return rs(40, HEX)


def sha256():
    return rs(64, HEX)


def date():
    return f"2026-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}T{R.randint(0, 23):02d}:{R.randint(0, 59):02d}:{R.randint(0, 59):02d}Z"


def ip():
    return f"10.{R.randint(0, 255)}.{R.randint(0, 255)}.{R.randint(1, 254)}"


# --- fake credential values, one generator per kind ------------------------------------------

def password():
    """A human or generated password; some end in `=`, some have symbols."""
    style = R.randrange(6)
    if style == 0:
        words = ["correct", "horse", "battery", "staple", "violet", "anchor", "summer", "rocket", "maple"]
        return "-".join(R.sample(words, 3)) + str(R.randint(10, 99))
    if style == 1:
        return rs(R.randint(12, 20), ALNUM + "!#%^*-_.~")
    if style == 2:
        return base64.b64encode(bytes(R.randrange(256) for _ in range(R.choice([16, 17, 20])))).decode()
    if style == 3:
        return pick(["Summer", "Winter", "Dragon", "Monkey", "Shadow"]) + str(R.randint(1000, 9999)) + pick("!@#$")
    if style == 4:
        return rs(R.randint(20, 32), ALNUM)
    return rs(10, ALNUM) + "=="


def pem_body(prefix, lines):
    body = [prefix + rs(64 - len(prefix), B64)]
    body += [rs(64, B64) for _ in range(lines - 2)]
    body.append(rs(R.randint(20, 60), B64) + pick(["", "=", "=="]))
    return body


PEM_KINDS = {
    "RSA PRIVATE KEY": "MIIEpAIBAAKCAQEA",
    "PRIVATE KEY": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ",
    "EC PRIVATE KEY": "MHcCAQEEI",
    "OPENSSH PRIVATE KEY": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "ENCRYPTED PRIVATE KEY": "MIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQI",
    "DSA PRIVATE KEY": "MIIBuwIBAAKBgQ",
}


def pem(label=None, lines=None):
    """A PEM private key: (full text, body joined by newlines)."""
    label = label or pick(list(PEM_KINDS))
    lines = lines or R.randint(6, 12)
    body = pem_body(PEM_KINDS[label], lines)
    text = f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----\n"
    return text, "\n".join(body)


def certificate(label="CERTIFICATE", lines=None):
    lines = lines or R.randint(8, 14)
    prefix = {"CERTIFICATE": "MIID", "PUBLIC KEY": "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA",
              "CERTIFICATE REQUEST": "MIIC", "X509 CRL": "MIIB"}[label]
    body = pem_body(prefix + rs(4, B64), lines)
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----\n"


def jwt():
    header = pick(['{"alg":"HS256","typ":"JWT"}', '{"alg":"RS256","kid":"' + rs(16, HEX) + '","typ":"JWT"}',
                   '{"typ":"JWT","alg":"ES256"}'])
    payload = json.dumps({"sub": uuid(), "iss": f"https://auth.{org()}.com/", "exp": R.randint(1_780_000_000, 1_799_999_999),
                          "scope": pick(["read write", "openid profile", "admin"])}, separators=(",", ":"))
    return f"{b64url_nopad(header)}.{b64url_nopad(payload)}.{rs(43, B64URL)}"


def slack_token():
    return f"xox{pick('bpa')}-{R.randint(10**11, 10**12)}-{R.randint(10**12, 10**13)}-{rs(24)}"


KINDS = {
    "aws-access-key-id": lambda: pick(["AKIA", "ASIA"]) + rs(16, UPPER_ALNUM),
    "aws-secret-access-key": lambda: rs(40, B64),
    "aws-session-token": lambda: "IQoJb3JpZ2luX2VjE" + rs(R.randint(280, 360), B64),
    "google-api-key": lambda: "AIza" + rs(35, B64URL),
    "google-oauth-client-secret": lambda: "GOCSPX-" + rs(28, B64URL),
    "google-oauth-access-token": lambda: "ya29." + rs(R.randint(120, 180), B64URL),
    "azure-storage-account-key": lambda: rs(86, B64) + "==",
    "azure-shared-access-key": lambda: rs(43, B64) + "=",
    "azure-client-secret": lambda: rs(3, ALNUM) + "8Q~" + rs(34, ALNUM + "_-.~"),
    "digitalocean-token": lambda: "dop_v1_" + rs(64, HEX),
    "github-personal-access-token": lambda: "ghp_" + rs(36),
    "github-oauth-token": lambda: "gho_" + rs(36),
    "github-user-to-server-token": lambda: "ghu_" + rs(36),
    "github-server-to-server-token": lambda: "ghs_" + rs(36),
    "github-refresh-token": lambda: "ghr_" + rs(76),
    "github-fine-grained-token": lambda: "github_pat_11" + rs(20, UPPER_ALNUM) + "_" + rs(59),
    "gitlab-personal-access-token": lambda: "glpat-" + rs(20, B64URL),
    "gitlab-runner-token": lambda: "glrt-" + rs(20, B64URL),
    "gitlab-deploy-token": lambda: "gldt-" + rs(20, B64URL),
    "npm-token": lambda: "npm_" + rs(36),
    "pypi-token": lambda: "pypi-AgEIcHlwaS5vcmc" + rs(R.randint(120, 160), B64URL),
    "docker-hub-token": lambda: "dckr_pat_" + rs(27, B64URL),
    "slack-token": slack_token,
    "slack-app-token": lambda: f"xapp-1-A{rs(10, UPPER_ALNUM)}-{R.randint(10**12, 10**13)}-{rs(64, HEX)}",
    "slack-webhook": lambda: f"T{rs(8, UPPER_ALNUM)}/B{rs(10, UPPER_ALNUM)}/{rs(24)}",
    "discord-webhook": lambda: f"{R.randint(10**17, 10**18)}/{rs(68, B64URL)}",
    # The whole token is `<bot id>:AA...`; the bot id is public, the part after the colon is
    # the secret (Text.secret lists only that part).
    "telegram-bot-token": lambda: f"{R.randint(10**8, 10**10)}:AA" + rs(33, B64URL),
    "stripe-secret-key": lambda: pick(["sk_live_", "sk_test_"]) + rs(R.choice([24, 99])),
    "stripe-restricted-key": lambda: pick(["rk_live_", "rk_test_"]) + rs(R.choice([24, 99])),
    "stripe-webhook-secret": lambda: "whsec_" + rs(32),
    "twilio-api-key": lambda: "SK" + rs(32, HEX),
    "sendgrid-api-key": lambda: "SG." + rs(22, B64URL) + "." + rs(43, B64URL),
    "mailgun-api-key": lambda: "key-" + rs(32, HEX),
    "shopify-token": lambda: pick(["shpat_", "shpca_", "shppa_", "shpss_"]) + rs(32, HEX),
    "square-token": lambda: pick(["sq0atp-", "sq0csp-"]) + rs(22, B64URL),
    "linear-api-key": lambda: "lin_api_" + rs(40),
    "postman-api-key": lambda: "PMAK-" + rs(24, HEX) + "-" + rs(34, HEX),
    "newrelic-user-key": lambda: "NRAK-" + rs(27, UPPER_ALNUM),
    "grafana-token": lambda: "glsa_" + rs(32) + "_" + rs(8, HEX),
    "databricks-token": lambda: "dapi" + rs(32, HEX),
    "pulumi-token": lambda: "pul-" + rs(40, HEX),
    "vault-token": lambda: "hvs." + rs(R.choice([24, 90]), B64URL),
    "anthropic-api-key": lambda: "sk-ant-api03-" + rs(93, B64URL) + "AA",
    "openai-api-key": lambda: "sk-" + pick(["proj-", "svcacct-", ""]) + rs(R.choice([20, 48]), B64URL) + "T3BlbkFJ" + rs(20, B64URL),
    "huggingface-token": lambda: "hf_" + rs(34),
    "age-secret-key": lambda: "AGE-SECRET-KEY-1" + rs(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
    "jwt": jwt,
    "password": password,
    "generic-secret": lambda: rs(R.choice([32, 40, 64]), pick([HEX, ALNUM, B64URL])),
}

# Environment variable names under which each kind is usually found.
ENV_NAMES = {
    "aws-access-key-id": ["AWS_ACCESS_KEY_ID"],
    "aws-secret-access-key": ["AWS_SECRET_ACCESS_KEY"],
    "aws-session-token": ["AWS_SESSION_TOKEN"],
    "google-api-key": ["GOOGLE_API_KEY", "GEMINI_API_KEY", "MAPS_API_KEY", "FIREBASE_API_KEY"],
    "google-oauth-client-secret": ["GOOGLE_CLIENT_SECRET", "OAUTH_CLIENT_SECRET"],
    "google-oauth-access-token": ["GOOGLE_OAUTH_ACCESS_TOKEN", "CLOUDSDK_AUTH_ACCESS_TOKEN"],
    "azure-storage-account-key": ["AZURE_STORAGE_KEY", "AZURE_STORAGE_ACCOUNT_KEY"],
    "azure-shared-access-key": ["SERVICEBUS_KEY", "EVENTHUB_SHARED_ACCESS_KEY"],
    "azure-client-secret": ["AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET"],
    "digitalocean-token": ["DIGITALOCEAN_TOKEN", "DO_TOKEN"],
    "github-personal-access-token": ["GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT"],
    "github-oauth-token": ["GH_OAUTH_TOKEN", "GITHUB_OAUTH"],
    "github-user-to-server-token": ["GH_USER_TOKEN"],
    "github-server-to-server-token": ["GITHUB_INSTALLATION_TOKEN", "GITHUB_TOKEN"],
    "github-refresh-token": ["GH_REFRESH_TOKEN"],
    "github-fine-grained-token": ["GITHUB_TOKEN", "GH_TOKEN", "RENOVATE_TOKEN"],
    "gitlab-personal-access-token": ["GITLAB_TOKEN", "CI_JOB_PAT", "GL_TOKEN"],
    "gitlab-runner-token": ["RUNNER_TOKEN", "CI_SERVER_TOKEN"],
    "gitlab-deploy-token": ["DEPLOY_TOKEN", "CI_DEPLOY_PASSWORD"],
    "npm-token": ["NPM_TOKEN", "NODE_AUTH_TOKEN"],
    "pypi-token": ["PYPI_TOKEN", "TWINE_PASSWORD", "UV_PUBLISH_TOKEN"],
    "docker-hub-token": ["DOCKERHUB_TOKEN", "DOCKER_PASSWORD"],
    "slack-token": ["SLACK_BOT_TOKEN", "SLACK_TOKEN"],
    "slack-app-token": ["SLACK_APP_TOKEN"],
    "telegram-bot-token": ["TELEGRAM_BOT_TOKEN"],
    "stripe-secret-key": ["STRIPE_SECRET_KEY", "STRIPE_API_KEY"],
    "stripe-restricted-key": ["STRIPE_RESTRICTED_KEY", "STRIPE_KEY"],
    "stripe-webhook-secret": ["STRIPE_WEBHOOK_SECRET"],
    "twilio-api-key": ["TWILIO_API_KEY"],
    "sendgrid-api-key": ["SENDGRID_API_KEY"],
    "mailgun-api-key": ["MAILGUN_API_KEY"],
    "shopify-token": ["SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET"],
    "square-token": ["SQUARE_ACCESS_TOKEN"],
    "linear-api-key": ["LINEAR_API_KEY"],
    "postman-api-key": ["POSTMAN_API_KEY"],
    "newrelic-user-key": ["NEW_RELIC_API_KEY", "NEW_RELIC_USER_KEY"],
    "grafana-token": ["GRAFANA_TOKEN", "GRAFANA_SERVICE_ACCOUNT_TOKEN"],
    "databricks-token": ["DATABRICKS_TOKEN"],
    "pulumi-token": ["PULUMI_ACCESS_TOKEN"],
    "vault-token": ["VAULT_TOKEN"],
    "anthropic-api-key": ["ANTHROPIC_API_KEY"],
    "openai-api-key": ["OPENAI_API_KEY"],
    "huggingface-token": ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"],
    "age-secret-key": ["SOPS_AGE_KEY"],
    "jwt": ["ID_TOKEN", "ACCESS_TOKEN", "SUPABASE_SERVICE_ROLE_KEY", "API_JWT"],
    "password": ["DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASSWORD", "ADMIN_PASSWORD",
                 "SMTP_PASSWORD", "RABBITMQ_DEFAULT_PASS", "PGPASSWORD", "KEYSTORE_PASSWORD"],
    "generic-secret": ["SECRET_KEY", "SECRET_KEY_BASE", "JWT_SECRET", "SESSION_SECRET", "APP_KEY", "API_KEY",
                       "ENCRYPTION_KEY", "WEBHOOK_SECRET", "NEXTAUTH_SECRET", "CLIENT_SECRET"],
}

ENV_KINDS = sorted(ENV_NAMES)


class Cycle:
    """Hands out the items of a list in a shuffled order, reshuffling when exhausted, so every
    kind turns up about equally often."""

    def __init__(self, items):
        self.items = list(items)
        self.queue = []

    def next(self):
        if not self.queue:
            self.queue = list(self.items)
            R.shuffle(self.queue)
        return self.queue.pop()


ENV_KIND_CYCLE = Cycle(ENV_KINDS)


def env_secret():
    """(NAME, kind, value) for a secret that lives in an environment variable."""
    kind = ENV_KIND_CYCLE.next()
    return pick(ENV_NAMES[kind]), kind, KINDS[kind]()


# --- benign look-alikes -----------------------------------------------------------------------

PLACEHOLDERS = [
    "<your-api-key-here>", "<YOUR_TOKEN>", "changeme", "xxx", "XXXXXXXX", "${REDIS_PASSWORD}", "${DB_PASSWORD}",
    "{{ .Values.password }}", "{{ .Values.auth.token }}", "%PASSWORD%", "$PASSWORD", "$(DB_PASSWORD)",
    "${{ secrets.NPM_TOKEN }}", "{{ vault_db_password }}", "******", "********", "[hidden]", "<redacted>",
    "REPLACE_ME", "your-secret-here", "<password>", "${env:API_KEY}", "#{DbPassword}#", "null",
]


def placeholder():
    return pick(PLACEHOLDERS)


def benign_env_line():
    choices = [
        lambda: f"PWD={pick(APPS)}",
        lambda: f"OLDPWD=/home/{user()}",
        lambda: f"HOME=/home/{user()}",
        lambda: "SHELL=/bin/bash",
        lambda: f"USER={user()}",
        lambda: "LANG=en_US.UTF-8",
        lambda: "TERM=xterm-256color",
        lambda: f"HOSTNAME={rs(12, HEX)}",
        lambda: "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        lambda: f"SSH_AUTH_SOCK=/tmp/ssh-{rs(10)}/agent.{R.randint(1000, 99999)}",
        lambda: "KUBERNETES_SERVICE_PORT=443",
        lambda: f"KUBERNETES_SERVICE_HOST=10.96.0.{R.randint(1, 9)}",
        lambda: f"PASSWORD_MIN_LENGTH={R.randint(8, 16)}",
        lambda: f"PASSWORD_REQUIRED={pick(['true', 'false'])}",
        lambda: f"{pick(['API_KEY', 'OPENAI_API_KEY', 'STRIPE_SECRET_KEY'])}={placeholder()}",
        lambda: f"{pick(['REDIS_PASSWORD', 'DB_PASSWORD', 'ADMIN_PASSWORD'])}={placeholder()}",
        lambda: "AWS_SECRET_ACCESS_KEY=******",
        lambda: f"AWS_REGION={pick(REGIONS)}",
        lambda: f"AWS_PROFILE={pick(['default', 'prod', 'staging'])}",
        lambda: f"GIT_COMMIT={sha1()}",
        lambda: f"REQUEST_ID={uuid()}",
        lambda: f"TOKEN_TTL={pick(['3600', '900', '86400'])}",
        lambda: f"MAX_TOKENS={pick(['4096', '8192', '1024'])}",
        lambda: "SESSION_SECRET_FILE=/run/secrets/session_secret",
        lambda: "DATABASE_PASSWORD_FILE=/run/secrets/db_password",
        lambda: f"GPG_KEY={rs(40, HEX).upper()}",
        lambda: f"PYTHON_SHA256={sha256()}",
        lambda: "PYTHON_VERSION=3.12.4",
        lambda: "NODE_ENV=production",
        lambda: f"NPM_CONFIG_CACHE=/home/{user()}/.npm",
        lambda: "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64",
        lambda: f"CI_COMMIT_SHA={sha1()}",
        lambda: f"GITHUB_SHA={sha1()}",
        lambda: f"GITHUB_RUN_ID={R.randint(10**9, 10**10)}",
        lambda: "GITHUB_TOKEN=***",
        lambda: f"SECRET_SANTA_ENABLED={pick(['true', 'false'])}",
        lambda: f"PASSWORD_RESET_URL=https://app.{org()}.com/account/reset",
        lambda: f"API_KEY_ID={R.randint(100, 99999)}",
        lambda: f"KEYCLOAK_URL=https://sso.{org()}.com/auth",
        lambda: "TOKEN_TYPE=Bearer",
        lambda: f"PWD_HISTORY_SIZE={R.randint(3, 24)}",
        lambda: "LS_COLORS=rs=0:di=01;34:ln=01;36:mi=00:pi=40;33:so=01;35",
        lambda: "HISTCONTROL=ignoredups:ignorespace",
        lambda: f"SHLVL={R.randint(1, 3)}",
        lambda: f"XDG_RUNTIME_DIR=/run/user/{R.randint(1000, 1005)}",
        lambda: "DOCKER_BUILDKIT=1",
        lambda: "PIP_NO_CACHE_DIR=off",
        lambda: f"VAULT_ADDR=https://vault.{org()}.internal:8200",
        lambda: "AUTH_ENABLED=YES",
        lambda: "SECRETS_BACKEND_TIMEOUT_MS=1500",
    ]
    return pick(choices)()


def benign_lines(n):
    out = []
    while len(out) < n:
        line = benign_env_line()
        if line not in out:
            out.append(line)
    return out


# --- the text builder and its checks ------------------------------------------------------------

class Text:
    def __init__(self):
        self.parts = []
        self.secrets = []
        self.keep = []

    def add(self, s):
        self.parts.append(s)

    def line(self, s=""):
        self.parts.append(s + "\n")

    def secret(self, kind, value, shown=None):
        """The text shows `shown` (default: the value); `value` must disappear."""
        if shown is None:
            shown = value
            if kind == "telegram-bot-token":
                value = value.split(":", 1)[1]
        self.secrets.append({"kind": kind, "value": value})
        self.parts.append(shown)

    def note_secret(self, kind, value):
        self.secrets.append({"kind": kind, "value": value})

    def kept(self, s):
        self.keep.append(s)
        self.parts.append(s)

    def kept_line(self, s):
        self.kept(s)
        self.parts.append("\n")

    def text(self):
        return "".join(self.parts)


class Reject(Exception):
    pass


def check(text, secrets, keep):
    """A text is usable only when a perfect redactor scores perfectly on it: every secret is in
    the text; no fragment of a secret appears outside the secrets; every keep item is in the
    text and holds no fragment of a secret."""
    masked = text
    for s in sorted(secrets, key=lambda s: -len(s["value"])):
        if s["value"] not in text:
            raise Reject(f"secret not in text: {s}")
        masked = masked.replace(s["value"], "\x00")
    raw_masked = masked.encode()
    for s in secrets:
        v = s["value"].encode()
        n = min(len(v), FRAGMENT)
        for i in range(len(v) - n + 1):
            frag = v[i:i + n]
            if frag in raw_masked:
                raise Reject(f"fragment {frag!r} of {s['kind']} outside the secret")
            for k in keep:
                if frag in k.encode():
                    raise Reject(f"keep item holds a fragment of {s['kind']}")
    for k in keep:
        if k not in text:
            raise Reject(f"keep item not in text: {k!r}")
        if not k.strip():
            raise Reject("empty keep item")


# --- sources ------------------------------------------------------------------------------------
# Each takes a Text and `secret` (whether to plant secrets) and fills the Text.

def src_printenv(t, secret):
    lines = benign_lines(R.randint(6, 14))
    n_secrets = R.randint(1, 3) if secret else 0
    slots = sorted(R.sample(range(len(lines) + n_secrets), n_secrets))
    prefix = pick(["", "", "declare -x ", "export "])
    quote = '"' if prefix == "declare -x " else ""
    j = 0
    for i in range(len(lines) + n_secrets):
        if i in slots:
            name, kind, value = env_secret()
            t.add(f"{prefix}{name}={quote}")
            t.secret(kind, value)
            t.line(quote)
        else:
            line = lines[j]
            j += 1
            if quote:
                k, v = line.split("=", 1)
                line = f'{k}="{v}"'
            t.kept_line(prefix + line)


def src_dotenv(t, secret):
    t.line(pick(["# .env", "# Local development settings", "# copy to .env.local and fill in", "# generated by setup.sh"]))
    lines = benign_lines(R.randint(5, 10))
    n_secrets = R.randint(1, 3) if secret else 0
    items = [("b", l) for l in lines] + [("s", None)] * n_secrets
    R.shuffle(items)
    for what, line in items:
        if R.random() < 0.15:
            t.line("")
        if what == "b":
            k, v = line.split("=", 1)
            q = pick(["", "", '"', "'"]) if not v.startswith(("'", '"')) and "'" not in v and '"' not in v else ""
            t.kept_line(f"{k}={q}{v}{q}")
        else:
            name, kind, value = env_secret()
            q = pick(["", '"', "'"])
            t.add(f"{name}={q}")
            t.secret(kind, value)
            t.line(q + pick(["", "", "  # rotated " + date()[:10]]))


def src_git_config(t, secret):
    lines = [
        f"user.name={user().title()} {pick(['Smith', 'Tanaka', 'Okafor', 'Garcia'])}",
        f"user.email={user()}@{org()}.com",
        "core.editor=vim",
        "core.autocrlf=input",
        "init.defaultbranch=main",
        "pull.rebase=true",
        f"user.signingkey={rs(16, HEX).upper()}",
        "commit.gpgsign=true",
        "gpg.format=ssh",
        "credential.helper=store",
        "credential.helper=osxkeychain",
        "core.sshcommand=ssh -i ~/.ssh/id_ed25519 -o IdentitiesOnly=yes",
        "core.repositoryformatversion=0",
        "core.filemode=true",
        "core.bare=false",
        "branch.main.remote=origin",
        "branch.main.merge=refs/heads/main",
        "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
        f"url.git@github.com:{org()}/.insteadof=https://github.com/{org()}/",
        "http.sslverify=true",
        "diff.colormoved=zebra",
        "lfs.locksverify=false",
    ]
    chosen = R.sample(lines, R.randint(8, 14))
    if not secret:
        chosen.insert(R.randint(0, len(chosen)), f"remote.origin.url={pick(['https://github.com/', 'git@github.com:', 'https://gitlab.com/'])}{org()}/{repo()}.git")
        for line in chosen:
            t.kept_line(line)
        return
    where = R.randint(0, len(chosen))
    for i, line in enumerate(chosen + [None]):
        if i == where:
            style = R.randrange(3)
            if style == 0:
                kind = pick(["github-personal-access-token", "github-fine-grained-token", "github-server-to-server-token"])
                v = KINDS[kind]()
                t.add(f"remote.origin.url=https://{pick([user(), 'x-access-token', 'oauth2'])}:")
                t.secret(kind, v)
                t.line(f"@github.com/{org()}/{repo()}.git")
            elif style == 1:
                v = KINDS["gitlab-personal-access-token"]()
                t.add("remote.origin.url=https://oauth2:")
                t.secret("gitlab-personal-access-token", v)
                t.line(f"@gitlab.com/{org()}/{repo()}.git")
            else:
                cred = b64(f"x-access-token:{KINDS['github-personal-access-token']()}")
                t.add("http.https://github.com/.extraheader=AUTHORIZATION: basic ")
                t.secret("basic-auth", cred)
                t.line()
        if line is not None:
            t.kept_line(line)


def src_git_remote(t, secret):
    remotes = []
    for name in R.sample(["origin", "upstream", "fork", "mirror", "backup"], R.randint(1, 3)):
        url = pick([f"git@github.com:{org()}/{repo()}.git", f"https://github.com/{org()}/{repo()}.git",
                    f"ssh://git@gitlab.{org()}.com:2222/{org()}/{repo()}.git", f"https://gitlab.com/{org()}/{repo()}"])
        remotes.append((name, url))
    secret_at = R.randrange(len(remotes)) if secret else -1
    for i, (name, url) in enumerate(remotes):
        if i == secret_at:
            style = R.randrange(4)
            if style == 0:
                kind, host = "github-personal-access-token", "github.com"
            elif style == 1:
                kind, host = "gitlab-personal-access-token", "gitlab.com"
            elif style == 2:
                kind, host = "password", f"git.{org()}.com"
            else:
                kind, host = "gitlab-deploy-token", "gitlab.com"
            v = KINDS[kind]()
            shown = urllib.parse.quote(v, safe="") if kind == "password" else v
            u = user() if kind != "gitlab-personal-access-token" else "oauth2"
            for op in ("fetch", "push"):
                t.add(f"{name}\thttps://{u}:")
                t.add(shown)
                t.line(f"@{host}/{org()}/{repo()}.git ({op})")
            t.note_secret(kind, shown)
        else:
            t.kept_line(f"{name}\t{url} (fetch)")
            t.kept_line(f"{name}\t{url} (push)")


def kube_cluster_lines():
    ca = b64(certificate())
    server = f"https://{pick(['10.0.0.1:6443', 'api.k8s.' + org() + '.com', rs(32, HEX).upper() + '.gr7.eu-west-1.eks.amazonaws.com'])}"
    return ca, server


def src_kubeconfig(t, secret):
    ca, server = kube_cluster_lines()
    cluster = pick(["kind-kind", "prod", "minikube", f"arn:aws:eks:{pick(REGIONS)}:{R.randint(10**11, 10**12)}:cluster/{repo()}"])
    t.kept_line("apiVersion: v1")
    t.line("clusters:")
    t.line("- cluster:")
    raw = secret or R.random() < 0.5
    if raw:
        t.kept_line(f"    certificate-authority-data: {ca}")
    else:
        t.kept_line("    certificate-authority-data: DATA+OMITTED")
    t.kept_line(f"    server: {server}")
    t.line(f"  name: {cluster}")
    t.line("contexts:")
    t.line("- context:")
    t.line(f"    cluster: {cluster}")
    t.line(f"    user: {cluster}")
    t.line(f"  name: {cluster}")
    t.kept_line(f"current-context: {cluster}")
    t.kept_line("kind: Config")
    t.kept_line("preferences: {}")
    t.line("users:")
    t.line(f"- name: {cluster}")
    t.line("  user:")
    if not secret:
        if raw:
            t.kept_line(f"    client-certificate-data: {b64(certificate())}")
            t.kept_line("    client-key-data: DATA+OMITTED" if R.random() < 0.3 else "    token: REDACTED")
        else:
            t.kept_line("    client-certificate-data: DATA+OMITTED")
            t.kept_line("    client-key-data: DATA+OMITTED")
        return
    style = R.randrange(3)
    if style in (0, 2):
        t.kept_line(f"    client-certificate-data: {b64(certificate())}")
        key_text, _ = pem(pick(["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"]))
        data = b64(key_text)
        t.add("    client-key-data: ")
        t.add(data)
        t.line()
        # The armour lines encode the same bytes as a certificate's: only the body must go.
        t.note_secret("kubeconfig-client-key-data", data[48:-48])
    if style in (1, 2):
        tok = pick([jwt(), "kubeconfig-" + rs(43, B64URL), rs(6, LOWER_ALNUM) + "." + rs(16, LOWER_ALNUM)])
        kind = "jwt" if tok.startswith("eyJ") else "kubernetes-token"
        t.add("    token: ")
        t.secret(kind, tok)
        t.line()


def src_docker_config(t, secret):
    auths = []
    registries = R.sample(["https://index.docker.io/v1/", "ghcr.io", f"{R.randint(10**11, 10**12)}.dkr.ecr.{pick(REGIONS)}.amazonaws.com",
                           "registry.gitlab.com", "quay.io", f"{org()}.azurecr.io"], R.randint(1, 3))
    t.line("{")
    t.line('\t"auths": {')
    for i, reg in enumerate(registries):
        comma = "," if i < len(registries) - 1 else ""
        if secret and i == 0:
            pw = pick([password(), KINDS["docker-hub-token"](), KINDS["github-personal-access-token"]()])
            auth = b64(f"{user()}:{pw}")
            t.add(f'\t\t"{reg}": {{\n\t\t\t"auth": "')
            t.secret("docker-config-auth", auth)
            t.line(f'"\n\t\t}}{comma}')
        else:
            t.kept_line(f'\t\t"{reg}": {{}}{comma}')
    t.line("\t},")
    if secret and R.random() < 0.3:
        t.add('\t"identitytoken": "')
        t.secret("jwt", jwt())
        t.line('",')
    t.kept_line(f'\t"credsStore": "{pick(["desktop", "osxkeychain", "pass", "ecr-login"])}",')
    t.kept_line('\t"currentContext": "default",')
    t.kept_line('\t"plugins": {"-x-cli-hints": {"enabled": "true"}}')
    t.line("}")


def src_npmrc(t, secret):
    t.kept_line(f"registry=https://{pick(['registry.npmjs.org/', 'npm.pkg.github.com/', org() + '.jfrog.io/artifactory/api/npm/npm/'])}")
    lines = ["always-auth=true", f"@{org()}:registry=https://npm.pkg.github.com", "save-exact=true", "fund=false",
             "engine-strict=true", f"cache=/home/{user()}/.npm", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
             "strict-ssl=true", "audit-level=high"]
    for line in R.sample(lines, R.randint(2, 5)):
        t.kept_line(line)
    if secret:
        style = R.randrange(3)
        if style == 0:
            t.add("//registry.npmjs.org/:_authToken=")
            t.secret("npm-token", KINDS["npm-token"]())
        elif style == 1:
            t.add("//npm.pkg.github.com/:_authToken=")
            t.secret("github-personal-access-token", KINDS["github-personal-access-token"]())
        else:
            t.add(f"//{org()}.jfrog.io/artifactory/api/npm/npm/:_auth=")
            t.secret("basic-auth", b64(f"{user()}:{password()}"))
        t.line()


def src_pip_config(t, secret):
    if R.random() < 0.5:
        t.kept_line("[global]")
        t.kept_line(f"timeout = {R.randint(15, 120)}")
        if secret:
            pw = password()
            shown = urllib.parse.quote(pw, safe="")
            t.add(f"index-url = https://{user()}:")
            t.secret("password", shown)
            t.line(f"@pypi.{org()}.internal/simple")
        else:
            t.kept_line(f"index-url = https://pypi.{org()}.internal/simple")
        t.kept_line("trusted-host = pypi.org files.pythonhosted.org")
        t.kept_line("require-virtualenv = true")
    else:
        t.kept_line("[distutils]")
        t.kept_line("index-servers =")
        t.kept_line("    pypi")
        t.kept_line("    testpypi")
        t.line("")
        t.kept_line("[pypi]")
        t.kept_line("username = __token__")
        if secret:
            t.add("password = ")
            t.secret("pypi-token", KINDS["pypi-token"]())
            t.line()
        else:
            t.kept_line(f"password = {pick(['${PYPI_TOKEN}', '<pypi-token>', '%PYPI_TOKEN%'])}")
        t.line("")
        t.kept_line("[testpypi]")
        t.kept_line("repository = https://test.pypi.org/legacy/")


def src_netrc(t, secret):
    hosts = R.sample(["github.com", "api.heroku.com", "git.heroku.com", f"artifacts.{org()}.com", "urs.earthdata.nasa.gov",
                      "bitbucket.org"], R.randint(1, 3))
    secret_at = R.randrange(len(hosts)) if secret else -1
    oneline = R.random() < 0.5
    for i, h in enumerate(hosts):
        login = pick([user(), f"{user()}@{org()}.com"])
        if i == secret_at:
            kind = pick(["password", "github-personal-access-token", "generic-secret"])
            v = KINDS[kind]()
            if oneline:
                t.add(f"machine {h} login {login} password ")
                t.secret(kind, v)
                t.line()
            else:
                t.kept_line(f"machine {h}")
                t.kept_line(f"  login {login}")
                t.add("  password ")
                t.secret(kind, v)
                t.line()
        else:
            t.kept_line(f"machine {h}")
            t.kept_line(f"  login {login}")
            if R.random() < 0.5:
                t.kept_line(f"  password {pick(['${NETRC_PASSWORD}', '<token>', '$GH_TOKEN'])}")


def src_aws_credentials(t, secret):
    if not secret:
        # ~/.aws/config: no credentials, many look-alike keys.
        for prof in R.sample(["default", "prod", "staging", "dev", "sso-admin"], R.randint(1, 3)):
            t.kept_line("[default]" if prof == "default" else f"[profile {prof}]")
            t.kept_line(f"region = {pick(REGIONS)}")
            t.kept_line(f"output = {pick(['json', 'yaml', 'text'])}")
            if R.random() < 0.5:
                t.kept_line(f"role_arn = arn:aws:iam::{R.randint(10**11, 10**12)}:role/{pick(['Admin', 'ReadOnly', 'Deploy'])}")
                t.kept_line("source_profile = default")
            if R.random() < 0.4:
                t.kept_line(f"sso_start_url = https://{org()}.awsapps.com/start")
                t.kept_line(f"sso_account_id = {R.randint(10**11, 10**12)}")
            if R.random() < 0.3:
                t.kept_line(f"mfa_serial = arn:aws:iam::{R.randint(10**11, 10**12)}:mfa/{user()}")
            if R.random() < 0.3:
                t.kept_line("credential_process = /usr/local/bin/aws-vault exec prod --json")
            t.line("")
        return
    for prof in R.sample(["default", "prod", "staging", "ci"], R.randint(1, 2)):
        t.line(f"[{prof}]")
        t.add("aws_access_key_id = ")
        t.secret("aws-access-key-id", KINDS["aws-access-key-id"]())
        t.line()
        t.add(pick(["aws_secret_access_key = ", "aws_secret_access_key=", "AWS_SECRET_ACCESS_KEY = "]))
        t.secret("aws-secret-access-key", KINDS["aws-secret-access-key"]())
        t.line()
        if R.random() < 0.4:
            t.add("aws_session_token = ")
            t.secret("aws-session-token", KINDS["aws-session-token"]())
            t.line()
        if R.random() < 0.5:
            t.kept_line(f"region = {pick(REGIONS)}")
        t.line("")


def src_aws_cli(t, secret):
    """`aws sts assume-role` / `aws configure list` / `aws sts get-caller-identity` output."""
    if secret:
        d = {"Credentials": {"AccessKeyId": "@AKID", "SecretAccessKey": "@SAK", "SessionToken": "@ST",
                             "Expiration": date()},
             "AssumedRoleUser": {"AssumedRoleId": f"AROA{rs(17, UPPER_ALNUM)}:{user()}",
                                 "Arn": f"arn:aws:sts::{R.randint(10**11, 10**12)}:assumed-role/Deploy/{user()}"}}
        text = json.dumps(d, indent=4)
        vals = {"@AKID": ("aws-access-key-id", "ASIA" + rs(16, UPPER_ALNUM)),
                "@SAK": ("aws-secret-access-key", KINDS["aws-secret-access-key"]()),
                "@ST": ("aws-session-token", KINDS["aws-session-token"]())}
        fill(t, text, vals, keep_lines=lambda l: "Arn" in l or "Expiration" in l)
    elif R.random() < 0.5:
        t.kept_line("      Name                    Value             Type    Location")
        t.kept_line("      ----                    -----             ----    --------")
        t.kept_line(f"   profile                <not set>             None    None")
        t.kept_line(f"access_key     ****************{rs(4, UPPER_ALNUM)} shared-credentials-file")
        t.kept_line(f"secret_key     ****************{rs(4, ALNUM)} shared-credentials-file")
        t.kept_line(f"    region                {pick(REGIONS)}      config-file    ~/.aws/config")
    else:
        t.kept_line(json.dumps({"UserId": f"AIDA{rs(17, UPPER_ALNUM)}", "Account": str(R.randint(10**11, 10**12)),
                                "Arn": f"arn:aws:iam::{R.randint(10**11, 10**12)}:user/{user()}"}, indent=4))


def fill(t, text, vals, keep_lines=lambda l: False):
    """Copy `text` into `t`, replacing each placeholder of `vals` (name -> (kind, value)) by
    its secret value; lines without a placeholder for which `keep_lines` holds are keep items."""
    for line in text.split("\n"):
        hit = [k for k in vals if k in line]
        if not hit:
            if keep_lines(line) and line.strip():
                t.kept_line(line)
            else:
                t.line(line)
            continue
        rest = line
        while hit:
            k = min(hit, key=lambda k: rest.index(k))
            before, rest = rest.split(k, 1)
            t.add(before)
            kind, value = vals[k]
            shown = value[1] if isinstance(value, tuple) else value
            secret = value[0] if isinstance(value, tuple) else value
            t.add(shown)
            t.note_secret(kind, secret)
            hit = [k for k in vals if k in rest]
        t.line(rest)


def src_gcp_service_account(t, secret):
    project = f"{org()}-{repo()}-{R.randint(100, 999)}"
    email = f"{pick(['deployer', 'ci', 'terraform', 'backup'])}@{project}.iam.gserviceaccount.com"
    if secret:
        key_text, body = pem("PRIVATE KEY", R.randint(10, 16))
        escaped = json.dumps(key_text)[1:-1]
        body_escaped = json.dumps(body)[1:-1]
        d = {"type": "service_account", "project_id": project, "private_key_id": rs(40, HEX),
             "private_key": "@PK", "client_email": email, "client_id": str(R.randint(10**20, 10**21)),
             "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
             "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
             "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{urllib.parse.quote(email)}",
             "universe_domain": "googleapis.com"}
        text = json.dumps(d, indent=pick([2, None]))
        fill(t, text, {"@PK": ("gcp-service-account-private-key", (body_escaped, escaped))},
             keep_lines=lambda l: any(w in l for w in ("token_uri", "client_email", "service_account")))
        return
    style = R.randrange(3)
    if style == 0:
        # `gcloud config list`
        t.kept_line("[core]")
        t.kept_line(f"account = {email}")
        t.kept_line("disable_usage_reporting = True")
        t.kept_line(f"project = {project}")
        t.line("")
        t.kept_line("[compute]")
        t.kept_line(f"region = {pick(['europe-west1', 'us-central1'])}")
        t.line("")
        t.kept_line("Your active configuration is: [default]")
    elif style == 1:
        # A service-account key listing: ids only.
        t.kept_line("KEY_ID                                    CREATED_AT            EXPIRES_AT            DISABLED")
        for _ in range(R.randint(1, 4)):
            t.kept_line(f"{rs(40, HEX)}  {date()}  9999-12-31T23:59:59Z")
    else:
        # Workload identity / external account config: no secret in it.
        d = {"type": "external_account", "audience": f"//iam.googleapis.com/projects/{R.randint(10**11, 10**12)}/locations/global/workloadIdentityPools/github/providers/github",
             "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": "https://sts.googleapis.com/v1/token",
             "credential_source": {"file": "/var/run/secrets/tokens/gcp-ksa/token"},
             "service_account_impersonation_url": f"https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/{email}:generateAccessToken"}
        for line in json.dumps(d, indent=2).split("\n"):
            t.kept_line(line)


def src_gcloud(t, secret):
    if secret:
        style = R.randrange(3)
        if style == 0:
            t.line(f"$ gcloud auth print-access-token")
            t.secret("google-oauth-access-token", KINDS["google-oauth-access-token"]())
            t.line()
        elif style == 1:
            t.kept_line(f"$ gcloud services api-keys get-key-string projects/{R.randint(10**11, 10**12)}/locations/global/keys/{uuid()}")
            t.add("keyString: ")
            t.secret("google-api-key", KINDS["google-api-key"]())
            t.line()
        else:
            d = {"installed": {"client_id": f"{R.randint(10**11, 10**12)}-{rs(32, LOWER_ALNUM)}.apps.googleusercontent.com",
                               "project_id": f"{org()}-{R.randint(100, 999)}", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                               "token_uri": "https://oauth2.googleapis.com/token", "client_secret": "@CS",
                               "redirect_uris": ["http://localhost"]}}
            fill(t, json.dumps(d, indent=2), {"@CS": ("google-oauth-client-secret", KINDS["google-oauth-client-secret"]())},
                 keep_lines=lambda l: "token_uri" in l or "redirect" in l)
        return
    t.kept_line("$ gcloud auth list")
    t.kept_line("                  Credentialed Accounts")
    t.kept_line("ACTIVE  ACCOUNT")
    t.kept_line(f"*       {user()}@{org()}.com")
    t.kept_line(f"        ci@{org()}-prod.iam.gserviceaccount.com")
    t.line("")
    t.kept_line("To set the active account, run:")
    t.kept_line("    $ gcloud config set account `ACCOUNT`")


def src_azure(t, secret):
    tenant, sub = uuid(), uuid()
    if secret:
        style = R.randrange(5)
        if style == 4:
            # ~/.azure/msal_token_cache.json
            home = f"{uuid()}.{tenant}-login.microsoftonline.com"
            d = {"AccessToken": {f"{home}-accesstoken-04b07795-8ddb-461a-bbee-02f9e1bf7b46-{tenant}-https://management.core.windows.net//.default":
                                 {"credential_type": "AccessToken", "secret": "@AT", "home_account_id": home,
                                  "environment": "login.microsoftonline.com", "client_id": "04b07795-8ddb-461a-bbee-02f9e1bf7b46",
                                  "target": "https://management.core.windows.net//.default", "realm": tenant,
                                  "token_type": "Bearer", "cached_at": str(R.randint(1_780_000_000, 1_790_000_000)),
                                  "expires_on": str(R.randint(1_790_000_000, 1_799_999_999))}},
                 "RefreshToken": {f"{home}-refreshtoken-04b07795-8ddb-461a-bbee-02f9e1bf7b46--":
                                  {"credential_type": "RefreshToken", "secret": "@RT", "home_account_id": home,
                                   "environment": "login.microsoftonline.com", "client_id": "04b07795-8ddb-461a-bbee-02f9e1bf7b46"}}}
            fill(t, json.dumps(d, indent=4), {"@AT": ("jwt", jwt()),
                                              "@RT": ("azure-refresh-token", "1.A" + rs(R.randint(300, 400), B64URL) + "." + rs(40, B64URL))},
                 keep_lines=lambda l: "credential_type" in l or "token_type" in l or "environment" in l)
        elif style == 0:
            # az ad sp create-for-rbac
            d = {"appId": uuid(), "displayName": f"{repo()}-deployer", "password": "@PW", "tenant": tenant}
            t.kept_line("Creating 'Contributor' role assignment under scope '/subscriptions/" + sub + "'")
            t.kept_line("The output includes credentials that you must protect. Be sure that you do not include these credentials in your code or check the credentials into your source control. For more information, see https://aka.ms/azadsp-cli")
            fill(t, json.dumps(d, indent=2), {"@PW": ("azure-client-secret", KINDS["azure-client-secret"]())},
                 keep_lines=lambda l: "tenant" in l or "displayName" in l)
        elif style == 1:
            t.kept_line(f"$ az storage account show-connection-string -n {org()}store -g rg-{repo()}")
            t.add('{\n  "connectionString": "DefaultEndpointsProtocol=https;EndpointSuffix=core.windows.net;'
                  f'AccountName={org()}store;AccountKey=')
            t.secret("azure-storage-account-key", KINDS["azure-storage-account-key"]())
            t.line(f';BlobEndpoint=https://{org()}store.blob.core.windows.net/"\n}}')
        elif style == 2:
            t.add(f"Endpoint=sb://{org()}-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=")
            t.secret("azure-shared-access-key", KINDS["azure-shared-access-key"]())
            t.line()
        else:
            sig = urllib.parse.quote(base64.b64encode(bytes(R.randrange(256) for _ in range(32))).decode(), safe="")
            t.add(f"https://{org()}store.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&st=2026-01-01T00:00:00Z&spr=https&sig=")
            t.secret("azure-sas-token", sig)
            t.line()
        return
    if R.random() < 0.5:
        d = [{"cloudName": "AzureCloud", "homeTenantId": tenant, "id": sub, "isDefault": True,
              "managedByTenants": [], "name": f"{org().title()} Production", "state": "Enabled", "tenantId": tenant,
              "user": {"name": f"{user()}@{org()}.com", "type": "user"}}]
        for line in json.dumps(d, indent=2).split("\n"):
            t.kept_line(line)
    else:
        t.kept_line(f"$ az keyvault secret list --vault-name kv-{repo()} -o table")
        t.kept_line("Name                 ContentType    Enabled    Expires")
        for name in R.sample(["db-password", "api-key", "jwt-secret", "storage-key", "smtp-password"], 3):
            t.kept_line(f"{name:<20} text/plain     True       {date()[:10]}")


def src_terraform_plan(t, secret):
    res = pick(["aws_db_instance.main", "azurerm_postgresql_flexible_server.db", "google_sql_user.app", "random_password.db"])
    t.kept_line("Terraform used the selected providers to generate the following execution plan. Resource actions are")
    t.kept_line("indicated with the following symbols:")
    t.kept_line("  + create")
    t.line("")
    t.kept_line("Terraform will perform the following actions:")
    t.line("")
    t.kept_line(f"  # {res} will be created")
    t.kept_line(f'  + resource "{res.split(".")[0]}" "{res.split(".")[1]}" {{')
    attrs = [
        "      + id                       = (known after apply)",
        "      + password                 = (sensitive value)",
        "      + master_password          = (sensitive value)",
        "      + administrator_password   = (sensitive value)",
        "      + result                   = (sensitive value)",
        f'      + username                 = "{user()}"',
        '      + engine                   = "postgres"',
        f'      + allocated_storage        = {R.randint(20, 500)}',
        "      + password_wo              = (write-only attribute)",
        "      + secret_string            = (sensitive value)",
        f'      + kms_key_id               = "arn:aws:kms:{pick(REGIONS)}:{R.randint(10**11, 10**12)}:key/{uuid()}"',
        "      + api_key                  = (sensitive value)",
        "      + password_length          = 24",
        "      + special                  = true",
        '      + tags                     = {\n          + "Name" = "db"\n        }',
    ]
    for a in R.sample(attrs, R.randint(5, 9)):
        t.kept_line(a)
    if secret:
        # `terraform show` / `terraform output -json` / a state file print the value itself.
        t.kept_line("    }")
        t.line("")
        t.kept_line("Plan: 1 to add, 0 to change, 0 to destroy.")
        t.line("")
        style = R.randrange(3)
        pw = password()
        if style == 0:
            t.line("$ terraform show -json | jq '.values.root_module.resources[0].values'")
            t.add('{\n  "identifier": "db",\n  "master_password": "')
            t.secret("password", pw)
            t.line('",\n  "port": 5432\n}')
        elif style == 1:
            t.line("$ jq '.resources[0].instances[0].attributes' terraform.tfstate")
            t.add('{\n  "id": "db",\n  "password": "')
            t.secret("password", pw)
            t.line('",\n  "username": "app"\n}')
        else:
            t.add("$ export TF_VAR_db_password=")
            t.secret("password", pw)
            t.line()
    else:
        t.kept_line("    }")
        t.line("")
        t.kept_line("Plan: 1 to add, 0 to change, 0 to destroy.")
        t.line("")
        t.kept_line("Changes to Outputs:")
        t.kept_line("  + db_password = (sensitive value)")
        t.kept_line(f'  + db_endpoint = "{pick(HOSTS)}:5432"')


CONFIG_SECRET_KEYS = {
    "password": ["password", "db_password", "adminPassword", "smtp_pass", "passwd", "redis_password", "keystore_password"],
    "generic-secret": ["secret_key", "client_secret", "jwt_secret", "api_key", "apiKey", "signing_secret", "webhook_secret",
                       "encryption_key", "session_secret", "access_token"],
}


def benign_config_pairs():
    pairs = [
        ("password_required", "true"), ("password_min_length", str(R.randint(8, 16))), ("max_tokens", "4096"),
        ("token_type", "Bearer"), ("password_reset_url", f"https://app.{org()}.com/reset"), ("api_key_id", str(R.randint(1, 9999))),
        ("secret_santa", "false"), ("api_key_header", "X-API-Key"), ("token_expiry_seconds", "3600"),
        ("password_file", "/run/secrets/db_password"), ("secret_path", "secret/data/prod/db"),
        ("keyfile", "/etc/ssl/private/server.key"), ("host", pick(HOSTS)), ("port", str(pick([5432, 3306, 6379, 8080]))),
        ("log_level", pick(["info", "debug", "warn"])), ("request_id", uuid()), ("commit", sha1()),
        ("checksum", "sha256:" + sha256()), ("timeout", "30s"), ("enabled", "true"), ("region", pick(REGIONS)),
        ("password", placeholder()), ("api_key", placeholder()), ("secret", placeholder()), ("token", placeholder()),
        ("auth_password_enabled", "YES"), ("use_password", "NO"), ("refresh_token_rotation", "true"),
        ("secret_ref", f"projects/{org()}/secrets/db-password/versions/latest"), ("tokenizer", "cl100k_base"),
        ("max_tokens_per_request", "8192"), ("access_token_lifetime", "15m"), ("pwd", pick(APPS)),
        ("passwordless", "true"), ("token_url", "https://oauth2.googleapis.com/token"), ("image", f"{org()}/{repo()}@sha256:{sha256()}"),
    ]
    return R.sample(pairs, R.randint(5, 10))


def config_secret():
    if R.random() < 0.5:
        kind = pick(["password", "generic-secret"])
        return pick(CONFIG_SECRET_KEYS[kind]), kind, KINDS[kind]()
    name, kind, value = env_secret()
    return name.lower(), kind, value


def src_json_config(t, secret):
    pairs = benign_config_pairs()
    n = R.randint(1, 2) if secret else 0
    items = [("b", p) for p in pairs] + [("s", None)] * n
    R.shuffle(items)
    indent = pick(["  ", "    "])
    t.line("{")
    for i, (what, p) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if what == "b":
            k, v = p
            val = v if v in ("true", "false") or v.isdigit() else json.dumps(v)
            t.kept_line(f'{indent}"{k}": {val}{comma}')
        else:
            k, kind, v = config_secret()
            t.add(f'{indent}"{k}": "')
            t.secret(kind, json.dumps(v)[1:-1])
            t.line(f'"{comma}')
    t.line("}")


def src_yaml_config(t, secret):
    style = R.randrange(3)
    if style == 0:
        t.line("services:")
        t.line(f"  {repo()}:")
        t.kept_line(f"    image: {org()}/{repo()}:{R.randint(1, 9)}.{R.randint(0, 20)}.{R.randint(0, 9)}")
        t.line("    environment:")
        ind = "      "
    elif style == 1:
        t.kept_line("apiVersion: v1")
        t.kept_line("kind: ConfigMap" if not secret else "kind: Secret")
        t.line("metadata:")
        t.kept_line(f"  name: {repo()}-config")
        t.line("stringData:" if secret else "data:")
        ind = "  "
    else:
        t.line(f"# values.yaml for {repo()}")
        t.line("config:")
        ind = "  "
    pairs = benign_config_pairs()
    n = R.randint(1, 2) if secret else 0
    items = [("b", p) for p in pairs] + [("s", None)] * n
    R.shuffle(items)
    for what, p in items:
        if what == "b":
            k, v = p
            if v.startswith(("{", "$", "%", "<", "*", "[", "#", '"')) or ": " in v or v == "null":
                v = '"' + v.replace('"', '\\"') + '"' if v != "null" else v
            t.kept_line(f"{ind}{k}: {v}")
        else:
            k, kind, v = config_secret()
            q = pick(["", '"', "'"])
            t.add(f"{ind}{k}: {q}")
            t.secret(kind, v)
            t.line(q)


def src_toml_config(t, secret):
    t.line(f"[{pick(['database', 'server', 'auth', 'tool.poetry.source', 'app'])}]")
    pairs = benign_config_pairs()
    n = R.randint(1, 2) if secret else 0
    items = [("b", p) for p in pairs] + [("s", None)] * n
    R.shuffle(items)
    for what, p in items:
        if what == "b":
            k, v = p
            val = v if v in ("true", "false") or v.isdigit() else json.dumps(v)
            t.kept_line(f"{k} = {val}")
        else:
            k, kind, v = config_secret()
            t.add(f'{k} = "')
            t.secret(kind, json.dumps(v)[1:-1])
            t.line('"')


def src_ini_config(t, secret):
    style = R.randrange(3)
    if style == 0:
        t.kept_line("[client]")
        t.kept_line(f"user = {user()}")
        t.kept_line(f"host = {pick(HOSTS)}")
        if secret:
            t.add(pick(["password = ", "password=", "pass = "]))
            t.secret("password", password())
            t.line()
        else:
            t.kept_line(pick(["password =", "# password = ", "password = ${MYSQL_PWD}"]).rstrip())
        t.kept_line("[mysqld]")
        t.kept_line("datadir=/var/lib/mysql")
        t.kept_line("socket=/var/lib/mysql/mysql.sock")
        t.kept_line("validate_password.length=12")
        t.kept_line("default_authentication_plugin=mysql_native_password")
    elif style == 1:
        t.kept_line("[supervisord]")
        t.kept_line("logfile=/var/log/supervisord.log")
        t.kept_line("[inet_http_server]")
        t.kept_line("port=127.0.0.1:9001")
        t.kept_line(f"username={user()}")
        if secret:
            t.add("password=")
            t.secret("password", password())
            t.line()
        else:
            t.kept_line("password={SHA}" + rs(40, HEX))
    else:
        t.kept_line(f"[{pick(['smtp', 'mail', 'ldap'])}]")
        t.kept_line(f"server = {pick(['smtp.', 'ldap.'])}{org()}.com")
        t.kept_line(f"port = {pick(['587', '465', '636'])}")
        t.kept_line("use_tls = yes")
        if secret:
            t.add(pick(["bind_password = ", "smtp_password = ", "secret = ", "PASSWORD="]))
            t.secret("password", password())
            t.line()
        else:
            t.kept_line(pick(["bind_password = %(LDAP_PASSWORD)s", "smtp_password = ", "password_policy_min_length = 12"]).rstrip())


def src_ci_log(t, secret):
    ts = lambda: f"2026-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}T{R.randint(0, 23):02d}:{R.randint(0, 59):02d}:{R.randint(0, 59):02d}.{R.randint(1000000, 9999999)}Z"
    benign = [
        f"##[group]Run actions/checkout@v4",
        f"Syncing repository: {org()}/{repo()}",
        f"  token: ***",
        f"HEAD is now at {sha1()[:7]} Merge pull request #{R.randint(10, 9999)} from {org()}/feature",
        f"[command]/usr/bin/git checkout --progress --force -B main refs/remotes/origin/main",
        f"  env:",
        f"    NODE_AUTH_TOKEN: ***",
        f"    PASSWORD_MIN_LENGTH: 12",
        "npm ci --prefer-offline",
        f"added {R.randint(100, 1500)} packages, and audited {R.randint(1500, 2000)} packages in {R.randint(5, 60)}s",
        "Run docker/login-action@v3",
        "Logging into ghcr.io...",
        "Login Succeeded!",
        f"#12 exporting layers {R.randint(1, 9)}.{R.randint(0, 9)}s done",
        f"#12 writing image sha256:{sha256()} done",
        f"Post job cleanup.",
        "##[endgroup]",
        f"Cache restored from key: node-cache-Linux-x64-npm-{sha256()}",
        f"Secret source: Actions",
        "Prepare workflow directory",
        f"Download action repository 'actions/setup-node@v4' (SHA:{sha1()})",
        "echo \"::add-mask::$DEPLOY_TOKEN\"",
        "docker login -u $CI_REGISTRY_USER -p $CI_REGISTRY_PASSWORD $CI_REGISTRY",
        "WARNING! Using --password via the CLI is insecure. Use --password-stdin.",
        f"$ echo \"$KUBE_CONFIG\" | base64 -d > ~/.kube/config",
        "Running with gitlab-runner 17.2.0 (9882d9c7)",
        f"Using Docker executor with image node:20-alpine ...",
    ]
    lines = R.sample(benign, R.randint(6, 14))
    n = R.randint(1, 2) if secret else 0
    slots = set(R.sample(range(len(lines) + n), n))
    stamp = R.random() < 0.6
    j = 0
    for i in range(len(lines) + n):
        pre = ts() + " " if stamp else ""
        if i in slots:
            name, kind, value = env_secret()
            style = R.randrange(4)
            t.add(pre)
            if style == 0:
                t.add(f"$ export {name}=")
                t.secret(kind, value)
                t.line()
            elif style == 1:
                t.add(f"+ curl -sf -H \"Authorization: Bearer ")
                t.secret(kind, value)
                t.line(f"\" https://api.{org()}.com/v1/deploy")
            elif style == 2:
                t.add(f"  {name}: ")
                t.secret(kind, value)
                t.line()
            else:
                t.add(f"+ docker run --rm -e {name}=")
                t.secret(kind, value)
                t.line(f" {org()}/{repo()}:latest")
        else:
            t.kept_line(pre + lines[j])
            j += 1


def src_curl_verbose(t, secret):
    host = f"api.{org()}.com"
    t.kept_line(f"*   Trying {ip()}:443...")
    t.kept_line(f"* Connected to {host} ({ip()}) port 443")
    t.kept_line("* ALPN: curl offers h2,http/1.1")
    t.kept_line("* SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384 / X25519 / RSASSA-PSS")
    t.kept_line(f"*  subject: CN={host}")
    t.kept_line(f"> {pick(['GET', 'POST', 'PUT'])} /v{R.randint(1, 3)}/{pick(['users', 'orders', 'deploy', 'tokens'])} HTTP/2")
    t.kept_line(f"> Host: {host}")
    t.kept_line("> User-Agent: curl/8.5.0")
    t.kept_line("> Accept: */*")
    if secret:
        style = R.randrange(5)
        if style == 0:
            t.add("> Authorization: Bearer ")
            name, kind, value = env_secret()
            t.secret(kind, value)
            t.line()
        elif style == 1:
            t.add("> Authorization: Basic ")
            t.secret("basic-auth", b64(f"{user()}:{password()}"))
            t.line()
        elif style == 2:
            t.add(f"> Cookie: {pick(['session', 'sessionid', '_session_id', 'connect.sid'])}=")
            t.secret("session-cookie", rs(R.choice([32, 48, 64]), B64URL))
            t.line("; theme=dark")
        elif style == 3:
            t.add(f"> {pick(['X-API-Key', 'x-api-key', 'Api-Key', 'X-Auth-Token'])}: ")
            name, kind, value = env_secret()
            t.secret(kind, value)
            t.line()
        else:
            t.add("> Authorization: Bearer ")
            t.secret("jwt", jwt())
            t.line()
    else:
        if R.random() < 0.5:
            t.kept_line("> Authorization: Bearer $TOKEN")
    t.line(">")
    t.kept_line(f"< HTTP/2 {pick(['200', '201', '401', '403'])}")
    t.kept_line("< content-type: application/json; charset=utf-8")
    t.kept_line(f"< x-request-id: {uuid()}")
    t.kept_line(f'< etag: W/"{rs(32, HEX)}"')
    if secret and R.random() < 0.4:
        t.add("< set-cookie: __Host-session=")
        t.secret("session-cookie", rs(43, B64URL))
        t.line("; Path=/; Secure; HttpOnly; SameSite=Lax")
    else:
        t.kept_line("< set-cookie: theme=dark; Path=/; Max-Age=31536000")
    t.kept_line("< www-authenticate: Bearer realm=\"api\", error=\"invalid_token\"" if R.random() < 0.3 else "< cache-control: no-store")
    t.line("<")
    body = pick(['{"access_token_expires_in":3600,"token_type":"Bearer"}', '{"error":"invalid_grant","error_description":"Bad credentials"}',
                 '{"ok":true,"items":[]}', '{"password_policy":{"min_length":12,"require_symbols":true}}'])
    t.kept_line(body)
    t.kept_line(f"* Connection #0 to host {host} left intact")


def src_db_error(t, secret):
    if not secret:
        errs = [
            lambda: f"ERROR 1045 (28000): Access denied for user '{user()}'@'{ip()}' (using password: YES)",
            lambda: f"ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: NO)",
            lambda: f'psql: error: connection to server at "{pick(HOSTS)}" ({ip()}), port 5432 failed: FATAL:  password authentication failed for user "{user()}"',
            lambda: f'pq: password authentication failed for user "{user()}"',
            lambda: "MongoServerError: bad auth : Authentication failed.",
            lambda: f"sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at \"{pick(HOSTS)}\", port 5432 failed: fe_sendauth: no password supplied",
            lambda: "django.db.utils.OperationalError: FATAL:  password authentication failed for user \"postgres\"",
            lambda: "ActiveRecord::ConnectionNotEstablished: connection to server on socket \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory",
            lambda: "Error: P1000: Authentication failed against database server at `db.internal`, the provided database credentials for `app` are not valid.",
            lambda: "redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled.",
            lambda: "WRONGPASS invalid username-password pair or user is disabled.",
            lambda: "(Background on this error at: https://sqlalche.me/e/20/e3q8)",
            lambda: f"mysqladmin: [Warning] Using a password on the command line interface can be insecure.",
            lambda: "SequelizeConnectionError: password authentication failed for user \"app\"",
            lambda: f"ORA-01017: invalid username/password; logon denied",
            lambda: "Login failed for user 'sa'. Reason: Password did not match that for the login provided. [CLIENT: 10.0.0.8]",
            lambda: f"  File \"/usr/lib/python3.12/site-packages/psycopg2/__init__.py\", line 122, in connect",
            lambda: "    conn = _connect(dsn, connection_factory=connection_factory, **kwasync)",
            lambda: f"amqp.exceptions.AccessRefused: (0, 0): (403) ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN.",
        ]
        for e in R.sample(errs, R.randint(2, 5)):
            t.kept_line(e())
        return
    scheme, kind, port = pick([("postgresql", "postgres-connection-string", 5432), ("postgres", "postgres-connection-string", 5432),
                               ("mysql", "mysql-connection-string", 3306), ("mongodb+srv", "mongodb-connection-string", None),
                               ("redis", "redis-connection-string", 6379), ("amqp", "amqp-connection-string", 5672)])
    pw = password()
    shown = urllib.parse.quote(pw, safe="=") if R.random() < 0.5 else urllib.parse.quote(pw, safe="")
    host = pick(HOSTS) + (f":{port}" if port else "")
    style = R.randrange(3)
    if style == 0:
        t.add(f"sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not translate host name \"{host.split(':')[0]}\" to address\n"
              f"(Background on this error at: https://sqlalche.me/e/20/e3q8)\nengine url: {scheme}://{user()}:")
        t.secret(kind, shown)
        t.line(f"@{host}/{pick(DBNAMES)}")
    elif style == 1:
        t.add(f"Error: connect ECONNREFUSED {ip()}:{port or 27017}\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16) {{\n  errno: -111,\n  code: 'ECONNREFUSED',\n  url: '{scheme}://{user()}:")
        t.secret(kind, shown)
        t.line(f"@{host}/{pick(DBNAMES)}'\n}}")
    else:
        t.add(f"[{date()}] ERROR Failed to connect to {scheme}://{user()}:")
        t.secret(kind, shown)
        t.line(f"@{host}/{pick(DBNAMES)}?sslmode=require: timeout after 30s")
    t.kept_line(f"ERROR 1045 (28000): Access denied for user '{user()}'@'{ip()}' (using password: YES)")


def src_connection_string(t, secret):
    benign = [
        f"DATABASE_URL=postgres://{user()}@{pick(HOSTS)}:5432/{pick(DBNAMES)}",
        f"REDIS_URL=redis://{pick(['localhost', 'cache.internal'])}:6379/0",
        f"DATABASE_URL=postgres://{user()}:${{DB_PASSWORD}}@{pick(HOSTS)}/{pick(DBNAMES)}",
        f"mysql://root:<password>@localhost:3306/{pick(DBNAMES)}",
        f"MONGO_URL=mongodb://{pick(HOSTS)}:27017/{pick(DBNAMES)}?replicaSet=rs0",
        f"AMQP_URL=amqp://{pick(['localhost', 'mq.internal'])}:5672/%2F",
        f"jdbc:postgresql://{pick(HOSTS)}:5432/{pick(DBNAMES)}?user={user()}&ssl=true",
        f"Server=tcp:{org()}.database.windows.net,1433;Initial Catalog={pick(DBNAMES)};Authentication=Active Directory Default;",
        f"SENTRY_DSN=https://{rs(32, HEX)}@o{R.randint(10**5, 10**6)}.ingest.sentry.io/{R.randint(10**6, 10**7)}",
        f"url: https://{org()}.com/docs/{repo()}",
    ]
    lines = R.sample(benign, R.randint(2, 5))
    for l in lines:
        t.kept_line(l)
    if secret:
        pw = password()
        shown = urllib.parse.quote(pw, safe=pick(["", "="]))
        style = R.randrange(8)
        if style <= 4:
            scheme, kind = [("postgresql", "postgres-connection-string"), ("mysql", "mysql-connection-string"),
                            ("mongodb", "mongodb-connection-string"), ("rediss", "redis-connection-string"),
                            ("amqps", "amqp-connection-string")][style]
            u = "" if scheme == "rediss" and R.random() < 0.5 else user()
            t.add(f"{pick(['DATABASE_URL', 'DSN', 'url', 'BROKER_URL', 'connection'])}={scheme}://{u}:")
            t.secret(kind, shown)
            t.line(f"@{pick(HOSTS)}/{pick(DBNAMES)}")
        elif style == 5:
            t.add(f"jdbc:mysql://{pick(HOSTS)}:3306/{pick(DBNAMES)}?user={user()}&password=")
            t.secret("password", shown)
            t.line("&useSSL=true")
        elif style == 6:
            t.add(f"Server={pick(HOSTS)};Database={pick(DBNAMES)};User Id=sa;Password=")
            t.secret("password", pw.replace(";", "") or "x" * 10)
            t.line(";TrustServerCertificate=True;")
        else:
            t.add(f"host={pick(HOSTS)} port=5432 dbname={pick(DBNAMES)} user={user()} password=")
            t.secret("password", pw.replace(" ", "").replace("'", ""))
            t.line(" sslmode=require")


def src_ssh_keys(t, secret):
    if secret:
        label = pick(["OPENSSH PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY"])
        t.kept_line(f"$ cat ~/.ssh/{pick(['id_ed25519', 'id_rsa', 'deploy_key', 'id_ecdsa'])}")
        key_text, body = pem(label)
        t.add(key_text)
        t.note_secret("pem-private-key", body)
        if R.random() < 0.5:
            t.kept_line(f"$ cat ~/.ssh/id_ed25519.pub")
            t.kept_line(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rs(43, B64)} {user()}@{org()}")
        return
    style = R.randrange(4)
    if style == 0:
        t.kept_line("Generating public/private ed25519 key pair.")
        t.kept_line(f"Your identification has been saved in /home/{user()}/.ssh/id_ed25519")
        t.kept_line(f"Your public key has been saved in /home/{user()}/.ssh/id_ed25519.pub")
        t.kept_line("The key fingerprint is:")
        t.kept_line(f"SHA256:{rs(43, B64)} {user()}@{org()}-laptop")
        t.kept_line("The key's randomart image is:")
        t.kept_line("+--[ED25519 256]--+")
        for _ in range(5):
            t.kept_line("|" + "".join(R.choice(" .o+=*BOX@%&#/^SE") for _ in range(17)) + "|")
        t.kept_line("+----[SHA256]-----+")
    elif style == 1:
        for _ in range(R.randint(2, 5)):
            kt = pick(["ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + rs(200, B64), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(43, B64),
                       "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB" + rs(92, B64) + "="])
            t.kept_line(f"{kt} {user()}@{org()}")
    elif style == 2:
        for _ in range(R.randint(2, 5)):
            t.kept_line(f"|1|{rs(27, B64)}=|{rs(27, B64)}= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rs(43, B64)}")
            t.kept_line(f"github.com ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{rs(120, B64)}")
    else:
        t.kept_line("$ ssh-add -l")
        for _ in range(R.randint(1, 3)):
            t.kept_line(f"256 SHA256:{rs(43, B64)} {user()}@{org()} (ED25519)")
        t.kept_line("$ ssh -T git@github.com")
        t.kept_line(f"Hi {user()}! You've successfully authenticated, but GitHub does not provide shell access.")


def pgp_block(kind):
    body = [rs(64, B64) for _ in range(R.randint(8, 14))] + [rs(R.randint(10, 60), B64) + pick(["", "="])]
    crc = "=" + rs(4, B64)
    return f"-----BEGIN PGP {kind} KEY BLOCK-----\n\n" + "\n".join(body) + f"\n{crc}\n-----END PGP {kind} KEY BLOCK-----\n", "\n".join(body)


def src_pgp(t, secret):
    fpr = rs(40, HEX).upper()
    if secret:
        t.kept_line(f"$ gpg --export-secret-keys --armor {fpr}")
        text, body = pgp_block("PRIVATE")
        t.add(text)
        t.note_secret("pgp-private-key", body)
        return
    if R.random() < 0.5:
        t.kept_line(f"$ gpg --armor --export {user()}@{org()}.com")
        text, _ = pgp_block("PUBLIC")
        for line in text.rstrip("\n").split("\n"):
            if line:
                t.kept_line(line)
            else:
                t.line("")
    else:
        t.kept_line("$ gpg --list-secret-keys --keyid-format=long")
        t.kept_line(f"/home/{user()}/.gnupg/pubring.kbx")
        t.kept_line("------------------------------")
        t.kept_line(f"sec   ed25519/{fpr[-16:]} 2025-03-14 [SC] [expires: 2027-03-14]")
        t.kept_line(f"      {fpr}")
        t.kept_line(f"uid                 [ultimate] {user().title()} <{user()}@{org()}.com>")
        t.kept_line(f"ssb   cv25519/{rs(16, HEX).upper()} 2025-03-14 [E]")


def src_tls_files(t, secret):
    if secret:
        label = pick(["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"])
        t.kept_line(f"$ cat /etc/ssl/private/{pick(['server', 'tls', org()])}.{pick(['key', 'pem'])}")
        if R.random() < 0.5:
            cert = certificate()
            for line in cert.rstrip("\n").split("\n"):
                t.kept_line(line)
        key_text, body = pem(label)
        t.add(key_text)
        t.note_secret("pem-private-key", body)
        return
    style = R.randrange(3)
    if style == 0:
        t.kept_line(f"$ cat {pick(['/etc/ssl/certs/ca.pem', 'fullchain.pem', 'tls.crt'])}")
        for _ in range(R.randint(1, 2)):
            for line in certificate().rstrip("\n").split("\n"):
                t.kept_line(line)
    elif style == 1:
        t.kept_line("$ openssl rsa -in server.key -pubout")
        t.kept_line("writing RSA key")
        for line in certificate("PUBLIC KEY", 9).rstrip("\n").split("\n"):
            t.kept_line(line)
    else:
        t.kept_line("Certificate:")
        t.kept_line("    Data:")
        t.kept_line("        Version: 3 (0x2)")
        t.kept_line(f"        Serial Number: {':'.join(rs(2, HEX) for _ in range(16))}")
        t.kept_line("        Signature Algorithm: sha256WithRSAEncryption")
        t.kept_line(f"        Issuer: C=US, O=Let's Encrypt, CN=R11")
        t.kept_line(f"        Subject: CN={org()}.com")
        t.kept_line("        Subject Public Key Info:")
        t.kept_line("            Public Key Algorithm: rsaEncryption")
        t.kept_line("                Public-Key: (2048 bit)")
        for _ in range(4):
            t.kept_line("                    " + ":".join(rs(2, HEX) for _ in range(15)) + ":")
        t.kept_line(f"            X509v3 Subject Key Identifier: {':'.join(rs(2, HEX).upper() for _ in range(20))}")


def src_jwt_http(t, secret):
    if secret:
        style = R.randrange(4)
        tok = jwt()
        if style == 0:
            t.kept_line(f'{ip()} - - [{date()}] "GET /api/v1/me HTTP/1.1" 200 512')
            t.add("Authorization: Bearer ")
            t.secret("jwt", tok)
            t.line()
        elif style == 1:
            t.add('{"level":"debug","msg":"token issued","id_token":"')
            t.secret("jwt", tok)
            t.line(f'","token_type":"Bearer","expires_in":3600,"request_id":"{uuid()}"}}')
            t.kept_line('"token_type":"Bearer","expires_in":3600')  # already in the line above
            t.parts.pop()
            t.parts.pop()
        elif style == 2:
            t.add(f"Set-Cookie: access_token=")
            t.secret("jwt", tok)
            t.line("; Path=/; HttpOnly; Secure")
        else:
            t.add(f"GET /callback#access_token=")
            t.secret("jwt", tok)
            t.line("&token_type=Bearer&expires_in=3600 HTTP/1.1")
        t.kept_line(f"X-Request-Id: {uuid()}")
        return
    t.kept_line(f'{ip()} - - [{date()}] "POST /oauth/token HTTP/1.1" 200 {R.randint(300, 900)}')
    t.kept_line('{"token_type":"Bearer","expires_in":3600,"scope":"read write"}')
    t.kept_line(f"WWW-Authenticate: Bearer realm=\"{org()}\", error=\"invalid_token\", error_description=\"The access token expired\"")
    t.kept_line(f"X-Request-Id: {uuid()}")


def src_command_line(t, secret):
    benign = [
        "echo \"$CR_PAT\" | docker login ghcr.io -u USERNAME --password-stdin",
        f"mysql -u {user()} -p -h {pick(HOSTS)}",
        "gh auth login --with-token < token.txt",
        "kubectl create secret generic db --from-file=password=./db_password.txt",
        f"aws secretsmanager get-secret-value --secret-id prod/{repo()}/db --query SecretString",
        "vault kv get -field=password secret/prod/db",
        "ssh-keygen -t ed25519 -C \"dev@example.com\" -f ~/.ssh/id_ed25519",
        "export PGPASSFILE=$HOME/.pgpass",
        "openssl rand -base64 32 > secret.key",
        f"git log --oneline -n 3",
        f"{sha1()[:7]} fix: rotate token on password reset",
        f"{sha1()[:7]} chore: bump max_tokens to 4096",
        "htpasswd -B -c /etc/nginx/.htpasswd admin",
        "read -s -p 'Password: ' PASSWORD",
        "[sudo] password for dev:",
    ]
    for l in R.sample(benign, R.randint(2, 5)):
        t.kept_line(f"$ {l}" if not l.startswith(("[", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f")) else l)
    if secret:
        style = R.randrange(6)
        if style == 0:
            t.add(f"$ docker login -u {user()} -p ")
            t.secret("docker-hub-token", KINDS["docker-hub-token"]())
            t.line()
        elif style == 1:
            pw = password().replace("'", "")
            t.add(f"$ mysql -u root -p'")
            t.secret("password", pw)
            t.line(f"' -h {pick(HOSTS)} {pick(DBNAMES)}")
        elif style == 2:
            t.add(f"$ curl -u {user()}:")
            pw = rs(16, ALNUM)
            t.secret("password", pw)
            t.line(f" https://api.{org()}.com/v1/status")
        elif style == 3:
            name, kind, value = env_secret()
            t.add(f"$ {name}=")
            t.secret(kind, value)
            t.line(f" ./deploy.sh --env prod")
        elif style == 4:
            t.add("$ sshpass -p '")
            pw = password().replace("'", "")
            t.secret("password", pw)
            t.line(f"' ssh {user()}@{ip()}")
        else:
            name, kind, value = env_secret()
            t.add(f"$ gh secret set {name} --body '")
            t.secret(kind, value)
            t.line("'")


def src_source_code(t, secret):
    benign = [
        'api_key = os.environ["OPENAI_API_KEY"]',
        "password = getpass.getpass()",
        "def reset_password(token: str) -> None:",
        "MAX_TOKENS = 4096",
        "const apiKey = process.env.STRIPE_SECRET_KEY;",
        "if (!password || password.length < PASSWORD_MIN_LENGTH) {",
        'token = request.headers.get("Authorization", "").removeprefix("Bearer ")',
        "secret_santa = SecretSanta(participants)",
        "let tokenizer = Tokenizer::from_file(\"tokenizer.json\")?;",
        'log.info("password reset requested", user_id=user.id)',
        "db_password: str = Field(default=..., env=\"DB_PASSWORD\")",
        'if token_type != "Bearer":',
        "    raise InvalidToken(\"expected a bearer token\")",
        "hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        "PASSWORD_HASHERS = [\"django.contrib.auth.hashers.Argon2PasswordHasher\"]",
        "client = OpenAI(api_key=api_key)",
        "    password_confirmation: Option<String>,",
        "export const SECRET_KEY_LENGTH = 32;",
        f"// see https://docs.{org()}.com/api-keys for how to create an API key",
    ]
    for l in R.sample(benign, R.randint(3, 7)):
        t.kept_line(l)
    if secret:
        name, kind, value = env_secret()
        style = R.randrange(4)
        if style == 0:
            t.add(f'{name.lower()} = "')
            t.secret(kind, value)
            t.line('"')
        elif style == 1:
            t.add(f"const {pick(['client', 'sdk', 'api'])} = new Client({{ {pick(['apiKey', 'token', 'secret'])}: '")
            t.secret(kind, value)
            t.line("' });")
        elif style == 2:
            t.add(f'os.environ.setdefault("{name}", "')
            t.secret(kind, value)
            t.line('")')
        else:
            t.add(f'const {name} = "')
            t.secret(kind, value)
            t.line('" // TODO: move to vault')


def src_app_log(t, secret):
    benign = [
        lambda: f'{date()} INFO  [main] Started {repo()} in {R.randint(1, 30)}.{R.randint(100, 999)} seconds',
        lambda: f'{date()} INFO  request_id={uuid()} method=GET path=/api/v1/users status=200 duration_ms={R.randint(1, 900)}',
        lambda: f'{date()} WARN  password reset token expired for user_id={R.randint(1, 99999)}',
        lambda: f'{date()} DEBUG loaded config from /etc/{repo()}/config.yaml (secret_ref=vault:secret/data/{repo()})',
        lambda: f'{{"level":"info","ts":"{date()}","msg":"cache hit","key":"user:{R.randint(1, 99999)}:profile","trace_id":"{rs(32, HEX)}"}}',
        lambda: f'{date()} INFO  deployed image {org()}/{repo()}@sha256:{sha256()}',
        lambda: f'{date()} INFO  avatar uploaded: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{rs(R.randint(80, 300), B64)}=',
        lambda: f'{date()} ERROR invalid api key (key_id={R.randint(1, 9999)}, prefix=sk_live_...)',
        lambda: f'{date()} INFO  token refreshed for client_id={uuid()} expires_in=3600',
        lambda: f'{date()} INFO  Authorization header missing; returning 401',
        lambda: f'{date()} INFO  commit {sha1()} by {user()}',
        lambda: f'{date()} WARN  login failed for {user()}@{org()}.com: invalid password (attempt {R.randint(1, 5)}/5)',
        lambda: f'{date()} INFO  password_hash_memory_kib=65536 iterations=3 parallelism=4',
        lambda: f'{date()} DEBUG secrets manager: fetched 3 secrets in {R.randint(5, 90)}ms',
        lambda: f'{date()} INFO  session store: redis://cache.internal:6379/2',
    ]
    for f in R.sample(benign, R.randint(4, 9)):
        t.kept_line(f())
    if secret:
        style = R.randrange(3)
        if style == 0:
            name, kind, value = env_secret()
            t.add(f"{date()} DEBUG settings: {{'DEBUG': False, '{name}': '")
            t.secret(kind, value)
            t.line(f"', 'ALLOWED_HOSTS': ['*']}}")
        elif style == 1:
            name, kind, value = env_secret()
            t.add(f'{{"level":"error","msg":"upstream rejected request","header":"Authorization: Bearer ')
            t.secret(kind, value)
            t.line('"}')
        else:
            t.add(f"{date()} INFO  webhook configured: https://hooks.slack.com/services/")
            t.secret("slack-webhook", KINDS["slack-webhook"]())
            t.line()


def src_webhooks(t, secret):
    t.kept_line(f"# notifications for {repo()}")
    t.kept_line(f"channel = \"#{pick(['alerts', 'deploys', 'ops'])}\"")
    t.kept_line("docs = \"https://api.slack.com/messaging/webhooks\"")
    if secret:
        style = R.randrange(3)
        if style == 0:
            t.add("webhook_url = \"https://hooks.slack.com/services/")
            t.secret("slack-webhook", KINDS["slack-webhook"]())
            t.line('"')
        elif style == 1:
            t.add("webhook_url = \"https://discord.com/api/webhooks/")
            t.secret("discord-webhook", KINDS["discord-webhook"]())
            t.line('"')
        else:
            t.add("url = \"https://api.telegram.org/bot")
            t.secret("telegram-bot-token", KINDS["telegram-bot-token"]())
            t.line('/sendMessage"')
    else:
        t.kept_line("webhook_url = \"${SLACK_WEBHOOK_URL}\"")
        t.kept_line(f"discord_guild_id = {R.randint(10**17, 10**18)}")


def src_hashes(t, secret):
    """Checksums, digests, git SHAs, UUIDs, images: all benign. With `secret`, an .htpasswd or
    shadow line (password hashes are secrets, see the module doc)."""
    style = R.randrange(5)
    if style == 0:
        t.kept_line("$ sha256sum dist/*")
        for f in R.sample(["app-linux-amd64", "app-darwin-arm64", "app.tar.gz", "checksums.txt", "SHA256SUMS"], 3):
            t.kept_line(f"{sha256()}  dist/{f}")
    elif style == 1:
        t.kept_line("$ git log --format='%H %an %s' -n 4")
        for _ in range(4):
            t.kept_line(f"{sha1()} {user()} {pick(['fix: token refresh', 'feat: password reset', 'chore: rotate keys', 'docs: api key setup'])}")
    elif style == 2:
        name = pick(["lodash", "react", "express", "minimist"])
        t.kept_line(f'    "node_modules/{name}": {{')
        t.kept_line(f'      "version": "{R.randint(1, 20)}.{R.randint(0, 20)}.{R.randint(0, 9)}",')
        t.kept_line(f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-4.17.21.tgz",')
        t.kept_line(f'      "integrity": "sha512-{rs(86, B64)}=="')
    elif style == 3:
        t.kept_line("$ docker images --digests")
        t.kept_line("REPOSITORY          TAG       DIGEST                                                                    IMAGE ID       CREATED")
        for _ in range(3):
            t.kept_line(f"{org()}/{repo():<12} latest    sha256:{sha256()}   {rs(12, HEX)}   2 days ago")
    else:
        t.kept_line(f'<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{rs(R.randint(200, 600), B64)}==">')
        t.kept_line(f"<meta name=\"csrf-param\" content=\"authenticity_token\">")
        t.kept_line(f'<input type="password" name="password" autocomplete="current-password" required>')
    if secret:
        t.line("")
        t.kept_line("$ cat /etc/nginx/.htpasswd" if R.random() < 0.5 else "$ sudo tail -n 1 /etc/shadow")
        h = pick([f"$2y$10${rs(53, ALNUM + './')}", f"$2b$12${rs(53, ALNUM + './')}",
                  f"$6${rs(16, ALNUM + './')}${rs(86, ALNUM + './')}"])
        t.add(f"{user()}:")
        t.secret("password-hash", h)
        t.line(":19800:0:99999:7:::" if h.startswith("$6$") else "")


def src_age_sops(t, secret):
    t.kept_line(f"# created: {date()}")
    t.kept_line(f"# public key: age1{rs(58, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l')}")
    if secret:
        t.secret("age-secret-key", KINDS["age-secret-key"]())
        t.line()
    else:
        t.kept_line(f"sops:")
        t.kept_line(f"    age:")
        t.kept_line(f"        - recipient: age1{rs(58, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l')}")
        t.kept_line(f"    lastmodified: \"{date()}\"")
        t.kept_line(f"    mac: ENC[AES256_GCM,data:{rs(44, B64)},iv:{rs(43, B64)}=,tag:{rs(22, B64)}==,type:str]")


SOURCES = {
    "printenv": src_printenv, "dotenv": src_dotenv, "git-config": src_git_config, "git-remote": src_git_remote,
    "kubeconfig": src_kubeconfig, "docker-config": src_docker_config, "npmrc": src_npmrc, "pip-config": src_pip_config,
    "netrc": src_netrc, "aws-credentials": src_aws_credentials, "aws-cli": src_aws_cli,
    "gcp-service-account": src_gcp_service_account, "gcloud": src_gcloud, "azure-cli": src_azure,
    "terraform": src_terraform_plan, "json-config": src_json_config, "yaml-config": src_yaml_config,
    "toml-config": src_toml_config, "ini-config": src_ini_config, "ci-log": src_ci_log, "curl-verbose": src_curl_verbose,
    "db-error": src_db_error, "connection-string": src_connection_string, "ssh-key": src_ssh_keys, "pgp-key": src_pgp,
    "tls-file": src_tls_files, "jwt-http": src_jwt_http, "command-line": src_command_line, "source-code": src_source_code,
    "app-log": src_app_log, "webhook-config": src_webhooks, "hashes": src_hashes, "age-sops": src_age_sops,
}

# Sources whose texts carry many kinds (environment-like) turn up more often.
WEIGHTS = {"printenv": 4, "dotenv": 4, "ci-log": 3, "json-config": 2, "yaml-config": 2, "toml-config": 2,
           "source-code": 2, "command-line": 2, "curl-verbose": 2, "app-log": 2, "connection-string": 3,
           "db-error": 2, "kubeconfig": 2, "docker-config": 2, "azure-cli": 2}


def generate():
    names = sorted(SOURCES)
    weighted = [n for n in names for _ in range(WEIGHTS.get(n, 1))]
    records = []
    counters = {n: 0 for n in names}
    plan = [True] * N_SECRET_TEXTS + [False] * N_BENIGN_TEXTS
    R.shuffle(plan)
    for i, secret in enumerate(plan):
        # Every source appears at least twice each way; the rest by weight.
        source = names[i % len(names)] if i < 4 * len(names) else pick(weighted)
        for _attempt in range(100):
            t = Text()
            SOURCES[source](t, secret)
            text = t.text()
            try:
                check(text, t.secrets, t.keep)
            except Reject:
                continue
            if secret and not t.secrets:
                continue
            break
        else:
            raise SystemExit(f"could not make a valid {source} text")
        counters[source] += 1
        records.append({"id": f"{source}-{counters[source]:04d}", "source": source, "text": text,
                        "secrets": t.secrets, "keep": t.keep})
    return records


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "crates", "safety", "tests", "data", "redaction", "corpus.jsonl")
    out = sys.argv[1] if len(sys.argv) > 1 else default
    records = generate()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")
    kinds = {s["kind"] for r in records for s in r["secrets"]}
    n_secret = sum(1 for r in records if r["secrets"])
    print(f"{out}: {len(records)} texts ({n_secret} with secrets, {len(records) - n_secret} benign), "
          f"{sum(len(r['secrets']) for r in records)} secrets of {len(kinds)} kinds, "
          f"{sum(len(r['keep']) for r in records)} keep items", file=sys.stderr)


if __name__ == "__main__":
    main()
