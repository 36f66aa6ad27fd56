from django.apps import AppConfig


class PrdConfig(AppConfig):
    name = "prd"
    verbose_name = "PRD executions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core import checks

        from governance import retention
        from prd.retention import SPACE_DATA
        from prd.sessions.selectors import pack_context
        from prd.summarizers.registry import check_summarizer
        from retrieval.packs import register_pack_context

        # Governance forgets PRD work without naming it (docs/architecture.md).
        retention.register_space_data(SPACE_DATA)
        # Context packs show sessions' tasks, decisions and changed files, and leave out
        # cards that failed their checks; recall, below this app, never imports it.
        register_pack_context(pack_context)

        # A misconfigured summariser only degrades compaction to the extractive summary,
        # so it would go unnoticed; `manage.py check` and every start report it.
        checks.register(check_summarizer, checks.Tags.compatibility)
