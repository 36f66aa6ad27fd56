from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The bottom layer: spaces, domain errors, the actor type, jobs on commit, the
    cross-app change signal. It imports nothing of the project (docs/architecture.md)."""

    name = "core"
    label = "core"
    verbose_name = "Spaces"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django_q.signals import post_execute_in_worker

        from core import checks  # noqa: F401  (registers the database checks)
        from core.job_metrics import observe_job

        post_execute_in_worker.connect(observe_job, dispatch_uid="sam_job_duration")
