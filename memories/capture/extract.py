"""Deterministic extractors: what a careful reader would keep from an exchange.

Two families, each finding a `Candidate` with its kind, category, priority, confidence, the
evidence (the words it came from) and the exchange:

- facts about the user, from what the user wrote (seed 003): name, role, employer, where
  they live, the languages they speak, preferences, how they want answers;
- knowledge from coding sessions (seed 002): decisions ("we decided to … because …"),
  standards the user sets ("always …", "never …"), solutions (an error, a reply with code,
  and the user saying it worked), gotchas the user warns about.

Facts, decisions, standards and gotchas are regex rules (memories.capture.rules) applied
here clause by clause. They read only the user's words, except a solution's fix, which is the
assistant's reply the user confirmed. Questions and hypotheticals are not statements: "am I a
good developer?" and "if I lived in Paris" say nothing about the user. Precision comes first:
a wrong memory is worse than a missing one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from core.text import CAPITALISED_WORD
from memories.capture import accepted, tool_solutions
from memories.capture.exchanges import Exchange
from memories.capture.rules import ANSWER_RULES, LANGUAGES, ROLES, USER_RULES, Rule

# Hypotheticals, the past, wishes, and someone else's words.
HEDGES = re.compile(r"\b(?:if (?:i|we|you|my|our)|would|could|might|maybe|perhaps|suppose|imagine|pretend|"
                     r"when i was|used to|back when|thinking (?:about|of)|hoping to|want to be(?:come)?|"
                     r"hypothetical\w*|"
                     r"daydream\w*|in theory|someday|one day|"
                     r"(?:he|she|they|someone|somebody|people|(?:my|the|a|an|his|her|their)(?: \w+){1,3}) "
                     r"(?:said|says|told|thinks|"
                     r"wrote)|"
                     r"according to)\b|[\"“”]", re.IGNORECASE)
# How a clause asks something instead of stating it.
_QUESTION = re.compile(r"^(?:what|whats|what's|how|why|where|when|which|who|is there|are there|is it|"
                       r"can you|could you|would you|should|do you|does|did|any|anyone|is|are|am i)\b",
                       re.IGNORECASE)
_CONFIRMED = re.compile(r"\b(?:that (?:worked|works|did it|fixed it|was it)|it works|works now|worked|"
                        r"fixed it|"
                        r"(?:is|are) fixed|did (?:it|the trick)|"
                        r"(?:compiles|builds|runs|passes|loads|starts|working)(?: fine| again)? now|"
                        r"(?:that|this) (?:helped|solved it|sorted it)|problem solved|solved it|"
                        r"went from \S+ to \S+|"
                        r"(?:build|ci|tests?) (?:is|are) (?:green|passing)|all green|perfect,? thanks?)\b",
                        re.IGNORECASE)
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
    # The id of the turn the evidence was quoted from (a Claude Code uuid, a Cursor bubble id).
    turn: str = ""




# Values that say nothing on their own ("i hate them").
_VAGUE_START = ("those ", "these ", "them ", "it ", "that ", "this ", "for that", "for this", "for it")
_VAGUE = frozenset({"it", "them", "this", "that", "these", "those", "things", "stuff", "everything",
"nothing",
                    "all of them", "that one", "this one", "both", "none", "him", "her", "you"})




_CLAUSE_BREAK = re.compile(r",\s+|;\s+|:\s+|\s+\(\s*|(?<!\()\)\s+|\s+[-—]\s+|\s+(?:but|so|though)\s+")
# Sentence ends: ". ", "! ", "? ", a new line, or an emoji standing for a full stop; not the
# period of "Dr." or "e.g.".
_SENTENCE_END = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\be\.g\.)"
                           r"(?<!\bi\.e\.)(?<=[.!?])\s+|\n+|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*")
# A question run on without punctuation ("just moved to Tallinn how do i register"): it ends
# the statement before it.
_RUN_ON_QUESTION = re.compile(r"\s+(?=(?:how do|how can|how should|what is|what's|whats|where do|where can|"
                              r"can you|could you|should i|should we|do you|any idea)\b)", re.IGNORECASE)
# Someone else's words introduced earlier in the sentence: "my boss said: I'm a terrible planner".
REPORTED = re.compile(r"\b(?:(?:he|she|they|someone|somebody|people|(?:my|the|a|an|his|her|their)"
                       r"(?: \w+){1,3}) (?:said|says|told (?:me|us)|thinks|wrote|claims?)|according to)\b"
                       r"[^.!?]*$", re.IGNORECASE)
# "if I can avoid it" qualifies a habit; it is not a hypothetical.
_NOT_HEDGE = re.compile(r"\bif (?:i|we) can (?:avoid|help) it\b|\bif possible\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The sentences of `text` as capture reads them: a question run on without punctuation
    ends the statement before it."""
    pieces = (piece for sentence in _SENTENCE_END.split(text) for piece in _RUN_ON_QUESTION.split(sentence))
    return [piece.strip() for piece in pieces if piece and piece.strip()]


def _clauses(text: str) -> Iterator[tuple[str, str, int]]:
    """(clause, its sentence, where in the sentence it starts) for each statement: questions,
    hypotheticals and reported speech left out, clause by clause ("i live near Graz, is there
    a train?")."""
    for sentence in sentences(text):
        if sentence.startswith((">", "    ", "```")):
            continue
        parts = _CLAUSE_BREAK.split(sentence)
        for index, part in enumerate(parts):
            part = part.strip()
            last = index == len(parts) - 1
            if not part or (last and sentence.endswith("?")) or _QUESTION.match(part) or HEDGES.search(
                    _NOT_HEDGE.sub("", part)):
                continue
            start = sentence.find(part)
            if REPORTED.search(sentence[:start]):
                continue
            # The rest of the sentence from this clause on (values may run past a comma), cut
            # where no value reaches: a sentence of a thousand commas is read in linear time.
            yield sentence[start:start + CLAUSE_REACH], sentence, start


def _third_person(phrase: str) -> str:
    """'fly if I can avoid it' -> 'flies if I can avoid it': the user's words, said of them."""
    verb, _, rest = phrase.partition(" ")
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        verb += "es"
    elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
        verb = verb[:-1] + "ies"
    else:
        verb += "s"
    rest = re.sub(r"\bI\b", "they", re.sub(r"\bmy\b", "their", rest))
    return f"{verb} {rest}".strip()


def _clean(value: str) -> str:
    return " ".join(value.strip().strip(",:;.!").split())


def _title(rule: Rule, value: str) -> str:
    if rule.kind in ("decision", "standard", "gotcha"):
        return f"{rule.title}: {value[:80]}"
    return rule.title




def _answers(exchange: Exchange, asked: str) -> list[Candidate]:
    """Facts the user gave by answering the assistant's question: only the last question the
    assistant asked counts, and only an answer that is nothing but the value."""
    questions = re.findall(r"[^.!?\n]*\?", asked)
    if not questions or not exchange.user.strip():
        return []
    question = questions[-1]
    reply = exchange.user.strip().split("\n", 1)[0]
    found = []
    for asks, answer, rule in ANSWER_RULES:
        match = answer.match(reply) if asks.search(question) else None
        if match:
            value = _clean(match.group(1))
            found.append(Candidate(kind=rule.kind, category=rule.category, priority=rule.priority,
                                   confidence=rule.confidence, title=rule.title,
                                   content=rule.content.format(value), evidence=reply[:300],
                                   exchange=exchange.index, rule=rule.name, value=value))
    return found


def from_user(exchange: Exchange, text: str | None = None, asked: str = "") -> list[Candidate]:
    """What the user stated in this exchange (or in `text`: custom instructions); `asked` is
    the assistant's message the user replied to."""
    found: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    # Code blocks are not statements; inline code is (its backticks go).
    prose = re.sub(r"```.*?```", " ", exchange.user if text is None else text, flags=re.DOTALL).replace("`",
    "")
    # Words of a sentence a rule has already taken: "no explanations" is one wish, however
    # many rules of its kind read it.
    taken: dict[tuple[str, str], list[range]] = {}
    for clause, sentence, offset in _clauses(prose):
        own = len(_CLAUSE_BREAK.split(clause, maxsplit=1)[0])
        for rule in USER_RULES:
            match = rule.pattern.search(clause)
            # The statement starts in this clause (its value may run on); a question's rest is not stated.
            if not match or match.start() >= own or "?" in clause[:match.end()]:
                continue
            # "I always travel light, never check bags": the user's habit, not a team's rule.
            if rule.kind == "standard" and offset and _FIRST_PERSON.match(sentence):
                continue
            value = _clean(match.group(1))
            lowered = value.lower()
            if not value or lowered in _VAGUE or lowered.startswith(_VAGUE_START) or (rule.name,
            lowered) in seen:
                continue
            span = range(offset + match.start(1), offset + match.end(1))
            spans = taken.setdefault((rule.name, sentence), [])
            if any(span.start < other.stop and other.start < span.stop for other in spans):
                continue
            spans.append(span)
            seen.add((rule.name, value.lower()))
            if rule.name == "languages":
                value = re.sub(r"\b\w+\b", lambda w: w.group(0).capitalize() if w.group(0).lower() != "and"
                               else "and", value)
            said = _third_person(value) if rule.content in _SAID_OF_THE_USER else value
            content = rule.content.format(said)
            content = re.sub(r"^The user is a (?=[aeiouAEIOU])", "The user is an ", content)
            because = re.search(r"\bbecause ([^.!?\n]{3,160})", sentence, re.IGNORECASE)
            if rule.kind == "decision" and because and "because" not in content:
                content = f"{content.rstrip('.')} because {_clean(because.group(1))}."
            found.append(Candidate(kind=rule.kind, category=rule.category, priority=rule.priority,
                                   confidence=rule.confidence, title=_title(rule, value), content=content,
                                   evidence=sentence[:300], exchange=exchange.index, rule=rule.name,
                                   value=value))
    found += _greeting_name(prose, exchange.index, seen) + _learned(prose, exchange.index)
    if asked:
        stated = {candidate.rule for candidate in found}
        found += [answer for answer in _answers(exchange, asked) if answer.rule not in stated]
    return _one_per_sentence(found)


# Contents that put the user's own verb in the third person: "I bake …" -> "The user bakes …".
_SAID_OF_THE_USER = frozenset({"The user never {0}.", "The user always {0}.", "The user {0}."})
# How far past its start a clause is read: the longest value a rule takes (300) and its cue.
CLAUSE_REACH = 400
_FIRST_PERSON = re.compile(r"^(?:\w+,? )?(?i:i)\b")
# Rules whose findings in one sentence are one wish: "no explanations please, just the code".
_MERGED = frozenset({"style", "standard", "gotcha", "dislike", "preference", "languages"})


def _one_per_sentence(found: list[Candidate]) -> list[Candidate]:
    """One memory per rule and sentence: several wishes said at once are kept together."""
    merged: dict[tuple[str, str], Candidate] = {}
    kept: list[Candidate] = []
    for candidate in found:
        key = (candidate.rule, candidate.evidence)
        first = merged.get(key)
        if candidate.rule not in _MERGED or first is None:
            merged.setdefault(key, candidate)
            kept.append(candidate)
            continue
        joined = replace(first, content=f"{first.content} {candidate.content}")
        kept[kept.index(first)] = joined
        merged[key] = joined
    return kept


# "Anselm here." opening a message; not a role ("developer here") or a greeting.
_HERE = re.compile(rf"^\s*({CAPITALISED_WORD}) here[.!,]")


def _greeting_name(prose: str, index: int, seen: set[tuple[str, str]]) -> list[Candidate]:
    match = _HERE.match(prose)
    if not match or ("name", match.group(1).lower()) in seen:
        return []
    name = match.group(1)
    if re.fullmatch(r"(?i:" + ROLES + r"|" + LANGUAGES + r"|hi|hello|hey|ok|okay|yes|no|me|everyone|"
                    r"someone|nobody|again|back|still|also)", name):
        return []
    rule = next(r for r in USER_RULES if r.name == "name")
    return [Candidate(kind=rule.kind, category=rule.category, priority=rule.priority, confidence=0.8,
                      title=rule.title, content=rule.content.format(name), evidence=match.group(0).strip(),
                      exchange=index, rule="name", value=name)]


# A statement the user then calls a lesson: "a typed nil is not == nil. nasty, good to know".
_LESSON = re.compile(r"^(?:\w+[,!.]*\s+)?(?i:good to know|lesson learned|noted|til|today i learned)\b[.!]*$")
_CAVEAT = re.compile(r"\b(?:not|n't|never|only|always|instead|silently|unless|except|without)\b",
                     re.IGNORECASE)


def _learned(prose: str, index: int) -> list[Candidate]:
    sentences = [s.strip() for s in _SENTENCE_END.split(prose) if s and s.strip()]
    found = []
    for before, sentence in itertools.pairwise(sentences):
        if not _LESSON.match(sentence) or before.endswith("?") or not _CAVEAT.search(before):
            continue
        lesson = _clean(re.sub(r"^(?:(?:oh+|ah+|ok|okay|right|wow|"
        r"hm+)\b[,!.]*\s*)?(?:so\s+)?", "", before, flags=re.IGNORECASE))
        if len(lesson.split()) < 5 or HEDGES.search(lesson):
            continue
        found.append(Candidate(kind="gotcha", category="fact", priority="normal", confidence=0.7,
                               title=f"A gotcha: {lesson[:80]}", content=f"Watch out: {lesson}.",
                               evidence=f"{before} {sentence}"[:300], exchange=index, rule="gotcha",
                               value=lesson))
    return found


_ERROR_WORDS = re.compile(r"(?:\b[A-Z]\w*(?:Error|Exception)\b|\berror\b|\bE[A-Z]{4,}\b|\bFATAL\b|"
                          r"\bfails?\b|\bfailing\b|\bfailed\b|\bpanic\b|\btraceback\b|\bcrash\w*|\bkilled\b|"
                          r"\bOOM\w*|\bexit code [1-9]|\bsegfault|\bsegmentation fault|\btimed out\b|"
                          r"\bpermission denied\b|\bno space left\b|\bwon'?t (?:start|compile|build|run)\b|"
                          r"\btakes? ~?\d+(?:\.\d+)? ?(?:s|secs?|seconds|min|minutes)\b|\bslow\b)",
                          re.IGNORECASE)


def solution(exchange: Exchange, following: list[Exchange]) -> Candidate | None:
    """An error the user hit, the assistant's reply with code, and the user saying it worked
    in one of the next two messages (and not that it failed before that)."""
    problem_line = next((line.strip(" `") for line in exchange.user.splitlines()
                         if _ERROR_WORDS.search(line)), "")
    blocks = [b for b in exchange.code_blocks if b.code and b.code in exchange.assistant]
    # "Still failing" reports on the previous fix; it does not start a new problem.
    if not problem_line or not blocks or _FAILED.search(exchange.user):
        return None
    # The fix that worked is the one given just before the user said so: a first answer the
    # user turned down ("that broke apt, other options?") is not it.
    confirmation, fixed_by = None, exchange
    for later in following[:2]:
        confirmation = _CONFIRMED.search(later.user)
        if confirmation and not _FAILED.search(later.user):
            break
        confirmation = None
        # A follow-up question ("where does that go?") answered without new code leaves the
        # fix as it was; a failure or a new snippet replaces it.
        if _FAILED.search(later.user) or later.code_blocks:
            fixed_by = later
    if confirmation is None:
        return None
    blocks = [b for b in fixed_by.code_blocks if b.code and b.code in fixed_by.assistant]
    if not blocks:
        return None
    # The user's own words about what worked ("raising the memory limit to 768Mi fixed it").
    confirmed = next((s.strip() for s in _SENTENCE_END.split(later.user) if s and confirmation.group(0) in s),
                     confirmation.group(0))
    problem = (exchange.entities.get("errors") or [problem_line])[0][:160]
    prose = re.sub(r"```.*?```", " ", fixed_by.assistant, flags=re.DOTALL)
    fix = next((clause for clause, _, _ in _clauses(prose)), "")
    code = "".join(f"```{block.language}\n{block.code}\n```\n" for block in blocks)[:2000]
    content = f"Problem: {problem}\nFix: {fix}\n{code}Confirmed: {confirmed[:300]}"
    block = blocks[0]
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
        asked = exchanges[position - 1].assistant if position else ""
        found += from_user(exchange, asked=asked)
        fix = solution(exchange, exchanges[position + 1:position + 3])
        if fix is not None:
            found.append(fix)
    found += tool_solutions.solutions(exchanges, start=start)
    found += accepted.decisions(exchanges, start=start)
    return found
