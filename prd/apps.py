from django.apps import AppConfig


class PrdConfig(AppConfig):
    name = "prd"
    verbose_name = "PRD executions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from governance import retention
        from prd.retention import SPACE_DATA
        from prd.summarizers.registry import check_summarizer

        # Governance forgets PRD work without naming it (docs/architecture.md).
        retention.register_space_data(SPACE_DATA)

        # A misconfigured summariser only degrades compaction to the extractive summary,
        # so it would go unnoticed; `manage.py check` and every start report it.
        checks.register(check_summarizer, checks.Tags.compatibility)
