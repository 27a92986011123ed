"""Settings come from environment variables only; see README "Configuration"."""

import ipaddress
import os
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {raw!r}")


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise ImproperlyConfigured(f"{name} must be a whole number of at least {minimum}, got {raw!r}")
    return value


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
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        # A fixed key would let anyone forge sessions on a public server.
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-used-when-DEBUG-is-on"
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
    "django_htmx",
    "django_tasks_db",
    "axes",
    "annotate",
    "judges",
    "calibration",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files straight from STATIC_ROOT (collected and hashed), before any session or database work.
    "whitenoise.middleware.WhiteNoiseMiddleware",
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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_health_checks=True,
    )
}
# Seconds a connection is kept for the next request: saves PostgreSQL a handshake each time, while
# an SQLite file is cheap to open. Checked before reuse, so a restarted database costs no error.
DATABASES["default"]["CONN_MAX_AGE"] = env_int(
    "CONN_MAX_AGE", 0 if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3" else 60
)
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

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
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
# `manage.py axes_reset_username`). Colleagues behind the same address log in as usual.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15)) or None
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
# Behind the proxy every request comes from the proxy's address.
AXES_CLIENT_IP_CALLABLE = client_ip_behind_proxy if TRUST_PROXY_HEADERS else None

LOG_LEVEL = os.environ.get("LOG_LEVEL", "WARNING").strip().upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    raise ImproperlyConfigured(f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, got {LOG_LEVEL!r}")
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
    # JSON with a nesting limit and the same NUL/surrogate checks as forms.
    "DEFAULT_PARSER_CLASSES": [
        "annotate.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}

# Background work (judge runs) is queued in the database; `manage.py db_worker` runs it.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# Articles larger than this are refused at import with a message naming the file.
MAX_ARTICLE_BYTES = int(os.environ.get("MAX_ARTICLE_BYTES", str(2 * 1024 * 1024)))

# Bootstrap rounds behind every confidence interval on the dashboard and in the API.
CALIBRATION_ROUNDS = int(os.environ.get("CALIBRATION_ROUNDS", "1000"))

# Judges: the API key variables a judge may name beyond *_API_KEY, and the hosts its base URL may
# point at (empty: any). A key is sent to the base URL, so this server's own secrets never qualify.
JUDGE_API_KEY_ENVS = env_list("JUDGE_API_KEY_ENVS", "")
if {"SECRET_KEY", "DATABASE_URL"} & set(JUDGE_API_KEY_ENVS):
    raise ImproperlyConfigured("JUDGE_API_KEY_ENVS must not name SECRET_KEY or DATABASE_URL: a judge sends its key to its base URL")
JUDGE_BASE_URL_HOSTS = [host.lower() for host in env_list("JUDGE_BASE_URL_HOSTS", "")]
# Batch runs (judges/batch.py): lines per batch file (OpenAI's limit is 50,000) and seconds between polls.
JUDGE_BATCH_MAX_LINES = env_int("JUDGE_BATCH_MAX_LINES", 50_000, minimum=1)
JUDGE_BATCH_POLL_SECONDS = env_int("JUDGE_BATCH_POLL_SECONDS", 10, minimum=1)

PUBLIC_BASE_URL = os.environ.get("PUBLIC_BASE_URL", "").rstrip("/")
