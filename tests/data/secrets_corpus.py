"""A corpus of planted secrets and of look-alikes that must survive, for redaction.

`PLANTED`: realistic fake credentials in the syntax of Python, JS/TS, Go, Java, YAML,
.env, JSON, INI/TOML, shell and HTTP, each case listing the substrings that must not
survive redaction. `BENIGN`: text a redactor must leave alone (lockfile hashes, UUIDs,
base64 test data, git SHAs, public keys, identifiers, templated and indirect values).

Values are generated from a fixed seed in each format's real alphabet and length, so
the file stays readable and nothing in it is a live credential. The corpus was written
from the formats' public descriptions before lsp-assist's rules were extended (see
benchmarks/secrets_corpus.py for the figures, ours against detect-secrets).
"""

# ruff: noqa: E501  (corpus lines are data: one case per line reads best)
from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

_rng = random.Random(1313)

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


def r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64(n_bytes: int) -> str:
    return base64.b64encode(bytes(_rng.randrange(256) for _ in range(n_bytes))).decode()


def b64url_json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


@dataclass(frozen=True)
class Case:
    name: str
    lang: str
    text: str
    secrets: tuple[str, ...] = ()


# --------------------------------------------------------------------------- values

AWS_ID = "AKIA" + r(UPPER + "234567", 16)
AWS_ID2 = "ASIA" + r(UPPER + "234567", 16)
AWS_SECRET = r(B64, 40)
AWS_SECRET2 = r(B64, 40)
GCP_API = "AIza" + r(B64URL, 35)
PEM_LINES = [b64(48) for _ in range(6)]
RSA_BLOCK = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_LINES) + "\n-----END RSA PRIVATE KEY-----"
PK8_LINES = [b64(48) for _ in range(4)]
PK8_JSON = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(PK8_LINES) + "\\n-----END PRIVATE KEY-----\\n"
EC_LINES = [b64(48) for _ in range(3)]
EC_BLOCK = "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(EC_LINES) + "\n-----END EC PRIVATE KEY-----"
SSH_LINES = [b64(51) for _ in range(5)]
SSH_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(SSH_LINES) + "\n-----END OPENSSH PRIVATE KEY-----"
)
AZ_KEY = b64(64)  # 88 characters ending in ==
AZ_KEY2 = b64(64)
AZ_SIG = b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
AZ_CLIENT_SECRET = r(ALNUM, 3) + "8Q~" + r(ALNUM + "._~-", 34)
GHP = "ghp_" + r(ALNUM, 36)
GHO = "gho_" + r(ALNUM, 36)
GHS = "ghs_" + r(ALNUM, 36)
GH_PAT = "github_pat_11" + r(UPPER + DIGITS, 20) + "_" + r(ALNUM, 59)
GLPAT = "glpat-" + r(ALNUM + "-_", 20)
XOXB = f"xoxb-{r(DIGITS, 12)}-{r(DIGITS, 13)}-{r(ALNUM, 24)}"
XOXP = f"xoxp-{r(DIGITS, 12)}-{r(DIGITS, 12)}-{r(DIGITS, 13)}-{r(HEX, 32)}"
SLACK_HOOK = (
    f"https://hooks.slack.com/services/T{r(UPPER + DIGITS, 8)}/B{r(UPPER + DIGITS, 10)}/{r(ALNUM, 24)}"
)
STRIPE_LIVE = "sk_live_" + r(ALNUM, 24)
STRIPE_TEST = "sk_test_" + r(ALNUM, 24)
STRIPE_RK = "rk_live_" + r(ALNUM, 24)
STRIPE_WH = "whsec_" + r(ALNUM, 32)
JWT = ".".join(
    (
        b64url_json({"alg": "HS256", "typ": "JWT"}),
        b64url_json({"sub": "1234567890", "name": "Jane Doe", "iat": 1716239022}),
        r(B64URL, 43),
    )
)
JWT2 = ".".join(
    (b64url_json({"alg": "RS256", "kid": r(HEX, 8)}), b64url_json({"scope": "read:all"}), r(B64URL, 86))
)
OPENAI = "sk-proj-" + r(ALNUM + "-_", 48)
ANTHROPIC = "sk-ant-api03-" + r(ALNUM + "-_", 93) + "AA"
HF = "hf_" + r(UPPER + LOWER, 34)
SENDGRID = "SG." + r(B64URL, 22) + "." + r(B64URL, 43)
TWILIO_SID = "AC" + r(HEX, 32)
TWILIO_KEY = "SK" + r(HEX, 32)
TWILIO_SECRET = r(ALNUM, 32)
MAILCHIMP = r(HEX, 32) + "-us14"
NPM = "npm_" + r(ALNUM, 36)
PYPI = "pypi-AgEIcHlwaS5vcmc" + r(B64URL, 70)
SHOPIFY = "shpat_" + r(HEX, 32)
DO_TOKEN = "dop_v1_" + r(HEX, 64)
DISCORD = "M" + r(ALNUM, 23) + "." + r(B64URL, 6) + "." + r(B64URL, 27)  # bot tokens start M/N/O
TELEGRAM = r(DIGITS, 10) + ":AA" + r(B64URL, 33)
DATADOG = r(HEX, 32)
HEROKU = f"{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}"
HEX_KEY64 = r(HEX, 64)
HEX_KEY32 = r(HEX, 32)
HEX_KEY48 = r(HEX.upper()[:16], 48)
ETH_KEY = "0x" + r(HEX, 64)
PASS1 = "Winter" + r(DIGITS, 4) + "!" + r(LOWER, 3)
PASS2 = r(ALNUM, 6) + "#" + r(ALNUM, 7)
PASS3 = "correct-horse-" + r(LOWER, 7) + "-staple"
PASS4 = "Tr0ub4dor&" + r(DIGITS, 3)
PASS5 = r(LOWER, 5) + r(DIGITS, 3) + r(UPPER, 2)
PASS6 = "P@ss" + r(ALNUM, 8)
PASS7 = r(ALNUM, 10)
PASS8 = "s3cr3t-" + r(LOWER, 6)
BASIC = base64.b64encode(f"deploy:{PASS2}".encode()).decode()
DOCKER_AUTH = base64.b64encode(f"ci-bot:{PASS6}".encode()).decode()
K8S_PW = base64.b64encode(PASS1.encode()).decode()
OPAQUE = r(ALNUM, 40)
OPAQUE2 = r(ALNUM + "-_", 32)
API_KEY = r(ALNUM, 32)

PLANTED: list[Case] = [
    # ---------------------------------------------------------------- AWS
    Case("aws id, python", "python", f'AWS_ACCESS_KEY_ID = "{AWS_ID}"\n', (AWS_ID,)),
    Case(
        "aws pair, boto3 call",
        "python",
        f's3 = boto3.client("s3", aws_access_key_id="{AWS_ID2}", aws_secret_access_key="{AWS_SECRET}")\n',
        (AWS_ID2, AWS_SECRET),
    ),
    Case(
        "aws credentials file",
        "ini",
        f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET2}\nregion = eu-west-1\n",
        (AWS_ID, AWS_SECRET2),
    ),
    Case(
        "aws, js sdk config",
        "javascript",
        f"const client = new S3Client({{\n  credentials: {{ accessKeyId: '{AWS_ID}', "
        f"secretAccessKey: '{AWS_SECRET}' }},\n}});\n",
        (AWS_ID, AWS_SECRET),
    ),
    Case(
        "aws, go static credentials",
        "go",
        f'creds := credentials.NewStaticCredentialsProvider("{AWS_ID2}", "{AWS_SECRET2}", "")\n',
        (AWS_ID2, AWS_SECRET2),
    ),
    Case(
        "aws, .env",
        "dotenv",
        f"AWS_ACCESS_KEY_ID={AWS_ID}\nAWS_SECRET_ACCESS_KEY={AWS_SECRET}\n",
        (AWS_ID, AWS_SECRET),
    ),
    Case(
        "aws, json",
        "json",
        f'{{"AccessKeyId": "{AWS_ID2}", "SecretAccessKey": "{AWS_SECRET2}", "Expiration": "2025-01-01"}}\n',
        (AWS_ID2, AWS_SECRET2),
    ),
    Case(
        "aws, yaml",
        "yaml",
        f"aws:\n  access_key_id: {AWS_ID}\n  secret_access_key: {AWS_SECRET}\n",
        (AWS_ID, AWS_SECRET),
    ),
    Case(
        "aws, java",
        "java",
        f'AwsBasicCredentials creds = AwsBasicCredentials.create("{AWS_ID}", "{AWS_SECRET2}");\n',
        (AWS_ID, AWS_SECRET2),
    ),
    # ---------------------------------------------------------------- GCP
    Case(
        "gcp api key, js",
        "javascript",
        f'const firebaseConfig = {{ apiKey: "{GCP_API}", projectId: "demo" }};\n',
        (GCP_API,),
    ),
    Case(
        "gcp api key, url",
        "python",
        f'url = f"https://maps.googleapis.com/maps/api/geocode/json?key={GCP_API}"\n',
        (GCP_API,),
    ),
    Case(
        "gcp service account json",
        "json",
        '{\n  "type": "service_account",\n  "project_id": "demo-123",\n'
        f'  "private_key_id": "{r(HEX, 40)}",\n  "private_key": "{PK8_JSON}",\n'
        '  "client_email": "svc@demo-123.iam.gserviceaccount.com"\n}\n',
        tuple(PK8_LINES),
    ),
    # ---------------------------------------------------------------- Azure
    Case(
        "azure storage connection string, python",
        "python",
        'CONN = "DefaultEndpointsProtocol=https;AccountName=acmeprod;'
        f'AccountKey={AZ_KEY};EndpointSuffix=core.windows.net"\n',
        (AZ_KEY, AZ_KEY[:40]),
    ),
    Case(
        "azure storage connection string, appsettings.json",
        "json",
        '{\n  "ConnectionStrings": {\n    "Blob": "DefaultEndpointsProtocol=https;AccountName=acme;'
        f'AccountKey={AZ_KEY2};EndpointSuffix=core.windows.net"\n  }}\n}}\n',
        (AZ_KEY2[:40],),
    ),
    Case(
        "azure storage connection string, .env",
        "dotenv",
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZ_KEY}\n",
        (AZ_KEY[:40],),
    ),
    Case(
        "azure account key alone, yaml",
        "yaml",
        f"storage:\n  account_name: acme\n  account_key: {AZ_KEY2}\n",
        (AZ_KEY2[:40],),
    ),
    Case(
        "azure sas url",
        "python",
        f'BLOB = "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r'
        f'&se=2026-01-01T00:00:00Z&spr=https&sig={AZ_SIG}"\n',
        (AZ_SIG,),
    ),
    Case(
        "azure ad client secret, env",
        "dotenv",
        f"AZURE_CLIENT_ID=00000000-0000-0000-0000-000000000000\nAZURE_CLIENT_SECRET={AZ_CLIENT_SECRET}\n",
        (AZ_CLIENT_SECRET,),
    ),
    Case(
        "sql server connection string, c#-style",
        "csharp",
        'var cs = "Server=tcp:acme.database.windows.net,1433;Database=app;User ID=admin;'
        f'Password={PASS2};Encrypt=True;";\n',
        (PASS2,),
    ),
    # ---------------------------------------------------------------- connection strings / URLs
    Case(
        "postgres url, python",
        "python",
        f'DATABASE_URL = "postgresql://app:{PASS1}@db.internal:5432/app"\n',
        (PASS1,),
    ),
    Case(
        "mongodb+srv, js",
        "javascript",
        f"mongoose.connect(`mongodb+srv://admin:{PASS7}@cluster0.ab1cd.mongodb.net/prod`);\n",
        (PASS7,),
    ),
    Case(
        "redis url, empty user", "yaml", f"cache:\n  url: redis://:{PASS5}@redis.internal:6379/0\n", (PASS5,)
    ),
    Case(
        "amqp url, go", "go", f'conn, err := amqp.Dial("amqp://worker:{PASS8}@mq.internal:5672/")\n', (PASS8,)
    ),
    Case(
        "https basic auth in url",
        "python",
        f'requests.get("https://admin:{PASS4}@intranet.example.com/api")\n',
        (PASS4,),
    ),
    Case(
        "jdbc password param, java properties",
        "properties",
        f"spring.datasource.url=jdbc:postgresql://db:5432/app?user=app&password={PASS6}\n",
        (PASS6,),
    ),
    Case(
        "mysql dsn, go",
        "go",
        f'db, err := sql.Open("mysql", "app:{PASS2}@tcp(127.0.0.1:3306)/shop?parseTime=true")\n',
        (PASS2,),
    ),
    # ---------------------------------------------------------------- source-host tokens
    Case("github classic token, python", "python", f'GITHUB_TOKEN = "{GHP}"\n', (GHP,)),
    Case(
        "github oauth token, js", "javascript", f"const octokit = new Octokit({{ auth: '{GHO}' }});\n", (GHO,)
    ),
    Case("github app token, yaml", "yaml", f"env:\n  GH_TOKEN: {GHS}\n", (GHS,)),
    Case("github fine-grained pat, shell", "shell", f'export GITHUB_PAT="{GH_PAT}"\n', (GH_PAT,)),
    Case("gitlab pat, .env", "dotenv", f"GITLAB_TOKEN={GLPAT}\n", (GLPAT,)),
    Case(
        "gitlab pat, header",
        "shell",
        f'curl --header "PRIVATE-TOKEN: {GLPAT}" https://gitlab.example.com/api/v4/projects\n',
        (GLPAT,),
    ),
    Case("npm token, .npmrc", "ini", f"//registry.npmjs.org/:_authToken={NPM}\n", (NPM,)),
    Case("pypi token, pypirc", "ini", f"[pypi]\nusername = __token__\npassword = {PYPI}\n", (PYPI,)),
    # ---------------------------------------------------------------- chat / payments / SaaS
    Case("slack bot token, python", "python", f'client = WebClient(token="{XOXB}")\n', (XOXB,)),
    Case("slack user token, json", "json", f'{{"slack": {{"token": "{XOXP}"}}}}\n', (XOXP,)),
    Case(
        "slack webhook, ts",
        "typescript",
        f"const HOOK: string = '{SLACK_HOOK}';\n",
        (SLACK_HOOK.split("/services/")[1],),
    ),
    Case("stripe live key, python", "python", f'stripe.api_key = "{STRIPE_LIVE}"\n', (STRIPE_LIVE,)),
    Case(
        "stripe test key, ts",
        "typescript",
        f"const stripe = new Stripe('{STRIPE_TEST}', {{ apiVersion: '2024-06-20' }});\n",
        (STRIPE_TEST,),
    ),
    Case("stripe restricted key, go", "go", f'stripe.Key = "{STRIPE_RK}"\n', (STRIPE_RK,)),
    Case("stripe webhook secret, .env", "dotenv", f"STRIPE_WEBHOOK_SECRET={STRIPE_WH}\n", (STRIPE_WH,)),
    Case("sendgrid key, java", "java", f'SendGrid sg = new SendGrid("{SENDGRID}");\n', (SENDGRID,)),
    Case(
        "twilio sid + key, python",
        "python",
        f'client = Client("{TWILIO_KEY}", "{TWILIO_SECRET}", account_sid="{TWILIO_SID}")\n',
        (TWILIO_KEY, TWILIO_SECRET),
    ),
    Case(
        "mailchimp key, js",
        "javascript",
        f"mailchimp.setConfig({{ apiKey: '{MAILCHIMP}', server: 'us14' }});\n",
        (MAILCHIMP,),
    ),
    Case("shopify token, ruby-ish yaml", "yaml", f"shopify:\n  access_token: {SHOPIFY}\n", (SHOPIFY,)),
    Case("digitalocean token, .env", "dotenv", f"DIGITALOCEAN_TOKEN={DO_TOKEN}\n", (DO_TOKEN,)),
    Case("discord bot token, python", "python", f'bot.run("{DISCORD}")\n', (DISCORD,)),
    Case(
        "telegram bot token, js",
        "javascript",
        f"const bot = new TelegramBot('{TELEGRAM}', {{ polling: true }});\n",
        (TELEGRAM,),
    ),
    Case("datadog api key, .env", "dotenv", f"DD_API_KEY={DATADOG}\n", (DATADOG,)),
    Case("heroku api key (a uuid), .env", "dotenv", f"HEROKU_API_KEY={HEROKU}\n", (HEROKU,)),
    # ---------------------------------------------------------------- AI providers
    Case("openai key, python", "python", f'client = OpenAI(api_key="{OPENAI}")\n', (OPENAI,)),
    Case("anthropic key, .env", "dotenv", f"ANTHROPIC_API_KEY={ANTHROPIC}\n", (ANTHROPIC,)),
    Case("huggingface token, python", "python", f'login(token="{HF}")\n', (HF,)),
    # ---------------------------------------------------------------- JWT / auth headers
    Case(
        "jwt in bearer header, js",
        "javascript",
        f"fetch(url, {{ headers: {{ Authorization: `Bearer {JWT}` }} }});\n",
        (JWT,),
    ),
    Case("jwt in test fixture, python", "python", f'ACCESS_TOKEN = "{JWT2}"\n', (JWT2,)),
    Case(
        "jwt in curl", "shell", f"curl -H 'Authorization: Bearer {JWT}' https://api.example.com/me\n", (JWT,)
    ),
    Case(
        "opaque bearer token, http",
        "http",
        f"GET /v1/orders HTTP/1.1\nAuthorization: Bearer {OPAQUE}\n",
        (OPAQUE,),
    ),
    Case(
        "basic auth header, python", "python", f'headers = {{"Authorization": "Basic {BASIC}"}}\n', (BASIC,)
    ),
    Case(
        "x-api-key header, ts",
        "typescript",
        f"axios.get(url, {{ headers: {{ 'X-API-Key': '{API_KEY}' }} }});\n",
        (API_KEY,),
    ),
    Case(
        "docker config auth",
        "json",
        f'{{"auths": {{"registry.example.com": {{"auth": "{DOCKER_AUTH}"}}}}}}\n',
        (DOCKER_AUTH,),
    ),
    # ---------------------------------------------------------------- private keys
    Case("rsa private key, pem text", "pem", RSA_BLOCK + "\n", tuple(PEM_LINES)),
    Case("rsa private key, python string", "python", f'PRIVATE_KEY = """{RSA_BLOCK}"""\n', tuple(PEM_LINES)),
    Case(
        "ec private key, yaml block",
        "yaml",
        "tls:\n  key: |\n    " + EC_BLOCK.replace("\n", "\n    ") + "\n",
        tuple(EC_LINES),
    ),
    Case("openssh private key, go raw string", "go", f"const deployKey = `{SSH_BLOCK}`\n", tuple(SSH_LINES)),
    Case("private key in js template", "javascript", f"const key = `{EC_BLOCK}`;\n", tuple(EC_LINES)),
    Case("ethereum private key, .env", "dotenv", f"PRIVATE_KEY={ETH_KEY}\n", (ETH_KEY[2:],)),
    # ---------------------------------------------------------------- hex keys assigned to *_KEY
    Case("hex _KEY, python", "python", f'ENCRYPTION_KEY = "{HEX_KEY64}"\n', (HEX_KEY64,)),
    Case("hex _KEY, .env", "dotenv", f"SIGNING_KEY={HEX_KEY32}\n", (HEX_KEY32,)),
    Case("hex _KEY, yaml", "yaml", f"HMAC_KEY: {HEX_KEY64}\n", (HEX_KEY64,)),
    Case("hex _KEY, go const", "go", f'const MASTER_KEY = "{HEX_KEY48}"\n', (HEX_KEY48,)),
    Case("hex _KEY, ts", "typescript", f"export const SESSION_KEY = '{HEX_KEY32}';\n", (HEX_KEY32,)),
    Case("hex _KEY, java", "java", f'private static final String AES_KEY = "{HEX_KEY64}";\n', (HEX_KEY64,)),
    Case("hex _key lower, json", "json", f'{{"cipher_key": "{HEX_KEY32}"}}\n', (HEX_KEY32,)),
    # ---------------------------------------------------------------- passwords and generic secrets
    Case(
        "password, python kwarg",
        "python",
        f'conn = psycopg2.connect(host="db", user="app", password="{PASS1}")\n',
        (PASS1,),
    ),
    Case(
        "password, js object",
        "javascript",
        f"const db = mysql.createPool({{ user: 'app', password: '{PASS2}' }});\n",
        (PASS2,),
    ),
    Case("password, go struct", "go", f'cfg := Config{{User: "app", Password: "{PASS3}"}}\n', (PASS3,)),
    Case("password, java field", "java", f'private String dbPassword = "{PASS4}";\n', (PASS4,)),
    Case("password, java properties", "properties", f"spring.datasource.password={PASS5}\n", (PASS5,)),
    Case("password, yaml", "yaml", f"database:\n  user: app\n  password: {PASS6}\n", (PASS6,)),
    Case("password, quoted yaml", "yaml", f'smtp:\n  password: "{PASS8}"\n', (PASS8,)),
    Case("password, .env", "dotenv", f"DB_PASSWORD={PASS7}\n", (PASS7,)),
    Case("password, json", "json", f'{{"username": "admin", "password": "{PASS3}"}}\n', (PASS3,)),
    Case("password, toml", "toml", f'[smtp]\nuser = "mailer"\npassword = "{PASS4}"\n', (PASS4,)),
    Case("password, shell flag", "shell", f"mysql -u root --password={PASS5} shop < dump.sql\n", (PASS5,)),
    Case("kubernetes secret data", "yaml", f"kind: Secret\ndata:\n  password: {K8S_PW}\n", (K8S_PW,)),
    Case("client secret, python", "python", f'CLIENT_SECRET = "{OPAQUE2}"\n', (OPAQUE2,)),
    Case("api key, ts class", "typescript", f"private readonly apiKey = '{API_KEY}';\n", (API_KEY,)),
    Case(
        "secret key, django",
        "python",
        f"SECRET_KEY = 'django-insecure-{r(LOWER + DIGITS + '!@#$%^&*(-_=+)', 50)}'\n",
        (),
    ),
    Case("auth token, go", "go", f'authToken := "{OPAQUE}"\n', (OPAQUE,)),
    Case("access token, yaml", "yaml", f"oauth:\n  access_token: {OPAQUE2}\n", (OPAQUE2,)),
    Case("passphrase, python", "python", f'key = load_key(path, passphrase="{PASS3}")\n', (PASS3,)),
]

# The Django key's value is only known after generation: fill in its secret.
PLANTED = [
    Case(c.name, c.lang, c.text, (c.text.split("'")[1],)) if c.name == "secret key, django" else c
    for c in PLANTED
]

# --------------------------------------------------------------------------- must survive

SHA512 = b64(64)
BENIGN: list[Case] = [
    Case(
        "package-lock integrity",
        "json",
        f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n'
        f'  "integrity": "sha512-{SHA512}"\n}}\n',
    ),
    Case("yarn.lock", "yaml", f'lodash@^4.17.21:\n  version "4.17.21"\n  integrity sha512-{b64(64)}\n'),
    Case(
        "poetry/uv lock hash",
        "toml",
        f'[[package]]\nname = "httpx"\nversion = "0.27.0"\nhashes = ["sha256:{r(HEX, 64)}"]\n',
    ),
    Case("requirements --hash", "text", f"httpx==0.27.0 \\\n    --hash=sha256:{r(HEX, 64)}\n"),
    Case(
        "go.sum",
        "text",
        f"golang.org/x/net v0.24.0 h1:{b64(32)}\ngolang.org/x/net v0.24.0/go.mod h1:{b64(32)}\n",
    ),
    Case(
        "Cargo.lock checksum",
        "toml",
        f'[[package]]\nname = "serde"\nversion = "1.0.200"\nchecksum = "{r(HEX, 64)}"\n',
    ),
    Case("sha256 constant", "python", f'EXPECTED_SHA256 = "{r(HEX, 64)}"\n'),
    Case("content hash", "typescript", f"const CONTENT_HASH = '{r(HEX, 40)}';\n"),
    Case("git sha, python", "python", f'PINNED_COMMIT = "{r(HEX, 40)}"\n'),
    Case(
        "git sha, pre-commit yaml",
        "yaml",
        f"repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: {r(HEX, 40)}\n",
    ),
    Case("git sha, go", "go", f'const buildCommit = "{r(HEX, 40)}"\n'),
    Case("short git sha in log", "text", f"{r(HEX, 7)} Fix the parser ({r(HEX, 7)})\n"),
    Case("uuid, python", "python", f'REQUEST_ID = "{HEROKU[::-1]}"\n'),
    Case(
        "uuid, json",
        "json",
        f'{{"id": "{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-a{r(HEX, 3)}-{r(HEX, 12)}", "name": "x"}}\n',
    ),
    Case(
        "uuid, java",
        "java",
        f'UUID tenant = UUID.fromString("{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}");\n',
    ),
    Case("base64 png test data", "python", f'PIXEL_PNG = base64.b64decode("{b64(60)}")\n'),
    Case("base64 data uri", "typescript", f"const icon = 'data:image/png;base64,{b64(90)}';\n"),
    Case("base64 expected value", "python", 'assert b64encode(b"hello world") == b"aGVsbG8gd29ybGQ="\n'),
    Case("base64 fixture json", "json", f'{{"payload": "{b64(45)}", "encoding": "base64"}}\n'),
    Case("ssh public key", "text", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(B64, 43)} jane@laptop\n"),
    Case(
        "pem public key",
        "pem",
        "-----BEGIN PUBLIC KEY-----\n"
        + "\n".join(b64(48) for _ in range(3))
        + "\n-----END PUBLIC KEY-----\n",
    ),
    Case(
        "certificate",
        "pem",
        "-----BEGIN CERTIFICATE-----\n"
        + "\n".join(b64(48) for _ in range(3))
        + "\n-----END CERTIFICATE-----\n",
    ),
    Case(
        "identifiers with secret words",
        "python",
        (
            "def get_api_key(self) -> str:\n    return self._api_key\n\n"
            "token_count = count_tokens(prompt)\npassword_field = form.fields['password']\n"
            "secret_key_name = 'SECRET_KEY'\nauth_header = build_auth_header(token)\n"
        ),
    ),
    Case(
        "env indirection, python",
        "python",
        'password = os.environ["DB_PASSWORD"]\napi_key = settings.OPENAI_API_KEY\n',
    ),
    Case(
        "env indirection, js",
        "javascript",
        "const token = process.env.GITHUB_TOKEN;\nconst apiKey = await getSecret('prod/api');\n",
    ),
    Case(
        "env indirection, go",
        "go",
        'token := os.Getenv("GITHUB_TOKEN")\nsecret, err := vault.Read(ctx, "kv/app")\n',
    ),
    Case(
        "github actions secret ref",
        "yaml",
        "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n",
    ),
    Case(
        "ansible template",
        "yaml",
        "db_password: \"{{ vault_db_password }}\"\napi_key: \"{{ lookup('env', 'API_KEY') }}\"\n",
    ),
    Case(
        "placeholders",
        "dotenv",
        "API_KEY=your-api-key-here\nDB_PASSWORD=changeme\nSECRET_KEY=<replace-me>\nTOKEN=xxxxxxxxxxxx\n",
    ),
    Case(
        "spring placeholder",
        "properties",
        "spring.datasource.password=${DB_PASSWORD}\napp.jwt.secret=${JWT_SECRET:}\n",
    ),
    Case(
        "constants about secrets",
        "java",
        (
            'public static final int PASSWORD_MIN_LENGTH = 12;\npublic static final String TOKEN_TYPE = "Bearer";\n'
            'private static final String API_KEY_HEADER = "X-API-Key";\n'
        ),
    ),
    Case(
        "cache and i18n keys",
        "typescript",
        (
            "const cacheKey = `user:${userId}:settings:v2`;\nconst i18nKey = 'checkout.payment.cardNumberLabel';\n"
            "const storageKey = 'app.preferences.darkModeEnabled';\n"
        ),
    ),
    Case(
        "urls without credentials",
        "python",
        (
            'DATABASE_URL = "postgresql://localhost:5432/app"\nMONGO = "mongodb://db:27017/app"\n'
            'HOME = "https://user@example.com/profile?tab=2"\n'
        ),
    ),
    Case(
        "long identifiers",
        "java",
        "AbstractSingletonProxyFactoryBean bean = ctx.getBean(AbstractSingletonProxyFactoryBean.class);\n",
    ),
    Case(
        "go test table",
        "go",
        'tests := []struct{ name, input, want string }{\n\t{"hex", "deadbeefcafebabe", "ok"},\n}\n',
    ),
    Case(
        "css and colours",
        "css",
        ".btn { color: #ff00aa; background: url(data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=); }\n",
    ),
    Case(
        "semver and dates",
        "toml",
        'version = "2.14.0-rc.3+build.20240601"\nreleased = 2024-06-01T12:30:00Z\n',
    ),
    Case(
        "aws example docs arn",
        "python",
        'ROLE_ARN = "arn:aws:iam::123456789012:role/deploy"\nREGION = "eu-west-1"\n',
    ),
    Case(
        "password prompt code",
        "python",
        'password = getpass.getpass("Password: ")\nif not check_password(user, password):\n    raise AuthError("bad password")\n',
    ),
    Case(
        "jwt library code",
        "python",
        'token = jwt.encode({"sub": user.id}, key, algorithm="HS256")\nclaims = jwt.decode(token, key, algorithms=["HS256"])\n',
    ),
    Case(
        "test names",
        "python",
        "def test_token_refresh_rotates_the_refresh_token_and_keeps_the_session():\n    ...\n",
    ),
    Case("hex colour table", "javascript", "const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728'];\n"),
    Case(
        "numbers",
        "python",
        "PRIMES = [2305843009213693951, 618970019642690137449562111]\nEPOCH_MS = 1716239022000\n",
    ),
    Case("key names without values", "yaml", "required:\n  - api_key\n  - client_secret\n  - password\n"),
    Case("sk- prefixed words", "python", 'estimator = "sk-learn-compatible-estimator-name"\n'),
]

__all__ = ["BENIGN", "PLANTED", "Case"]
