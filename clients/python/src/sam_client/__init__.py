"""A typed client for SAM's REST API, sync and async, and the `sam` command (sam_client.cli)."""

from sam_client import models
from sam_client.client import AsyncSamClient, SamClient
from sam_client.config import Config, load_config
from sam_client.errors import (
    AuthenticationError,
    Conflict,
    NotFound,
    PermissionDenied,
    RateLimited,
    SamError,
    ServerError,
    TransportError,
    ValidationError,
)

__all__ = [
    "AsyncSamClient", "AuthenticationError", "Config", "Conflict", "NotFound", "PermissionDenied",
    "RateLimited", "SamClient", "SamError", "ServerError", "TransportError", "ValidationError",
    "load_config", "models",
]
