"""Deterministic extractors: what a careful reader would keep from an exchange.

Two families, each finding a `Candidate` with its kind, category, priority, confidence, the
evidence (the words it came from) and the exchange:

- facts about the user, from what the user wrote (seed 003): name, role, employer, where
  they live, the languages they speak, preferences, how they want answers;
- knowledge from coding sessions (seed 002): decisions ("we decided to … because …"),
  standards the user sets ("always …", "never …"), solutions (an error, a reply with code,
  and the user saying it worked), gotchas the user warns about.

They read only the user's words, except a solution's fix, which is the assistant's reply the
user confirmed. Questions and hypotheticals are not statements: "am I a good developer?" and
"if I lived in Paris" say nothing about the user. Precision comes first: a wrong memory is
worse than a missing one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from memories.capture.exchanges import Exchange

# The end of a value: a sentence's end (a period followed by a space, not ".env" or
# "base.txt"), a clause break, or a conjunction that starts another statement.
_END = r"(?=[.!?;](?:\s|$)|\n|$)"
_STOP = r"(?=[.!?;](?:\s|$)|\n|,\s|\s+[-—]\s|\s+(?:and|but|because|so|since|which|who|though|btw)\b|$)"
# "I" however it is typed: "I'm", "i'm", "im", "I am".
_I = r"(?i:\bi)"
_IM = r"(?i:\bi(?:'m|’m| am|m))"
_NAME = r"([A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+)?)"
_PLACE = r"([A-Z][\w'’-]+(?:[ -][A-Z][\w'’-]+)*)"
_ORG = r"([A-Z][\w&.’'-]*(?: [A-Z][\w&.’'-]*){0,3})"
_ROLES = (r"developer|dev|engineer|designer|manager|student|researcher|scientist|analyst|architect|founder|"
          r"consultant|teacher|professor|lecturer|writer|editor|journalist|translator|nurse|doctor|physician|"
          r"surgeon|dentist|pharmacist|therapist|physiotherapist|psychologist|lawyer|attorney|paralegal|"
          r"accountant|bookkeeper|auditor|chef|cook|baker|barista|electrician|plumber|carpenter|mechanic|pilot|"
          r"driver|coordinator|administrator|admin|assistant|librarian|photographer|illustrator|artist|"
          r"musician|veterinarian|vet|farmer|buyer|recruiter|marketer|salesperson|sre|devops|cto|ceo|cfo|"
          r"intern|tester|programmer|coder|owner|lead|director|officer|specialist|technician|planner|clerk")
_LANGUAGE = (r"English|French|German|Spanish|Italian|Portuguese|Dutch|Polish|Swedish|Danish|Norwegian|"
             r"Finnish|Russian|Ukrainian|Chinese|Mandarin|Cantonese|Japanese|Korean|Hindi|Urdu|Bengali|Arabic|"
             r"Turkish|Greek|Hebrew|Czech|Slovak|Romanian|Hungarian|Vietnamese|Thai|Indonesian|Malay|Tagalog|"
             r"Farsi|Persian|Swahili|Catalan|Basque|Welsh|Irish|Icelandic|Estonian|Latvian|Lithuanian|Serbian|"
             r"Croatian|Bulgarian|Tamil|Telugu|Punjabi|Gujarati|Marathi")
# Hypotheticals, the past, wishes, and someone else's words.
_HEDGES = re.compile(r"\b(?:if (?:i|we|you|my|our)|would|could|might|maybe|perhaps|suppose|imagine|pretend|"
                     r"when i was|used to|back when|thinking (?:about|of)|hoping to|want to be(?:come)?|"
                     r"hypothetical\w*|"
                     r"daydream\w*|in theory|someday|one day|"
                     r"(?:he|she|they|someone|somebody|people|(?:my|the|a|an|his|her|their) \w+) "
                     r"(?:said|says|told|thinks|"
                     r"wrote)|"
                     r"according to)\b|[\"“”]", re.IGNORECASE)
# How a clause asks something instead of stating it.
_QUESTION = re.compile(r"^(?:what|whats|what's|how|why|where|when|which|who|is there|are there|is it|"
                       r"can you|could you|would you|should|do you|does|did|any|anyone|is|are|am i)\b",
                       re.IGNORECASE)
_CONFIRMED = re.compile(r"\b(?:that (?:worked|works|did it|fixed it|was it)|it works|works now|worked|"
                        r"fixed it|"
                        r"(?:is|are) fixed|did (?:it|the trick)|problem solved|solved it|(?:build|ci|tests?) "
                        r"(?:is|are) (?:green|passing)|all green|perfect,? thanks?)\b", re.IGNORECASE)
_FAILED = re.compile(r"\b(?:still (?:broken|fails|failing|red|the same|getting)|didn'?t (?:work|help)|"
                     r"doesn'?t work|same error|no luck|not working)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    kind: str  # fact, preference, style, decision, standard, solution, gotcha
    category: str  # seed 003: fact, preference, topic, style, summary
    priority: str  # core, high, normal, low
    confidence: float
    title: str
    content: str
    evidence: str
    exchange: int
    rule: str
    # What the rule captured ("Priya Raman", "Lisbon"): the fact itself, whatever the wording.
    value: str = ""
    code: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    kind: str
    category: str
    priority: str
    confidence: float
    title: str
    content: str  # format with {0}: the captured value


def _rule(name: str, pattern: str, kind: str, category: str, priority: str, confidence: float, title: str,
          content: str, flags: int = 0) -> Rule:
    return Rule(name, re.compile(pattern, flags), kind, category, priority, confidence, title, content)


I = re.IGNORECASE  # noqa: E741 - the one flag the rules share
USER_RULES = (
    _rule("name", r"\b(?i:my name is|my name's|call me)\s+" + _NAME + r"\b", "fact", "fact", "core", 0.95,
          "The user's name", "The user's name is {0}."),
    _rule("name", r"^(?i:hi|hello|hey|hiya|yo)\b[,!.]*\s+" + _IM + r" " + _NAME + r"\b", "fact", "fact",
          "core", 0.9, "The user's name", "The user's name is {0}."),
    _rule("name", r"^(?i:hi|hello|hey)\b[,!.]*\s+" + _NAME + r" here\b", "fact", "fact", "core", 0.9,
          "The user's name", "The user's name is {0}."),
    # "i'm Marisol, just moved…" (the greeting was a sentence of its own): a capitalised word
    # that is not a language or nationality, ending the clause.
    _rule("name", r"^" + _IM + r" (?!(?:" + _LANGUAGE + r")\b)" + _NAME + r"(?=[,.!]|\s+here\b|$)", "fact",
          "fact", "core", 0.85, "The user's name", "The user's name is {0}."),
    _rule("role", r"^(?i:as an?) ((?:[\w-]+ ){0,3}?(?:" + _ROLES + r"))\b", "fact", "fact", "core", 0.85,
          "The user's role", "The user is a {0}.", I),
    _rule("role", _IM + r" (?:(?i:also|actually|currently|now) )?(?i:a|an|the) ((?:[\w-]+ ){0,3}?(?:" + _ROLES
          + r"))s?\b(?!\s+(?:of|to|in)\s+(?:my|the|a)\b)", "fact", "fact", "core", 0.9, "The user's role",
          "The user is a {0}.", I),
    _rule("employer", _I + r" (?i:work|am working|'m working) (?i:at|for) " + _ORG, "fact", "fact", "high",
          0.9,
          "Where the user works", "The user works at {0}."),
    _rule("employer", _IM + r" (?i:a|an|the) (?:[\w-]+ ){0,3}?(?i:" + _ROLES + r")s? (?i:at|for|with) "
          + _ORG,
          "fact", "fact", "high", 0.85, "Where the user works", "The user works at {0}."),
    _rule("employer", r"^(?i:at|here at) " + _ORG + r" (?i:we)\b", "fact", "fact", "high", 0.8,
          "Where the user works", "The user works at {0}."),
    _rule("employer", r"^(?:(?i:i'?ve|i have) )?(?i:been) (?i:working )?(?i:at|with) " + _ORG
          + r" (?i:for|since)\b",
          "fact", "fact", "high", 0.8, "Where the user works", "The user works at {0}."),
    _rule("location", _I
          + r" (?i:live|am based|'m based|reside|am living|'m living)(?: (?i:just|right|now))? "
          r"(?i:in|outside|near|outside of) " + _PLACE, "fact", "fact", "high", 0.9, "Where the user lives",
          "The user lives in {0}."),
    _rule("location", r"(?:^|\b(?i:i|we)(?:'ve| have)? )(?i:just |recently |finally )?(?i:moved|relocated) "
          r"(?i:to) " + _PLACE, "fact", "fact", "high", 0.9, "Where the user lives",
          "The user moved to {0} and lives there now."),
    _rule("location", r"^(?i:living|based) (?i:in) " + _PLACE, "fact", "fact", "high", 0.85,
          "Where the user lives", "The user lives in {0}."),
    _rule("languages", r"\b(?i:i|we) (?i:speak|also speak) ((?i:" + _LANGUAGE + r")(?:(?:, | and |/)(?i:"
          + _LANGUAGE
          + r"))*)", "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("preference", _I
          + r" (?:(?i:really|much|definitely|strongly|honestly|always|do) )?(?i:prefer|love using|"
          r"love cooking (?:in|with)|love|like to use|always use|enjoy using) ([^!?\n]{3,80}?)" + _STOP,
          "preference", "preference", "high", 0.85, "A preference of the user", "The user prefers {0}."),
    _rule("dislike", _I
          + r" (?:(?i:really|genuinely|honestly|just|personally) )?(?i:hate|dislike|avoid|never use|"
          r"don't like|do not like|can't stand|cannot stand|can't eat|don't eat|never eat) "
          r"([^!?\n]{3,80}?)" + _STOP,
          "preference", "preference", "high", 0.85, "Something the user avoids", "The user avoids {0}."),
    _rule("dislike", r"^(?i:no) ([a-z][\w -]{2,30}?) (?i:please)\b", "preference", "preference", "high", 0.8,
          "Something the user avoids", "The user avoids {0}."),
    _rule("dislike", r"^(?:(?i:and|also) )?(?i:please,? no) ([a-z][\w -]{2,30}?)" + _STOP, "preference",
          "preference", "high", 0.8, "Something the user avoids", "The user avoids {0}."),
    _rule("style", r"\b(?i:please )?(?i:keep|make) (?i:your |the |all )?(?i:answers|responses|replies|"
          r"explanations) ([^!?\n]{3,60}?)" + _END, "style", "style", "high", 0.85,
          "How the user wants answers",
          "The user wants answers {0}."),
    _rule("style", r"\b(?i:always )?(?i:answer|reply|respond|write|talk) (?i:to me |me )?(?i:in) ("
          + _LANGUAGE + r")\b",
          "style", "style", "high", 0.9, "The language of answers", "The user wants answers in {0}.", I),
    _rule("style",
          r"\b(?i:please )?(?i:stop|don't|do not|no more|never) (?i:putting|using|adding|include|use|"
          r"add|put)? ?([\w -]{3,30}?) (?i:in) (?i:your |the )?(?i:answers|replies|responses|messages)",
          "style", "style", "high", 0.85, "How the user wants answers", "The user wants no {0} in answers."),
    _rule("style",
          r"\b(?i:use|write) (\w[\w#+.]*) (?i:for|in) (?i:all )?(?i:the )?(?i:examples|snippets|code "
          r"samples|answers)", "style", "style", "high", 0.85, "How the user wants answers",
          "The user wants examples in {0}."),
    _rule("style", r"\b(?i:just give me the code|code only),? (no [\w ]{3,30}?)" + _STOP, "style", "style",
          "high", 0.85, "How the user wants answers", "The user wants the code only, {0}."),
    _rule("style", r"\b(?i:put|format|give|show) (?i:it|this|that|everything|answers|them|me) (?i:in|as) "
          r"(?i:a |an )?((?i:table|list|bullet points|numbered list|checklist|markdown|json|csv)s?)\b",
          "style",
          "style", "high", 0.8, "How the user wants answers", "The user wants answers as a {0}."),
    _rule("decision", r"\b(?:(?i:we|i|the team|our team|team)(?:'ve| have| finally| just)? )(?:\w+ ){0,2}?"
          r"(?i:decided|agreed|chose|voted) (?:\w+ ){0,2}?(?i:to|on) ([^!?\n]{3,160}?)" + _STOP, "decision",
          "fact", "high", 0.85, "A decision", "Decided to {0}."),
    _rule("decision", r"\b(?i:let'?s go with|we'?re going with|we went with) ([^!?\n]{2,120}?)" + _STOP,
          "decision", "fact", "high", 0.8, "A decision", "Decided to go with {0}."),
    # "Never knew…", "never thought…": a story, not a rule.
    _rule("standard", r"^(?:(?i:and|also|plus) )?((?:(?i:in this (?:repo|project|codebase|team) )?(?i:we|you|"
          r"everyone) (?i:should )?)?(?i:always|never) (?!(?i:knew|thought|heard|saw|seen|been|had|got|used|"
          r"understood|realised|realized|expected|imagined|liked|tried|said)\b)[^!?\n]{8,160}?)" + _END,
          "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("standard", r"\b(?i:rule|convention)(?: (?i:on|for|in) (?i:this|our|the) (?i:project|team|repo|"
          r"codebase)): ([^!?\n]{8,160}?)" + _END, "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("gotcha",
          r"\b(?i:gotcha|watch out|heads up|be careful|careful with|beware)\b(?: [^:\n]{0,40}?)?[:,]? "
          r"([^!?\n]{8,160}?)" + _END, "gotcha", "fact", "normal", 0.75, "A gotcha", "Watch out: {0}."),
)


# Values that say nothing on their own ("i hate them").
_VAGUE_START = ("those ", "these ", "them ", "it ", "that ", "this ")
_VAGUE = frozenset({"it", "them", "this", "that", "these", "those", "things", "stuff", "everything",
"nothing",
                    "all of them", "that one", "this one", "both", "none", "him", "her", "you"})


# Each rule's title, for memories another extractor proposes under the same rule.
TITLES = {rule.name: rule.title for rule in USER_RULES} | {"solution": "A fix"}


_CLAUSE_BREAK = re.compile(r",\s+|;\s+|\s+[-—]\s+|\s+(?:but|so|though)\s+")


def _clauses(text: str) -> Iterator[tuple[str, str]]:
    """(clause, the sentence it is in) for each statement: questions, hypotheticals and
    reported speech left out, clause by clause ("i live near Graz, is there a train?")."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if not sentence or sentence.startswith((">", "    ", "```")):
            continue
        parts = _CLAUSE_BREAK.split(sentence)
        for index, part in enumerate(parts):
            part = part.strip()
            last = index == len(parts) - 1
            if not part or (last and sentence.endswith("?")) or _QUESTION.match(part) or _HEDGES.search(part):
                continue
            # The rest of the sentence from this clause on: values may run past a comma.
            yield sentence[sentence.find(part):], sentence


def _clean(value: str) -> str:
    return " ".join(value.strip().strip(",:;.!").split())


def _title(rule: Rule, value: str) -> str:
    if rule.kind in ("decision", "standard", "gotcha"):
        return f"{rule.title}: {value[:80]}"
    return rule.title


def from_user(exchange: Exchange, text: str | None = None) -> list[Candidate]:
    """What the user stated in this exchange (or in `text`: custom instructions)."""
    found: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    # Code blocks are not statements; inline code is (its backticks go).
    prose = re.sub(r"```.*?```", " ", exchange.user if text is None else text, flags=re.DOTALL).replace("`",
    "")
    for clause, sentence in _clauses(prose):
        own = len(_CLAUSE_BREAK.split(clause, maxsplit=1)[0])
        for rule in USER_RULES:
            match = rule.pattern.search(clause)
            # The statement starts in this clause (its value may run on); a question's rest is not stated.
            if not match or match.start() >= own or "?" in clause[:match.end()]:
                continue
            value = _clean(match.group(1))
            lowered = value.lower()
            if not value or lowered in _VAGUE or lowered.startswith(_VAGUE_START) or (rule.name,
            lowered) in seen:
                continue
            seen.add((rule.name, value.lower()))
            if rule.name == "languages":
                value = re.sub(r"\b\w+\b", lambda w: w.group(0).capitalize() if w.group(0).lower() != "and"
                               else "and", value)
            content = rule.content.format(value)
            because = re.search(r"\bbecause ([^.!?\n]{3,160})", sentence, I)
            if rule.kind == "decision" and because and "because" not in content:
                content = f"{content.rstrip('.')} because {_clean(because.group(1))}."
            found.append(Candidate(kind=rule.kind, category=rule.category, priority=rule.priority,
                                   confidence=rule.confidence, title=_title(rule, value), content=content,
                                   evidence=sentence[:300], exchange=exchange.index, rule=rule.name,
                                   value=value))
    return found


_ERROR_WORDS = re.compile(r"(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bE[A-Z]{4,}\b|\bFATAL\b|"
                          r"\bfails?\b|\bfailed\b|\bpanic\b|\btraceback\b)", re.IGNORECASE)


def solution(exchange: Exchange, following: list[Exchange]) -> Candidate | None:
    """An error the user hit, the assistant's reply with code, and the user saying it worked
    in one of the next two messages (and not that it failed before that)."""
    problem_line = next((line.strip(" `") for line in exchange.user.splitlines()
                         if _ERROR_WORDS.search(line)), "")
    blocks = [b for b in exchange.code_blocks if b.code and b.code in exchange.assistant]
    if not problem_line or not blocks:
        return None
    # The fix that worked is the one given just before the user said so: a first answer the
    # user turned down ("that broke apt, other options?") is not it.
    confirmation, fixed_by = None, exchange
    for later in following[:2]:
        confirmation = _CONFIRMED.search(later.user)
        if confirmation and not _FAILED.search(later.user):
            break
        confirmation, fixed_by = None, later
    if confirmation is None:
        return None
    blocks = [b for b in fixed_by.code_blocks if b.code and b.code in fixed_by.assistant]
    if not blocks:
        return None
    problem = (exchange.entities.get("errors") or [problem_line])[0][:160]
    fix = next((c for c, _ in _clauses(re.sub(r"```.*?```", " ", fixed_by.assistant, flags=re.DOTALL))), "")
    block = blocks[0]
    content = f"Problem: {problem}\nFix: {fix}\n```{block.language}\n{block.code[:2000]}\n```"
    return Candidate(kind="solution", category="fact", priority="high", confidence=0.85,
                     title=f"Fix for {problem[:80]}", content=content,
                     evidence=f"{problem} … {confirmation.group(0)}", exchange=exchange.index,
                     rule="solution",
                     value=block.code[:200], code=[block.code])


def extract(exchanges: list[Exchange], *, profile: str = "", start: int = 0) -> list[Candidate]:
    """Every candidate of the exchanges from `start` on (and of the profile, when given)."""
    found: list[Candidate] = []
    if profile and start == 0:
        found += from_user(Exchange(index=0, user="", assistant=""), text=profile)
    for position, exchange in enumerate(exchanges):
        if exchange.index < start:
            continue
        found += from_user(exchange)
        fix = solution(exchange, exchanges[position + 1:position + 3])
        if fix is not None:
            found.append(fix)
    return found
