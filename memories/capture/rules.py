"""The statements capture reads from what a user writes, one regex rule each.

A rule's pattern finds a statement at the start of a clause (memories.capture.extract splits
the user's words into clauses and leaves questions and hypotheticals out); its first group is
the value ("Priya Raman", "Lisbon"), which `content` says of the user. ANSWER_RULES read a reply
to a question the assistant asked ("Where do you live?" "Lisbon.").

Every value is cut where a sentence, a clause or a new statement starts (_END, _STOP), and
every repetition is bounded or unambiguous, so no text makes a rule backtrack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import CAPITALISED_WORD

# The end of a value: a sentence's end (a period followed by a space, not ".env" or
# "base.txt"), a clause break, or a conjunction that starts another statement.
_END = r"(?=[.!?;](?:\s|$)|\n|$)"
_STOP = r"(?=[.!?;](?:\s|$)|\n|,\s|\s+\(|\s+[-—]\s|\s+(?:and|but|because|so|since|which|who|though|btw)\b|$)"
# "I" however it is typed: "I'm", "i'm", "im", "I am".
_I = r"(?i:\bi)"
_IM = r"(?i:\bi(?:'m|’m| am|m))"
_NAME = rf"({CAPITALISED_WORD}(?: {CAPITALISED_WORD}(?:-{CAPITALISED_WORD})?)?)"
# "I am Dr. Amara Okafor": a title is not the name.
_TITLE = r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.? )?"
# Capitalised words ("Lisbon", "São Paulo", "Stratford-upon-Avon"). Hyphens are part of a
# word, never between words too: two ways to split "A-B-C-…" made a crafted reply take minutes.
_PLACE = r"([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)*)"
_ORG = r"([A-Z][\w&.’'-]*(?: (?:(?:&|of|de|du|von|van) )?[A-Z][\w&.’'-]*){0,3})"
ROLES = (r"developer|dev|engineer|designer|manager|student|researcher|scientist|analyst|architect|founder|"
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
_SELF_NAMED = _IM + r" " + _TITLE + CAPITALISED_WORD + r"(?: [A-Z][\w-]+)?(?:, | [-—] )"
LANGUAGES = (r"English|French|German|Spanish|Italian|Portuguese|Dutch|Polish|Swedish|Danish|Norwegian|"
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
    _rule("name", r"^" + _IM + r" " + _TITLE + r"(?!(?:" + LANGUAGES + r")\b)" + _NAME
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
    _rule("role", r"^((?:[\w-]+ ){0,2}?(?:" + ROLES + r")) here\b", "fact", "fact", "core", 0.85,
          "The user's role", "The user is a {0}.", I),
    _rule("role", _SELF_NAMED + r"(?i:a|an|the)(?: (?i:only|sole|lead|resident))? ((?:[\w-]+ ){0,3}?(?i:"
          + ROLES + r"))\b", "fact", "fact",
          "core", 0.85, "The user's role", "The user is a {0}."),
    _rule("role", _I + r"(?i: work as| am working as|'m working as) (?i:a|an) ((?:[\w-]+ ){0,3}?(?:" + ROLES
          + r"))\b", "fact", "fact", "core", 0.9, "The user's role", "The user is a {0}.", I),
    _rule("role", r"\b(?i:my (?:day |full-time |main )?job is(?: as)?) (?i:a|"
          r"an) ((?:[\w-]+ ){0,3}?(?:" + ROLES
          + r"))\b", "fact", "fact", "core", 0.85, "The user's role", "The user is a {0}.", I),
    # "I am receptionist at Hotel Marisol": no article, but a workplace right after.
    _rule("role", _IM + r" ((?:" + ROLES + r")) (?=(?:at|for|with|in|since)\b)", "fact", "fact", "core", 0.8,
          "The user's role", "The user is a {0}.", I),
    _rule("employer", _IM + r" (?i:" + ROLES + r") (?i:at|for|with) " + _ORG, "fact", "fact", "high", 0.8,
          "Where the user works", "The user works at {0}."),
    _rule("employer", _IM + r" [^,.!?\n]{3,60}? (?i:and) (?i:work|am working) (?i:at|"
          r"for) " + _ORG, "fact", "fact", "high", 0.8,
          "Where the user works", "The user works at {0}."),
    _rule("role", r"^(?i:as an?) ((?:[\w-]+ ){0,3}?(?:" + ROLES + r"))\b", "fact", "fact", "core", 0.85,
          "The user's role", "The user is a {0}.", I),
    _rule("role", _IM + r" (?:(?i:also|actually|currently|now) )?(?i:a|an|the) ((?:[\w-]+ ){0,3}?(?:" + ROLES
          + r"))s?\b(?!\s+(?:of|to|in)\s+(?:my|the|a)\b)", "fact", "fact", "core", 0.9, "The user's role",
          "The user is a {0}.", I),
    _rule("employer", _I + r"(?i: work| am working|'m working|’m working)(?: (?i:as (?:a|"
          r"an) (?:[\w-]+ ){0,3}?(?:"
          + ROLES + r")))? (?i:at|for) " + _ORG, "fact", "fact", "high", 0.9,
          "Where the user works", "The user works at {0}."),
    _rule("employer", r"(?:" + _SELF_NAMED + r"|" + _IM + r" )(?i:a|an|the) (?:[\w-]+ ){0,3}?(?i:" + ROLES
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
          r"(?i:speak|read and speak|speak and read) ((?i:" + LANGUAGES + r")(?:(?:, | and |/)(?i:"
          + LANGUAGES
          + r"))*)", "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", _IM + r" (?:(?i:a|an) )?(?i:native|fluent|first-language|bilingual) ((?i:" + LANGUAGES
          + r")(?:(?: and |/)(?i:" + LANGUAGES + r"))*) (?i:speaker)", "fact", "fact", "normal", 0.9,
          "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", r"^((?i:" + LANGUAGES + r")) (?i:is my (?:native|first|mother) (?:language|tongue))\b",
          "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", _IM + r" (?:(?i:also|quite|pretty|very|reasonably) )?(?i:fluent|conversational|"
          r"proficient|native) (?i:in) ((?i:" + LANGUAGES + r")(?:(?:, | and |/)(?i:" + LANGUAGES + r"))*)",
          "fact", "fact", "normal", 0.9, "Languages the user speaks", "The user speaks {0}."),
    _rule("languages", r"\b(?i:my (?:native|first|mother) (?:language|tongue) is) ((?i:" + LANGUAGES
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
          + LANGUAGES + r")\b",
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
    # A decision that replaces one taken before: "we're switching the created_at index to BRIN",
    # "let's replace Celery with django-q2". The write checks then supersede the older one.
    _rule("decision", r"\b(?i:let'?s|we'?ll|we will|we(?:'re| are)(?: now)?|time to) (?i:switch(?:ing)?|"
          r"migrat(?:e|ing)|go(?:ing)? back) "
          r"((?:(?i:the|our) )?[^!?\n]{0,60}?(?i:to|over to) [^!?\n]{2,100}?)"
          + _STOP, "decision", "fact", "high", 0.8, "A decision", "Decided to switch {0}."),
    _rule("decision", r"\b(?i:let'?s|we'?ll|we will|we(?:'re| are)(?: now)?|time to) (?i:replac(?:e|ing)) "
          r"([^!?\n]{2,60}? (?i:with|by) [^!?\n]{2,100}?)" + _STOP, "decision", "fact", "high", 0.8,
          "A decision", "Decided to replace {0}."),
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


# Each rule's title, for memories another extractor proposes under the same rule.
TITLES = {rule.name: rule.title for rule in USER_RULES} | {"solution": "A fix"}


# What the assistant asked, and how the user's reply gives the answer at its start:
# "What languages are you comfortable in?" "English and Tagalog, both fluently."
ANSWER_RULES = (
    (re.compile(r"\blanguages?\b[^?]*\byou\b[^?]*\b(?:speak|comfortable|fluent|understand)\b[^?]*\?", I),
     re.compile(r"^(?:(?i:mostly|mainly|just|only) )?((?i:" + LANGUAGES + r")(?:(?:, | and |/| & )(?i:"
                + LANGUAGES + r"))*)(?=[,.!]|\s+(?:(?i:both|fluently|mostly|natively))\b|$)"),
     Rule("languages", re.compile(""), "fact", "fact", "normal", 0.85, "Languages the user speaks",
          "The user speaks {0}.")),
    (re.compile(r"\bwhere (?:do you live|are you based|are you located|are you living)\b[^?]*\?", I),
     re.compile(r"^(?:(?i:in|near|outside) )?" + _PLACE + r"(?=[,.!]|$)"),
     Rule("location", re.compile(""), "fact", "fact", "high", 0.85, "Where the user lives",
          "The user lives in {0}.")),
)
