"""Where the `sam` command (and `Config.from_env` callers) find SAM and the token.

Order, first wins: the environment (`SAM_URL`, `SAM_TOKEN`), then the config file
(`$SAM_CONFIG`, else `$XDG_CONFIG_HOME/sam/config.toml`, else `~/.config/sam/config.toml`):

    url = "http://127.0.0.1:8000"
    token = "sam_…"

Keep the file private (chmod 600): it holds a secret.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


class ConfigError(Exception):
    """The config file cannot be read, or no token is set anywhere."""


@dataclass(frozen=True)
class Config:
    url: str
    token: str
    source: str  # where the token came from, for messages


def config_path() -> Path:
    if os.environ.get("SAM_CONFIG"):
        return Path(os.environ["SAM_CONFIG"]).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "sam" / "config.toml"


def _read_file(path: Path) -> dict[str, str]:
    if not path.is_file():
        if os.environ.get("SAM_CONFIG"):
            raise ConfigError(f"SAM_CONFIG names {path}, which is not a file")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from error
    return {key: str(value) for key, value in data.items() if key in {"url", "token"}}


def load_config(*, url: str | None = None) -> Config:
    """The URL (an explicit `url` first) and token to use; ConfigError when there is no token."""
    path = config_path()
    from_file = _read_file(path)
    token = os.environ.get("SAM_TOKEN") or from_file.get("token")
    if not token:
        raise ConfigError(f"no token: set SAM_TOKEN or put token = \"sam_…\" in {path}")
    source = "SAM_TOKEN" if os.environ.get("SAM_TOKEN") else str(path)
    resolved = url or os.environ.get("SAM_URL") or from_file.get("url") or DEFAULT_URL
    return Config(url=resolved.rstrip("/"), token=token, source=source)
