"""Typed readers for settings that come from the environment."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


def secret_key(var_dir: Path) -> str:
    """SECRET_KEY from the environment, else one generated once into var/ for local runs.

    The file is created with mode 0600 and lives in the git-ignored var/ folder, so a
    local install never shares or commits its key.
    """
    from_env = os.environ.get("SECRET_KEY") or os.environ.get("SAM_SECRET_KEY")
    if from_env:
        return from_env
    key_file = var_dir / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key


# Model servers people run on their own machine, each OpenAI-compatible at its usual address.
EXTRACTOR_SERVERS = {
    "ollama": "http://localhost:11434/v1",
    "llamacpp": "http://localhost:8080/v1",  # llama.cpp's llama-server
    "vllm": "http://localhost:8000/v1",
    "openai": "",  # any other endpoint: give SAM_EXTRACTOR_URL as well
}


def extractor_preset(name: str) -> dict[str, str]:
    """`ollama:llama3.1:8b` (server:model, the model may hold colons) as the extractor's
    provider, URL and model; {} when the variable is unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return {}
    server, _, model = raw.partition(":")
    if server not in EXTRACTOR_SERVERS or not model:
        raise ImproperlyConfigured(f"{name} must be <server>:<model> with a server among "
                                   f"{', '.join(EXTRACTOR_SERVERS)}, got {raw!r}")
    return {"PROVIDER": "openai", "URL": EXTRACTOR_SERVERS[server], "MODEL": model}
