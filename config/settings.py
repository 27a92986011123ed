"""Settings come from environment variables only; see README "Configuration"."""

import ipaddress
import os
import tempfile
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from django.utils.csp import CSP

from config.env import (
    env_bool,
    env_choice,
    env_database,
    env_endpoints,
    env_hosts,
    env_int,
    env_list,
    env_networks,
    env_path,
    env_redis_url,
    env_secret_key,
    env_url,
    env_variable_names,
    load_demo_env,
)

BASE_DIR = Path(__file__).resolve().parent.parent


def client_ip_behind_proxy(request) -> str | None:
    """The address the proxy saw: the last X-Forwarded-For entry, the one the proxy appended itself.

    Earlier entries come from the client and prove nothing.
    """
    last = request.META.get("HTTP_X_FORWARDED_FOR", "").rsplit(",", 1)[-1].strip()
    try:
        return str(ipaddress.ip_address(last))
    except ValueError:
        return request.META.get("REMOTE_ADDR")


DEBUG = env_bool("DEBUG", False)
# The variable, else the demo's key file (make demo's site signs with it), else with DEBUG on a fixed
# development key, else none: commands that sign nothing still run; serving (config/wsgi.py,
# runserver) and set-password links refuse with a message. SECRET_KEY_SOURCE says which it was.
SECRET_KEY, SECRET_KEY_SOURCE = env_secret_key("SECRET_KEY", debug=DEBUG, key_file=BASE_DIR / ".demo-secret-key")
# A command run in the demo's checkout (the key from its key file) takes the demo's judge endpoints and
# loopback address too, from the file `make demo-data` writes beside the key; the environment wins.
DEMO_ENV_LOADED = load_demo_env(BASE_DIR / ".demo-env") if SECRET_KEY_SOURCE == "demo key file" else []
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

# HTTPS, off by default so that http://127.0.0.1 works; README "Deploy" gives a server's values.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Behind a reverse proxy that terminates TLS, believe the headers it sets (scheme, host, client
# address). Safe only when nothing but the proxy can reach the server.
TRUST_PROXY_HEADERS = env_bool("TRUST_PROXY_HEADERS", False)
if TRUST_PROXY_HEADERS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    USE_X_FORWARDED_HOST = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "annotate",
    "judges",
    "calibration",
    # After `judges`, whose db_worker command (which first marks runs whose worker died) replaces this one's.
    "django_tasks_db",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # The Content-Security-Policy header (SECURE_CSP below) on every response.
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    # Static files straight from STATIC_ROOT (collected and hashed), before any session or database work.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # A 400 with a message for request data declared in a charset other than UTF-8, before anything reads it.
    "annotate.middleware.DeclaredCharsetMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Refuses request data a database cannot store (NUL, lone surrogates) with a 400 before any view reads it.
    "annotate.middleware.UnstorableInputMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy: scripts, styles, images and requests from this site only. Our pages hold no
# inline script or style (the charts draw with SVG attributes; htmx is told not to add its style);
# the admin's inline ones carry the per-response nonce. The calibration report's HTML download has
# a stricter policy of its own (calibration/views.py). README "Security".
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # `csp_nonce`, which the admin's templates put on their few inline scripts and styles.
                "django.template.context_processors.csp",
            ],
        },
    },
]

DATABASES = {
    "default": env_database("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# Seconds a connection is kept for the next request: saves PostgreSQL a handshake each time, while
# an SQLite file is cheap to open. Checked before reuse, so a restarted database costs no error.
DATABASES["default"]["CONN_MAX_AGE"] = env_int("CONN_MAX_AGE", 0 if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3" else 60)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers proceed while one writer commits; IMMEDIATE takes the
    # write lock at BEGIN so concurrent claims queue instead of failing mid-way.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    # Tests use a file, not the in-memory default: threads in the concurrency
    # tests then contend for SQLite's real write lock, as a served site's do.
    # One file per test process, so that parallel runs never share one.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"pairwise-test-{os.getpid()}.sqlite3")}

# Django's four standard checks, applied where a person chooses a password (the set-password link,
# the admin); accounts made by commands and tests get theirs without a form.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env_path("STATIC_ROOT", BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# collectstatic writes each file also under a name holding its hash (app.3f2a….css) with gzipped
# copies; templates link the hashed name, which whitenoise serves with a far-future cache lifetime.
# With DEBUG on, templates link the plain names and nothing needs collecting.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed logins for one username from one
# address, that username is refused from that address for AXES_COOLOFF_MINUTES (0: until
# `manage.py axes_reset_username`); colleagues behind the same address log in as usual. After
# AXES_IP_FAILURE_LIMIT failed logins from one address, whatever the usernames, every login from it
# is refused as long (annotate/throttling.py). A set-password link still logs its owner in.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "annotate.throttling.AddressAwareAxesHandler"
# Axes logs a banner at every start of every process (five gunicorn workers, each command): noise.
AXES_VERBOSE = False
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_IP_FAILURE_LIMIT = env_int("AXES_IP_FAILURE_LIMIT", 30, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15)) or None
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
# Behind the proxy every request comes from the proxy's address.
AXES_CLIENT_IP_CALLABLE = client_ip_behind_proxy if TRUST_PROXY_HEADERS else None

LOG_LEVEL = env_choice("LOG_LEVEL", "WARNING", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    # Django's own console and e-mail handlers are replaced: everything goes to stderr once.
    "loggers": {"django": {"handlers": ["stderr"], "level": LOG_LEVEL, "propagate": False}},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only: DRF's browsable pages carry inline styles the Content-Security-Policy blocks. With
    # DEBUG on (development on one's own machine) they are served for exploring the API.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    # JSON with a nesting limit and the same NUL/surrogate checks as forms.
    "DEFAULT_PARSER_CLASSES": [
        "annotate.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # The OpenAPI schema at /api/schema/ (drf-spectacular), with who may call each route.
    "DEFAULT_SCHEMA_CLASS": "annotate.schema.PermissionsAutoSchema",
    # A service's ValidationError answers 400 with its messages, in one place (common/api_errors.py).
    "EXCEPTION_HANDLER": "common.api_errors.exception_handler",
}

# --- Hooks (common/hooks.py, docs/architecture.md "Hooks") ----------------------------------------
# What annotate's and judges' services run of the apps above them, which they may not import, in
# call order. A name or path that does not resolve fails `manage.py check` and the first call.
HOOKS = {
    # Before a new claim: the gold-accuracy pause.
    "claim_gates": ["calibration.hooks.gold_pause_gate"],
    # Before a campaign's settings change: the frozen study plan's refusals.
    "settings_guards": ["calibration.hooks.study_plan_guard"],
    # After a submission is committed: the active sampler when due, then the report computed ahead.
    "after_submit": ["calibration.tasks.sample_when_due", "calibration.tasks.report_warm_after_submission"],
    # After a judge run has ended: the report computed ahead.
    "after_run": ["calibration.tasks.report_warm_after_run"],
}

# --- API schema ---------------------------------------------------------------------------------
# /api/schema/ (OpenAPI 3, YAML or ?format=json) and /api/schema/docs/ (Swagger UI, served from
# the drf-spectacular-sidecar package through the static files: no CDN).
SPECTACULAR_SETTINGS = {
    "TITLE": "Pairwise API",
    "DESCRIPTION": "Side-by-side annotation and LLM-judge calibration: annotators' work and researchers' reads. "
    "Authenticate with the session (CSRF enforced) or `Authorization: Token <key>` (`manage.py drf_create_token`).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/",
    "PATH_CONVERTER_OVERRIDES": {"id": int},
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Cache -------------------------------------------------------------------------------------
# One cache for every process (gunicorn's workers, the task worker, the commands), so that a
# calibration report computed by one serves all (calibration/cache.py): Django's database
# cache by default (its table is made by calibration's migration 0001), Redis when REDIS_URL is set.
CACHE_TABLE = "pairwise_cache"
REDIS_URL = env_redis_url("REDIS_URL")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": CACHE_TABLE,
            # A report of a big campaign is one entry of a few MB: keep a few hundred at most.
            "OPTIONS": {"MAX_ENTRIES": 500},
        }
    }

# Background work (judge runs) is queued in the database; `manage.py db_worker` runs it.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# Articles larger than this are refused at import with a message naming the file.
MAX_ARTICLE_BYTES = env_int("MAX_ARTICLE_BYTES", 2 * 1024 * 1024, minimum=1)
# Uploads in the browser (benchmarks, rubrics, labels files): the largest file accepted, and for a
# benchmark's zip the most it may unpack to and its most members (docs/how-to/upload-in-the-browser.md).
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 200 * 1024 * 1024, minimum=1)
UPLOAD_ZIP_MAX_BYTES = env_int("UPLOAD_ZIP_MAX_BYTES", 1024 * 1024 * 1024, minimum=1)
UPLOAD_ZIP_MAX_MEMBERS = env_int("UPLOAD_ZIP_MAX_MEMBERS", 20_000, minimum=1)

# Bootstrap rounds behind every confidence interval on the dashboard and in the API.
CALIBRATION_ROUNDS = env_int("CALIBRATION_ROUNDS", 1000, minimum=0, maximum=100_000)
# The dashboard's report is computed in a background thread of the web process, never in the request
# (calibration/report/jobs.py). The test suite turns it off (tests/conftest.py): a thread cannot see
# a test's open transaction; the tests of the background itself turn it on again.
CALIBRATION_BACKGROUND = True

# --- Judges' keys and outbound calls (README "Security") -------------------------------------------
# The variables a judge may read its key from beyond names ending in _API_KEY (never SECRET_KEY or
# DATABASE_URL: a judge sends its key to its base URL).
JUDGE_API_KEY_ENVS = env_variable_names("JUDGE_API_KEY_ENVS", "")
# Endpoints configured on the server, `name base_url KEY_VARIABLE`: staff who are not superusers
# give a judge one of these, never a URL or a key variable of their own.
JUDGE_ENDPOINTS = env_endpoints("JUDGE_ENDPOINTS", "openai https://api.openai.com/v1 OPENAI_API_KEY", key_variables=JUDGE_API_KEY_ENVS)
# The hosts any judge's base URL may name (superusers' too); unset: the configured endpoints' hosts.
JUDGE_BASE_URL_HOSTS = env_hosts("JUDGE_BASE_URL_HOSTS", [urlsplit(endpoint["base_url"]).hostname for endpoint in JUDGE_ENDPOINTS])
# Judge connections refuse loopback, private, link-local (cloud metadata) and other non-public
# addresses, checked on the address each connection resolves to, except these (e.g. 127.0.0.1 for a
# model served on this machine).
JUDGE_ALLOW_ADDRESSES = env_networks("JUDGE_ALLOW_ADDRESSES", "")
# Batch runs (judges/batch.py): lines per batch file (OpenAI's limit is 50,000) and seconds between polls.
JUDGE_BATCH_MAX_LINES = env_int("JUDGE_BATCH_MAX_LINES", 50_000, minimum=1)
JUDGE_BATCH_POLL_SECONDS = env_int("JUDGE_BATCH_POLL_SECONDS", 10, minimum=1)

PUBLIC_BASE_URL = env_url("PUBLIC_BASE_URL", "")
