"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
application = get_wsgi_application()

# numpy's default BLAS pool takes every core in every web process; several processes
# recalling at once then fight over the cores. gunicorn's post_fork hook
# (samsite/gunicorn_conf.py) sizes the pool first; this covers any other WSGI server.
from memories.embeddings.worker_threads import limit_web_threads  # noqa: E402

limit_web_threads(force=False)
