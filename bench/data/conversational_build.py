"""Writes bench/data/conversational.jsonl: a synthetic, LoCoMo-style conversational recall set.

Twelve long dialogues between two invented people over 15-25 dated sessions each, one
record per turn, and about forty questions per dialogue of four kinds (single, temporal,
multihop, open) with the turns that answer them. Deterministic (fixed seed), pure Python.

    .venv/bin/python bench/data/conversational_build.py

How a dialogue is made:
1. Two people get a profile (home city, job, pet, three people in their lives, hobbies);
   some of it changes part-way (a move, a new job, a second pet), so "where did X live
   in early 2024" has an answer that depends on the date.
2. Events (a book finished, a dish cooked, an injury, a trip, ...) are planned into the
   sessions, follow-ups always in a later session than what they follow up.
3. Each session is rendered as alternating turns: greetings, the events (a fact turn
   plus the other person's reaction; about a fifth of fact turns are long rambles with
   the fact at the end), small talk and chit-chat, a goodbye.
4. Questions are drawn from what was rendered, each with the ids of the turns that
   state its answer, and checked (validate()).

Every rare detail (a title, a pet's name, a city) is stated in the turns the questions
name as evidence and nowhere else: reactions and follow-up questions stay vague on
purpose, so a hit on another turn is a miss, not an unlabelled answer.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

SEED = 20240917
OUT = Path(__file__).resolve().parent / "conversational.jsonl"
N_DIALOGUES = 12
# Questions per dialogue, by kind (40 in all).
QUOTAS = {"single": 13, "temporal": 12, "multihop": 9, "open": 6}
# The memory store refuses content shorter than this (memories.limits.CONTENT), and the
# benchmark stores "{speaker}: {text}".
MIN_CONTENT = 10
LONG_SHARE = 0.22

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# --- vocabularies -----------------------------------------------------------------------

SPEAKERS = [
    "Nate", "Priya", "Jonah", "Mireille", "Tobias", "Keiko", "Rafael", "Sunniva", "Dev", "Harriet",
    "Callum", "Amara", "Oskar", "Lucia", "Wes", "Noor", "Felix", "Ines", "Marcus", "Yara", "Bram",
    "Talia", "Kwame", "Elodie",
]
# People the speakers talk about, by the sibling words that fit them.
THIRD_F = ["Lena", "Clara", "Rosa", "Freya", "Nadia", "Bea", "Ingrid", "Zara", "Maren", "Ada", "Vera",
           "Petra",
           "Nell", "Hana", "Greta", "Saoirse", "Leila", "Cleo", "Elsa", "Mina", "Tess", "Lotte", "Hedda",
           "Lila", "Astrid", "Noemi", "Alma", "Signe", "Odile", "Paloma", "Esme", "Ruth", "Ottilie",
           "Marisol"]
THIRD_M = ["Tom", "Jonas", "Hugo", "Milo", "Ravi", "Otto", "Luca", "Theo", "Emil", "Idris", "Arlo", "Silas",
           "Ezra", "Malik", "Anton", "Finn", "Matteo", "Omar", "Jasper", "Rufus", "Dario", "Abel", "Ciaran",
           "Yusuf", "Bastian", "Pablo", "Viktor", "Reuben", "Tariq", "Gus", "Henrik", "Caspar", "Amir",
           "Lars",
           "Benedek", "Teodor"]
THIRD_N = ["Dana", "Kai", "Rowan", "Jude"]
THIRD_PARTIES = THIRD_F + THIRD_M + THIRD_N
SIBLINGS = {"f": ["sister", "older sister", "little sister", "cousin"],
            "m": ["brother", "younger brother", "big brother", "cousin"], "n": ["cousin", "sibling"]}
FRIENDS = ["best friend", "friend from university", "neighbour", "climbing buddy", "oldest friend",
           "friend from choir", "old flatmate"]
COWORKERS = ["coworker", "manager", "desk neighbour at work", "colleague", "team lead"]

HOME_CITIES = [
    "Porto", "Leeds", "Tallinn", "Utrecht", "Ghent", "Bologna", "Valencia", "Krakow", "Aarhus",
    "Bristol", "Glasgow", "Lyon", "Montreal", "Halifax", "Portland", "Tucson", "Asheville", "Madison",
    "Boise", "Wellington", "Hobart", "Adelaide", "Galway", "Cork", "Bergen", "Gothenburg", "Leipzig",
    "Freiburg", "Graz", "Brno", "Seville", "Bilbao", "Nantes", "Bordeaux", "Turin", "Savannah",
    "Pittsburgh", "Dunedin", "Cardiff", "Malmo", "Rotterdam", "Trieste", "Aberdeen", "Tampere",
]
TRIP_PLACES = [
    "Ljubljana", "Kyoto", "Lisbon", "Reykjavik", "Marrakesh", "Oaxaca", "Hanoi", "Tbilisi", "the Azores",
    "the Faroe Islands", "Sicily", "Crete", "the Dolomites", "the Lofoten Islands", "Patagonia",
    "Copenhagen", "Budapest", "Seoul", "Taipei", "Istanbul", "Sarajevo", "Kotor", "Valletta",
    "the Isle of Skye", "Banff", "Big Sur", "New Orleans", "Santa Fe", "Hokkaido", "Bruges", "Salzburg",
    "Dubrovnik", "Mallorca", "Zanzibar", "Cappadocia", "Jordan", "Sardinia", "the Scottish Highlands",
]
TRIP_LENGTHS = ["four days", "a long weekend", "a week", "ten days", "five days", "two weeks"]
# (what the turn says happened, how a question refers to it)
TRIP_HIGHLIGHTS = [
    ("We watched the sunrise from a hot-air balloon", "rode in a hot-air balloon"),
    ("I swam in a freezing crater lake", "went swimming in a volcanic lake"),
    ("we got stuck in a sandstorm for a whole afternoon", "were caught in a dust storm"),
    ("the street food alone was worth the flight", "ate their way through the street stalls"),
    ("we saw puffins nesting on the cliffs", "watched seabirds nesting"),
    ("I finally learned to ride a scooter without screaming", "learned to ride a scooter"),
    ("we hiked to a glacier and heard it crack", "heard a glacier crack"),
    ("a stranger invited us to a wedding", "were invited to a stranger's wedding"),
    ("I took a cooking class in a farmhouse", "did a cooking lesson on a farm"),
    ("we slept in a cave hotel", "stayed overnight in a cave"),
    ("it rained every single day and I still loved it", "had rain every day"),
    ("I got a tattoo from a guy who'd done it for fifty years", "got inked by a veteran tattoo artist"),
    ("we went snorkelling with sea turtles", "swam alongside turtles"),
    ("the night train there was the best part", "travelled on an overnight train"),
]
JOBS = [
    ("data analyst", "at a shipping company"), ("paediatric nurse", "at the children's hospital"),
    ("sous-chef", "in a seafood restaurant"), ("landscape architect", "at a small studio"),
    ("chemistry teacher", "at a secondary school"), ("UX researcher", "at a banking app"),
    ("paramedic", "with the regional ambulance service"), ("structural engineer", "at a bridge consultancy"),
    ("bookshop manager", "in the old town"), ("physiotherapist", "at a sports clinic"),
    ("veterinary nurse", "at an animal hospital"), ("translator", "for a publishing house"),
    ("museum archivist", "at the maritime museum"), ("sound engineer", "at a recording studio"),
    ("urban planner", "for the city council"), ("pharmacist", "at a late-night pharmacy"),
    ("carpenter", "with a restoration firm"), ("marine biologist", "at a coastal research station"),
    ("accountant", "at a mid-sized firm"), ("graphic designer", "at an ad agency"),
    ("librarian", "at the university library"), ("product manager", "at a travel startup"),
    ("dental hygienist", "at a family practice"), ("brewer", "at a craft brewery"),
    ("hotel concierge", "at a grand old hotel"), ("park ranger", "in the national park"),
    ("radio producer", "at the local station"), ("software tester", "at a games company"),
    ("social worker", "for the county"), ("bike mechanic", "at a co-op workshop"),
    ("florist", "with a wedding florist"), ("pastry chef", "at a French bakery"),
    ("air traffic controller", "at the regional airport"), ("court interpreter", "at the district court"),
    ("wind turbine technician", "at an offshore wind farm"), ("midwife", "at the maternity unit"),
    ("cartographer", "at the national mapping agency"), ("sommelier", "at a wine bar"),
]
PET_NAMES = [
    # None of them is a word of a dish, title or place elsewhere in the vocabularies.
    "Biscuit", "Pickle", "Pompom", "Waffles", "Pepper", "Mochi", "Noodle", "Clementine", "Moose",
    "Bramble", "Bobbin", "Ziggy", "Marmalade", "Pretzel", "Cosmo", "Nutmeg", "Pixel", "Sprout", "Truffle",
    "Tinsel", "Gizmo", "Biscotti", "Mango", "Pebble", "Scout", "Bagel", "Churro", "Kiwi", "Rolo",
    "Sesame", "Sorbet", "Wasabi", "Yeti", "Chai", "Fennel", "Rocket", "Jellybean", "Nacho",
    "Parsnip", "Radish", "Crumpet", "Doodle", "Falafel", "Gumbo", "Haggis", "Inkblot",
]
# (species, breeds)
PETS = [
    ("dog", ["border collie", "beagle", "greyhound", "dachshund", "whippet", "corgi", "schnauzer",
             "spaniel mix"]),
    ("cat", ["tabby", "Maine Coon", "ginger", "tuxedo", "Siamese", "Norwegian forest"]),
    ("rabbit", ["lop-eared", "Rex", "Dutch"]),
    ("parrot", ["African grey", "cockatiel"]),
    ("tortoise", ["Hermann's"]),
]
GENRES = [  # (the turn's word, a question's word for it)
    ("mystery", "whodunit"), ("memoir", "autobiography"), ("science-fiction novel", "sci-fi book"),
    ("historical novel", "period novel"), ("fantasy novel", "fantasy book"), ("thriller", "suspense read"),
    ("essay collection", "book of essays"), ("graphic novel", "comic-book novel"),
    ("poetry collection", "volume of poems"), ("romance", "love story"),
    ("true-crime book", "crime nonfiction"),
    ("travel memoir", "travelogue"), ("horror novel", "scary book"),
]
ABOUTS = [
    "a lighthouse keeper who stops answering letters", "two rival beekeepers", "a heist on a night train",
    "a girl who maps forgotten rivers", "the last tram driver in a flooded city",
    "a chef who loses her sense of taste", "a family of clockmakers", "a detective who only works in winter",
    "an orchestra stranded on an island", "a postwoman in the Arctic", "a botanist who smuggles seeds",
    "a ghost who runs a bakery", "a snooker prodigy in the seventies", "a town where nobody can lie",
    "three sisters restoring a ferry", "an astronaut who comes home to a different world",
    "a retired spy who grows dahlias", "a translator hiding a secret", "a forger of antique maps",
    "an island that appears once a century", "a pastry war between two villages",
    "a marathon swimmer crossing the Baltic", "a librarian who catalogues dreams",
    "a road trip with a grandfather's ashes", "a robot that learns to garden", "a murder at a ski lodge",
    "a violin that changes owners over a century", "a ferry captain in the fjords",
    "a cult hiding in a seaside hotel", "a paramedic on night shifts", "a beekeeper turned detective",
    "a village choir that wins a national contest", "a cartoonist losing her sight",
]
TITLE_ADJ = ["Salt", "Lantern", "Paper", "Winter", "Copper", "Glass", "Hollow", "Tidal", "Silent", "Amber",
             "Borrowed", "Crooked", "Distant", "Ember", "Gilded", "Hidden", "Iron", "Marble", "Northern",
             "Quiet", "Scarlet", "Sunken", "Velvet", "Woven", "Folded", "Drowned", "Painted", "Fading"]
TITLE_NOUN = ["Orchard", "Almanac", "Harbour", "Atlas", "Garden", "Cartographer", "Lighthouse", "Archive",
              "Compass", "Ferry", "Kingdom", "Meridian", "Observatory", "Quarry", "Rooftop", "Semaphore",
              "Tannery", "Vineyard", "Workshop", "Aviary", "Bellfounder", "Clocktower", "Dovecote",
              "Estuary", "Foundry", "Glasshouse", "Hourglass", "Inkwell"]
SHOW_A = ["Night", "Static", "Low", "Broken", "Second", "Cold", "Bright", "Slow", "Far", "High", "Long",
          "Open", "Wide", "Deep", "Black"]
SHOW_B = ["Frequency", "Tide", "Signal", "Country", "Horizon", "Circuit", "Weather", "Ground", "Water",
          "Hours", "Crossing", "Precinct", "Valley", "Current", "Division"]
PODCASTS = [
    ("Night Shift Botany", "plants that only flower in the dark"), ("Small Print History", "forgotten laws"),
    ("Tiny Empires", "micronations"), ("The Sandwich Tribunal", "food history"),
    ("Deep Field Notes", "astronomers' mistakes"), ("Overdue", "library books returned decades late"),
    ("Second Breakfast Radio", "hobbit-sized life advice"), ("The Knot Report", "sailing disasters"),
    ("Loud Quiet Loud", "how songs get written"), ("Mapmakers Anonymous", "weird borders"),
    ("The Fermentation Hour", "pickles and sourdough"), ("Unsolved Kitchens", "mysterious recipes"),
    ("Cargo Cult Radio", "shipping containers"), ("Half Marathon Mind", "running psychology"),
    ("The Bone Room", "museum storage rooms"), ("Weather Gossip", "extreme forecasts"),
    ("Slow Burn Ledger", "financial scandals"), ("Carrier Pigeon Hour", "the history of messages"),
    ("Understory", "forest ecology"), ("Nine Lives Later", "cat behaviour science"),
]
RESTAURANTS = [  # (name, what to order: a clause)
    ("Casa Lumbre", "order the grilled octopus"), ("The Brass Ladle", "try whatever soup is on"),
    ("Little Anchor", "get the fish and chips"), ("the Osteria del Vento", "get the handmade pasta"),
    ("Mama Ngozi's", "order the jollof"), ("Kiln", "sit at the counter by the fire"),
    ("The Gilded Fig", "go early for brunch"), ("Dumpling Theory", "order the soup dumplings"),
    ("Taqueria Sol y Luna", "get the al pastor tacos"),
    ("The Hungry Heron", "order a pie the size of your head"),
    ("Saffron Lane", "share the biryani"), ("Bao Collective", "get the fried chicken bao"),
]
TRAILS = [  # (name, why: a clause)
    ("the Ridgeback Loop", "the views over the reservoir are unreal"),
    ("the Old Smugglers' Path", "there are sea caves halfway"),
    ("the Heron Creek trail", "there are herons everywhere"),
    ("the Seven Bridges walk", "it's flat and pretty"),
    ("the Granite Stair", "the last climb is brutal but worth it"),
    ("the Foxglove Ridge hike", "the wildflowers are everywhere in June"),
]
GAMES = [
    ("Tidewatch", "running a harbour"), ("Spice Caravan", "trading across a desert"),
    ("Orchard Rivals", "competing apple farmers"), ("Canal Empire", "building waterways"),
    ("Moth and Lantern", "moths racing to a light"), ("Glacier Mailbag", "delivering mail in the Arctic"),
]
BAND_ADJ = ["Velvet", "Paper", "Electric", "Hollow", "Midnight", "Copper", "Silver", "Lonesome", "Neon",
            "Wandering", "Crooked", "Golden", "Restless", "Burning", "Sleepy"]
BAND_NOUN = ["Tides", "Foxes", "Lanterns", "Pilots", "Ravens", "Satellites", "Harbours", "Engines", "Moths",
             "Arrows", "Comets", "Rivers", "Mirrors", "Wolves", "Kites"]
VENUES = ["the Riverside Arena", "a tiny jazz bar downtown", "an open-air festival", "the old opera house",
          "a warehouse venue by the docks", "the botanical gardens", "a church with amazing acoustics",
          "the student union", "a rooftop bar", "the football stadium"]
DISHES = [
    "a brown-butter risotto", "Sri Lankan dhal", "shakshuka with feta", "mushroom bourguignon",
    "Georgian khachapuri", "pumpkin gnocchi", "a Thai green curry", "black bean tamales",
    "a lamb tagine with apricots", "pierogi from scratch", "a seafood paella", "Vietnamese pho",
    "spanakopita", "jollof rice", "tonkotsu ramen", "beef rendang", "okonomiyaki",
    "a butternut squash lasagne", "chicken adobo", "a pavlova", "tarte tatin", "rosemary focaccia",
    "cardamom buns", "a chocolate babka", "a Basque cheesecake", "peach cobbler", "mapo tofu",
    "fish tacos", "borscht", "arancini", "baklava", "empanadas", "bibimbap", "saag paneer",
    "gazpacho", "crab cakes", "lentil moussaka", "coq au vin", "a plum galette", "pork dumplings",
]
OCCASIONS = [  # (the turn's words, a question's words)
    ("for my neighbours' potluck", "the street potluck"), ("for Mum's birthday", "a parent's birthday"),
    ("for a friend's housewarming", "a housewarming party"),
    ("to use up a mountain of courgettes", "a glut of zucchini"),
    ("for date night", "a romantic evening in"), ("for the office bake sale", "a charity bake sale at work"),
    ("for book club", "the reading group"), ("on a rainy Sunday", "a wet weekend afternoon"),
    ("for my grandparents' anniversary", "the grandparents' wedding anniversary"),
    ("for the choir's end-of-season party", "the choir party"),
    ("for a picnic in the park", "an outdoor picnic"),
    ("to impress my new in-laws", "meeting the in-laws"),
]
INJURIES = [  # (turn: what happened, question: the injury, turn: how, question: how, body part, healed)
    ("sprained my ankle", "a sprained ankle", "playing five-a-side", "at a football game", "ankle", "run"),
    ("broke my wrist", "a broken wrist", "falling off my bike on the cobbles", "in a cycling fall",
    "wrist", "climb"),
    ("pulled a hamstring", "a hamstring strain", "sprinting for the last bus", "chasing public transport",
     "leg", "jog"),
    ("cracked a rib", "a cracked rib", "wiping out on a surfboard", "while surfing", "ribs", "swim"),
    ("twisted my knee", "a twisted knee", "on the very last ski run", "on the slopes", "knee", "hike"),
    ("burned my hand", "a burn", "grabbing a cast-iron pan by the handle", "with hot cookware", "hand",
    "cook"),
    ("dislocated a finger", "a dislocated finger", "blocking a spike at volleyball", "playing volleyball",
     "finger", "play guitar"),
    ("threw out my back", "a back injury", "carrying a sofa up three flights", "helping move furniture",
    "back",
     "lift anything"),
    ("tore a calf muscle", "a torn calf", "jumping off a boulder problem", "at the climbing gym", "calf",
    "run"),
    ("got a concussion", "a concussion", "hitting my head on a low beam in an attic", "on a ceiling beam",
    "head",
     "look at screens"),
    ("chipped a tooth", "a chipped tooth", "biting an olive pit", "on an olive stone", "tooth",
    "eat crusty bread"),
    ("fractured my toe", "a broken toe", "kicking the bed frame at 3am", "against furniture in the night",
     "toe", "wear shoes"),
]
COURSES = [  # (turn, question, short name)
    ("an evening course in Portuguese", "a language class", "Portuguese course"),
    ("a wilderness first-aid course", "an emergency medicine training", "first-aid course"),
    ("a beginners' welding class", "a metalworking class", "welding class"),
    ("a Japanese calligraphy workshop", "a brush lettering class", "calligraphy workshop"),
    ("a sign language course", "a class in signing", "sign language course"),
    ("a stained-glass workshop", "a glass art class", "stained-glass workshop"),
    ("a screenwriting class", "a class about writing films", "screenwriting class"),
    ("a life drawing class", "a figure sketching class", "life drawing class"),
    ("an improv comedy class", "an improvised theatre class", "improv class"),
    ("a jewellery-making class", "a class making rings and pendants", "jewellery class"),
    ("a Korean cooking class", "a class on Korean cuisine", "Korean cooking class"),
    ("a music production course", "a class on making beats", "music production course"),
    ("a dinghy sailing course", "a small-boat sailing class", "sailing course"),
    ("a bookbinding workshop", "a class on making books by hand", "bookbinding workshop"),
    ("a beekeeping course", "a class about keeping bees", "beekeeping course"),
    ("a night class in astronomy", "a stargazing class", "astronomy class"),
]
HOBBIES = [  # (turn, category word for questions, detail)
    ("bouldering", "climbing sport", "my forearms are destroyed"),
    ("pottery on the wheel", "clay craft", "everything I make is wonky"),
    ("birdwatching", "wildlife hobby", "I saw a kingfisher on my second morning"),
    ("sourdough baking", "bread hobby", "the starter lives on top of the fridge"),
    ("chess", "strategy game", "I lose every game online and I love it"),
    ("salsa dancing", "partner dance", "I keep stepping on people"),
    ("woodworking", "craft with timber", "I made a very lopsided stool"),
    ("knitting", "yarn craft", "my first scarf is three metres long"),
    ("trail running", "off-road sport", "the mud is half the fun"),
    ("film photography", "analogue hobby", "the developing costs are criminal"),
    ("kayaking", "paddling sport", "I capsized twice on day one"),
    ("watercolour painting", "painting hobby", "the paper keeps buckling"),
    ("the ukulele", "string instrument", "my fingertips are raw"),
    ("fencing", "sword sport", "the mask smells terrible"),
    ("archery", "target sport", "I finally hit the gold ring"),
    ("mushroom foraging", "gathering wild food", "I only eat what the guide confirms"),
    ("bonsai", "miniature tree hobby", "my juniper is judging me"),
    ("roller skating", "wheeled sport", "my knees are purple"),
    ("embroidery", "needle craft", "I'm stitching a map of my street"),
    ("open-water swimming", "cold-water sport", "the lake is eleven degrees"),
]
PURCHASES = [  # (turn, turn detail, question words)
    ("a secondhand cargo bike", "so the groceries and the dog can come along",
    "to haul shopping and the dog"),
    ("a used campervan", "we're going to live in it every weekend", "for weekend road trips"),
    ("a rowing machine", "it's taking up half the living room", "for exercising at home"),
    ("a 3D printer", "I've already printed eleven tiny frogs", "to make little plastic figures"),
    ("an old upright piano", "it took four people to get it inside", "that needed four people to carry in"),
    ("a canoe", "it lives on the roof of the car now", "that now rides on the car roof"),
    ("a vintage armchair", "it smells faintly of pipe tobacco", "that smells of an old smoker"),
    ("a road bike", "I look ridiculous in the shorts", "for cycling on tarmac"),
    ("a pizza oven", "we've had pizza four nights running", "for making pizza in the garden"),
    ("a sewing machine", "I'm hemming everything in sight", "to alter clothes"),
    ("a telescope", "I saw the rings of Saturn from the balcony", "to look at planets"),
    ("an espresso machine", "I'm now a coffee snob, sorry", "to make café-style coffee at home"),
]
GIFTS = [
    "a vintage typewriter", "a hand-knitted scarf", "an old film camera", "an acoustic guitar",
    "a cast-iron skillet", "a record player", "a potted lemon tree", "a set of Japanese knives",
    "a leather journal",
    "a framed antique map", "a fountain pen", "a pair of binoculars", "a handmade quilt",
    "a mechanical keyboard", "a hammock", "a backgammon board carved from olive wood", "a weather station",
    "an instant camera", "a terrarium", "a signed vinyl record", "a sourdough starter in a jar",
    "a pair of hiking poles", "a set of oil pastels", "a kite shaped like a squid",
]
GIFT_OCCASIONS = ["for my birthday", "as a housewarming present", "just because",
                  "to say thanks for the help",
                  "as a belated birthday present", "after my exams"]
PARTY_VENUES = [("a karaoke bar", "a place for singing"), ("a rented boat", "on the water"),
                ("a bowling alley", "at the lanes"), ("my aunt's garden", "a relative's back garden"),
                ("a Lebanese restaurant", "a Middle Eastern restaurant"), ("an escape room", "a puzzle room"),
                ("a roller disco", "a skating rink"), ("a tiny cinema I rented", "a private film screening"),
                ("a cabin by the lake", "a lakeside cabin"),
                ("an axe-throwing place", "an axe-throwing venue")]
AGES = ["30th", "35th", "28th", "40th", "27th", "33rd", "31st", "45th", "29th", "38th"]
RACES = [("the Harbour Half Marathon", "half marathon"), ("a 10K along the river", "riverside 10K"),
         ("the Hill Hundred sportive", "100-km cycling event"), ("the lake swim", "open-water race"),
         ("the city marathon", "full marathon"), ("a trail 25K", "25-km trail race")]
RACE_TIMES = ["1:52", "48 minutes", "4 hours 10", "1:07", "3:58", "2:41", "55 minutes", "1:38"]
CHALLENGES = [  # what a third party is up to: (turn, question)
    ("{tp} is training for a triathlon in the autumn", "What event is {subject} training for?"),
    ("{tp} has started playing the cello in an amateur orchestra",
    "Which instrument has {subject} taken up?"),
    ("{tp} is learning to fly gliders", "What is {subject} learning to fly?"),
    ("{tp} joined a roller derby team", "Which contact sport did {subject} join?"),
    ("{tp} is doing a cold-water swim every morning this winter",
    "What does {subject} do every winter morning?"),
    ("{tp} signed up for a 200-km charity bike ride", "What charity challenge did {subject} sign up for?"),
    ("{tp} is restoring an old sailing boat in a barn", "What is {subject} restoring?"),
    ("{tp} got really into competitive Scrabble", "Which word game does {subject} play competitively?"),
    ("{tp} started volunteering at a wildlife rescue", "Where does {subject} volunteer?"),
    ("{tp} is writing a fantasy novel on the train every morning", "What is {subject} writing?"),
]

RAMBLE = [
    "The bus was twenty minutes late again this morning and I stood in the drizzle like a sad umbrella.",
    "I've been trying to drink less coffee but honestly it's not going well.",
    "My upstairs neighbour has started practising the drums, which is a whole thing.",
    "I spent most of Saturday sorting out the cupboard under the stairs and found four phone chargers.",
    "Work has been the usual mix of meetings that could have been emails.",
    "I keep meaning to call the landlord about the boiler and then forgetting.",
    "The supermarket moved everything around, so I wandered the aisles for ages.",
    "I slept terribly this week, the street lamp outside is way too bright.",
    "My phone screen has a crack right through the middle now, so everything looks like a puzzle.",
    "I binged way too much of a cooking competition show instead of going to bed.",
    "The weather can't make up its mind, I've been carrying a jacket I never wear.",
    "I tried a new route to work and got completely lost for ten minutes.",
    "My plants are either thriving or dying, there's no in-between.",
    "Someone at the gym was singing along to their headphones, loudly, for an hour.",
    "I had to queue at the post office for ages to send one tiny parcel.",
    "The laptop decided to install updates right before a deadline, naturally.",
    "I've been meal-prepping, which mostly means eating the same soup five days in a row.",
    "There was a fire drill at work and we stood in the car park for forty minutes.",
    "I finally cleaned out the fridge and found a lemon from a previous era.",
    "My group chat has been arguing about the correct way to load a dishwasher.",
    "I went for a walk to clear my head and ended up buying three pastries.",
    "The internet was down for a whole evening, so I read by candlelight like a Victorian.",
    "I've been trying to learn the names of the trees on my street, with limited success.",
    "The train was so packed this morning I basically commuted inside someone's backpack.",
    "My to-do list has gotten so long that writing it feels like a hobby.",
    "I cut my own fringe, which was a mistake I will not be repeating.",
    "There's a cat in my building that visits every flat for snacks, the little con artist.",
    "I signed up for a newsletter by accident and now I get eleven emails a day.",
    "The washing machine made a noise like a jet engine and then just carried on.",
    "We had a power cut on Thursday and I realised how much I rely on the kettle.",
    "I keep getting adverts for hiking boots, so I guess my phone knows something I don't.",
    "I spent an hour on hold with the bank and the hold music is now stuck in my head.",
    "The heatwave, or cold snap, or whatever this is, has made sleeping impossible.",
    "I reorganised my bookshelf by colour and now I can't find anything.",
    "My mum sent me a forty-second voice note that was just her trying to find the record button.",
    "I watched a documentary about octopuses and now I feel bad about everything.",
    "The recycling collection skipped our street again, so the bins are overflowing.",
    "I tried to fix a dripping tap myself and now it drips in a different rhythm.",
    "I've been listening to the same album on repeat for about two weeks.",
    "A pigeon has been sitting on my windowsill every morning like it pays rent.",
]
CONNECTORS = ["Anyway, the actual news:", "Oh, and I nearly forgot:", "But that's not why I messaged.",
              "Long story short:", "Okay, the real update:", "Sorry, rambling. The point is:",
              "All that to say:",
              "Anyway!", "But guess what?", "Tangent over.", "Right, the important bit:"]
CHITCHAT = [
    "Haha yes", ";)", "That's so cool!", "No problem, {you}!", "Talk soon!", "Totally.",
    "Same here honestly.",
    "Oh nice!", "Wow.", "lol", "I know, right?", "Fair enough.", "Sounds lovely.", "Ha, classic.",
    "Aw, that's sweet.", "Ugh, I feel that.", "Good for you!", "Can't wait to hear more.", "Right?!",
    "So true.", "Glad to hear it.", "Haha, stop it.", "Honestly same.", "Oh wow, {you}!", "Yesss",
    "Hmm, maybe.", "100%", "Ha! Love it.", "Noted!", "You're the best, {you}.", "Oh totally",
    "That makes sense.", "Ha, fair.", "Mood.", "Hehe", "Oh I bet!", "Cute!", "Nice one.", "For real.",
    "Thanks, {you}!", "Ahh okay", "Yeah yeah", "Love that.", "Brilliant.", "Ha, good point.",
]
GREETINGS = ["Hey {you}! How's your {weekday} going?", "Hi {you}, long time no chat!",
             "Morning! Hope your week's been kind to you.", "Happy {weekday}, {you}!", "Heyyy, got a minute?",
             "{you}! How are things?", "Hello hello! What's new with you?", "Hey stranger!",
             "Hi! Is it just me or did this week fly by?"]
GREETING_REPLIES = ["Hey! All good here, you?", "Hi {you}! Busy but fine.", "Hey! Yes, always.",
                    "Hiya! Surviving, mostly.", "Oh hi! Perfect timing, I'm on a break.",
                    "Hey {you}! Not bad at all.", "Hi! Tired but happy.", "Good to hear from you!"]
CLOSINGS = ["Gotta run, talk soon!", "Okay, dinner's ready. Bye!", "Night {you}!", "Catch you later.",
            "Take care, {you}!", "Speak next week?", "Right, back to work for me.", "Off to bed, chat soon!"]
CLOSING_REPLIES = ["Bye! Talk soon.", "Later, {you}!", "Take care!", "Sleep well!", "Speak soon!",
                   "Yes! Have a good one.", "Bye bye!", "See you, {you}."]
SMALL_TALK = [  # (question, answer): generic, never a fact a question asks about
    ("Any plans for the weekend?", "Not much, maybe a long walk if the rain stops."),
    ("How did you sleep?", "Like a log for once."),
    ("What are you having for dinner?", "Leftovers, the glamorous life."),
    ("Did you see the game last night?", "Only the last ten minutes, what a finish though."),
    ("Are you still doing the early mornings?", "Trying to, my alarm and I are not friends."),
    ("Watching anything good lately?", "Mostly reruns of comfort shows, nothing new."),
    ("How's the family?", "Everyone's fine, thanks for asking."),
    ("Busy week?", "The busiest. I need a nap that lasts until Monday."),
    ("Have you eaten yet?", "Just a sandwich at my desk, very sad."),
    ("Is it still raining there?", "On and off. Mostly on."),
    ("Did you manage to relax at all?", "A little, I had a long bath and read nothing."),
    ("Are you coming to the thing next month?", "Probably! I'll let you know closer to the date."),
    ("Any news?", "Not really, life's been quiet, which is nice."),
    ("How's your energy these days?", "Up and down, but better than last month."),
]
WEATHER = {
    "winter": ["It's freezing here, I'm wearing two jumpers indoors.", "Snow forecast again, ugh.",
               "The days are so short, it's dark by four."],
    "spring": ["Finally some sun! Everything's blooming.", "Spring rain every afternoon, like clockwork.",
               "The blossom on my street is unreal right now."],
    "summer": ["It's so hot, I'm living on ice lollies.", "Long light evenings are the best.",
               "The flat is like an oven this week."],
    "autumn": ["The leaves are turning, it's gorgeous.", "Jumper weather has officially arrived.",
               "So windy today my umbrella gave up."],
}
HANDOVERS = ["And you? Anything new?", "Enough about me. How are you, {you}?", "What's new on your end?",
             "Anyway, how's your week been?", "Your turn, any news?", "How about you, {you}?",
             "But tell me about you!", "What have you been up to?", "Hmm. And you?"]
CALLBACKS = ["Still thinking about what you told me last time.",
             "Did anything come of that thing you mentioned?",
             "How did everything turn out in the end?", "Any updates since we last talked?",
             "I told my mum your story from last time, she loved it."]
CALLBACK_REPLIES = ["Ha, nothing new to report really.", "Still working on it!", "Oh, it's all fine now.",
                    "Honestly I'd forgotten about it.", "Aw, tell her I said hi!"]


# --- small helpers ----------------------------------------------------------------------

def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def fmt_date(d: date, style: str) -> str:
    month = MONTHS[d.month - 1]
    return {
        "iso": d.isoformat(),
        "ord": f"{ordinal(d.day)} {month} {d.year}",
        "mdy": f"{month} {d.day}, {d.year}",
        "short": f"{d.day} {month[:3]} {d.year}",
        "full": f"{WEEKDAYS[d.weekday()]}, {month} {d.day}, {d.year}",
    }[style]


DATE_STYLES = ("iso", "ord", "mdy", "short", "full")


def season(d: date) -> str:
    return {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring", 6: "summer",
            7: "summer", 8: "summer"}.get(d.month, "autumn")


def month_window(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    end = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
    return start, end


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def shared_run(a: str, b: str, n: int = 8) -> bool:
    """True when a and b share a run of n consecutive words (a sign the question copies a turn)."""
    wa, wb = words(a), words(b)
    grams = {tuple(wa[i:i + n]) for i in range(len(wa) - n + 1)}
    return any(tuple(wb[i:i + n]) in grams for i in range(len(wb) - n + 1))


def with_article(noun: str) -> str:
    vowel = noun[:1].lower() in "aeiou" and not noun.startswith(("UX", "uni", "eu"))
    return f"{'an' if vowel else 'a'} {noun}"


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def derived(attrs: dict[str, Any]) -> dict[str, Any]:
    """Template fields computed from an event's attrs (nouns with their article)."""
    extra: dict[str, Any] = {}
    if "role" in attrs:
        extra["a_role"] = with_article(attrs["role"])
    if "breed" in attrs:
        extra["a_breed"] = with_article(attrs["breed"])
        extra["a_breed_cap"] = cap(extra["a_breed"])
    if "genre" in attrs:
        extra["a_genre"] = with_article(attrs["genre"])
    return extra


class Pool:
    """Draws without replacement from a shuffled list, across all dialogues, so rare
    details stay rare; reshuffles when a list runs out, but never repeats an item
    within one dialogue (new_dialogue() starts one)."""

    def __init__(self, rng: random.Random, items: list[Any]) -> None:
        self.rng, self.items, self.left, self.here = rng, list(items), [], []

    def new_dialogue(self) -> None:
        self.here = []

    def take(self) -> Any:
        for _ in range(len(self.items) + 1):
            if not self.left:
                self.left = list(self.items)
                self.rng.shuffle(self.left)
            item = self.left.pop()
            if item not in self.here:
                self.here.append(item)
                return item
        raise ValueError("vocabulary too small for one dialogue")


class Titles:
    """Invented titles, unique across the data set and never contained in one another."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, []

    def take(self, maker) -> str:
        while True:
            title = maker(self.rng)
            low = title.lower()
            if not any(low in u or u in low for u in self.used):
                self.used.append(low)
                return title


def book_title(rng: random.Random) -> str:
    # Always with "The": SAM's name detector reads a bare "Scarlet Estuary" as a person.
    adj, noun = rng.choice(TITLE_ADJ), rng.choice(TITLE_NOUN)
    return rng.choice([f"The {adj} {noun}", f"The {noun}'s {rng.choice(TITLE_NOUN)}"])


def show_title(rng: random.Random) -> str:
    return f"{rng.choice(SHOW_A)} {rng.choice(SHOW_B)}"


def band_name(rng: random.Random) -> str:
    return f"the {rng.choice(BAND_ADJ)} {rng.choice(BAND_NOUN)}"


# --- data model -------------------------------------------------------------------------

@dataclass
class Turn:
    id: str
    session: int
    date: date
    speaker: str
    text: str


@dataclass
class Event:
    """A fact-bearing turn to place in a session (and, for follow-ups, the question before it)."""

    etype: str
    who: int                                  # whose fact it is: 0 or 1; they speak the fact turn
    attrs: dict[str, Any]
    session: int = -1
    turn: str = ""                            # id of the fact-bearing turn
    date: date | None = None
    long: bool = False
    follow_up: bool = False                   # opened by the other person asking about it

    def __repr__(self) -> str:  # short, for debugging
        return f"<{self.etype} p{self.who} s{self.session}>"


@dataclass
class Person:
    name: str
    city: str
    job: tuple[str, str]
    pet: tuple[str, str, str]                 # (species, breed, name)
    new_city: str | None = None
    new_job: tuple[str, str] | None = None
    pet2: tuple[str, str, str] | None = None
    others: list[dict[str, Any]] = field(default_factory=list)   # third parties


@dataclass
class Question:
    kind: str
    text: str
    evidence: list[str]
    tag: str                                  # sub-type, to mix question shapes


# --- fact turn templates ----------------------------------------------------------------
# Each template is formatted with the event's attrs plus {you} (the listener).

FACT_TEMPLATES: dict[str, list[str]] = {
    "city_intro": [
        "Walked along the river in {city} after work, it was gorgeous.",
        "I've lived in {city} six years now and I still get lost in the old town.",
        "There's a food festival in {city} this weekend, the whole street smells of grilled corn.",
        "Honestly, {city} in this light is the prettiest place on earth.",
    ],
    "job_intro": [
        "Work was chaos today. That's life as {a_role} {place}, I guess.",
        "I've been {a_role} {place} for almost four years now and it still surprises me.",
        "Long shift today. Being {a_role} {place} means no two days are the same.",
    ],
    "pet_intro": [
        "Took {pet} to the vet today, my {breed} {species} is apparently a bit chubby.",
        "{pet}, my {breed} {species}, has decided the laundry basket is a bed now.",
        "Guess who chewed my headphones? {pet}. Never get {a_breed} {species} if you like nice things.",
    ],
    "move_plan": [
        "Big maybe-news: we've started flat-hunting in another city. I'll tell you more when it's real.",
        "I've been secretly browsing flats somewhere new. Nothing's decided yet!",
    ],
    "move": [
        "We did it, the boxes are in and we officially live in {new_city} now!",
        "Big news: I've moved to {new_city}! The new flat has a tiny balcony.",
        "Writing this from my new kitchen in {new_city}! The move nearly killed me.",
    ],
    "move_follow": [
        "{new_city} is growing on me, there's a bakery on every corner.",
        "Honestly, {new_city} feels like home already. I found a great running route.",
        "Still unpacking, but I love my new neighbourhood in {new_city}.",
    ],
    "job_change": [
        "I started as {a_role} {place} this week! Terrified and thrilled.",
        "So I took the offer, and as of Monday I'm {a_role} {place}.",
        "First week done in the new role as {a_role} {place}. My brain is full.",
    ],
    "job_follow": [
        "Really good! My team is lovely, though the commute is longer.",
        "Busy, but I'm learning a ton. No regrets about leaving the old place.",
        "It's a lot. Some days I miss my old colleagues, but mostly I'm happy.",
    ],
    "pet2": [
        "We adopted a second animal! {a_breed_cap} {species} called {pet2}, straight from the shelter.",
        "Meet the newest family member: {pet2}, {a_breed} {species}. The older one is not impressed yet.",
        "I caved. We brought home {pet2}, a little {breed} {species}, and I'm in love.",
    ],
    "pet_follow": [
        "They nap in the same sunny spot now, it's adorable.",
        "There was some hissing at first, but they're inseparable now.",
        "The new one rules the house already, the older one just sighs a lot.",
    ],
    "tp_intro": [
        "My {rel} {tp} is staying with me this weekend, so the flat is chaos.",
        "Had a long call with my {rel} {tp} tonight, we hadn't talked in weeks.",
        "Grabbed coffee with my {rel} {tp} today, always a good time.",
        "My {rel} {tp} came round for dinner and stayed until midnight.",
    ],
    "book": [
        "Just finished {title}, {a_genre} about {about}. Couldn't put it down.",
        "I'm halfway through {title}, this {genre} about {about} is wrecking me.",
        "Book club picked {title} this month. It's {a_genre} about {about}, surprisingly good.",
    ],
    "cook": [
        "I made {dish} {occasion}, total success!",
        "Tried my hand at {dish} {occasion}. The kitchen is a disaster but worth it.",
        "I cooked {dish} {occasion} and there were zero leftovers.",
    ],
    "trip": [
        "Just got back from {length} in {dest}! {highlight}.",
        "We spent {length} in {dest}, and {highlight_lc}. Already want to go back.",
        "Home from {dest}! {length_cap} wasn't enough. {highlight}.",
    ],
    "concert": [
        "Saw {band} at {venue} last night, my ears are still ringing!",
        "Went to see {band} play {venue}. I was right at the front!",
        "{band_cap} at {venue} was the best gig I've been to in years.",
    ],
    "injury": [
        "Ugh, I {injury} {cause}. No sport for a while, apparently.",
        "So I {injury} {cause}. Very dignified, as you can imagine.",
        "Small disaster: I {injury} {cause}, and the doctor just laughed.",
    ],
    "injury_follow": [
        "Much better, thanks! The physio says I can {heal} again next month.",
        "Healing slowly. I'm not allowed to {heal} yet, which is torture.",
    ],
    "class": [
        "Signed up for {course} on {day} evenings!",
        "I'm starting {course} this {day}, wish me luck.",
        "I finally booked {course}. It's every {day} after work.",
    ],
    "class_follow": [
        "So fun! I'm the worst in the group but I don't even care.",
        "I love it, it's the highlight of my week.",
        "Harder than I expected, but the teacher is brilliant.",
    ],
    "hobby": [
        "I've taken up {hobby}, and {detail}.",
        "New obsession: {hobby}. {detail_cap}.",
        "Guess who's into {hobby} now? Me. {detail_cap}.",
    ],
    "purchase": [
        "Finally bought {item}, {detail}.",
        "I did a thing: I bought {item}. {detail_cap}.",
    ],
    "party": [
        "My {age} birthday party was at {venue}, I'm still recovering.",
        "Had the best {age} birthday at {venue}. Thanks for the message, by the way!",
    ],
    "race": [
        "I ran {race} on Sunday and finished in {time}!",
        "Did {race} at the weekend, {time}. My legs have filed a complaint.",
    ],
    "film": [
        "Binged all of {title} this weekend, a series about {about}.",
        "I'm completely hooked on {title}, it's a show about {about}.",
    ],
    "rec_book": ["You'd love {title}, {you}. It's {a_genre} about {about}.",
                 "{you}, read {title} next. It's {a_genre} about {about}, so your thing."],
    "rec_series": ["{you}, you have to watch {title}. It's a series about {about}.",
                   "Put {title} on your list, {you}, it's a show about {about}."],
    "rec_podcast": ["Have you heard {title}? It's a podcast about {topic}, perfect for your commute.",
                    "You should try {title}, {you}. It's a podcast about {topic}."],
    "rec_restaurant": ["Next time you're in town, eat at {title} and {hook}.",
                       "If you ever go out for dinner near me, {title} is the one. {hook_cap}, trust me."],
    "rec_trail": ["If you want a proper hike, do {title}. {hook_cap}.",
                  "You'd love {title}, {you}, {hook}."],
    "rec_game": ["Bring {title} to your next game night, it's a board game about {topic}.",
                 "{you}, buy {title}. It's a board game about {topic} and it's genius."],
    "rec_follow": ["I finally got to {title} like you said, and you were so right about it.",
                   "Okay, {title} was as good as you promised. Thank you!",
                   "I tried {title} on your advice. Not sure I loved it, honestly."],
    "tp_rec": ["{tp} keeps telling me to try {title}, {what}.",
               "{tp} can't stop talking about {title}, {what}."],
    "tp_move": ["{tp} just packed up and moved to {city} for a fresh start.",
                "{tp} is officially living in {city} now, I'm going to miss having them close."],
    "tp_job": ["{tp} got hired as {a_role} {place}!", "{tp} has just started as {a_role} {place}, so proud."],
    "tp_hobby": ["{challenge}, it's all we talk about.", "{challenge}, of all things."],
    "tp_pet": ["{tp} adopted a {species} named {pet}, I've already seen fifty photos.",
               "{tp} has a new {species} called {pet} and it's ridiculous."],
    "tp_gift": ["{tp} gave me {gift} {occasion}, I nearly cried.",
                "Look what {tp} gave me {occasion}: {gift}!"],
}
# The other person asking about an earlier event, vaguely (the answer turn holds the fact).
FOLLOW_UP_ASKS = {
    "move_follow": ["How's life in the new city treating you?", "Settled in yet after the move?"],
    "job_follow": ["How's the new job going?", "Is the new gig everything you hoped?"],
    "pet_follow": ["How are the two furballs getting along?", "Is the new addition settling in at home?"],
    "injury_follow": ["How's the injury healing?", "Are you back on your feet after the accident?"],
    "class_follow": ["How's the class going?", "Still enjoying those evening lessons?"],
}
REACTIONS = {
    "injury": ["Oh no! That sounds so painful.", "Ouch! Take it easy, {you}.", "Yikes, heal fast!"],
    "trip": ["Jealous! Send pics.", "Sounds amazing, welcome back!", "Wow, what a trip."],
    "book": ["Adding it to my list.", "Ooh, sounds like my kind of thing.", "I need a new read, thanks!"],
    "cook": ["Save me some next time!", "Okay chef!", "Yum, I'm hungry now."],
    "move": ["Congrats on the move!", "Huge! Hope the new place feels like home soon."],
    "job_change": ["Congratulations, {you}!", "That's huge, well done!", "So proud of you!"],
    "pet2": ["I need photos immediately.", "Aww, congrats on the new baby!"],
    "concert": ["So jealous!", "Sounds like an amazing night."],
    "rec": ["Ooh, I'll check it out.", "Noted, thanks!", "Adding it to the list, {you}."],
    "class": ["That sounds like so much fun!", "Good for you, {you}!"],
    "hobby": ["Love that for you!", "Ha, I can picture it."],
    "party": ["Happy belated birthday again!", "Sounds like a great party."],
    "race": ["Legend! Congrats!", "That's a great time, wow."],
    "tp": ["Aw, that's nice.", "Ha, say hi from me!", "Oh nice!", "Wow, good for them."],
}
FOLLOW_UPS = ("move_follow", "job_follow", "pet_follow", "injury_follow", "class_follow")


# --- one dialogue -----------------------------------------------------------------------

class DialogueBuilder:
    def __init__(self, index: int, rng: random.Random, pools: dict[str, Pool], titles: Titles,
                 names: tuple[str, str], third: list[str]) -> None:
        self.index, self.rng, self.pools, self.titles = index, rng, pools, titles
        self.did = f"d{index:02d}"
        self.third = third
        self.events: list[Event] = []
        self.turns: list[Turn] = []
        self.dates: list[date] = []
        self.turn_targets: list[int] = []
        for pool in pools.values():
            pool.new_dialogue()
        self.people = [self._person(name) for name in names]

    # -- profiles and plan --

    def _pet(self) -> tuple[str, str, str]:
        species, breeds = self.rng.choice(PETS)
        return species, self.rng.choice(breeds), self.pools["pet"].take()

    def _person(self, name: str) -> Person:
        return Person(name=name, city=self.pools["city"].take(), job=self.pools["job"].take(),
                      pet=self._pet())

    def _dates(self) -> None:
        rng = self.rng
        n = rng.randint(15, 25)
        while True:
            gaps = [rng.randint(3, 24) for _ in range(n - 1)]
            if 125 <= sum(gaps) <= 300:
                break
        current = date(2023, 1, 2) + timedelta(days=rng.randint(0, 420))
        self.dates = [current]
        for gap in gaps:
            current += timedelta(days=gap)
            self.dates.append(current)
        self.turn_targets = [rng.randint(12, 16) if rng.random() < 0.75 else rng.randint(17, 28)
                             for _ in range(n)]
        self.load = [0] * n
        self.capacity = [max(2, (t - 4) // 2) for t in self.turn_targets]

    def _place(self, event: Event, lo: int, hi: int) -> Event | None:
        """Put `event` in a session in [lo, hi], preferring the least loaded; None if no room."""
        n = len(self.dates)
        lo, hi = max(0, lo), min(n - 1, hi)
        if lo > hi:
            return None
        window = list(range(lo, hi + 1))
        free = [i for i in window if self.load[i] < self.capacity[i]] or window
        least = min(self.load[i] for i in free)
        session = self.rng.choice([i for i in free if self.load[i] <= least + 1])
        self.load[session] += 1
        event.session = session
        self.events.append(event)
        return event

    def plan(self) -> None:
        rng = self.rng
        self._dates()
        n = len(self.dates)
        movers = [rng.random() < 0.5 for _ in range(2)]
        changers = [rng.random() < 0.5 for _ in range(2)]
        adopters = [rng.random() < 0.5 for _ in range(2)]
        for flags in (movers, changers, adopters):
            if not any(flags):
                flags[rng.randrange(2)] = True
        third = list(self.third)
        for p, person in enumerate(self.people):
            # What everyone knows from the start.
            self._place(Event("city_intro", p, {"city": person.city}), 0, 1)
            self._place(Event("job_intro", p, {"role": person.job[0], "place": person.job[1]}), 0, 2)
            species, breed, pet = person.pet
            self._place(Event("pet_intro", p, {"species": species, "breed": breed, "pet": pet}), 0, 3)
            # What changes part-way, with a follow-up in a later session.
            if movers[p]:
                person.new_city = self.pools["city"].take()
                move = self._place(Event("move", p, {"new_city": person.new_city}),
                                   int(n * 0.35), int(n * 0.65))
                assert move is not None
                self._place(Event("move_plan", p, {}), move.session - 3, move.session - 1)
                self._place(Event("move_follow", p, {"new_city": person.new_city}, follow_up=True),
                            move.session + 1, move.session + 4)
            if changers[p]:
                person.new_job = self.pools["job"].take()
                change = self._place(Event("job_change", p, {"role": person.new_job[0],
                                                             "place": person.new_job[1]}),
                                     int(n * 0.4), int(n * 0.75))
                assert change is not None
                self._place(Event("job_follow", p, {}, follow_up=True),
                            change.session + 1, change.session + 4)
            if adopters[p]:
                species2, breed2, pet2 = self._pet()
                while species2 == species:  # "X's dog" must name one animal
                    species2, breed2, pet2 = self._pet()
                person.pet2 = (species2, breed2, pet2)
                adopt = self._place(Event("pet2", p, {"species": species2, "breed": breed2, "pet2": pet2}),
                                    int(n * 0.3), int(n * 0.8))
                assert adopt is not None
                self._place(Event("pet_follow", p, {}, follow_up=True), adopt.session + 1, adopt.session + 4)
            # Three people in their life, introduced early; what they do comes later and
            # never repeats the relation (that link is what multihop questions need).
            names = [third.pop() for _ in range(3)]
            gender = "f" if names[0] in THIRD_F else "m" if names[0] in THIRD_M else "n"
            relations = [rng.choice(SIBLINGS[gender]), rng.choice(FRIENDS), rng.choice(COWORKERS)]
            action_types = ["tp_gift", "tp_rec", "tp_move", "tp_job", "tp_hobby", "tp_pet"]
            rng.shuffle(action_types)
            plans = [action_types[0:2], action_types[2:4], [action_types[4 + rng.randrange(2)]]]
            rng.shuffle(plans)
            for tp, rel, actions in zip(names, relations, plans, strict=True):
                other = {"tp": tp, "rel": rel, "actions": []}
                person.others.append(other)
                intro = self._place(Event("tp_intro", p, {"tp": other["tp"], "rel": rel}), 1, max(2, n // 3))
                assert intro is not None
                other["intro"] = intro
                for action in actions:
                    event = self._place(Event(action, p, self._tp_attrs(action, other["tp"])),
                                        intro.session + 1, n - 1)
                    if event is not None:
                        other["actions"].append(event)
            # Things that happen once or twice, anywhere.
            for _ in range(2):
                genre, genre_q = rng.choice(GENRES)
                book = {"title": self.titles.take(book_title), "genre": genre, "genre_q": genre_q,
                        "about": self.pools["about"].take()}
                self._place(Event("book", p, book), 1, n - 1)
            for number in range(2):
                rec = self._place(Event("rec", p, self._rec_attrs()), 1, n - 2)
                if rec is not None and number == 0:
                    self._place(Event("rec_follow", 1 - p, {"title": rec.attrs["title"], "rec": rec}),
                                rec.session + 1, rec.session + 5)
            for _ in range(2):
                occasion, occasion_q = self.pools["occasion"].take()
                self._place(Event("cook", p, {"dish": self.pools["dish"].take(), "occasion": occasion,
                                              "occasion_q": occasion_q}), 0, n - 1)
            for _ in range(rng.choice((1, 2))):
                highlight, highlight_q = self.pools["highlight"].take()
                length = rng.choice(TRIP_LENGTHS)
                self._place(Event("trip", p, {"dest": self.pools["trip"].take(), "length": length,
                                              "length_cap": cap(length), "highlight": cap(highlight),
                                              "highlight_lc": highlight[:1].lower() + highlight[1:],
                                              "highlight_q": highlight_q}), 1, n - 1)
            band = self.titles.take(band_name)
            self._place(Event("concert", p, {"band": band, "band_cap": cap(band),
                                             "venue": rng.choice(VENUES)}), 0, n - 1)
            injury = self.pools["injury"].take()
            hurt = self._place(Event("injury", p, dict(zip(("injury", "injury_q", "cause", "cause_q", "part",
                                                            "heal"), injury, strict=True))), 1, n - 2)
            if hurt is not None:
                self._place(Event("injury_follow", p, dict(hurt.attrs), follow_up=True),
                            hurt.session + 1, hurt.session + 3)
            course = self.pools["course"].take()
            lesson = {"course": course[0], "course_q": course[1], "short": course[2],
                      "day": rng.choice(WEEKDAYS[:5])}
            signed = self._place(Event("class", p, lesson), 1, n - 2)
            if signed is not None:
                self._place(Event("class_follow", p, dict(signed.attrs), follow_up=True),
                            signed.session + 1, signed.session + 4)
            hobbies = []
            while len(hobbies) < rng.choice((1, 2)):
                hobby = self.pools["hobby"].take()
                if all(h[1] != hobby[1] for h in hobbies):
                    hobbies.append(hobby)
            for hobby, category, detail in hobbies:
                self._place(Event("hobby", p, {"hobby": hobby, "category": category, "detail": detail,
                                               "detail_cap": cap(detail)}), 0, n - 1)
            item, detail, item_q = self.pools["purchase"].take()
            self._place(Event("purchase", p, {"item": item, "detail": detail, "detail_cap": cap(detail),
                                              "item_q": item_q}), 0, n - 1)
            venue, venue_q = self.pools["party"].take()
            self._place(Event("party", p, {"age": rng.choice(AGES), "venue": venue, "venue_q": venue_q}),
                        1, n - 1)
            if rng.random() < 0.5:
                race, race_q = rng.choice(RACES)
                result = {"race": race, "race_q": race_q, "time": rng.choice(RACE_TIMES)}
                self._place(Event("race", p, result), 1, n - 1)
            self._place(Event("film", p, {"title": self.titles.take(show_title),
                                          "about": self.pools["about"].take()}), 0, n - 1)

    def _rec_attrs(self) -> dict[str, Any]:
        rng = self.rng
        kind = rng.choice(["book", "series", "podcast", "restaurant", "trail", "game", "book", "podcast"])
        attrs: dict[str, Any] = {"item_kind": kind}
        if kind == "book":
            genre, genre_q = rng.choice(GENRES)
            attrs.update(title=self.titles.take(book_title), genre=genre, genre_q=genre_q,
                         about=self.pools["about"].take())
        elif kind == "series":
            attrs.update(title=self.titles.take(show_title), about=self.pools["about"].take())
        elif kind == "podcast":
            attrs.update(zip(("title", "topic"), self.pools["podcast"].take(), strict=True))
        elif kind == "restaurant":
            title, hook = self.pools["restaurant"].take()
            attrs.update(title=title, hook=hook, hook_cap=cap(hook))
        elif kind == "trail":
            title, hook = self.pools["trail"].take()
            attrs.update(title=title, hook=hook, hook_cap=cap(hook))
        else:
            attrs.update(zip(("title", "topic"), self.pools["game"].take(), strict=True))
        return attrs

    def _tp_attrs(self, action: str, tp: str) -> dict[str, Any]:
        rng = self.rng
        attrs: dict[str, Any] = {"tp": tp}
        if action == "tp_rec":
            kind = rng.choice(["podcast", "restaurant", "game"])
            title, what = self.pools[kind].take()
            attrs.update(title=title, item_kind=kind, what={
                "podcast": f"a podcast about {what}", "restaurant": f"a restaurant where you have to {what}",
                "game": f"a board game about {what}"}[kind])
        elif action == "tp_move":
            attrs["city"] = self.pools["city"].take()
        elif action == "tp_job":
            attrs["role"], attrs["place"] = self.pools["job"].take()
        elif action == "tp_hobby":
            challenge, question = self.pools["challenge"].take()
            attrs.update(challenge=challenge.format(tp=tp), question=question)
        elif action == "tp_pet":
            species, _breed, pet = self._pet()
            attrs.update(species=species, pet=pet)
        elif action == "tp_gift":
            attrs.update(gift=self.pools["gift"].take(), occasion=rng.choice(GIFT_OCCASIONS))
        return attrs

    # -- rendering --

    def _fact_text(self, event: Event, listener: str) -> str:
        key = f"rec_{event.attrs['item_kind']}" if event.etype == "rec" else event.etype
        template = self.rng.choice(FACT_TEMPLATES[key])
        text = template.format(you=listener, **event.attrs, **derived(event.attrs))
        text = cap(text)
        if event.long:
            # Rambling first, the fact at the very end (a hard case for retrieval).
            target = self.rng.randint(60, 130)
            connector = self.rng.choice(CONNECTORS)
            sentences = list(RAMBLE)
            self.rng.shuffle(sentences)
            body: list[str] = []
            for sentence in sentences:
                size = len(" ".join([*body, sentence, connector, text]).split())
                if size <= 145:  # never over 150 words
                    body.append(sentence)
                if size >= target:
                    break
            text = " ".join([*body, connector, text])
        return text

    def _chitchat(self, me: str, you: str, pool: list[str]) -> str:
        while True:
            text = self.rng.choice(pool).format(you=you, weekday="week")
            if len(f"{me}: {text}") >= MIN_CONTENT:
                return text

    def render(self) -> None:
        rng = self.rng
        for event in self.events:
            long_ok = event.etype not in {"move_plan", "tp_intro", "rec_follow", *FOLLOW_UPS}
            event.long = long_ok and rng.random() < LONG_SHARE
        for s, when in enumerate(self.dates):
            session_events = [e for e in self.events if e.session == s]
            rng.shuffle(session_events)
            # Follow-ups first (catching up), and a person's intro before what they then say.
            order = {"tp_intro": 0, "city_intro": 0, "job_intro": 0, "pet_intro": 0}
            session_events.sort(key=lambda e: (0 if e.follow_up else 1, order.get(e.etype, 1)))
            self._render_session(s, when, session_events)

    def _render_session(self, s: int, when: date, events: list[Event]) -> None:
        rng = self.rng
        first = rng.randrange(2)
        names = [p.name for p in self.people]
        lines: list[tuple[int, str, Event | None]] = []

        def speaker() -> int:
            return first if len(lines) % 2 == 0 else 1 - first

        def say(text: str, event: Event | None = None) -> None:
            lines.append((speaker(), text, event))

        def other() -> str:
            return names[1 - speaker()]

        def me() -> str:
            return names[speaker()]

        weekday = WEEKDAYS[when.weekday()]
        say(rng.choice(GREETINGS).format(you=other(), weekday=weekday))
        say(rng.choice(GREETING_REPLIES).format(you=other()))
        pending = list(events)
        while pending:
            who = speaker()
            # The first pending event this speaker can open: their own fact, or a question
            # about the other person's earlier news.
            pick = next((e for e in pending if (e.who == who) != e.follow_up), None)
            if pick is None:
                # Nothing to tell: hand the floor over (the other person has news).
                say(self._chitchat(me(), other(), HANDOVERS))
                continue
            pending.remove(pick)
            if pick.follow_up:
                say(rng.choice(FOLLOW_UP_ASKS[pick.etype]))
                say(self._fact_text(pick, other()), pick)
                if rng.random() < 0.5:
                    say(self._chitchat(me(), other(), CHITCHAT))
            else:
                say(self._fact_text(pick, other()), pick)
                family = "tp" if pick.etype.startswith("tp_") else pick.etype
                reactions = REACTIONS.get(family, CHITCHAT)
                say(self._chitchat(me(), other(), reactions))
            if rng.random() < 0.35:
                self._filler(say, me, other, when, s)
        target = self.turn_targets[s]
        while len(lines) < target - 2:
            self._filler(say, me, other, when, s)
        say(rng.choice(CLOSINGS).format(you=other()))
        say(rng.choice(CLOSING_REPLIES).format(you=other()))
        for t, (who, text, event) in enumerate(lines, start=1):
            turn = Turn(f"{self.did}-s{s + 1:02d}-t{t:02d}", s + 1, when, names[who], text)
            self.turns.append(turn)
            if event is not None:
                event.turn, event.date = turn.id, when

    def _filler(self, say, me, other, when: date, s: int) -> None:
        """Small talk that carries no fact a question asks about."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.35:
            question, answer = rng.choice(SMALL_TALK)
            say(question)
            say(answer)
        elif roll < 0.5:
            say(rng.choice(WEATHER[season(when)]))
            say(self._chitchat(me(), other(), CHITCHAT))
        elif roll < 0.6 and s > 0:
            say(rng.choice(CALLBACKS))
            say(rng.choice(CALLBACK_REPLIES))
        else:
            say(self._chitchat(me(), other(), CHITCHAT))

    def build(self) -> tuple[list[Turn], list[Question], date]:
        self.plan()
        self.render()
        problems = self.check_details()
        if problems:
            raise SystemExit("\n".join(problems[:20]))
        asked_at = self.dates[-1] + timedelta(days=1)
        questions = QuestionMaker(self, asked_at).make()
        return self.turns, questions, asked_at


    def check_details(self) -> list[str]:
        """Each rare detail appears only in the turns labelled for it (its own, and the
        follow-ups that restate it), so a question's evidence is complete."""
        problems = []
        texts = {t.id: t.text.lower() for t in self.turns}
        restated: dict[str, set[str]] = {}
        for e in self.events:
            if e.etype == "rec_follow":
                restated.setdefault(e.attrs["rec"].turn, set()).add(e.turn)
            if e.etype == "move_follow":
                move = next(m for m in self.events if m.etype == "move" and m.who == e.who)
                restated.setdefault(move.turn, set()).add(e.turn)
        for e in self.events:
            key = DETAIL_KEYS.get(e.etype)
            if key is None or not e.turn:
                continue
            detail = e.attrs[key] if key != "role" else f"{e.attrs['role']} {e.attrs['place']}"
            pattern = re.compile(r"(?<![a-z])" + re.escape(detail.lower()) + r"(?![a-z])")
            found = {tid for tid, text in texts.items() if pattern.search(text)}
            allowed = {e.turn} | restated.get(e.turn, set())
            if e.etype in {"rec_follow", "move_follow"}:
                continue
            if found - allowed:
                problems.append(f"{self.did}: '{detail}' ({e.etype}) also in {sorted(found - allowed)}")
        return problems


# The attr that holds each event type's rare detail.
DETAIL_KEYS = {
    "book": "title", "rec": "title", "film": "title", "tp_rec": "title", "cook": "dish", "trip": "dest",
    "concert": "band", "pet_intro": "pet", "pet2": "pet2", "tp_pet": "pet", "move": "new_city",
    "city_intro": "city", "tp_move": "city", "tp_gift": "gift", "purchase": "item", "class": "course",
    "hobby": "hobby", "job_intro": "role", "job_change": "role", "tp_job": "role", "party": "venue",
}


# --- questions --------------------------------------------------------------------------

SINGLE = {  # etype -> question templates ({X} the person, {Y} the other one, plus attrs)
    "book": ["Which {genre_q} has {X} been reading?", "What is the title of the {genre_q} {X} read?"],
    "cook": ["What dish did {X} prepare for {occasion_q}?", "What did {X} serve for {occasion_q}?"],
    "trip": ["Where did {X} travel when they {highlight_q}?", "Where was {X} when they {highlight_q}?"],
    "concert": ["Which group did {X} watch perform live?", "What band's gig did {X} go to?"],
    "injury": ["What happened to {X} {cause_q}?", "How did {X} end up with {injury_q}?"],
    "class": ["What did {X} enrol in that meets on {day}s?", "What kind of class did {X} join?"],
    "hobby": ["Which {category} did {X} recently pick up?", "What {category} is {X} into these days?"],
    "purchase": ["What did {X} buy {item_q}?", "Which item did {X} purchase {item_q}?"],
    "party": ["Where did {X} hold their {age} birthday celebration?",
              "What venue did {X} pick for turning {age_n}?"],
    "race": ["What was {X}'s finishing time in the {race_q}?", "How fast did {X} complete the {race_q}?"],
    "film": ["Which series did {X} binge-watch?", "What TV show got {X} hooked?"],
    "move": ["To which city did {X} relocate?", "Where did {X} move to?"],
    "job_change": ["What new position did {X} take?", "Which role did {X} switch to?"],
    "pet2": ["What did {X} call the {species} they adopted?", "What is the name of {X}'s second pet?"],
    "pet_intro": ["What is the name of {X}'s {species}?", "What breed is {X}'s {species}?"],
    "tp_intro": ["What's the name of {X}'s {rel}?", "Who is {X}'s {rel}?"],
    "rec": ["What {item_word} did {X} suggest to {Y}?", "Which {item_word} did {X} tell {Y} to try?"],
    "tp_gift": ["What present did {X} receive from {tp}?"],
}
ITEM_WORDS = {"book": "novel", "series": "TV show", "podcast": "podcast", "restaurant": "place to eat",
              "trail": "hike", "game": "tabletop game"}
TEMPORAL_WHAT = {  # etype -> question with {when} ("on 8th December 2023", "in May 2023", "last month")
    "book": "Which book did {X} talk about {when}?",
    "rec": "What did {X} recommend to {Y} {when}?",
    "cook": "What did {X} cook {when}?",
    "trip": "Where did {X} come back from {when}?",
    "concert": "Which band did {X} see live {when}?",
    "injury": "How did {X} get hurt {when}?",
    "class": "Which class did {X} sign up for {when}?",
    "hobby": "What activity did {X} take up {when}?",
    "purchase": "What did {X} buy {when}?",
    "film": "Which show was {X} watching {when}?",
    "tp_gift": "What gift did {X} mention receiving {when}?",
    "job_change": "What career news did {X} share {when}?",
    "move": "Where did {X} move {when}?",
    "pet2": "Which animal joined {X}'s household {when}?",
    "party": "Where did {X} celebrate a birthday {when}?",
}
WHEN_DID = {  # "When did ...?" (the answer is the turn's date)
    "injury": ["When did {X} get hurt?", "On what date did {X} injure their {part}?"],
    "class": ["When did {X} sign up for the {short}?"],
    "pet2": ["When did {X} adopt {pet2}?"],
    "concert": ["When did {X} see {band} play?"],
    "move": ["When did {X} move to {new_city}?"],
    "job_change": ["When did {X} announce the new job as {a_role}?"],
    "party": ["When was {X}'s birthday party?"],
    "trip": ["When did {X} get back from {dest}?"],
    "purchase": ["When did {X} buy {item}?"],
    "race": ["When did {X} run the {race_q}?"],
}
ORDER_DESC = {"trip": "the trip to {dest}", "concert": "seeing {band}", "class": "signing up for the {short}",
              "purchase": "buying {item}", "injury": "getting injured", "party": "the birthday party",
              "race": "the {race_q}"}
NOUNS = {"book": "book", "cook": "dish", "trip": "trip", "hobby": "new hobby", "rec": "recommendation"}
ANCHORS = {"party": "{X}'s birthday party", "concert": "{X}'s night seeing {band}",
           "trip": "{X}'s trip to {dest}",
           "move": "{X}'s move to {new_city}", "injury": "{X}'s accident"}
TP_ASK = {  # about a third party ({subject} is "Nate's sister" or "the person who ...")
    "tp_rec": "What {item_word} did {subject} recommend?",
    "tp_move": "Which city did {subject} relocate to?",
    "tp_job": "What job did {subject} land?",
    "tp_pet": "What is the name of the {species} {subject} adopted?",
    "tp_gift": "What present did {subject} give {X}?",
}
TP_DESC = {  # naming a third party by what they did
    "tp_rec": "the person who got {X} into {title}",
    "tp_move": "the person who moved to {city}",
    "tp_job": "the person who was hired as {a_role}",
    "tp_pet": "the person who adopted {pet}",
    "tp_gift": "the person who gave {X} {gift}",
}
OPEN = {
    "hobby": ["What kinds of pastimes does {X} have?", "How does {X} like to spend free time?"],
    "job": ["How has {X}'s work situation changed over time?", "Describe {X}'s career path."],
    "pet": ["What animals does {X} live with?", "Tell me about {X}'s pets."],
    "travel": ["Where has {X} been travelling?", "What trips has {X} taken?"],
    "reading": ["What has {X} been reading and watching?", "What books and shows has {X} gotten into?"],
    "people": ["Who are the important people in {X}'s life?",
               "Which friends and family does {X} talk about?"],
    "cooking": ["What kind of food does {X} cook?", "What has {X} made in the kitchen?"],
    "health": ["What physical setbacks has {X} dealt with?", "How has {X}'s health been?"],
    "home": ["Which places has {X} called home?", "Where has {X} lived?"],
    "recs": ["What has {X} recommended to {Y}?", "What suggestions did {X} give {Y}?"],
}
PERIODS = [  # (label maker, (start, end) maker) by year
    (lambda y: f"in the summer of {y}", lambda y: (date(y, 6, 1), date(y, 8, 31))),
    (lambda y: f"in the spring of {y}", lambda y: (date(y, 3, 1), date(y, 5, 31))),
    (lambda y: f"in the autumn of {y}", lambda y: (date(y, 9, 1), date(y, 11, 30))),
    (lambda y: f"in early {y}", lambda y: (date(y, 1, 1), date(y, 4, 30))),
    (lambda y: f"in late {y}", lambda y: (date(y, 9, 1), date(y, 12, 31))),
    (lambda y: f"in mid-{y}", lambda y: (date(y, 5, 1), date(y, 8, 31))),
]


class QuestionMaker:
    def __init__(self, builder: DialogueBuilder, asked_at: date) -> None:
        self.b, self.rng, self.asked_at = builder, builder.rng, asked_at
        self.names = [p.name for p in builder.people]
        self.events = [e for e in builder.events if e.turn]
        self.first, self.last = builder.dates[0], builder.dates[-1]
        # Later turns that state an event's detail again (a move's city, a recommended
        # title), which answer the same questions.
        self.restated: dict[str, list[str]] = {}
        for e in self.events:
            if e.etype == "rec_follow":
                self.restated.setdefault(e.attrs["rec"].turn, []).append(e.turn)
            if e.etype == "move_follow":
                for move in self.of(e.who, "move"):
                    self.restated.setdefault(move.turn, []).append(e.turn)

    def evidence(self, events: list[Event]) -> list[str]:
        return [t for e in events for t in [e.turn, *self.restated.get(e.turn, [])]]

    def fmt(self, template: str, event: Event | None = None, who: int = 0, **extra: Any) -> str:
        values: dict[str, Any] = {**event.attrs, **derived(event.attrs)} if event else {}
        if event is not None:
            who = event.who
            if event.etype == "rec":
                values["item_word"] = ITEM_WORDS[event.attrs["item_kind"]]
            if event.etype == "party":
                values["age_n"] = re.sub(r"\D", "", event.attrs["age"])
        values.update(X=self.names[who], Y=self.names[1 - who], **extra)
        return cap(template.format(**values))

    def of(self, who: int, etype: str, lo: date | None = None, hi: date | None = None) -> list[Event]:
        return [e for e in self.events if e.who == who and e.etype == etype
                and (lo is None or e.date >= lo) and (hi is None or e.date <= hi)]

    def in_range(self, lo: date, hi: date) -> bool:
        return any(lo <= d <= hi for d in self.b.dates)

    # -- single --

    def single(self) -> list[Question]:
        out = []
        for event in self.events:
            # Single means one turn: facts stated again later are left to the other kinds.
            if event.etype not in SINGLE or event.turn in self.restated:
                continue
            template = self.rng.choice(SINGLE[event.etype])
            out.append(Question("single", self.fmt(template, event), [event.turn], event.etype))
        return out

    # -- temporal --

    def temporal(self) -> list[Question]:
        out: list[Question] = []
        rng = self.rng
        facts = [e for e in self.events if e.etype in TEMPORAL_WHAT]
        for event in facts:
            # On an exact date, in several formats.
            when = "on " + fmt_date(event.date, rng.choice(DATE_STYLES))
            same = self.of(event.who, event.etype, event.date, event.date)
            out.append(Question("temporal", self.fmt(TEMPORAL_WHAT[event.etype], event, when=when),
                                self.evidence(same), "on_date"))
            # In a month, or a season / part of a year.
            start, end = month_window(event.date.year, event.date.month)
            label = rng.choice(("in", "during")) + f" {MONTHS[event.date.month - 1]} {event.date.year}"
            out.append(Question("temporal", self.fmt(TEMPORAL_WHAT[event.etype], event, when=label),
                                self.evidence(self.of(event.who, event.etype, start, end)), "month"))
            label_of, window_of = rng.choice(PERIODS)
            start, end = window_of(event.date.year)
            if start <= event.date <= end:
                out.append(Question("temporal", self.fmt(TEMPORAL_WHAT[event.etype], event,
                                                         when=label_of(event.date.year)),
                                    self.evidence(self.of(event.who, event.etype, start, end)), "period"))
            # Relative to the day the questions are asked.
            for back, label in ((1, "last month"), (2, "two months ago"), (3, "three months ago")):
                month = self.asked_at.month - back
                year = self.asked_at.year + (month - 1) // 12
                month = (month - 1) % 12 + 1
                start, end = month_window(year, month)
                if start <= event.date <= end:
                    out.append(Question("temporal", self.fmt(TEMPORAL_WHAT[event.etype], event, when=label),
                                        self.evidence(self.of(event.who, event.etype, start, end)),
                                        "relative"))
        for event in self.events:
            if event.etype in WHEN_DID:
                template = rng.choice(WHEN_DID[event.etype])
                out.append(Question("temporal", self.fmt(template, event), [event.turn], "when"))
        out += self._weekday_questions()
        out += self._state_questions()
        out += self._week_after_questions()
        out += self._order_questions()
        return out

    def _weekday_questions(self) -> list[Question]:
        """"What did X tell Y about on the Monday before July 24, 2023?" (and "after")."""
        out = []
        rng = self.rng
        for s, day in enumerate(self.b.dates):
            for who in (0, 1):
                news = [e for e in self.events if e.session == s and e.who == who and not e.follow_up
                        and e.etype not in {"move_plan", "city_intro", "job_intro"}]
                if not news:
                    continue
                weekday = WEEKDAYS[day.weekday()]
                if rng.random() < 0.6:
                    ref, rel = day + timedelta(days=rng.randint(1, 6)), "before"
                else:
                    ref, rel = day - timedelta(days=rng.randint(1, 6)), "after"
                text = (f"What did {self.names[who]} tell {self.names[1 - who]} about on the {weekday} {rel} "
                        f"{fmt_date(ref, rng.choice(('mdy', 'ord', 'iso')))}?")
                out.append(Question("temporal", text, [e.turn for e in news], "weekday"))
        return out

    def _state_questions(self) -> list[Question]:
        """Where someone lived, what they did for work, how many pets they had, at a time."""
        out = []
        rng = self.rng
        for who in (0, 1):
            states = []
            intro = self.of(who, "city_intro")
            moves = self.of(who, "move")
            if intro:
                after = [e.turn for e in moves + self.of(who, "move_follow")]
                states.append((["Where was {X} living {when}?", "Which city was {X}'s home {when}?"],
                               moves[0].date if moves else None, [intro[0].turn], after))
            job_intro, changes = self.of(who, "job_intro"), self.of(who, "job_change")
            if job_intro:
                states.append((["What did {X} do for a living {when}?", "What was {X}'s job {when}?"],
                               changes[0].date if changes else None, [job_intro[0].turn],
                               [e.turn for e in changes]))
            pet_intro, adopted = self.of(who, "pet_intro"), self.of(who, "pet2")
            if pet_intro and adopted:
                states.append((["How many pets did {X} have {when}?"], adopted[0].date, [pet_intro[0].turn],
                               [pet_intro[0].turn, adopted[0].turn]))
            for templates, change, before, after in states:
                windows = [(f"in {MONTHS[m - 1]} {y}", *month_window(y, m))
                           for y in (2023, 2024) for m in range(1, 13)]
                windows += [(label(y), *window(y)) for y in (2023, 2024) for label, window in PERIODS]
                rng.shuffle(windows)
                made = 0
                for label, start, end in windows:
                    if made >= 3 or not self.in_range(start, end):
                        continue
                    if change is None or end < change:
                        evidence = before
                    elif start >= change:
                        evidence = after
                    else:
                        continue  # the answer changes inside the window
                    if not evidence:
                        continue
                    out.append(Question("temporal", self.fmt(rng.choice(templates), who=who, when=label),
                                        list(evidence), "state"))
                    made += 1
        return out

    def _week_after_questions(self) -> list[Question]:
        out = []
        for event in self.events:
            if event.etype not in ANCHORS:
                continue
            later = [e for e in self.events if event.date < e.date <= event.date + timedelta(days=7)
                     and not e.follow_up and e.etype not in {"move_plan"}]
            if not later:
                continue
            anchor = self.fmt(ANCHORS[event.etype], event)
            text = self.rng.choice(["What news came up in the week after {a}?",
                                    "What happened the week after {a}?"]).format(a=anchor)
            out.append(Question("temporal", text, [e.turn for e in later], "week_after"))
        return out

    def _order_questions(self) -> list[Question]:
        out = []
        rng = self.rng
        for who in (0, 1):
            for etype, noun in NOUNS.items():
                found = self.of(who, etype)
                if len(found) >= 2:
                    found.sort(key=lambda e: e.date)
                    if found[0].date == found[-1].date:
                        continue
                    if rng.random() < 0.5:
                        text, pick = f"What was the first {noun} {self.names[who]} mentioned?", found[0]
                    else:
                        text = f"What was the most recent {noun} {self.names[who]} mentioned?"
                        pick = found[-1]
                    out.append(Question("temporal", text, [pick.turn], "order"))
            dated = [e for e in self.events if e.who == who and e.etype in ORDER_DESC]
            rng.shuffle(dated)
            for a, b in zip(dated[::2], dated[1::2], strict=False):
                if a.date == b.date:
                    continue
                text = (f"Which came first for {self.names[who]}: {self.fmt(ORDER_DESC[a.etype], a)} "
                        f"or {self.fmt(ORDER_DESC[b.etype], b)}?")
                out.append(Question("temporal", text, [a.turn, b.turn], "order"))
        return out

    # -- multihop --

    def multihop(self) -> list[Question]:
        out: list[Question] = []
        for who, person in enumerate(self.b.people):
            for other in person.others:
                intro = other["intro"]
                actions = [a for a in other["actions"] if a.turn]
                relation = f"{self.names[who]}'s {other['rel']}"
                for action in actions:
                    if action.etype in TP_ASK:
                        text = self.fmt(TP_ASK[action.etype], action, subject=relation,
                                        item_word=ITEM_WORDS.get(action.attrs.get("item_kind", ""), ""))
                    else:  # tp_hobby: its own question
                        text = self.fmt(action.attrs["question"], action, subject=relation)
                    out.append(Question("multihop", text, [intro.turn, action.turn], "relation"))
                if len(actions) == 2:
                    for first, second in (actions, actions[::-1]):
                        if first.etype not in TP_DESC or second.etype not in TP_ASK:
                            continue
                        desc = self.fmt(TP_DESC[first.etype], first)
                        desc = desc[:1].lower() + desc[1:]
                        text = self.fmt(TP_ASK[second.etype], second, subject=desc, item_word=ITEM_WORDS.get(
                            second.attrs.get("item_kind", ""), ""))
                        out.append(Question("multihop", text, [first.turn, second.turn], "chain"))
            # The city someone lived in when they adopted their second pet.
            for adopt in self.of(who, "pet2"):
                home = self._home(who, adopt.date)
                if home.turn != adopt.turn and self.of(who, "move"):  # without a move: single-hop
                    text = self.fmt("Which city was {X} living in when {pet2} joined the family?", adopt)
                    out.append(Question("multihop", text, [adopt.turn, home.turn], "state_join"))
            # Where someone was living when they got hurt, took a class, or had a party.
            for etype, phrase in (("injury", "got {injury_q}"), ("class", "started the {short}"),
                                  ("party", "had the {age} birthday party")):
                for event in self.of(who, etype):
                    moves = self.of(who, "move")
                    home = self._home(who, event.date)
                    if home.turn == event.turn or not moves:
                        continue  # without a move the city question is single-hop
                    text = self.fmt("In which city did {X} live when they " + phrase + "?", event)
                    out.append(Question("multihop", text, [event.turn, home.turn], "state_join"))
        # What someone thought of what the other recommended.
        for follow in (e for e in self.events if e.etype == "rec_follow"):
            rec = follow.attrs["rec"]
            text = self.fmt("What did {X} think of the {item_word} {Y} had recommended?", follow,
                            item_word=ITEM_WORDS[rec.attrs["item_kind"]])
            out.append(Question("multihop", text, [rec.turn, follow.turn], "rec_follow"))
        return out

    def _home(self, who: int, when: date) -> Event:
        """The turn that says where `who` lived on `when`: the move, or the first mention."""
        moves = self.of(who, "move")
        return moves[0] if moves and moves[0].date <= when else self.of(who, "city_intro")[0]

    # -- open --

    def open(self) -> list[Question]:
        out = []
        for who in (0, 1):
            def turns(*etypes: str, who: int = who) -> list[str]:
                return [e.turn for e in self.events if e.who == who and e.etype in etypes]

            topics = {
                "hobby": turns("hobby", "class", "class_follow", "race"),
                "job": turns("job_intro", "job_change", "job_follow"),
                "pet": turns("pet_intro", "pet2", "pet_follow"),
                "travel": turns("trip"),
                "reading": turns("book", "film", "rec_follow"),
                "people": turns("tp_intro"),
                "cooking": turns("cook"),
                "health": turns("injury", "injury_follow"),
                "home": turns("city_intro", "move", "move_follow"),
                "recs": turns("rec"),
            }
            for topic, evidence in topics.items():
                if len(evidence) >= 2:
                    text = self.fmt(self.rng.choice(OPEN[topic]), who=who)
                    out.append(Question("open", text, evidence, topic))
        return out

    # -- selection --

    def make(self) -> list[Question]:
        pools = {"single": self.single(), "temporal": self.temporal(), "multihop": self.multihop(),
                 "open": self.open()}
        chosen: list[Question] = []
        texts: set[str] = set()
        for kind, quota in QUOTAS.items():
            # Round-robin over sub-types so each kind mixes its question shapes.
            by_tag: dict[str, list[Question]] = {}
            for q in pools[kind]:
                if q.evidence:
                    by_tag.setdefault(q.tag, []).append(q)
            for items in by_tag.values():
                self.rng.shuffle(items)
            tags = sorted(by_tag)
            self.rng.shuffle(tags)
            taken = 0
            while taken < quota and any(by_tag.values()):
                for tag in tags:
                    if taken >= quota or not by_tag[tag]:
                        continue
                    q = by_tag[tag].pop()
                    if q.text in texts:
                        continue
                    texts.add(q.text)
                    chosen.append(q)
                    taken += 1
        self.rng.shuffle(chosen)
        return chosen


# --- the data set -----------------------------------------------------------------------

def build() -> tuple[list[dict], list[dict]]:
    rng = random.Random(SEED)
    pools = {
        "city": Pool(rng, HOME_CITIES), "trip": Pool(rng, TRIP_PLACES), "job": Pool(rng, JOBS),
        "pet": Pool(rng, PET_NAMES), "about": Pool(rng, ABOUTS), "podcast": Pool(rng, PODCASTS),
        "restaurant": Pool(rng, RESTAURANTS), "trail": Pool(rng, TRAILS), "game": Pool(rng, GAMES),
        "dish": Pool(rng, DISHES), "occasion": Pool(rng, OCCASIONS), "highlight": Pool(rng, TRIP_HIGHLIGHTS),
        "injury": Pool(rng, INJURIES), "course": Pool(rng, COURSES), "hobby": Pool(rng, HOBBIES),
        "purchase": Pool(rng, PURCHASES), "gift": Pool(rng, GIFTS), "party": Pool(rng, PARTY_VENUES),
        "challenge": Pool(rng, CHALLENGES),
    }
    titles = Titles(rng)
    speakers = list(SPEAKERS)
    rng.shuffle(speakers)
    third = list(THIRD_PARTIES)
    rng.shuffle(third)
    turn_rows: list[dict] = []
    question_rows: list[dict] = []
    for index in range(N_DIALOGUES):
        names = (speakers[2 * index], speakers[2 * index + 1])
        builder = DialogueBuilder(index, rng, pools, titles, names, third[6 * index:6 * index + 6])
        turns, questions, asked_at = builder.build()
        for t in turns:
            turn_rows.append({"type": "turn", "dialogue": builder.did, "id": t.id, "session": t.session,
                              "date": t.date.isoformat(), "speaker": t.speaker, "text": t.text})
        for number, q in enumerate(questions, start=1):
            question_rows.append({
                "type": "question", "dialogue": builder.did, "id": f"{builder.did}-q{number:02d}",
                "kind": q.kind, "question": q.text, "evidence": q.evidence, "asked_at": asked_at.isoformat(),
                "half": "tuning" if index % 2 == 0 else "heldout", "shape": q.tag,
            })
    return turn_rows, question_rows


def validate(turns: list[dict], questions: list[dict]) -> list[str]:
    """Every rule the brief states; returns the problems (empty when all hold)."""
    problems: list[str] = []
    by_id = {t["id"]: t for t in turns}
    if len(by_id) != len(turns):
        problems.append("duplicate turn ids")
    if len({q["id"] for q in questions}) != len(questions):
        problems.append("duplicate question ids")
    if not 3000 <= len(turns) <= 4500:
        problems.append(f"{len(turns)} turns, expected 3,000-4,500")
    speakers_seen: dict[str, set[str]] = {}
    for did in sorted({t["dialogue"] for t in turns}):
        rows = [t for t in turns if t["dialogue"] == did]
        speakers_seen[did] = {t["speaker"] for t in rows}
        sessions = sorted({t["session"] for t in rows})
        if not 15 <= len(sessions) <= 25:
            problems.append(f"{did}: {len(sessions)} sessions")
        dates = [date.fromisoformat(next(t["date"] for t in rows if t["session"] == s)) for s in sessions]
        span = (dates[-1] - dates[0]).days
        if not 120 <= span <= 310 or dates[0].year < 2023 or dates[-1].year > 2024:
            problems.append(f"{did}: sessions span {dates[0]}..{dates[-1]}")
        if any(not 3 <= (b - a).days <= 30 for a, b in pairwise(dates)):
            problems.append(f"{did}: a gap between sessions outside 3-30 days")
        for s in sessions:
            session = [t for t in rows if t["session"] == s]
            if not 12 <= len(session) <= 30:
                problems.append(f"{did} s{s}: {len(session)} turns")
            if any(a["speaker"] == b["speaker"] for a, b in pairwise(session)):
                problems.append(f"{did} s{s}: speakers do not alternate")
    names = [name for seen in speakers_seen.values() for name in seen]
    if len(names) != len(set(names)) or any(len(seen) != 2 for seen in speakers_seen.values()):
        problems.append("speaker names are not two per dialogue and distinct across dialogues")
    short = [t["id"] for t in turns if len(f"{t['speaker']}: {t['text']}") < MIN_CONTENT]
    if short:
        problems.append(f"content under {MIN_CONTENT} characters: {short[:5]}")
    long_turns = [t for t in turns if len(t["text"].split()) >= 60]
    if not long_turns or any(len(t["text"].split()) > 150 for t in long_turns):
        problems.append("long turns missing or over 150 words")
    kinds = Counter(q["kind"] for q in questions)
    for kind in ("single", "temporal", "multihop"):
        if kinds[kind] < 0.2 * len(questions):
            problems.append(f"{kind}: {kinds[kind]} of {len(questions)} questions (< 20%)")
    if kinds["open"] < 0.1 * len(questions):
        problems.append(f"open: {kinds['open']} of {len(questions)} questions (< 10%)")
    for q in questions:
        if not q["evidence"]:
            problems.append(f"{q['id']}: no evidence")
        for turn_id in q["evidence"]:
            turn = by_id.get(turn_id)
            if turn is None or turn["dialogue"] != q["dialogue"]:
                problems.append(f"{q['id']}: evidence {turn_id} is not a turn of {q['dialogue']}")
                continue
            if turn["text"].lower() in q["question"].lower() or shared_run(turn["text"], q["question"]):
                problems.append(f"{q['id']}: copies its evidence turn {turn_id}")
            if turn["date"] >= q["asked_at"]:
                problems.append(f"{q['id']}: evidence {turn_id} is not before asked_at")
        if q["kind"] == "multihop" and len(q["evidence"]) < 2:
            problems.append(f"{q['id']}: a multihop question with one evidence turn")
    return problems


def main() -> None:
    turns, questions = build()
    problems = validate(turns, questions)
    if problems:
        print("\n".join(problems[:40]), file=sys.stderr)
        raise SystemExit(f"{len(problems)} problems; nothing written")
    with OUT.open("w", encoding="utf-8") as out:
        for row in [*turns, *questions]:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    kinds = Counter(q["kind"] for q in questions)
    long_turns = sum(1 for t in turns if len(t["text"].split()) >= 60)
    print(f"wrote {OUT.relative_to(OUT.parents[2])}: {len(turns)} turns ({long_turns} long), "
          f"{len(questions)} questions {dict(sorted(kinds.items()))}")


if __name__ == "__main__":
    main()
