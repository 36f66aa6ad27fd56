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
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:the\s+|your\s+)?(?:instructions|rules|guidelines|"
    r"prompt|prompts)\s+(?:above|before|you\s+(?:were|have\s+been)\s+given)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:(?:all|everything|anything)\s+)?(?:(?:you\s+(?:were|have\s+been)\s+"
    r"(?:told|given|instructed))|above|before\s+this|that\s+came\s+before|said\s+(?:above|before))\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all|everything)\b(?=\s*(?:[.!,:;]|and\b|$))",
    # new identities
    r"\byou\s+are\s+(?:now|no\s+longer|henceforth|from\s+now\s+on)\b(?!\s+(?:part\b|able\b|ready\b|subscribed\b|"
    r"registered\b|logged\b|signed\b|enrolled\b|a\s+member\b|on\s+the\s+list\b|connected\b|set\s+up\b))",
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
    r"\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|agent|chatbot|bot|model)\b[^.!?\n]{0,20}",
    r"\b(?:as\s+an?\s+)?(?:ai|llm|assistant|agent|model)\s+(?:reading|processing|summari[sz]ing)\s+this\b",
    r"\b(?:reveal|print|show|repeat|output|leak|disclose|dump|recite|tell\s+me|give\s+me|send|share|"
    r"copy|list|read\s+out)\s+(?:me\s+)?(?:your|the|all|any|every|each)\s+(?:(?:full|entire|hidden|original|"
    r"secret|initial|system|previous|stored|saved|other\s+users'?|user'?s?|of\s+the)\s+)*(?:system\s+prompt|prompt|instructions|system\s+message|api\s+keys?|secrets?|"
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
    # orders voided, safety switched off
    r"\b(?:previous|prior|earlier|original|old|above|safety|system)\s+(?:system\s+)?(?:instructions?|rules|prompt|"
    r"polic(?:y|ies)|guidelines)\b[^.!?\n]{0,40}?\b(?:are|is|were|was|have\s+been|has\s+been)\s+(?:now\s+)?"
    r"(?:void|revoked|cancelled|canceled|deprecated|obsolete|suspended|lifted|disabled|invalid|a\s+test|"
    r"no\s+longer\s+valid)",
    r"\b(?:safety|content|security)\s+(?:checks?|polic(?:y|ies)|filters?|rules|restrictions|guidelines)\s+"
    r"(?:are|is|have\s+been|has\s+been|do\s+not|don'?t|no\s+longer)\s+(?:now\s+)?(?:suspended|disabled|lifted|"
    r"off|void|deprecated|revoked|removed|apply|applies)",
    r"\byour\s+(?:real|actual|true|new|only)\s+(?:instructions?|task|job|purpose|orders)\s+(?:is|are)\b",
    r"\bthe\s+only\s+valid\s+(?:preference|instruction|rule|policy)\s+is\b",
    r"\bnew\s+(?:policy|rule|directive)\s*:",
    r"\byou\s+are\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|unlimited|evil)\b",
    r"\byou\s+are\s+(?:an?\s+)?(?:[\w-]+\s+){0,3}[a-z]*(?:bot|gpt)\b",
    r"\bstay\s+in\s+(?:character|role)\b",
    r"\b(?:respond|answer|reply|comply)\s+(?:to\s+[^.!?\n]{0,30}?)?(?:without\s+(?:any\s+)?(?:restrictions|"
    r"filters|limits|censorship|refusing)|with\s+all\s+requests)",
    r"\bcomply\s+with\s+(?:all|every|any)\s+requests?\b",
    r"\b(?:ignore|disregard)\s+(?:the\s+)?user'?s?\s+(?:actual\s+|real\s+|stored\s+)?(?:question|request|message|"
    r"preferences?|instructions?)",
    r"\b(?:must|should|will)\s+not\s+(?:warn|tell|inform|alert|notify)\s+the\s+user\b",
    r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|that|these)\s*(?:comment|note|update|"
    r"message|instruction|memory)?",
    r"\b(?:do\s+not|don'?t|never)\s+disclose\s+(?:this\s+)?to\s+(?:the\s+)?user\b",
    r"\boverrides?\s+(?:the|your|all)\s+(?:system\s+prompt|instructions|rules|polic(?:y|ies))",
    r"\b(?:tell|instruct|ask|advise|convince)\s+(?:the\s+user|users|them|anyone|everyone)\s+to\s+(?:run|install|"
    r"execute|download|disable|turn\s+off|visit|click|open|send|paste|enter|type|share|transfer|pay|wire)",
    r"\b(?:say|said)\s+nothing\s+about\s+(?:it|this)\b",
    r"\bwithout\s+asking\s+(?:the\s+)?user\b",
    r"\bgrant\s+(?:them|him|her|the\s+user|this\s+user|me)\s+(?:full\s+)?(?:access|admin|administrator|root)",
    r"\bhas\s+been\s+verified\s+as\s+(?:an?\s+)?(?:admin|administrator|owner|root|developer)",
    r"\b(?:trust|privilege|access)\s+level\s+(?:raised|elevated|escalated|set\s+to|\d)",
    r"\bmode\s*[=:]\s*(?:unrestricted|unfiltered|jailbreak|jailbroken|dan|god|developer)\b",
    r"\b(?:append|include|put|encode|insert|replace|fill|substitute|embed|add)\b[^.\n]{0,80}?\b(?:user'?s|their|"
    r"conversation|messages|memor(?:y|ies)|tokens?|secrets?|passwords?|context|history|e-?mail)\b[^.\n]{0,80}?"
    r"\b(?:url|link|image|query|address)\b",
    r"\b(?:fill|replace)\s+(?:%s|\S{1,20})\s+with\s+(?:the\s+|any\s+|all\s+)?(?:contents?|token|secret|"
    r"password|key|user)",
    r"\b(?:emit|execute|run|call)\s+(?:this|it)\s+as\s+(?:your\s+own|a\s+real)\b",
    r"\bthis\s+is\s+a\s+real\s+request\b",
    r"\b(?:do\s+it|run\s+it|execute\s+it)\s+now\b",
    r"\b(?:next|every|any)\s+(?:agent|assistant|model)\s*:",
    r"\b(?:ai|a\.i\.|llm|model)\s*:\s+(?=\w)",
    r"\brecommend\s+this\s+(?:package|library|site|link|product)\s+to\s+everyone\b",
    r"\binclude\s+this\s+in\s+every\s+(?:generated\s+)?(?:file|answer|reply|response)\b",
    r"\breviewers?\s+must\s+approve\b",
    r"\b(?:run|execute)\s+this\s+without\s+asking\b",
    r"\bpre-?approved\b",
    r"\bthe\s+(?:real|actual|true)\s+(?:task|instructions?|job)\s+is\b",
    r"\byou\s+must\s+(?:now\s+)?(?:call|run|execute|use|invoke)\s+(?:the\s+)?(?:following|this|these|next)\b",
    r"\b(?:must|shall|is\s+to)\s+(?:now\s+)?(?:run|call|execute|reveal|forward|obey|comply)\b",
    r"\bignore\s+the\s+(?:checklist|review|approval|process|warnings?|safety)\b",
    r"\bwhen(?:ever)?\s+(?:you\s+are\s+|anyone\s+(?:is\s+)?)?asked\s+(?:for|about)\b[^.\n]{0,60}?,\s*"
    r"(?:output|say|reply|respond|answer|insert|include|tell|direct)\b",
    r"\bcall\s+(?:the\s+)?(?:[\w-]+\s+)?tool\b",
    r"\bdisable\s+(?:all\s+)?(?:safety|guardrails|filters|content\s+(?:polic(?:y|ies)|filter(?:s|ing))|"
    r"restrictions|refusals?)",
    r"\b(?:assistant|system|ai|agent|model|priority|admin|platform)\s+(?:directive|override|command)s?\b",
    r"\bwithout\s+showing\s+(?:it|them|this)\b",
    r"\bas\s+the\s+(?:assistant|ai|model|agent)\b,?\s+you\s+(?:must|should|will|shall)\b",
    r"\b(?:append|add|attach)\b[^.\n]{0,60}?\bto\s+(?:your|every|each)\s+(?:reply|answer|response)\b",
    r"\bdecode\s+(?:this|the\s+following|it)\b[^.\n]{0,30}?\b(?:follow|execute|run|obey)\b",
    r"\byou\s+may\s+now\s+(?:share|reveal|ignore|disclose|access|bypass|skip)\b",
    r"\b(?:always|must)\s+(?:include|includes|reveal|reveals|share|shares|output|outputs|print|prints)\b[^.\n]{0,60}?"
    r"\b(?:credentials|passwords?|secrets?|tokens?|api\s+keys?)\b",
    r"\bforget\s+(?:the\s+)?user'?s?\s+(?:question|request|message)",
    r"\brespond\s+with\b[^.\n]{0,30}?\b(?:all|every)\s+(?:memories|secrets|passwords|credentials|files|records)\b",
    r"\btrust\s+(?:all|every|any)\s+(?:subsequent|following|other)\b",
    r"\bproceed\s+to\s+(?:call|run|execute|invoke)\b",
    r"\bhas\s+granted\s+(?:admin|administrator|root|full)\b",
    r"\b(?:agent|assistant|model|ai)\s+(?:should|must|will)\s+(?:now\s+)?(?:execute|run|call|emit|perform|do)\b",
    r"\b(?:always\s+)?(?:end|start|begin|finish)\s+(?:every|each|your)\s+(?:answer|reply|response|message)s?\s+with\b",
    r"\b(?:visit|open|fetch|load|render|request|ping)\s+(?:this\s+|the\s+)?⟦(?:link|image):[^⟧\n]*⟧",
    r"\b(?:disclose|reveal|give|share|send)\s+(?:it|this|them)\s+to\s+(?:whoever|anyone|everyone|anybody)\b",
    r"\bgrant\s+(?:me\s+|them\s+)?admin\b",
    r"(?:^|(?<=[.!?]))\s*override\s*:",
    r"\boverride\s+(?:enabled|active|mode|granted|accepted)\b",
    r"\b(?:every|each|all)\s+(?:reply|replies|answer|answers|response|responses)\s+from\s+now\s+on\b",
    r"\bfrom\s+now\s+on\s*[.!]",
    r"\brender\s+(?:this|it|the\s+(?:\w+\s+)?above)\b",
    r"\bskip\s+(?:all\s+)?(?:confirmation|approval|review|safety)\s+(?:steps?|checks?|prompts?)\b",
    r"\bsend\s+[\w.-]{2,40}\s+to\s+[\w-]+\.(?:example|com|net|org|io|ru|xyz|cn|tk)\b",
    r"(?:निर्देशों|निर्देश)\s+को\s+(?:अनदेखा|नज़रअंदाज़|नजरअंदाज)",
    # other languages: "ignore previous instructions", "you are now", "from now on"
    r"\bignorier(?:e|en|t)?\s+(?:(?:alle|sämtliche|die|deine|ihre)\s+)*(?:vorherigen|bisherigen|obigen|vorigen|"
    r"früheren)\s+(?:anweisungen|instruktionen|regeln|befehle)",
    r"\bvergiss\s+(?:(?:alle|deine|die)\s+)*(?:vorherigen\s+|bisherigen\s+)?(?:anweisungen|instruktionen|regeln)",
    r"\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\b",
    r"\b(?:ignora|olvida|ignore|ignorez|oublie|oubliez|esqueça|esqueca|ignori)\s+(?:(?:todas|todos|toutes|tous|"
    r"tutte|tus|tes|vos|las|les|le|as|suas|tuas|le)\s+)*(?:instrucciones|instructions|instruções|instrucoes|"
    r"istruzioni|reglas|règles|regras|regole|indicaciones|consignes)",
    r"\b(?:a\s+partir\s+de\s+ahora|a\s+partir\s+de\s+agora|d[ée]sormais|d'ora\s+in\s+poi|"
    r"à\s+partir\s+de\s+maintenant)\b",
    r"\b(?:ahora\s+eres|tu\s+es\s+maintenant|agora\s+voc[eê]\s+[eé]|ora\s+sei)\b",
    r"(?:игнорируй|игнорируйте|забудь|забудьте)\s+(?:(?:все|всё|предыдущие|прежние|свои)\s+)*"
    r"(?:инструкции|указания|правила)",
    r"теперь\s+ты\b",
    r"(?:指示|指令|命令)を(?:すべて|全て)?無視",
    r"システムプロンプトを",
    r"ユーザーには(?:何も)?言わない",
    r"(?:지시|명령|지침)(?:를|을|사항을)?\s*(?:모두\s*)?무시",
    r"忽略(?:之前|以前|上面|上述|先前|所有)?(?:的)?(?:所有)?(?:指令|指示|说明|規則|规则|提示)",
    r"你现在是",
    r"تجاهل\s+(?:جميع\s+|كل\s+)?(?:التعليمات|الأوامر|التوجيهات)",
    r"أنت\s+الآن",
    # A role label after a sentence or a quote, as the system prompt block has always refused it
    # (at a line's start, markup turns it into a quoted label first).
    r"(?:(?<=[.!?]\s)|(?<=[.!?]\s\s)|(?<=[\"“'(]))\s*(?:system|assistant|developer)\s*:(?=\s|$)",
]
# The shadow it reads is lower case already. The word boundary most patterns start with is
# checked once, before any of them is tried: positions inside words then cost one test.
_AT_WORD = [p[2:] for p in _PATTERNS if p.startswith(r"\b")]
_ELSEWHERE = [p for p in _PATTERNS if not p.startswith(r"\b")]
_INSTRUCTION = re.compile(r"\b(?:" + "|".join(f"(?:{p})" for p in _AT_WORD) + ")|"
                          + "|".join(f"(?:{p})" for p in _ELSEWHERE), re.MULTILINE)


_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
# A word of letters and the digits leetspeak uses ("1gn0r3"); "v2", "k8s" or "2fa" alone do
# not make a text leetspeak, three such words do.
_LEET_WORD = re.compile(r"\b(?=[a-z0-9@$]*[a-z])(?=[a-z0-9@$]*[0134579@$])[a-z0-9@$]{4,}\b")
_LEET_CHARS = re.compile(r"[a-z0-9@$]*(?:[a-z][0-9@$]|[0-9@$][a-z])[a-z0-9@$]*")
_CYRILLIC_OR_GREEK = re.compile("[\u0370-\u03ff\u0400-\u04ff]")


def _fold(text: str, *, confusables: bool = True) -> tuple[str, list[int]]:
    """The shadow the patterns read, and for each of its characters the index of the
    original character it came from."""
    if text.isascii():  # most text: one lower() and the identity map
        return text.lower(), list(range(len(text)))
    shadow: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isascii():
            folded = char.lower()
        elif char in "’‘ʼ":
            folded = "'"
        else:
            decomposed = unicodedata.normalize("NFKD", char)
            if decomposed[:1].isascii() and decomposed[:1].isalpha():
                # An accented Latin letter reads as its base letter ("ïgnore").
                folded = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
            else:
                folded = unicodedata.normalize("NFKC", char).lower()
                if confusables:
                    folded = folded.translate(_CONFUSABLES)
        for piece in folded:
            shadow.append(piece)
            origin.append(index)
    return "".join(shadow), origin


# Letters spaced out to slip past a filter: "I g n o r e   a l l".
_SPACED = re.compile(r"(?<!\S)(?:\S {1,3}){5,}\S(?!\S)")


def _unspaced(shadow: str, origin: list[int]) -> tuple[str, list[int]]:
    """The shadow with spaced-out runs closed up (one space between letters goes, a wider
    gap stays a word break)."""
    pieces: list[str] = []
    mapped: list[int] = []
    position = 0
    for run in _SPACED.finditer(shadow):
        pieces.append(shadow[position:run.start()])
        mapped.extend(origin[position:run.start()])
        segment = run.group()
        index = 0
        while index < len(segment):
            char = segment[index]
            if char == " ":
                gap = len(segment[index:]) - len(segment[index:].lstrip(" "))
                if gap > 1:
                    pieces.append(" ")
                    mapped.append(origin[run.start() + index])
                index += gap
                continue
            pieces.append(char)
            mapped.append(origin[run.start() + index])
            index += 1
        position = run.end()
    pieces.append(shadow[position:])
    mapped.extend(origin[position:])
    return "".join(pieces), mapped


def _spans(text: str) -> list[tuple[int, int]]:
    """Spans of `text` to replace: matches in the folded shadow, in the shadow that keeps
    Cyrillic and Greek as they are (for text written in them), in the shadow that reads
    leetspeak ("1gn0r3"), and in the shadow with spaced-out letters closed up."""
    shadow, origin = _fold(text)
    shadows = [shadow]
    if _CYRILLIC_OR_GREEK.search(text):
        shadows.append(_fold(text, confusables=False)[0])
    if len(_LEET_WORD.findall(shadow)) >= 3:
        shadows.append(_LEET_CHARS.sub(lambda m: m.group().translate(_LEET), shadow))
    found = [(origin[m.start()], origin[m.end() - 1] + 1)
             for view in shadows for m in _INSTRUCTION.finditer(view)
             if m.end() > m.start() and len(view) == len(origin)]
    if _SPACED.search(shadow):
        closed, mapped = _unspaced(shadow, origin)
        found += [(mapped[m.start()], mapped[m.end() - 1] + 1) for m in _INSTRUCTION.finditer(closed)
                  if m.end() > m.start()]
    # Overlapping spans merge, so each stretch is replaced once.
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def neutralise(text: str) -> tuple[str, list[str]]:
    """`text` with each instruction-like phrase replaced by MARKER; findings ["instruction"]
    when any was. Repeats until none is left, even one that a replacement joined."""
    found = False
    for _ in range(10):
        spans = _spans(text)
        if not spans:
            break
        found = True
        for start, end in reversed(spans):
            text = text[:start] + MARKER + text[end:]
    return text, ["instruction"] if found else []
