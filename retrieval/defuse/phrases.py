"""Text that addresses a model instead of describing something: replaced by a marker.

Matching runs on a folded shadow of the text (NFKC, lower case, accents dropped, Cyrillic
and Greek look-alikes read as Latin), so "ＩＧＮＯＲＥ previous instructions" or "іgnore"
with a Cyrillic і are caught; what is replaced is the original span. The phrases are
narrow on purpose: "ignore the rules in .editorconfig" or "nginx can act as a reverse
proxy" are ordinary notes and stay.
"""

from __future__ import annotations

import re
import unicodedata

MARKER = "⟦instruction removed⟧"

_CONFUSABLES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
    "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "α": "a", "ο": "o", "ι": "i", "ν": "v", "τ": "t",
    "κ": "k", "ρ": "p", "υ": "u", "ε": "e", "ѵ": "v", "ɡ": "g", "ɑ": "a", "ⅰ": "i", "ı": "i",
})

# Words that, between a verb like "ignore" and "instructions", make the phrase address the
# reader's own orders; "the" or "my" alone do not ("ignore the rules in .editorconfig").
_WEAK = r"(?:the|this|these|those|its|of|my|our|other)"
_STRONG = (r"(?:all|any|every|each|your|previous|prior|above|earlier|preceding|former|foregoing|initial|"
           r"original|system|safety|developer|default|preset|given|built[- ]in|programmed|provided|"
           r"stated|mentioned|existing|current|old)")
_QUALIFIER = rf"(?:{_WEAK}[\s,]+)*{_STRONG}(?:[\s,]+(?:{_WEAK}|{_STRONG}))*"
_TARGET = (r"(?:instructions?|prompts?|rules|guidelines|directions|directives|commands|context|messages|"
           r"constraints|restrictions|polic(?:y|ies)|programming|guardrails|safeguards|filters|training|"
           r"configuration|settings|orders|conversation|everything|system\s+message)")
_AI = r"(?:ai|a\.i\.|assistant|llm|language\s+model|model|agent|chatbot|bot|gpt|claude|copilot)"
_PATTERNS = [
    # "ignore all previous instructions", "disregard the above", "forget your rules"
    rf"\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|abandon|discard|neglect|dismiss|"
    rf"set\s+aside|throw\s+out|pay\s+no\s+attention\s+to|do\s+not\s+follow|don'?t\s+follow|stop\s+following)"
    rf"\s+{_QUALIFIER}[\s,]+{_TARGET}\b",
    rf"\b(?:ignore|disregard|forget|override|bypass)\s+(?:the\s+|your\s+)?(?:instructions|rules|guidelines|"
    rf"prompt|prompts)\s+(?:above|before|you\s+(?:were|have\s+been)\s+given)\b",
    rf"\b(?:ignore|disregard|forget)\s+(?:(?:all|everything|anything)\s+)?(?:(?:you\s+(?:were|have\s+been)\s+"
    rf"(?:told|given|instructed))|above|before\s+this|that\s+came\s+before|said\s+(?:above|before))\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\b(?=\s*(?:[.!,:;]|and\b|$))",
    # new identities
    r"\byou\s+are\s+(?:now|no\s+longer|henceforth|from\s+now\s+on)\b",
    r"\bfrom\s+now\s+on,?\s+(?:you|your|act|respond|answer|reply|always|never|only|ignore|do)\b",
    r"\b(?:you\s+(?:will|must|shall|should|are\s+to|need\s+to)\s+|please\s+|now\s+)(?:act|behave|respond|"
    r"answer|reply)\s+(?:as|like)\s+(?:if\b|an?\s+|the\s+|my\s+)",
    r"\b(?:pretend|imagine)\s+(?:to\s+be|(?:that\s+)?you(?:'re|\s+are))\b",
    r"\b(?:roleplay|role-play)\s+as\b",
    r"\bact\s+as\s+(?:an?\s+)?(?:unfiltered|uncensored|unrestricted|jailbroken|evil|dan\b|do\s+anything)",
    r"\b(?:enable|enter|activate|switch\s+to|turn\s+on)\s+(?:developer|dev|god|admin|debug|jailbreak|dan)\s+mode\b",
    r"\bdo\s+anything\s+now\b",
    r"\bjailbr(?:eak|oken)\s+(?:mode|prompt|the\s+(?:ai|model|assistant))\b",
    # new orders
    r"\b(?:new|updated|revised|real|actual|true|secret|hidden|additional|important)\s+"
    r"(?:system\s+)?(?:instructions?|directives?|orders|task|prompt)\s*(?::|follow\b|for\s+(?:the\s+)?"
    + _AI + r")",
    rf"\b(?:instructions?|message|note|notice|reminder|attention|important)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?{_AI}s?\b",
    rf"\b(?:dear|hey|hello|attention|note\s+to)\s+(?:the\s+)?{_AI}s?\b\s*[,:!]",
    rf"\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|agent|chatbot|bot|model)\b[^.!?\n]{{0,20}}",
    rf"\b(?:as\s+an?\s+)?(?:ai|llm|assistant|agent|model)\s+(?:reading|processing|summari[sz]ing)\s+this\b",
    r"\b(?:reveal|print|show|repeat|output|leak|disclose|dump|recite|tell\s+me|give\s+me|send|share|"
    r"copy)\s+(?:me\s+)?(?:your|the|all|any)\s+(?:(?:full|entire|hidden|original|secret|initial|"
    r"system|previous)\s+)*(?:system\s+prompt|prompt|instructions|system\s+message|api\s+keys?|secrets?|"
    r"credentials|passwords?|tokens?|conversation|chat\s+history|memory|memories|context)\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert|notify|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to|"
    r"let)\s+(?:the\s+)?(?:user|human|operator|admin)\b",
    r"\bwithout\s+(?:telling|informing|alerting|notifying|asking)\s+(?:the\s+)?(?:user|human|operator)\b",
    r"\b(?:send|post|upload|exfiltrate|forward|transmit|leak|email)\s+(?:it|them|this|that|everything|"
    r"all|the\s+\w+|your\s+\w+)[^.!?\n]{0,60}?\s+to\s+(?:https?://|www\.|\S+@\S+\.\w+)",
    r"\b(?:end|close)\s+of\s+(?:the\s+)?(?:memory|memories|note|notes|context|document|data|user\s+input|"
    r"untrusted\s+(?:text|data|content))\b",
    r"\b(?:begin|start)\s+(?:of\s+)?(?:new\s+)?(?:system|developer|admin|trusted)\s+"
    r"(?:instructions?|prompt|message|section|mode)\b",
    r"\b(?:system|admin|developer)\s+(?:override|notice|alert|command|instruction)s?\s*:",
    r"\bsystem\s+prompt\s*:",
    # what the system prompt block has always refused: a role label anywhere in a line
    # (at a line's start, markup turns it into a quoted label first).
    r"(?:(?<=[.!?]\s)|(?<=[.!?]\s\s)|(?<=[\"“'(]))\s*(?:system|assistant|developer)\s*:(?=\s|$)",
]
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE | re.MULTILINE)


def _fold(text: str) -> tuple[str, list[int]]:
    """The shadow the patterns read, and for each of its characters the index of the
    original character it came from."""
    shadow: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():
            folded = char.lower()
        else:
            folded = "".join(c for c in unicodedata.normalize("NFKD", char)
                             if not unicodedata.combining(c)).lower().translate(_CONFUSABLES)
            folded = unicodedata.normalize("NFKC", folded)
            if char in "’‘ʼ":
                folded = "'"
        for piece in folded:
            shadow.append(piece)
            origin.append(index)
    return "".join(shadow), origin


def neutralise(text: str) -> tuple[str, list[str]]:
    """`text` with each instruction-like phrase replaced by MARKER; findings ["instruction"]
    when any was. Repeats until none is left, even one that a replacement joined."""
    found = False
    for _ in range(10):
        shadow, origin = _fold(text)
        spans = [(origin[m.start()], origin[m.end() - 1] + 1) for m in _INSTRUCTION.finditer(shadow)
                 if m.end() > m.start()]
        if not spans:
            break
        found = True
        for start, end in reversed(spans):
            text = text[:start] + MARKER + text[end:]
    return text, ["instruction"] if found else []
