"""Settings for the test suite: the same stack, tuned for speed and determinism."""

import os

from samsite.settings.base import *
from samsite.settings.base import Q_CLUSTER

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tasks run inline at enqueue; the few tests about the queue start a real cluster.
Q_CLUSTER = {**Q_CLUSTER, "sync": True}
SAM_EMBEDDING_DIMS = 384
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"null": {"class": "logging.NullHandler"}},
    "root": {"handlers": ["null"], "level": "WARNING"},
}

# Lets several test runs share one database server, each with its own test database.
DATABASES["default"]["TEST"] = {
    "NAME": f"test_{DATABASES['default']['NAME']}{os.environ.get('SAM_TEST_DB_SUFFIX', '')}"
}
