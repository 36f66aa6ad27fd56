"""gunicorn settings for serving SAM: `gunicorn -c samsite/gunicorn_conf.py samsite.wsgi`.

Every value comes from the environment (the README's configuration table), so one file
serves every install. Any gunicorn command-line option still overrides it.
"""

from __future__ import annotations

import os

from samsite.settings.env import env_int, env_str

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")

wsgi_app = "samsite.wsgi:application"
bind = [f"{env_str('SAM_HOST', '127.0.0.1')}:{env_int('SAM_PORT', 8000)}"]

# Two processes of two threads each: recall is CPU-bound (query embedding, scoring) and
# the threads cover the time a request waits on Postgres.
workers = env_int("SAM_WEB_WORKERS", 2)
threads = env_int("SAM_WEB_THREADS", 2)
# A bulk import of 1000 memories takes a few seconds; 60 s only ends a stuck request.
timeout = env_int("SAM_WEB_TIMEOUT", 60)
# On SIGTERM (deploys), requests in flight get this long to finish.
graceful_timeout = env_int("SAM_WEB_GRACEFUL_TIMEOUT", 30)
keepalive = 5

# gunicorn's control socket defaults to one path per user (~/.gunicorn/gunicorn.ctl),
# so a second instance (another install, a benchmark, a test server) takes it over from
# the first. SAM needs none; set SAM_GUNICORN_CONTROL_SOCKET to a path of this
# instance's own to use `gunicornc`.
_control_socket = env_str("SAM_GUNICORN_CONTROL_SOCKET")
if _control_socket:
    control_socket = _control_socket
else:
    control_socket_disable = True

# Access log on stdout, with the time taken and the request id SAM puts on every
# response (governance/audit/middleware.py), so a slow request can be found in the audit.
accesslog = env_str("SAM_WEB_ACCESS_LOG", "-") or None
access_log_format = '%(h)s "%(r)s" %(s)s %(b)sB %(M)sms rid=%({x-request-id}o)s'


def post_fork(server, worker) -> None:
    """Size the new worker's BLAS pool for the number of workers gunicorn really runs."""
    from memories.embeddings.worker_threads import limit_web_threads

    limit_web_threads(workers=server.cfg.workers, threads=server.cfg.threads)


def child_exit(server, worker) -> None:
    """With PROMETHEUS_MULTIPROC_DIR set, a dead worker's live gauges leave /metrics
    (its counters and histograms stay in the sums, as Prometheus expects)."""
    import os

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
