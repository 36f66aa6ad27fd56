"""Decisions the assistant proposed and the user accepted (seed 002: a decision is a choice
made for the project; the assistant alone decides nothing).

A plan or a recommendation on the assistant's side (Claude Code's ExitPlanMode with its
`plan`, or a reply laying out a plan, a recommendation or options) becomes a decision only
when the user takes it up:

- the user's next message opens by accepting it ("yes do it", "go ahead", "sounds good, ship
  it", "let's do option 2"), or Claude Code reports the plan approved ("User has approved
  your plan") and the user does not then turn it down;
- or, in a chat (ChatGPT, Cursor), the user says they acted on it ("ok I went with your second
  option, works").

The memory is the accepted choice, short: the option the user picked, or the plan's key
sentence. A suggestion the user turned down, ignored or replaced with a choice of their own is
no decision, and when the user's accepting words state the decision themselves, the rules that
read the user (memories.capture.extract) keep it in the user's words instead: the user's own
words outrank the assistant's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.capture import extract
from memories.capture.exchanges import Exchange

KEY_CHARS = 300
_PLAN = re.compile(r"\b(?:I(?:'d| would)? (?:recommend|suggest|propose)|my recommendation|I'd go with|"
                   r"the best (?:option|approach|choice|way|fix)\b|here'?s (?:the|my) plan|"
                   r"the plan(?: is)?:|recommended approach|option (?:1|2|a|b|one|two)\b)|^\s*plan:",
                   re.IGNORECASE | re.MULTILINE)
# The sentence of a plan that says what it is, and the lead-in it drops ("Here's the plan: …").
_LEAD_IN = re.compile(r"^(?:so,? )?(?:here'?s (?:the|my) plan|the plan(?: is)?|plan|"
                      r"my recommendation(?: is)?|"
                      r"I(?:'d| would)? (?:recommend|suggest|propose)(?: that| we| you)*|"
                      r"I(?:'d| would) (?=go with))\s*[:,]?\s*",
                      re.IGNORECASE)
_OPTION_LINE = re.compile(r"^\s*(?:#{1,4}\s*)?(?:[-*]\s*)?(?:\*\*)?(?:option\s+)?(\d+|[A-Da-d])"
                          r"\s*[.):—–-]+\s*(?:\*\*)?\s*(\S.*)$", re.IGNORECASE | re.MULTILINE)
_PICKED = re.compile(r"\boption\s+#?(\d+|[a-d])\b|"
                     r"\b(?:the|your)\s+(first|second|third|fourth|1st|2nd|3rd|4th|last)\b"
                     r"(?:\s+(?:one|option|approach|suggestion|idea|way))?|#(\d)\b", re.IGNORECASE)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
# An opening that accepts: words of assent and nothing else, or a choice of the offer.
_ASSENT = re.compile(r"(?:(?:ok(?:ay)?|yes|yep|yeah|yup|sure|great|perfect|cool|nice|alright|agreed|"
                     r"approved|lgtm|good|fine|excellent|love it|do it|go|go ahead|go for it|ship it|"
                     r"proceed|sounds (?:good|great|right|fine)|looks (?:good|great|right|fine)|"
                     r"makes sense|that works|works for me|make it so|please do|let'?s do it|"
                     r"let'?s do that|let'?s go|do that|pls|please|thanks)\s*)+", re.IGNORECASE)
_TAKES = re.compile(r"(?:(?:ok(?:ay)?|yes|yeah|sure|great|perfect)\s+)?"
                    r"(?:let'?s (?:do|go with|go for|use|take)|(?:i'?ll|we'?ll) (?:go with|take)|go with) "
                    r"(?:it|that|this|option \w+|the \w+(?: one| option| approach| plan)?|"
                    r"your \w+(?: one| option| suggestion| approach| plan)?|plan \w+)\b", re.IGNORECASE)
_NAMES = re.compile(r"(?:(?:ok(?:ay)?|yes|yeah|sure|alright|fine)\s+)?(?:go with |use )?"
                    r"([\w.+#-]+(?: [\w.+#-]+)?)"
                    r"(?: it is| sounds (?:right|good|great)| looks (?:right|good)| please| then)",
                    re.IGNORECASE)
_REFUSED = re.compile(r"\b(?:no|nope|not|don'?t|instead|rather|hold off|wait|but|actually|hmm+|never ?mind|"
                      r"skip)\b", re.IGNORECASE)
# "ok I went with your second option, works": a chat answer the user acted on.
_ACTED = re.compile(r"\b(?:i|we) (?:went with|used|picked|chose|took|tried|applied|followed|did) "
                    r"(?:your|the) (?:\w+ )?(?:option|suggestion|approach|one|idea|advice|recommendation|"
                    r"plan|fix)\b|\bdid what you (?:said|suggested)\b", re.IGNORECASE)
_DID_NOT_WORK = re.compile(r"\b(?:didn'?t|doesn'?t|did not|does not) (?:work|help)|\bfail(?:s|ed)?\b|"
                           r"\bbroke\b|\bsame error\b", re.IGNORECASE)
_APPROVED = re.compile(r"\bUser has approved your plan\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Offer:
    text: str  # the assistant's words laying out a plan or a recommendation, or ""
    options: dict[str, str]  # the options it numbered ("1" / "a" -> the option's words)
    plan: str  # ExitPlanMode's plan, or ""
    approved: str  # the tool result's words approving it, or ""
    approved_turn: str
    refused: bool  # the plan tool's result says the user rejected it


def decisions(exchanges: list[Exchange], *, start: int = 0) -> list[extract.Candidate]:
    """Decisions the user accepted, from exchange `start` on."""
    found = []
    for position, exchange in enumerate(exchanges):
        offer = _offer(exchange)
        following = exchanges[position + 1] if position + 1 < len(exchanges) else None
        if offer is None:
            continue
        candidate = _accepted(exchange, offer, following)
        if candidate is not None and candidate.exchange >= start:
            found.append(candidate)
    return found


def _offer(exchange: Exchange) -> _Offer | None:
    """The last plan or recommendation on the assistant's side of an exchange."""
    text, plan, approved, approved_turn, refused = "", "", "", "", False
    plan_call = ""
    options: dict[str, str] = {}
    for step in exchange.steps:
        if step.kind == "text" and (_PLAN.search(step.text) or _options(step.text)):
            text = step.text if _PLAN.search(step.text) else ""
            options = _options(step.text)
        elif step.call is not None and step.call.name == "ExitPlanMode":
            plan, plan_call = str(step.call.input.get("plan") or ""), step.call.id
            approved, refused = "", False
        elif step.result is not None and step.result.call_id == plan_call and plan_call:
            refused = step.result.is_error
            match = _APPROVED.search(step.result.text)
            approved, approved_turn = (match.group(0), step.turn) if match and not refused else ("", "")
    if not text and not plan and not options:
        return None
    return _Offer(text=text, options=options or _options(plan), plan=plan, approved=approved,
                  approved_turn=approved_turn, refused=refused)


def _options(text: str) -> dict[str, str]:
    """The options a reply lays out: numbered lines ("1. …", "Option B: …", "- **Retrofit** …"),
    or inline markers ("(1) … or (2) …")."""
    found: dict[str, str] = {}
    for line in _OPTION_LINE.finditer(text):
        found.setdefault(line.group(1).lower(), line.group(2))
    bullets = [m.group(1) for m in re.finditer(r"^\s*[-*]\s+(\S.*)$", text, re.MULTILINE)]
    if not found and len(bullets) >= 2:
        found = {str(n): bullet for n, bullet in enumerate(bullets, start=1)}
    if not found:
        parts = re.split(r"\((\d|[a-d])\)\s*", text)
        for marker, words in zip(parts[1::2], parts[2::2], strict=False):
            found.setdefault(marker.lower(), re.split(r"(?<=[.;])\s|,?\s+or$", words.strip())[0])
    return found if len(found) >= 2 else {}


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+|\n", text.strip(), maxsplit=1)[0].strip()


def _accepts(said: str, offer: _Offer) -> bool:
    sentence = _first_sentence(said)
    if not sentence or sentence.endswith("?") or _REFUSED.search(sentence):
        return False
    clause = re.split(r"[,.!;:]| - | — ", sentence, maxsplit=1)[0].strip()
    if _ASSENT.fullmatch(clause) or _TAKES.match(clause):
        return True
    # "vanilla-extract sounds right", "Squarespace it is": the user names one of the options.
    named = _NAMES.fullmatch(clause)
    return bool(named and _named_option(offer, named.group(1)))


def _accepted(exchange: Exchange, offer: _Offer, following: Exchange | None) -> extract.Candidate | None:
    said = following.user if following is not None else ""
    accepts = bool(said) and _accepts(said, offer)
    acted = bool(said) and bool(_ACTED.search(said)) and not _DID_NOT_WORK.search(said)
    # A bare list of options (no recommendation, no plan) is taken up only by naming one of them.
    if not offer.text and not offer.plan and not _picked_option(offer, said):
        accepts = acted = False
    if accepts or acted:
        if _states_its_own_decision(following, said):
            return None
        evidence = _first_sentence(said) if accepts else _acted_sentence(said)
        turn = following.turns[0] if following is not None and following.turns else ""
        index = following.index if following is not None else exchange.index
        return _candidate(offer, said, evidence, index, turn, confidence=0.8 if offer.plan else 0.75)
    # Approved in Claude Code's plan dialog, and not turned down in the next words.
    if offer.approved and not offer.refused and not (said and _REFUSED.search(_first_sentence(said))):
        return _candidate(offer, "", offer.approved, exchange.index, offer.approved_turn, confidence=0.75)
    return None


def _acted_sentence(said: str) -> str:
    match = _ACTED.search(said)
    if match is None:
        return _first_sentence(said)
    begin = max(said.rfind(".", 0, match.start()), said.rfind("\n", 0, match.start())) + 1
    ends = [i for i in (said.find(".", match.end()), said.find("\n", match.end())) if i >= 0]
    return said[begin:min(ends) if ends else len(said)].strip()


def _states_its_own_decision(following: Exchange | None, said: str) -> bool:
    """Whether the user's accepting sentence is itself a decision the user rules keep."""
    if following is None:
        return False
    own = Exchange(index=following.index, user=_first_sentence(said), assistant="")
    return any(c.kind == "decision" for c in extract.from_user(own))


def _candidate(offer: _Offer, said: str, evidence: str, index: int, turn: str, *,
               confidence: float) -> extract.Candidate:
    key = _picked_option(offer, said) or _key_sentence(offer)
    return extract.Candidate(
        kind="decision", category="fact", priority="high", confidence=confidence,
        title=f"A decision: {key[:80]}", content=f"Decided: {key}", evidence=evidence[:300], exchange=index,
        rule="accepted_plan", turn=turn)


def _one_line(text: str) -> str:
    flat = " ".join(text.replace("**", "").split()).strip(" :")
    return flat if len(flat) <= KEY_CHARS else flat[:KEY_CHARS - 1] + "…"


_STOPWORDS = frozenset({"the", "and", "with", "that", "this", "then", "your", "you", "mentioned", "route",
                        "option", "approach", "one", "just", "let's", "lets", "use", "take", "it's", "sounds",
                        "right", "good", "great", "please", "fine", "okay", "yeah", "sure", "go"})


def _named_option(offer: _Offer, said: str) -> str:
    """The one option whose words the user used ("the zustand route" -> the zustand option)."""
    words = {w for w in re.findall(r"[\w.+#-]{3,}", said.lower()) if w not in _STOPWORDS}
    hits = [text for text in offer.options.values() if words & set(re.findall(r"[\w.+#-]{3,}", text.lower()))]
    return _one_line(hits[0]) if len(hits) == 1 else ""


def _picked_option(offer: _Offer, said: str) -> str:
    """The option the user chose ("option 2", "your second one", "the zustand route"), as the
    assistant wrote it; "" when the user named none."""
    options = offer.options
    match = _PICKED.search(said)
    if not options or not said:
        return ""
    if match is None:
        return _named_option(offer, _first_sentence(said))
    word = (match.group(1) or match.group(2) or match.group(3)).lower()
    if word == "last":
        return _one_line(list(options.values())[-1])
    number = _ORDINALS.get(word)
    if number is not None:
        word = str(number) if str(number) in options else "abcd"[number - 1]
    return _one_line(options.get(word, ""))


def _key_sentence(offer: _Offer) -> str:
    """The sentence that says what was proposed: the reply's plan or recommendation sentence,
    else the plan's title, else its first line."""
    for sentence in re.split(r"(?<=[.!])\s+|\n+", offer.text):
        if _PLAN.search(sentence):
            key = _LEAD_IN.sub("", sentence.strip())
            if len(key.split()) >= 2:
                return _one_line(key)
    lines = [line.strip() for line in offer.plan.splitlines() if line.strip()]
    heading = next((line.lstrip("#").strip() for line in lines if line.startswith("#")), "")
    heading = _LEAD_IN.sub("", heading)
    if len(heading.split()) >= 3:
        return _one_line(heading)
    first = next((line for line in lines if not line.startswith("#")), "")
    return _one_line(re.sub(r"^(?:\d+[.)]|[-*])\s*", "", first)) or _one_line(offer.text)
