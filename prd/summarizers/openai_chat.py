"""A summariser for any OpenAI-compatible /chat/completions endpoint (hosted APIs, Ollama, vLLM)."""

from __future__ import annotations

import httpx

from governance.defuse import defuse
from prd.summarizers.base import Digest, SummarizerError
from prd.summarizers.extractive import clip

SYSTEM_PROMPT = (
    "You summarise the work log of a software project for the engineer who picks it up next. "
    "Write one compact narrative paragraph in plain prose: what was built, every decision and "
    "its reason, what went wrong and what fixed it, and what is left. Use only the facts given; "
    "keep requirement ids as written. At most {max_chars} characters."
)
# A thinking chain is one line of reasoning, not a work log: the summary is read by an
# agent facing a similar question later, so it leads with the conclusion and keeps the
# approaches that were revised (why they were dropped is the reusable part).
CHAIN_SYSTEM_PROMPT = (
    "You summarise an agent's step-by-step reasoning on one question for an agent that meets "
    "a similar question later. Write one compact paragraph in plain prose: the question, the "
    "conclusion reached, each approach that was revised and what replaced it, and any branch "
    "explored. Use only the thoughts given; do not add advice of your own. "
    "At most {max_chars} characters."
)
PROMPTS = {"execution": SYSTEM_PROMPT, "thinking_chain": CHAIN_SYSTEM_PROMPT}


class OpenAIChatSummarizer:
    """POSTs {"model", "messages", "temperature": 0} to `<base_url>/chat/completions`."""

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout: float = 20.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not base_url:
            raise ValueError("SAM_SUMMARIZER_URL is required for the openai summariser.")
        if not model:
            raise ValueError("SAM_SUMMARIZER_MODEL is required for the openai summariser.")
        self.name = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def summarise(self, digest: Digest, *, max_chars: int) -> str:
        payload = {
            "model": self.name,
            "temperature": 0,
            # Roughly four characters a token, with room to finish the last sentence.
            "max_tokens": max(64, max_chars // 3),
            "messages": [
                {"role": "system", "content": PROMPTS[digest.kind].format(max_chars=max_chars)},
                # The digest quotes what the execution stored: defused, like every text
                # SAM hands a model (docs/security.md, "Stored text handed to models").
                {"role": "user", "content": defuse(digest.as_markdown())[0]},
            ],
        }
        try:
            response = self._client.post("/chat/completions", json=payload)
        except httpx.HTTPError as exc:
            raise SummarizerError(f"chat endpoint unreachable: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise SummarizerError(f"chat endpoint answered HTTP {response.status_code}")
        try:
            text = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise SummarizerError("chat endpoint answered with an unexpected body") from exc
        if not isinstance(text, str) or not text.strip():
            raise SummarizerError("chat endpoint answered with an empty summary")
        return clip(text, max_chars)
