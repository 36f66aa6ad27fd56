"""The `Idempotency-Key` header on create endpoints (see governance.idempotency)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from governance import idempotency

# What to keep of a first answer (None: nothing was written, forget the key), and how to
# answer a replay from what was kept.
Keep = Callable[[Response], dict[str, Any] | None]
Replay = Callable[[Request, dict[str, Any]], Response]

HEADER_PARAMETER = OpenApiParameter(
    name=idempotency.HEADER, location=OpenApiParameter.HEADER, required=False,
    type={"type": "string", "pattern": idempotency.KEY_REGEX, "minLength": 1,
          "maxLength": idempotency.MAX_KEY_LENGTH},
    description="Any unique string of visible ASCII characters (at most 255), such as a UUID. "
                "A retry with the same key and body within 24 h replays the first answer without "
                "writing; the same key with another body answers 409 idempotency_key_reused.",
)


def idempotent(endpoint: str, *, keep: Keep, replay: Replay):
    """Decorate a view method so that requests carrying the header are answered once."""

    def decorate(view_method):
        @functools.wraps(view_method)
        def wrapper(self, request: Request, *args, **kwargs) -> Response:
            key = idempotency.clean_key(request.headers.get(idempotency.HEADER))
            if key is None or not request.user.is_authenticated:
                return view_method(self, request, *args, **kwargs)
            digest = idempotency.request_digest(endpoint=endpoint, body=request.data)
            # The claim commits with the write or not at all (see governance.idempotency).
            with transaction.atomic():
                claim = idempotency.key_claim(user=request.user, key=key, endpoint=endpoint,
                                              digest=digest)
                if claim.replay:
                    response = replay(request, claim.row.answer)
                    response.status_code = claim.row.status_code
                    response["Idempotent-Replayed"] = "true"
                    return response
                response = view_method(self, request, *args, **kwargs)
                answer = keep(response)
                if answer is None:
                    idempotency.key_release(claim)
                else:
                    idempotency.key_record(claim, status_code=response.status_code, answer=answer)
            return response

        return wrapper

    return decorate
