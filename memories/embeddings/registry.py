"""The provider chosen by settings (SAM_EMBEDDING_PROVIDER), built once per process."""

from __future__ import annotations

import functools

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from memories.embeddings.base import EmbeddingProvider


@functools.cache
def get_provider() -> EmbeddingProvider:
    config = settings.SAM_EMBEDDING
    kind = config["PROVIDER"]
    if kind == "local":
        from memories.embeddings.local import LocalMiniLMProvider

        provider: EmbeddingProvider = LocalMiniLMProvider()
    elif kind == "openai":
        from memories.embeddings.openai_compatible import OpenAICompatibleProvider

        provider = OpenAICompatibleProvider(
            base_url=config["URL"], model=config["MODEL"], dims=settings.SAM_EMBEDDING_DIMS,
            api_key=config["API_KEY"], timeout=config["TIMEOUT_SECONDS"],
        )
    else:
        raise ImproperlyConfigured(f"Unknown SAM_EMBEDDING_PROVIDER {kind!r} (local | openai).")
    slowdown = float(config.get("SLOWDOWN", 1.0))
    if slowdown > 1.0:
        from memories.embeddings.slowed import SlowedProvider

        provider = SlowedProvider(provider, factor=slowdown)
    if provider.dims != settings.SAM_EMBEDDING_DIMS:
        raise ImproperlyConfigured(
            f"The {provider.name} model gives {provider.dims}-dim vectors but the store holds "
            f"{settings.SAM_EMBEDDING_DIMS}; run `manage.py sam_reembed --dims {provider.dims}`."
        )
    return provider


def load_model() -> None:
    """The configured provider, its model loaded where it runs here (the local one); a
    remote provider is not called (a probe must not cost an API call). Raises EmbeddingError
    or ImproperlyConfigured when it cannot be."""
    loader = getattr(get_provider(), "load", None)
    if loader is not None:
        loader()


@receiver(setting_changed, dispatch_uid="memories.embeddings.reset_provider")
def _reset_provider(*, setting: str, **kwargs) -> None:
    # Tests swap providers with override_settings; drop the cached one when they do.
    if setting in {"SAM_EMBEDDING", "SAM_EMBEDDING_DIMS"}:
        get_provider.cache_clear()


def configured_model_name() -> str:
    """The model new vectors come from, without loading it."""
    from memories.embeddings.local import LocalMiniLMProvider

    config = settings.SAM_EMBEDDING
    if config["PROVIDER"] == "local":
        return LocalMiniLMProvider.name
    return config["MODEL"]
