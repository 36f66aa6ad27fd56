"""Summarisers turn an execution's log or a thinking chain into a short narrative.

`base` holds the interface, `extractive` the default (deterministic, offline), and
`openai_chat` the optional OpenAI-compatible chat endpoint; `registry` picks one from
settings and falls back to the extractive summary when the endpoint fails.
"""
