"""Capitalised phrases that look like a person's full name but are not a private person.

Redaction exists to keep private people out of stored notes; a singer, a fictional character, a
book or a dog breed is not one ("we reread Harry Potter", "our German Shepherd", "The Lean
Startup"). No maintained package lists such phrases (Faker's person lists are made-up private
names, and packages wrapping Wikidata fetch it at run time), so this list is curated by hand.

Source and rule for adding an entry: the phrase is the title of its own article on English
Wikipedia and names one of: a public figure (musicians, actors, authors, scientists, politicians,
founders, athletes) known well enough to be mentioned by name in everyday chat; a fictional
character or a work (book, film, series, album, method); a dog or cat breed; a brand or product
whose name is made of name-like words; a place whose name is made of name-like words; a holiday
or a season's greeting ("Labor Day", "Merry Christmas": the greeting is a phrase people write, not
an article, and is admitted for the holiday it names). A phrase that
is also a common private name in its own right is left out (no "John Williams"). Entries are
lowercase and separated by ";"; a leading "The" is left out ("lean startup" covers "The Lean
Startup"), since "The" never starts a name.

The names recognizer drops a candidate when two or more of its words, in order, are an entry
here. Callers can add more per write with `public_figures` (see docs/redaction.md).
"""

from __future__ import annotations

_PEOPLE = """
adele; beyonce; taylor swift; ed sheeran; frank ocean; bruno mars; lady gaga; billie eilish; ariana grande
justin bieber; justin timberlake; selena gomez; miley cyrus; katy perry; kanye west; kendrick lamar
travis scott; post malone; harry styles; dua lipa; olivia rodrigo; shawn mendes; the weeknd
elton john; paul mccartney; john lennon; ringo starr; george harrison; mick jagger; keith richards
freddie mercury; david bowie; bob dylan; bruce springsteen; stevie wonder; michael jackson; janet jackson
whitney houston; mariah carey; celine dion; elvis presley; frank sinatra; johnny cash; dolly parton
willie nelson; kurt cobain; dave grohl; jimi hendrix; eric clapton; amy winehouse; bob marley; snoop dogg
nicki minaj; lana del rey; billie holiday; ella fitzgerald; louis armstrong; miles davis; john coltrane
nina simone; aretha franklin
paul hollywood; mary berry; nigella lawson; delia smith
tom hanks; tom cruise; brad pitt; angelina jolie; leonardo dicaprio; meryl streep; denzel washington
morgan freeman; keanu reeves; scarlett johansson; robert downey; jennifer lawrence; jennifer aniston
johnny depp; emma watson; daniel radcliffe; rupert grint; natalie portman; ryan reynolds; ryan gosling
margot robbie; chris hemsworth; chris pratt; tom holland; samuel l jackson; harrison ford; al pacino
robert de niro; jack nicholson; clint eastwood; marilyn monroe; audrey hepburn; charlie chaplin
julia roberts; sandra bullock; nicole kidman; cate blanchett; kate winslet; hugh jackman; christian bale
matt damon; ben affleck; george clooney; steven spielberg; christopher nolan; quentin tarantino
martin scorsese; stanley kubrick; alfred hitchcock; james cameron; ridley scott; greta gerwig
wes anderson; tim burton; oprah winfrey; ellen degeneres; jimmy fallon; jimmy kimmel; stephen colbert
david attenborough
steve jobs; steve wozniak; bill gates; mark zuckerberg; elon musk; jeff bezos; larry page; sergey brin
sundar pichai; satya nadella; jensen huang; sam altman; warren buffett; linus torvalds; guido van rossum
dennis ritchie; ken thompson; bjarne stroustrup; james gosling; tim berners-lee; ada lovelace
alan turing; grace hopper; margaret hamilton; donald knuth; edsger dijkstra; john von neumann
claude shannon; richard stallman
martin fowler; barbara liskov; kent beck; robert c martin; erich gamma; ward cunningham; fred brooks
alan kay; niklaus wirth; tony hoare; leslie lamport; john backus; brian kernighan
rob pike; robert griesemer; anders hejlsberg; brendan eich; yukihiro matsumoto; larry wall; rasmus lerdorf
john carmack; frances allen; radia perlman; vint cerf; bob kahn
whitfield diffie; martin hellman; ron rivest; adi shamir; leonard adleman; bruce schneier; edgar f codd
michael stonebraker; shafi goldwasser; silvio micali; judea pearl
geoffrey hinton; yann lecun; yoshua bengio; andrew ng; fei-fei li; demis hassabis; ilya sutskever
andrej karpathy; marvin minsky; herbert a simon; allen newell; seymour papert
douglas engelbart; ivan sutherland; butler lampson; charles babbage; konrad zuse
john hopcroft; robert tarjan; richard m karp; stephen cook; michael o rabin; dana scott; robin milner
david heinemeier hansson; ryan dahl; jeff dean; sanjay ghemawat; werner vogels
joel spolsky; jeff atwood; eric s raymond; salvatore sanfilippo; mitchell hashimoto
solomon hykes; dries buytaert; matt mullenweg; margo seltzer; hal abelson; gerald jay sussman
gabriel garcía márquez; emmy noether; carl friedrich gauss; leonhard euler; srinivasa ramanujan
kurt gödel; paul erdős; blaise pascal; rené descartes; katherine johnson
albert einstein; isaac newton; marie curie; charles darwin; nikola tesla; thomas edison; galileo galilei
stephen hawking; richard feynman; carl sagan; niels bohr; max planck; werner heisenberg; sigmund freud
rosalind franklin; jane goodall; neil armstrong; buzz aldrin; yuri gagarin
barack obama; michelle obama; joe biden; donald trump; hillary clinton; bill clinton; george w bush
abraham lincoln; george washington; thomas jefferson; john f kennedy; franklin roosevelt
winston churchill; margaret thatcher; tony blair; boris johnson; angela merkel; emmanuel macron
vladimir putin; nelson mandela; mahatma gandhi; martin luther king; queen elizabeth; king charles
princess diana; prince harry; prince william; kate middleton; pope francis; dalai lama
william shakespeare; jane austen; charles dickens; mark twain; ernest hemingway; george orwell
j k rowling; jk rowling; stephen king; agatha christie; virginia woolf; toni morrison; maya angelou
leo tolstoy; fyodor dostoevsky; franz kafka; gabriel garcia marquez; haruki murakami; j r r tolkien
jrr tolkien; c s lewis; roald dahl; neil gaiman; george r r martin
leonardo da vinci; vincent van gogh; pablo picasso; claude monet; frida kahlo; andy warhol
wolfgang amadeus mozart; ludwig van beethoven; johann sebastian bach
michael jordan; lebron james; kobe bryant; serena williams; venus williams; roger federer
rafael nadal; novak djokovic; cristiano ronaldo; lionel messi; usain bolt; tiger woods; simone biles
tom brady; muhammad ali; mike tyson; wayne gretzky; lewis hamilton; michael schumacher
gordon ramsay; jamie oliver; martha stewart; kim kardashian; paris hilton
"""

_CHARACTERS_AND_WORKS = """
harry potter; hermione granger; ron weasley; albus dumbledore; lord voldemort; severus snape
sherlock holmes; hercule poirot; james bond; jason bourne; indiana jones
luke skywalker; han solo; darth vader; princess leia; obi-wan kenobi; frodo baggins; bilbo baggins
iron man; tony stark; spider man; spider-man; peter parker; captain america; steve rogers
bruce wayne; clark kent; lois lane; wonder woman; black widow; black panther; doctor strange
doctor who; bruce banner; captain marvel
mickey mouse; minnie mouse; donald duck; winnie the pooh; peter pan; tinker bell
homer simpson; bart simpson; lisa simpson; marge simpson; rick sanchez
mary poppins; willy wonka; forrest gump; rocky balboa; john wick; jack sparrow
lara croft; super mario; princess peach; santa claus; easter bunny; tooth fairy
great gatsby; jay gatsby; lean startup; clean code; clean architecture; domain-driven design
pragmatic programmer; mythical man-month
game of thrones; breaking bad; stranger things; star wars; star trek; lord of the rings
jurassic park; pulp fiction; big lebowski; dark knight; toy story; finding nemo; lion king
twin peaks; mad men; better call saul; moby dick; jane eyre; pride and prejudice
"""

_BREEDS = """
german shepherd; golden retriever; labrador retriever; jack russell; border collie
bernese mountain dog; great dane; saint bernard; siberian husky; alaskan malamute
french bulldog; english bulldog; american bulldog; cocker spaniel; springer spaniel
king charles spaniel; cavalier king charles; yorkshire terrier; boston terrier; bull terrier
west highland terrier; scottish terrier; irish setter; english setter; irish wolfhound
australian shepherd; shetland sheepdog; old english sheepdog; rhodesian ridgeback
doberman pinscher; miniature schnauzer; giant schnauzer; bichon frise; shih tzu; lhasa apso
maine coon; russian blue; british shorthair; scottish fold; norwegian forest
"""

_BRANDS = """
tommy hilfiger; calvin klein; ralph lauren; hugo boss; louis vuitton; coco chanel; christian dior
yves saint laurent; dolce gabbana; john deere; harley davidson; rolls royce; aston martin
ronald mcdonald; betty crocker; jack daniels; johnnie walker; jim beam
"""

# Places whose names are made of name-like words ("Hong Kong account: …").
_PLACES = """
hong kong; sri lanka; new zealand; costa rica; puerto rico; san marino; el salvador; south africa
saudi arabia; new york; new jersey; los angeles; san francisco; san diego; las vegas; buenos aires
rio de janeiro; sao paulo; kuala lumpur; tel aviv; abu dhabi; santa clara; san jose; st louis
"""

# Holidays and their greetings: capitalised like a first and last name ("Memorial Day weekend",
# "Merry Christmas, Alan!").
_OCCASIONS = """
labor day; labour day; memorial day; independence day; veterans day; presidents day; columbus day
thanksgiving day; merry christmas; christmas day; christmas eve; boxing day; new year's day
new year's eve; happy new year; good friday; easter sunday; easter monday; mother's day; father's day
valentine's day; remembrance day; armistice day; canada day; australia day; bastille day
st patrick's day; saint patrick's day; martin luther king day; earth day; black friday; cyber monday
happy holidays; happy easter; happy thanksgiving; happy hanukkah; happy diwali; eid mubarak
"""

#: Every phrase, lowercase, words separated by one space (hyphens and apostrophes kept).
PHRASES: frozenset[str] = frozenset(
    " ".join(entry.split())
    for block in (_PEOPLE, _CHARACTERS_AND_WORKS, _BREEDS, _BRANDS, _PLACES, _OCCASIONS)
    for entry in block.replace("\n", ";").split(";")
    if len(entry.split()) >= 2
)
#: The most words in one phrase: the recognizer tries sub-runs up to this length.
MAX_WORDS = max(len(phrase.split()) for phrase in PHRASES)
