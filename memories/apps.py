from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from memories.tasks import recover_on_worker_start
        from memories.worker_threads import limit_worker_threads

        # Process set-up, not business logic: each worker sizes its BLAS pool as it starts.
        post_spawn.connect(limit_worker_threads, dispatch_uid="sam_worker_blas_threads")
        # Each new worker drains embeddings its predecessors' lost jobs left pending.
        post_spawn.connect(recover_on_worker_start, dispatch_uid="sam_worker_embedding_recovery")
