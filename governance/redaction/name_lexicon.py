"""Word lists for name detection.

First names, surnames and common words come from Faker's locale data (MIT licence, maintained,
86 locales): its person providers list the first and last names of each locale, and its lorem
providers list each language's common words. Loading them takes ~0.1 s once per process.
What no package provides (tech and product words that collide with names, honorifics, words
that are never names) is listed here by hand.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import faker.providers.lorem
import faker.providers.person

# Capitalised words in technical prose that are also names in Faker's lists ("Ray Serve", "Hugo",
# "Jasmine", "Julia", "Cassandra", "Aurora") or that precede/follow a name ("Django", "Studio").
TECH_WORDS = frozenset(
    """
    django flask fastapi pydantic celery redis postgres postgresql pgvector mysql mariadb sqlite oracle
    mongo mongodb cassandra couchdb dynamo dynamodb elastic elasticsearch opensearch kibana logstash
    grafana loki tempo prometheus sentry datadog splunk honeycomb jaeger kafka rabbitmq nats pulsar
    zookeeper spark hadoop hive flink beam storm presto trino druid pinot airflow dagster prefect luigi
    dask ray serve jupyter pandas numpy scipy polars arrow parquet docker podman kubernetes helm argo
    istio envoy linkerd consul vault nomad terraform packer vagrant ansible chef puppet salt jenkins
    travis circle gitlab github bitbucket gitea jira confluence trello asana notion slack discord teams
    zoom webex outlook gmail google microsoft amazon apple meta facebook twitter linkedin azure aws gcp
    heroku vercel netlify render fly cloudflare fastly akamai digitalocean linode hetzner firebase
    supabase stripe twilio sendgrid mailgun mailchimp auth0 okta keycloak cognito amplify lambda fargate
    aurora athena redshift glue kinesis neptune sagemaker bedrock beanstalk route cloud run functions
    python java javascript typescript ruby rails rust go golang swift kotlin scala clojure elixir erlang
    phoenix haskell julia perl php lua dart flutter crystal nim zig cobol fortran pascal ada react vue
    angular svelte solid ember backbone jquery next nuxt remix astro gatsby hugo jekyll sphinx mkdocs
    docusaurus storybook webpack vite rollup esbuild babel eslint prettier jest mocha chai jasmine karma
    cypress playwright selenium puppeteer pytest unittest tox nox ruff black mypy pyright poetry pip
    conda maven gradle ant bazel make cmake ninja npm yarn pnpm bun deno node nodejs express nest nestjs
    koa hapi spring hibernate quarkus micronaut dotnet blazor razor xamarin maui unity godot unreal
    electron tauri ionic expo capacitor cordova android ios macos windows linux ubuntu debian fedora
    centos alpine arch nixos freebsd chrome chromium firefox safari edge opera brave xcode intellij
    pycharm webstorm rider eclipse netbeans vim neovim emacs vscode visual studio code copilot cursor
    claude gemini bard llama mistral falcon gemma qwen openai anthropic hugging face mudblazor
    mudsnackbar muddialog nginx apache tomcat jetty caddy traefik haproxy gunicorn uvicorn daphne
    django-q celery sidekiq resque hangfire quartz nancy dapper polly serilog nlog moq autofac
    automapper mediatr swagger openapi graphql grpc protobuf thrift avro json yaml toml xml html css
    sass less tailwind bootstrap material bulma foundation apollo relay redux mobx zustand recoil rxjs
    lodash underscore moment luxon axios fetch cluster pipeline pipelines actions devops server client
    serverless headless instant silicon rosetta cloudwatch cloudfront s3 ec2 ecs eks gke aks iam kms sqs
    sns vpc alb elb cdn dns api sdk cli ui ux pagerduty opsgenie statuspage zendesk intercom hubspot
    salesforce shopify magento wordpress drupal woocommerce paypal braintree adyen klarna square plaid
    segment mixpanel amplitude looker tableau metabase superset snowflake databricks bigquery dbt
    fivetran airbyte stitch hightouch census watson siri alexa cortana copilot chatgpt
    """.split()
)

# Words that sit next to names in titles and headings but are never part of a person's name.
NEVER_NAME_WORDS = frozenset(
    """
    street st avenue ave road rd boulevard blvd lane ln drive dr court ct place pl terrace way parkway
    highway circle square crescent close gardens row mews grove trail walk alley plaza loop hill park
    january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday today tomorrow yesterday inc ltd llc gmbh ag sa bv corp co
    company group labs team teams department dept office university college school bank hospital clinic
    foundation institute council ministry agency service services platform project release manager
    engineer engineering support sales finance legal security ops north south east west central new old
    great saint san santa los las el la le des du del mr mrs ms miss mx dr prof sir dame herr frau mme
    mlle sr sra srta i we you he she they it this that these those the a an and or but if then when
    while for with hi hello hey dear thanks thank regards best cheers sincerely yours monitoring runbook
    readme changelog roadmap sprint standup retro postmortem incident
    house manor cottage lodge hotel inn motel hostel abbey chapel cathedral museum gallery theatre theater
    cafe café pub bistro restaurant brasserie studio studios centre center stadium arena station airport
    harbour harbor beach bay island islands valley mountains gare bahnhof estación stazione
    ciao hola hallo salut bonjour servus moin hej hoi olá ahoj cześć
    """.split()
)

# First names that are also everyday English words: they only start a name before a known surname.
WEAK_FIRST_NAMES = frozenset(
    """
    will may june april august mark bill grant chase hunter summer rose ruby crystal dash art page hope
    faith joy grace max jack pat sky rain storm river ray drew dean dale glen guy herb lance miles norm
    rich sandy violet iris ivy jade amber olive pearl penny dawn eve holly lily daisy sage forest reed
    rod sterling van wade angel king prince major justice royal star honey brandy candy cherry ginger
    jasmine karma echo phoenix apollo atlas orion nova luna aurora cassandra athena unity harmony melody
    destiny trinity genesis serenity liberty haven legend saint kit tab cam bud buck chip duke earl gene
    al jan said hugo julia rosetta august autumn winter spring sunny chance cash price stone cole gray
    grey hall young white black brown green long little low love lucky major miller carter mason parker
    taylor cooper baker fisher turner porter walker tucker sawyer spencer harper archer austin dallas
    denver phoenix camden jordan london paris sydney florence victoria georgia virginia carolina sierra
    india china
    """.split()
)

# Companies and consumer brands whose name, right before capitalised words, makes them a product
# ("Adobe Acrobat Reader", "Samsung Galaxy", "Nintendo Switch"); tech brands are in TECH_WORDS.
MAKERS = frozenset(
    """
    adobe samsung sony nintendo tesla logitech dell lenovo hp asus acer intel amd nvidia ibm cisco
    canon nikon philips bosch xiaomi huawei oneplus motorola nokia panasonic toyota honda ford bmw
    audi volkswagen mercedes porsche ferrari ikea nike adidas disney netflix spotify uber airbnb
    atlassian jetbrains mozilla dropbox xbox playstation kindle pixel surface galaxy iphone ipad
    macbook airpods garmin fitbit gopro bose dyson lego marvel pixar warner paramount universal
    """.split()
)

# Nationalities, which start breed and product names ("German Shepherd", "Siberian Husky") and
# never a private person's full name.
DEMONYMS = frozenset(
    """
    german french english american british irish scottish welsh australian canadian mexican brazilian
    argentinian spanish portuguese italian swiss austrian dutch belgian danish swedish norwegian finnish
    icelandic russian polish czech hungarian greek turkish persian egyptian chinese japanese korean
    thai siberian alaskan bernese tibetan afghan
    """.split()
)

# Months and countries that are also surnames ("Mai", "May", "Ireland", "England"): after a word that
# is not a first name they name a date or a place ("Miete Mai", "Electric Ireland"), not a person.
MONTHS_AND_COUNTRIES = frozenset(
    """
    january february march april may june july august september october november december
    januar februar märz mai juni juli oktober dezember janvier février mars avril juin juillet août
    septembre octobre novembre décembre enero febrero marzo abril mayo junio julio agosto septiembre
    octubre noviembre diciembre gennaio febbraio aprile maggio giugno luglio settembre ottobre
    dicembre
    ireland england scotland wales britain france germany spain italy portugal holland belgium austria
    switzerland sweden norway denmark finland poland greece turkey israel egypt kenya nigeria india
    china japan korea canada australia mexico brazil argentina chile peru africa america europe asia
    """.split()
)

# Last words of dog breeds that are not also common surnames ("Shepherd" and "Pointer" are).
BREED_WORDS = frozenset(
    """
    retriever retrievers terrier terriers spaniel spaniels collie collies bulldog bulldogs poodle
    poodles husky huskies setter setters hound hounds pinscher schnauzer sheepdog mastiff malamute
    beagle dachshund chihuahua labradoodle doodle
    """.split()
)

TITLES = frozenset(
    "mr mrs ms miss mx dr prof professor sir dame herr frau mme mlle madame monsieur sr sra srta señor "
    "señora don doña sig dott dottssa ing".split()
)

# Between parts of one name: "Jan de Vries", "Guido van Rossum", "Ludwig van der Berg".
PARTICLES = frozenset("van von de der den del della di da dos das du le la bin ibn al el ter ten zu".split())

# Faker lists that hold names: first and last names of each locale, and romanised forms.
_FIRST_ATTRS = ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary",
                "first_romanized_names")
_LAST_ATTRS = ("last_names", "last_names_male", "last_names_female", "last_romanized_names")
_LOREM_LOCALES = ("en_US", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL")


def _provider_attr(provider: type, attr: str) -> object:
    for klass in provider.__mro__:
        if attr in vars(klass):
            return vars(klass)[attr]
    return None


def _words(values: object) -> set[str]:
    # Lists, tuples and weighted OrderedDicts all iterate over names; properties are skipped.
    if not isinstance(values, (list, tuple, dict, set, frozenset)):
        return set()
    return {value.casefold() for value in values if isinstance(value, str)}


@cache
def _person_names() -> tuple[frozenset[str], frozenset[str]]:
    first: set[str] = set()
    last: set[str] = set()
    for module in pkgutil.iter_modules(faker.providers.person.__path__):
        provider = importlib.import_module(f"faker.providers.person.{module.name}").Provider
        for attr in _FIRST_ATTRS:
            first |= _words(_provider_attr(provider, attr))
        for attr in _LAST_ATTRS:
            last |= _words(_provider_attr(provider, attr))
    never = NEVER_NAME_WORDS | TECH_WORDS
    return frozenset(first - never), frozenset(last - never)


def first_names() -> frozenset[str]:
    return _person_names()[0]


def last_names() -> frozenset[str]:
    return _person_names()[1]


@cache
def common_words() -> frozenset[str]:
    words: set[str] = set()
    for locale in _LOREM_LOCALES:
        provider = importlib.import_module(f"{faker.providers.lorem.__name__}.{locale}").Provider
        words |= _words(provider.word_list)
    return frozenset(words)
