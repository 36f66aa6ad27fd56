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

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from memories.capture.exchanges import Exchange

# The end of a value: a sentence's end (a period followed by a space, not ".env" or
# "base.txt"), a clause break, or a conjunction that starts another statement.
_END = r"(?=[.!?;](?:\s|$)|\n|$)"
_STOP = r"(?=[.!?;](?:\s|$)|\n|,\s|\s+\(|\s+[-—]\s|\s+(?:and|but|because|so|since|which|who|though|btw)\b|$)"
# "I" however it is typed: "I'm", "i'm", "im", "I am".
_I = r"(?i:\bi)"
_IM = r"(?i:\bi(?:'m|’m| am|m))"
_NAME = r"([A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+(?:-[A-Z][a-zà-ÿ]+)?)?)"
# "I am Dr. Amara Okafor": a title is not the name.
_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.? )?"
_PLACE = r"([A-Z][\w'’-]+(?:[ -][A-Z][\w'’-]+)*)"
_ORG = r"([A-Z][\w&.’'-]*(?: (?:(?:&|of|de|du|von|van) )?[A-Z][\w&.’'-]*){0,3})"
_ROLES = (r"developer|dev|engineer|designer|manager|student|researcher|scientist|analyst|architect|founder|"
          r"consultant|teacher|professor|lecturer|writer|editor|journalist|translator|nurse|doctor|physician|"
          r"surgeon|dentist|pharmacist|therapist|physiotherapist|psychologist|lawyer|attorney|paralegal|"
          r"accountant|bookkeeper|auditor|chef|cook|baker|barista|electrician|plumber|carpenter|mechanic|"
          r"pilot|"
          r"driver|coordinator|administrator|admin|assistant|librarian|photographer|illustrator|artist|"
          r"musician|veterinarian|vet|farmer|buyer|recruiter|marketer|salesperson|sre|devops|cto|ceo|cfo|"
          r"intern|tester|programmer|coder|owner|lead|director|officer|specialist|technician|planner|clerk|"
          r"paramedic|firefighter|midwife|carer|caregiver|optician|radiologist|dietitian|nutritionist|"
          r"surveyor|economist|statistician|biologist|chemist|physicist|mathematician|geologist|historian|"
          r"social worker|cashier|waiter|waitress|bartender|hairdresser|barber|tailor|welder|builder|"
          r"gardener|landscaper|receptionist|secretary|coach|trainer|instructor|tutor|principal|"
          r"counsellor|counselor|nanny|postdoc|sysadmin|copywriter|animator|producer|florist|butcher|"
          r"machinist|contractor|freelancer|realtor|broker|banker|trader|actuary|underwriter|archivist|"
          r"curator|anaesthetist|anesthetist|radiographer|sonographer|ranger")
# Someone naming themselves before saying what they do ("I'm Amara Okafor, a vet at …").
_SELF_NAMED = _IM + r" " + _TITLE + r"[A-Z][a-zà-ÿ]+(?: [A-Z][\w-]+)?(?:, | [-—] )"
_LANGUAGE = (r"English|French|German|Spanish|Italian|Portuguese|Dutch|Polish|Swedish|Danish|Norwegian|"
             r"Finnish|Russian|Ukrainian|Chinese|Mandarin|Cantonese|Japanese|Korean|Hindi|Urdu|Bengali|"
             r"Arabic|"
             r"Turkish|Greek|Hebrew|Czech|Slovak|Romanian|Hungarian|Vietnamese|Thai|Indonesian|Malay|Tagalog|"
             r"Farsi|Persian|Swahili|Catalan|Basque|Welsh|Irish|Icelandic|Estonian|Latvian|Lithuanian|"
             r"Serbian|"
             r"Croatian|Bulgarian|Tamil|Telugu|Punjabi|Gujarati|Marathi")
# Who decides, with an aside: "we (platform team) decided".
_WE = r"(?:(?i:{})(?: \([^)]{{1,40}}\))?(?:'ve| have| finally| just)? )"
# A rule ends where the sentence does or where the next one starts: "always X, and never Y".
_RULE_END = r"(?=[.!?;](?:\s|$)|\n|$|,?\s+and (?:never|always|we|you|everyone|every|all)\b)"
# Past tenses: "I cooked pasta every day last week" is a story, not a habit.
_PAST = (r"knew|thought|heard|saw|went|came|said|told|found|made|took|gave|wrote|read|ran|met|felt|left|"
         r"kept|meant|paid|sent|spent|won|lost|forgot|bought|brought|caught|taught|fell|began|became|used")
# What "I never …" avoids as a habit ("I never fly"); "I never got a reply" is a story.
_HABITS = (r"fly|drive|eat|drink|smoke|use|wear|buy|order|cook|touch|take|watch|work|travel|commit|push|"
           r"deploy|skip|book|shop|pay")
# What answers can leave out: how the user wants answers, not a dislike.
_ANSWER_EXTRAS = (r"emojis?|explanations?|preambles?|fluff|small talk|pleasantries|disclaimers|caveats|"
                  r"apologies|filler|intros?|summaries|jargon|comments in the code|comments")
# Hypotheticals, the past, wishes, and someone else's words.
_HEDGES = re.compile(r"\b(?:if (?:i|we|you|my|our)|would|could|might|maybe|perhaps|suppose|imagine|pretend|"
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
    _rule("name", r"\b(?i:my name is|my name's|call me)\s+" + _TITLE + _NAME + r"\b", "fact", "fact", "core",
          0.95, "The user's name", "The user's name is {0}."),
    _rule("name", r"^(?i:hi|hello|hey|hiya|yo)\b[,!.]*\s+" + _IM + r" " + _TITLE + _NAME + r"\b", "fact",
          "fact", "core", 0.9, "The user's name", "The user's name is {0}."),
    _rule("name", r"^(?i:hi|hello|hey)\b[,!.]*\s+" + _NAME + r" here\b", "fact", "fact", "core", 0.9,
          "The user's name", "The user's name is {0}."),
    # "i'm Marisol, just moved…" (the greeting was a sentence of its own): a capitalised word
    # that is not a language or nationality, ending the clause.
    _rule("name", r"^" + _IM + r" " + _TITLE + r"(?!(?:" + _LANGUAGE + r")\b)" + _NAME
          + r"(?=[,.!)]|\s+(?:here|btw|by the way)\b|$)", "fact", "fact", "core", 0.85, "The user's name",
          "The user's name is {0}."),
    _rule("name", r"^(?i:name'?s|name is|the name's) " + _NAME + r"(?=[,.!]|$)", "fact", "fact", "core", 0.85,
          "The user's name", "The user's name is {0}."),
    _rule("name", r"^(?i:this is) " + _NAME + r"(?=\s+(?:btw|by the way|"
          r"here)\b)", "fact", "fact", "core", 0.85,
          "The user's name", "The user's name is {0}."),
    # A card or letter the user signs: "sign it from me, Konstantin".
    _rule("name", r"\b(?i:sign(?:ed)? (?:it|this|that|off|the \w+) (?:from|as)) (?i:me),? " + _NAME
          + r"(?=[,.!]|$)", "fact", "fact", "core", 0.85, "The user's name", "The user's name is {0}."),
    _rule("role", r"^((?:[\w-]+ ){0,2}?(?:" + _ROLES + r")) here\b", "fact", "fact", "core", 0.85,
          "The user's role", "The user is a {0}.", I),
    _rule("role", _SELF_NAMED + r"(?i:a|an|the)(?: (?i:only|sole|lead|resident))? ((?:[\w-]+ ){0,3}?(?i:"
          + _ROLES + r"))\b", "fact", "fact",
          "core", 0.85, "The user's role", "The user is a {0}."),
    _rule("role", _I + r"(?i: work as| am working as|'m working as) (?i:a|an) ((?:[\w-]+ ){0,3}?(?:" + _ROLES
          + r"))\b", "fact", "fact", "core", 0.9, "The user's role", "The user is a {0}.", I),
    _rule("role", r"\b(?i:my (?:day |full-time |main )?job is(?: as)?) (?i:a|"
          r"an) ((?:[\w-]+ ){0,3}?(?:" + _ROLES
          + r"))\b", "fact", "fact", "core", 0.85, "The user's role", "The user is a {0}.", I),
    # "I am receptionist at Hotel Marisol": no article, but a workplace right after.
    _rule("role", _IM + r" ((?:" + _ROLES + r")) (?=(?:at|for|with|in|since)\b)", "fact", "fact", "core", 0.8,
          "The user's role", "The user is a {0}.", I),
    _rule("employer", _IM + r" (?i:" + _ROLES + r") (?i:at|for|with) " + _ORG, "fact", "fact", "high", 0.8,
          "Where the user works", "The user works at {0}."),
    _rule("employer", _IM + r" [^,.!?\n]{3,60}? (?i:and) (?i:work|am working) (?i:at|"
          r"for) " + _ORG, "fact", "fact", "high", 0.8,
          "Where the user works", "The user works at {0}."),
    _rule("role", r"^(?i:as an?) ((?:[\w-]+ ){0,3}?(?:" + _ROLES + r"))\b", "fact", "fact", "core", 0.85,
          "The user's role", "The user is a {0}.", I),
    _rule("role", _IM + r" (?:(?i:also|actually|currently|now) )?(?i:a|an|the) ((?:[\w-]+ ){0,3}?(?:" + _ROLES
          + r"))s?\b(?!\s+(?:of|to|in)\s+(?:my|the|a)\b)", "fact", "fact", "core", 0.9, "The user's role",
          "The user is a {0}.", I),
    _rule("employer", _I + r"(?i: work| am working|'m working|’m working)(?: (?i:as (?:a|"
          r"an) (?:[\w-]+ ){0,3}?(?:"
          + _ROLES + r")))? (?i:at|for) " + _ORG, "fact", "fact", "high", 0.9,
          "Where the user works", "The user works at {0}."),
    _rule("employer", r"(?:" + _SELF_NAMED + r"|" + _IM + r" )(?i:a|an|the) (?:[\w-]+ ){0,3}?(?i:" + _ROLES
          + r")s? (?i:at|for|with) " + _ORG,
          "fact", "fact", "high", 0.85, "Where the user works", "The user works at {0}."),
    _rule("employer", _I + r"(?i: work| am working|'m working) (?i:at|for) (?i:a|an) [^,.!?\n]{0,40}?"
          r"(?i:called|named) " + _ORG, "fact", "fact", "high", 0.85, "Where the user works",
          "The user works at {0}."),
    _rule("employer", r"^(?i:at|here at) " + _ORG + r" (?i:we)\b", "fact", "fact", "high", 0.8,
          "Where the user works", "The user works at {0}."),
    _rule("employer", r"^(?:(?i:i'?ve|i have) )?(?i:been) (?i:working )?(?i:at|with) " + _ORG
          + r" (?i:for|since)\b",
          "fact", "fact", "high", 0.8, "Where the user works", "The user works at {0}."),
    _rule("location", _I
          + r"(?i: live| am based|'m based|’m based| reside| am living|'m living|’m living| am settled|'m "
          r"settled|’m settled|'ve been living| have been living)(?: (?i:just|right|now|here))? "
          r"(?i:in|outside|near|outside of) " + _PLACE, "fact", "fact", "high", 0.9, "Where the user lives",
          "The user lives in {0}."),
    _rule("location", r"(?:^|\b(?i:i|we)(?:'ve| have)? )(?i:just |recently |finally )?(?i:moved|relocated) "
          r"(?i:to) " + _PLACE, "fact", "fact", "high", 0.9, "Where the user lives",
          "The user moved to {0} and lives there now."),
    _rule("location", r"^(?i:living|based) (?i:in) " + _PLACE, "fact", "fact", "high", 0.85,
          "Where the user lives", "The user lives in {0}."),
    _rule("location", r"\b(?i:we're|we are|we’re) (?:(?i:now|finally|happily) )?(?i:settled|living|"
          r"based) (?i:in) "
          + _PLACE, "fact", "fact", "high", 0.85, "Where the user lives", "The user lives in {0}."),
    _rule("location", r"\b(?i:since (?:i |we )?(?:moved|moving|relocated|"
          r"relocating) to) " + _PLACE, "fact", "fact",
          "high", 0.85, "Where the user lives", "The user moved to {0} and lives there now."),
    _rule("languages", r"\b(?i:i|we) (?:(?i:only|also|mainly|mostly|fluently|natively|can|do) )?"
          r"(?i:speak|read and speak|speak and read) ((?i:" + _LANGUAGE + r")(?:(?:, | and |/)(?i:"
          + _LANGUAGE
          + r"))*)", "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", _IM + r" (?:(?i:a|an) )?(?i:native|fluent|first-language|bilingual) ((?i:" + _LANGUAGE
          + r")(?:(?: and |/)(?i:" + _LANGUAGE + r"))*) (?i:speaker)", "fact", "fact", "normal", 0.9,
          "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", r"^((?i:" + _LANGUAGE + r")) (?i:is my (?:native|first|mother) (?:language|tongue))\b",
          "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", _IM + r" (?:(?i:also|quite|pretty|very|reasonably) )?(?i:fluent|conversational|"
          r"proficient|native) (?i:in) ((?i:" + _LANGUAGE + r")(?:(?:, | and |/)(?i:" + _LANGUAGE + r"))*)",
          "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", r"\b(?i:my (?:native|first|mother) (?:language|tongue) is) ((?i:" + _LANGUAGE
          + r"))\b", "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("preference", _I
          + r" (?:(?i:really|much|definitely|strongly|honestly|always|do) )?(?i:prefer|love using|"
          r"love cooking (?:in|with)|love|like to use|always use|enjoy using) ([^!?\n]{3,80}?)" + _STOP,
          "preference", "preference", "high", 0.85, "A preference of the user", "The user prefers {0}."),
    _rule("preference", _IM + r" (?:(?i:really|very|pretty|such|a|a huge|a big|huge|big) )*(?i:big on|fan of|"
          r"into|partial to|obsessed with|hooked on|a sucker for) (?!(?i:the|my|a|an|it|this|that)\b)"
          r"([^!?\n]{3,60}?)" + _STOP, "preference", "preference", "high", 0.8, "A preference of the user",
          "The user likes {0}."),
    _rule("preference", r"\b(?:" + _IM + r"|(?i:we're|we are|we’re)) (?:(?i:a|an|strict|mostly|fully) )*((?i:"
          r"vegetarian|vegan|pescatarian|gluten-free|dairy-free|lactose intolerant|teetotal|halal|kosher))\b",
          "preference", "preference", "high", 0.85, "A preference of the user", "The user is {0}."),
    _rule("preference", _I + r" (?i:always) ((?i:" + _HABITS + r"|travel|go|bring|read|walk|cycle|ride|bike|"
          r"take|run)\b[^!?\n]{2,60}?)" + _STOP, "preference", "preference", "high", 0.8,
          "A preference of the user", "The user always {0}."),
    _rule("preference", _I + r" (?!(?i:have|had|need|must|got|was|were|did|" + _PAST + r")\b)(?![a-z]+ed\b)"
          r"((?-i:[a-z]+) [^!?,\n]{2,40}? (?i:every|each) (?i:day|morning|evening|night|week|weekend|"
          r"month|year|"
          r"summer|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", "preference",
          "preference", "normal", 0.75, "A habit of the user", "The user {0}."),
    # "I never fly": a habit; "I never got a reply" is a story.
    _rule("dislike", _I + r" (?i:never) ((?i:" + _HABITS + r")\b[^!?\n]{0,60}?)" + _STOP, "preference",
          "preference", "high", 0.75, "Something the user avoids", "The user never {0}."),
    _rule("dislike", _I
          + r" (?:(?i:really|genuinely|honestly|just|personally|absolutely|totally|strongly) )?"
          r"(?i:hate|dislike|avoid|never use|"
          r"don't like|do not like|can't stand|cannot stand|can't eat|don't eat|never eat) "
          r"([^!?\n]{3,80}?)" + _STOP,
          "preference", "preference", "high", 0.85, "Something the user avoids", "The user avoids {0}."),
    _rule("dislike", r"^(?i:no) (?!(?i:" + _ANSWER_EXTRAS + r")\b)([a-z][\w -]{2,30}?) (?i:please)\b",
          "preference", "preference", "high", 0.8,
          "Something the user avoids", "The user avoids {0}."),
    _rule("dislike", r"^(?:(?i:and|also) )?(?i:please,? no) ([a-z][\w -]{2,30}?)" + _STOP, "preference",
          "preference", "high", 0.8, "Something the user avoids", "The user avoids {0}."),
    _rule("style", r"\b(?i:please )?(?i:keep|make) (?i:your |the |all )?(?i:answers|responses|replies|"
          r"explanations) ([^!?\n]{3,60}?)" + _END, "style", "style", "high", 0.85,
          "How the user wants answers",
          "The user wants answers {0}."),
    _rule("style", r"\b(?i:please )?(?i:keep it|be) ((?i:short|brief|concise|simple|terse|high-level|"
          r"technical|casual|formal)(?: (?:and|&) (?i:short|brief|concise|simple|terse|to the point))?)\b",
          "style", "style", "high", 0.8, "How the user wants answers", "The user wants answers {0}."),
    _rule("style", r"^((?i:(?:only )?(?:short|brief|concise|one-line|quick) "
          r"(?:answers|replies|responses)))\b", "style", "style", "high", 0.8, "How the user wants answers",
          "The user wants {0}."),
    _rule("style", r"\b(?i:keep it to|give me|i want|only|just) ((?i:just |"
          r"only )?(?i:the )?code)(?: (?i:only))?"
          r"(?=[,.!]|\s+(?:from now|please|pls|no)\b|$)", "style", "style", "high", 0.8,
          "How the user wants answers", "The user wants {0} only."),
    _rule("style", r"\b(?i:answer|reply|respond|write|explain)(?: (?i:to me|me))? (?i:in) ((?i:simple|"
          r"plain|basic|"
          r"easy) (?i:english|language|words|terms))\b", "style", "style", "high", 0.85,
          "How the user wants answers", "The user wants answers in {0}."),
    _rule("style", r"\b(?i:skip|drop|leave out|ditch|no|without|spare me) (?i:the |any |all )?((?i:"
          + _ANSWER_EXTRAS + r"))\b", "style", "style", "high", 0.8, "How the user wants answers",
          "The user wants no {0} in answers."),
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
    _rule("decision", r"\b" + _WE.format("we|i|the team|our team|team") + r"(?:\w+ ){0,2}?"
          r"(?i:decided|agreed|chose|voted) (?:\w+ ){0,2}?(?i:to|on) ([^!?\n]{3,160}?)" + _STOP, "decision",
          "fact", "high", 0.85, "A decision", "Decided to {0}."),
    _rule("decision", r"\b" + _WE.format("we|the team|our team|team") + r"(?:\w+ ){0,2}?"
          r"(?i:picked|chose|selected|settled on|standardi[sz]ed on|opted for|went with|"
          r"switched to|migrated to|are moving to|'re moving to) "
          r"(?!(?i:a|an|the|my|this|that|it)\b)([^!?\n]{2,120}?)" + _STOP, "decision", "fact", "high", 0.8,
          "A decision", "Decided on {0}."),
    _rule("decision", r"\b(?i:let'?s go with|we'?re going with|we went with) ([^!?\n]{2,120}?)" + _STOP,
          "decision", "fact", "high", 0.8, "A decision", "Decided to go with {0}."),
    # "Never knew…", "never thought…": a story, not a rule.
    _rule("standard", r"^(?:(?i:and|also|plus) )?((?:(?i:in this (?:repo|project|codebase|team) )?(?i:we|you|"
          r"everyone) (?i:should )?)?(?i:always|never) (?!(?i:knew|thought|heard|saw|seen|been|had|got|used|"
          r"understood|realised|realized|expected|imagined|liked|tried|said)\b)[^!?\n]{8,300}?)" + _RULE_END,
          "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("standard", r"^((?:(?i:in|on) (?i:our|this|the) (?i:repos?|codebase|project|team)s?,? )?(?i:we) "
          r"(?i:always )?(?i:use) [^!?\n]{2,40}? (?i:for (?:everything|all|every))\b[^!?\n]{0,60}?)" + _STOP,
          "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("standard", r"^([^!?\n]{3,80}? (?:is|are) (?i:not allowed|forbidden|banned|prohibited|"
          r"not permitted)"
          r"[^!?\n]{0,80}?)" + _END, "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("standard", r"^((?i:our|the|"
          r"this) [^!?\n]{3,80}?),? (?i:no exceptions)\b", "standard", "fact", "high",
          0.8, "A standard", "{0}, no exceptions."),
    _rule("standard", r"\b(?i:our|the|team|house|company|cluster|org) (?i:rule|convention|"
          r"policy)(?: (?i:here))? "
          r"(?i:is)(?: (?i:that))? "
          r"([^!?\n]{8,300}?)" + _END, "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("standard", r"\b(?i:rule|convention)(?: (?i:on|for|in) (?i:this|our|the) (?i:project|team|repo|"
          r"codebase)): ([^!?\n]{8,300}?)" + _END, "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("standard", r"^(?:(?i:and|also|plus|so) )?((?i:all|every|each|no|any) "
          r"(?!(?i:time|day|week|once|one|body|thing|where|way)\b)[\w /+-]{2,50}? "
          r"(?i:must|has to|have to|needs to|need to|shall|should always|"
          r"should never|are required to|is required to|may not|can't|cannot) [^!?\n]{3,300}?)" + _END,
          "standard", "fact", "high", 0.8, "A standard", "{0}."),
    _rule("gotcha",
          r"\b(?i:gotcha|watch out|heads up|be careful|careful with|beware|(?:a )?word of warning|"
          r"fair warning|a warning (?:for|to) (?:whoever|anyone|future)[^:\n]{0,30}|"
          r"lesson learned|note to self|note for me|til|today i learned|pro tip|(?:something|one thing) that "
          r"(?:bit|burned|bites) (?:me|us)|learned (?:this|that|"
          r"it) the hard way(?: today)?)\b(?:(?: [^:\n]{0,40}?)?[:,])? "
          r"([^!?\n]{8,300}?)" + _END, "gotcha", "fact", "normal", 0.75, "A gotcha", "Watch out: {0}."),
)


# Values that say nothing on their own ("i hate them").
_VAGUE_START = ("those ", "these ", "them ", "it ", "that ", "this ", "for that", "for this", "for it")
_VAGUE = frozenset({"it", "them", "this", "that", "these", "those", "things", "stuff", "everything",
"nothing",
                    "all of them", "that one", "this one", "both", "none", "him", "her", "you"})


# Each rule's title, for memories another extractor proposes under the same rule.
TITLES = {rule.name: rule.title for rule in USER_RULES} | {"solution": "A fix"}


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
_REPORTED = re.compile(r"\b(?:(?:he|she|they|someone|somebody|people|(?:my|the|a|an|his|her|their)"
                       r"(?: \w+){1,3}) (?:said|says|told (?:me|us)|thinks|wrote|claims?)|according to)\b"
                       r"[^.!?]*$", re.IGNORECASE)
# "if I can avoid it" qualifies a habit; it is not a hypothetical.
_NOT_HEDGE = re.compile(r"\bif (?:i|we) can (?:avoid|help) it\b|\bif possible\b", re.IGNORECASE)


def _clauses(text: str) -> Iterator[tuple[str, str, int]]:
    """(clause, its sentence, where in the sentence it starts) for each statement: questions,
    hypotheticals and reported speech left out, clause by clause ("i live near Graz, is there
    a train?")."""
    pieces = (piece for sentence in _SENTENCE_END.split(text) for piece in _RUN_ON_QUESTION.split(sentence))
    for sentence in pieces:
        sentence = sentence.strip()
        if not sentence or sentence.startswith((">", "    ", "```")):
            continue
        parts = _CLAUSE_BREAK.split(sentence)
        for index, part in enumerate(parts):
            part = part.strip()
            last = index == len(parts) - 1
            if not part or (last and sentence.endswith("?")) or _QUESTION.match(part) or _HEDGES.search(
                    _NOT_HEDGE.sub("", part)):
                continue
            start = sentence.find(part)
            if _REPORTED.search(sentence[:start]):
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


# What the assistant asked, and how the user's reply gives the answer at its start:
# "What languages are you comfortable in?" "English and Tagalog, both fluently."
_ASKED = (
    (re.compile(r"\blanguages?\b[^?]*\byou\b[^?]*\b(?:speak|comfortable|fluent|understand)\b[^?]*\?", I),
     re.compile(r"^(?:(?i:mostly|mainly|just|only) )?((?i:" + _LANGUAGE + r")(?:(?:, | and |/| & )(?i:"
                + _LANGUAGE + r"))*)(?=[,.!]|\s+(?:(?i:both|fluently|mostly|natively))\b|$)"),
     Rule("languages", re.compile(""), "fact", "fact", "normal", 0.85, "Languages the user speaks",
          "The user speaks {0}.")),
    (re.compile(r"\bwhere (?:do you live|are you based|are you located|are you living)\b[^?]*\?", I),
     re.compile(r"^(?:(?i:in|near|outside) )?" + _PLACE + r"(?=[,.!]|$)"),
     Rule("location", re.compile(""), "fact", "fact", "high", 0.85, "Where the user lives",
          "The user lives in {0}.")),
)


def _answers(exchange: Exchange, asked: str) -> list[Candidate]:
    """Facts the user gave by answering the assistant's question: only the last question the
    assistant asked counts, and only an answer that is nothing but the value."""
    questions = re.findall(r"[^.!?\n]*\?", asked)
    if not questions or not exchange.user.strip():
        return []
    question = questions[-1]
    reply = exchange.user.strip().split("\n", 1)[0]
    found = []
    for asks, answer, rule in _ASKED:
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
            because = re.search(r"\bbecause ([^.!?\n]{3,160})", sentence, I)
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
_HERE = re.compile(r"^\s*([A-Z][a-zà-ÿ]+) here[.!,]")


def _greeting_name(prose: str, index: int, seen: set[tuple[str, str]]) -> list[Candidate]:
    match = _HERE.match(prose)
    if not match or ("name", match.group(1).lower()) in seen:
        return []
    name = match.group(1)
    if re.fullmatch(r"(?i:" + _ROLES + r"|" + _LANGUAGE + r"|hi|hello|hey|ok|okay|yes|no|me|everyone|"
                    r"someone|nobody|again|back|still|also)", name):
        return []
    rule = next(r for r in USER_RULES if r.name == "name")
    return [Candidate(kind=rule.kind, category=rule.category, priority=rule.priority, confidence=0.8,
                      title=rule.title, content=rule.content.format(name), evidence=match.group(0).strip(),
                      exchange=index, rule="name", value=name)]


# A statement the user then calls a lesson: "a typed nil is not == nil. nasty, good to know".
_LESSON = re.compile(r"^(?:\w+[,!.]*\s+)?(?i:good to know|lesson learned|noted|til|today i learned)\b[.!]*$")
_CAVEAT = re.compile(r"\b(?:not|n't|never|only|always|instead|silently|unless|except|without)\b", I)


def _learned(prose: str, index: int) -> list[Candidate]:
    sentences = [s.strip() for s in _SENTENCE_END.split(prose) if s and s.strip()]
    found = []
    for before, sentence in itertools.pairwise(sentences):
        if not _LESSON.match(sentence) or before.endswith("?") or not _CAVEAT.search(before):
            continue
        lesson = _clean(re.sub(r"^(?:(?:oh+|ah+|ok|okay|right|wow|"
        r"hm+)\b[,!.]*\s*)?(?:so\s+)?", "", before, flags=I))
        if len(lesson.split()) < 5 or _HEDGES.search(lesson):
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
    return found
