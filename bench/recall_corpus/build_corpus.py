# ruff: noqa: E501
"""Build the SAM recall evaluation corpus (memories.jsonl, queries.jsonl, README.md).

Deterministic: a fixed seed, the standard library only, no network. Run it with

    .venv/bin/python bench/recall_corpus/build_corpus.py

Three sources of memories:

* CORE blocks: hand-written memories in a small line format (below), each with its own
  exact ("E") and paraphrase ("R") queries where useful.
* RECENCY groups: hand-written near-duplicates of one fact at different times; the newest,
  recently used variant is the relevant one.
* FAMILIES: systematic variations (one kind of fact for many services, DAGs, screens,
  people ...) built from hand-written tables; they are the near-duplicate distractors.

Line format of a CORE block (one memory per "@" header):

    @key kind memory_type reliability
    T title
    C content line (repeat C for more lines; lines are joined with newlines)
    P canonical phrase | another phrase
    G tag tag tag
    E exact query :: optional active task
    R paraphrase query :: optional active task
    (an E or R line may end with " ++ key, key" to add more relevant memories)

A RECENCY group starts with "@@key kind memory_type" and has T, C, P, G as above (with
{0}, {1} ... filled from each variant), "V" with the variants (" | " between variants,
" ; " between the fields of one variant, the current one first) and one "Q" query line.

Multi-memory queries (tag, mixed) are lines of the form

    category | tags or - | key, key | query | active task
"""

from __future__ import annotations

import json
import random
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

SEED = 20250611
OUT_DIR = Path(__file__).resolve().parent

SPACES = {
    "wb": ("acme-webshop", "Acme webshop: Blazor (.NET 8/9), MudBlazor, EF Core, SQL Server, Azure"),
    "pf": ("platform-team", "Platform team: Django, Postgres, Celery, Kubernetes"),
    "fe": ("frontend-react", "Customer portal frontend: React, TypeScript, Vite, TanStack Query"),
    "dp": ("data-pipeline", "Analytics pipeline: Airflow, dbt, Snowflake, Fivetran"),
    "mb": ("mobile-app", "Shopping app: Kotlin/Jetpack Compose on Android, SwiftUI on iOS"),
    "pa": ("user-maya", "Personal assistant memory for one user, Maya"),
}

KINDS = {
    "fact", "preference", "decision", "solution", "pattern", "standard", "procedure",
    "gotcha", "topic", "style", "project_fact",
}
MEMORY_TYPES = {"episodic", "semantic", "procedural"}
RELIABILITIES = {"unverified", "inferred", "confirmed", "contested"}
CATEGORIES = ("exact", "paraphrase", "tag", "recency", "mixed")
TAG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


# ---------------------------------------------------------------------------
# acme-webshop: hand-written core memories
# ---------------------------------------------------------------------------

CORE_WB = r"""
@wb.snackbar preference semantic confirmed
T Use MudSnackbar for transient notifications
C Use ISnackbar.Add(message, Severity.Success) for alert-style notifications such as "Saved" or "Added to cart". MudDialog blocks the page and needs a click, so it is wrong for quick confirmations.
C Keep the text under 60 characters; the global SnackbarConfiguration sets PositionClass = Defaults.Classes.Position.BottomRight and VisibleStateDuration = 3000.
P use mudsnackbar for alerts | snackbar for save confirmations | isnackbar.add
G mudblazor ui notifications
R how should I show a quick confirmation toast after saving? :: adding feedback to the product editor page

@wb.dialog_confirm pattern semantic confirmed
T Destructive admin actions are confirmed in a MudDialog
C Deleting a product, cancelling an order or issuing a refund must go through IDialogService.ShowMessageBox with explicit "Delete" / "Keep" buttons. Do not replace it with a snackbar carrying an undo link: Adyen refunds cannot be undone once submitted.
P confirm destructive actions with a dialog | showmessagebox for delete | no undo snackbar for refunds
G mudblazor ui dialogs admin
E support asked for an undo toast on refunds; do we still confirm destructive actions with a dialog?

@wb.render_mode decision semantic confirmed
T Render modes: static SSR for catalogue pages, InteractiveServer elsewhere
C Catalogue pages (home, category, product detail) are static SSR with [StreamRendering] for SEO and LCP. Account and admin pages use InteractiveServer. Only the mini-cart drawer uses InteractiveAuto.
C Reason: a full WebAssembly build added a 2.1 MB download and pushed mobile LCP from 1.9 s to 3.4 s in the October 2024 test.
P static ssr for product pages | default render mode interactiveserver | streamrendering on catalogue pages
G blazor render-mode performance decision
R the new wishlist screen: should its logic live in the browser bundle or on the server circuit? :: building the wishlist page

@wb.circuit_1006 solution episodic confirmed
T Circuits dropping with WebSocket 1006 behind Application Gateway
C Symptom: "Error: Connection disconnected with error 'Error: WebSocket closed with status code: 1006 (no reason given).'" and the "Attempting to reconnect to the server" banner every few minutes.
C Cause: the Azure Application Gateway idle timeout (4 min) closed idle WebSockets. Fix: request timeout raised to 20 min on the gateway listener, ARR affinity on, and CircuitOptions.DisconnectedCircuitRetentionPeriod = 3 minutes.
P websocket closed with status code: 1006 | blazor circuit keeps reconnecting | application gateway idle timeout
G blazor signalr azure incident
E users see "WebSocket closed with status code: 1006" and the admin page keeps reconnecting
R the back-office app shows that grey 'trying to get the connection back' bar every few minutes, any known cause?

@wb.dbcontext_factory solution procedural confirmed
T Use IDbContextFactory in Blazor components
C Error: "System.InvalidOperationException: A second operation was started on this context instance before a previous operation completed."
C In InteractiveServer components a scoped ShopDbContext lives as long as the circuit, so two parallel loads share it. Inject IDbContextFactory<ShopDbContext> and create a context per operation: await using var db = await DbFactory.CreateDbContextAsync();
P a second operation was started on this context instance | use idbcontextfactory in components | dbcontext per operation
G ef-core blazor dbcontext
E getting "A second operation was started on this context instance" when two dropdowns load at once
R two lists on the same page fetch in parallel and EF complains about concurrent use; what's our fix?

@wb.decimal_precision gotcha semantic confirmed
T Money columns are decimal(18,4) by convention
C EF Core warns "No store type was specified for the decimal property 'UnitPrice' on entity type 'OrderLine'" only for decimals added outside the convention. ShopDbContext.ConfigureConventions already calls configurationBuilder.Properties<decimal>().HavePrecision(18, 4); do not add [Precision] per property, and check the property is not typed double.
P no store type was specified for the decimal property | money columns decimal(18,4) | haveprecision convention
G ef-core sql-server money
E build log says "No store type was specified for the decimal property 'Discount'" on the new coupon entity

@wb.ef_migration_add procedure procedural confirmed
T Adding an EF Core migration
C 1. dotnet ef migrations add <Name> -p src/Webshop.Data -s src/Webshop.Api
C 2. Review the SQL: dotnet ef migrations script --idempotent -o artifacts/migration.sql
C 3. Never edit a migration that has reached staging; add a new one.
C 4. Migrations are applied by the release pipeline with the efbundle artifact, not by the app.
P dotnet ef migrations add | review migration sql | efbundle in release pipeline
G ef-core migrations release
E what's the exact dotnet ef migrations add command for the data project?

@wb.no_migrate_startup decision semantic confirmed
T Never call Database.Migrate() at application startup
C Startup migrations were removed after INC-2291: on scale-out three App Service instances ran Database.Migrate() at once and one deadlocked on __EFMigrationsHistory, leaving the site half-migrated for 40 minutes.
C The release pipeline runs ./efbundle --connection "$SQL_CONN" before the slot swap instead.
P do not migrate at startup | database.migrate race on scale-out | __efmigrationshistory deadlock
G ef-core migrations decision incident
R can I just let Program.cs bring the schema up to date when the app boots? :: adding a column for gift wrapping

@wb.records_dto preference semantic confirmed
T Prefer records for DTOs and request/response models
C API DTOs, query results and immutable component parameters are positional records (public sealed record OrderSummaryDto(Guid Id, string Number, decimal Total);). Value equality makes tests and caching simpler.
P prefer records for dtos | positional records for api models
G csharp style dto
R what type shape should the response object for the new endpoint be, class or something else? :: writing GET /api/orders/{id}/summary

@wb.no_records_entities gotcha semantic confirmed
T Avoid records for EF Core entities
C Do not model EF Core entities as records. Value-based equality and with-expressions create copies the change tracker does not know about, so updates silently do nothing, and two entities with the same values compare equal. Entities stay classes with an Id.
P avoid records for ef core entities | entities stay classes
G csharp ef-core style
E is it ok to avoid records for EF Core entities even though we use them for DTOs?

@wb.nullable standard semantic confirmed
T Nullable reference types on, warnings are errors
C Directory.Build.props sets <Nullable>enable</Nullable> and <TreatWarningsAsErrors>true</TreatWarningsAsErrors>. New code must not use the null-forgiving operator (!) without a comment explaining why the value cannot be null.
P nullable reference types enabled | no null-forgiving operator | treatwarningsaserrors
G csharp style build
R am I allowed to silence the CS8602 warning with a bang? :: fixing the build of the returns module

@wb.adyen_hmac solution episodic confirmed
T Adyen webhooks rejected after HMAC key rotation
C Symptom: every notification logged "HMAC signature validation failed" and Adyen retried them for hours.
C Cause: the HMAC key is per webhook in the Adyen Customer Area and is read from Key Vault secret adyen-webhook-hmac through an App Service Key Vault reference, which is cached for up to 24 hours. Fix: after rotating, restart the slot (or pin the new secret version in the reference).
P hmac signature validation failed | adyen webhook hmac key | key vault reference cached
G adyen payments webhooks key-vault
E adyen notifications are all rejected with "HMAC signature validation failed" since this morning
R payment provider callbacks started failing right after someone rotated the shared secret; why would the app still use the old one?

@wb.adyen_idempotency standard semantic confirmed
T Adyen payment calls carry an Idempotency-Key
C Every POST to Adyen /payments and /payments/details sends an Idempotency-Key header built as "{orderId}-{attempt}". Polly retries reuse the same key, so a timeout never produces a second charge.
P adyen idempotency-key header | idempotency key per payment attempt
G adyen payments reliability
R if the payment request times out and Polly retries, how do we make sure the shopper isn't billed twice? ++ wb.int.adyen.timeouts

@wb.hangfire_dashboard project_fact semantic confirmed
T Hangfire dashboard location and access
C The Hangfire dashboard is at /ops/hangfire on the admin host and requires the ShopOps role (Entra ID group sg-webshop-ops). Job storage is SQL Server schema hangfire in the main database.
P hangfire dashboard | ops/hangfire | shopops role
G hangfire background-jobs admin
E where is the hangfire dashboard and who can open it?

@wb.hangfire_args gotcha semantic confirmed
T Hangfire job arguments must be primitives
C Enqueue with ids only: BackgroundJob.Enqueue<IOrderExportJob>(j => j.RunAsync(orderId, CancellationToken.None)). Passing an entity serialises the whole object graph into HangFire.Job (one 4 MB row took the dashboard down) and the job then works on stale data. Never capture scoped services in the lambda.
P hangfire job arguments primitive only | do not pass entities to background jobs
G hangfire background-jobs
R I want to hand the whole Order object to the export task so it doesn't have to load it again, any problem?

@wb.css_deep gotcha semantic confirmed
T Scoped CSS needs ::deep for MudBlazor children
C Rules in a .razor.css file only reach elements rendered by that component. MudBlazor components render their own markup without the scope attribute, so write .editor ::deep .mud-input-slot { ... } and wrap the component in an element of your own.
P ::deep for mudblazor styles | css isolation not applying
G blazor css mudblazor
R my component-level stylesheet rules are ignored on the text field inside the editor, why?

@wb.culture project_fact semantic confirmed
T Storefront prices always use nl-NL formatting
C The storefront formats prices with CultureInfo("nl-NL") (€ 1.234,50) whatever the browser language; de-DE and en-GB only change texts. The admin uses en-GB. Supported cultures are configured in RequestLocalizationOptions in Program.cs.
P storefront culture nl-nl | price formatting culture
G localization pricing
R a German visitor sees the amount written the Dutch way, is that a bug?

@wb.vat_rounding decision semantic confirmed
T VAT is rounded per order line, half away from zero
C VAT is computed per line, rounded to 2 decimals with MidpointRounding.AwayFromZero, then summed. That matches Exact Online, our ERP; rounding on the order total caused 1-cent differences on 3% of invoices in 2023.
P vat rounding per line | midpointrounding.awayfromzero | one cent differences with exact online
G pricing vat erp decision
R invoices in the bookkeeping system are off by a cent compared with the shop, where should the tax be rounded?

@wb.auth_setup project_fact semantic confirmed
T Admin uses Entra ID, customers use Identity cookies
C Admin users sign in with Microsoft Entra ID (OpenID Connect, tenant acme.onmicrosoft.com). Storefront customers use ASP.NET Core Identity with the cookie .Acme.Auth, 14 days sliding expiration.
P admin login entra id | customer auth cookie .acme.auth
G auth identity admin
R how do back-office staff sign in compared with shoppers?

@wb.data_protection solution episodic confirmed
T Antiforgery errors after slot swap: persist Data Protection keys
C Symptom: "The antiforgery token could not be decrypted" and customers logged out after each swap.
C Cause: Data Protection keys were kept per instance. Fix: services.AddDataProtection().SetApplicationName("acme-webshop").PersistKeysToAzureBlobStorage(blobUri, cred).ProtectKeysWithAzureKeyVault(keyUri, cred); keys live in container dataprotection.
P the antiforgery token could not be decrypted | persist data protection keys | shared key ring across instances
G auth azure data-protection incident
E after the slot swap customers get "The antiforgery token could not be decrypted" on login
R every time we go live, shoppers get kicked out and forms fail validation, what did we do about it last time?

@wb.slot_swap procedure procedural confirmed
T Release: deploy to staging slot, smoke test, swap
C 1. The pipeline deploys to the staging slot of app-webshop-prod.
C 2. Smoke tests: dotnet test tests/Smoke --filter Category=Smoke with BASE_URL set to the slot URL.
C 3. Swap staging -> production. Rollback = swap back; it is safe within 30 minutes, before new orders depend on migrated columns.
P deploy to staging slot then swap | rollback by swapping back | smoke tests against the slot
G release deployment azure
E how do I rollback by swapping back if the release breaks checkout?

@wb.release_freeze standard semantic confirmed
T Release freeze windows
C No production releases on Friday after 14:00 CET, and a full code freeze from the Monday before Black Friday until the Tuesday after Cyber Monday. Hotfixes during a freeze need approval from the on-call lead in #webshop-releases.
P release freeze black friday | no friday afternoon releases | hotfix approval during freeze
G release policy
R it's Friday 3 pm, can I still ship this small change to production?

@wb.image_cdn project_fact semantic confirmed
T Product images are resized by ImageSharp.Web behind Front Door
C Originals sit in blob container product-images. Pages request /img/{sku}/{file}?width=480&format=webp; ImageSharp.Web resizes and Azure Front Door caches for 30 days. Use the <ProductImage> component, which writes the srcset.
P product images cdn | imagesharp resize | productimage component srcset
G images cdn performance
R the category grid loads huge pictures, how are thumbnails supposed to be produced?

@wb.search_provider decision semantic confirmed
T Product search uses Azure AI Search, not SQL full-text
C Search runs on Azure AI Search index products-v3 because we need Dutch stemming, synonyms ("bank" = "sofa") and typo tolerance. SQL Server full-text was dropped in 2023. The Hangfire job ReindexProducts runs nightly at 02:00; price and stock changes are pushed incrementally.
P product search azure ai search | products-v3 index | reindexproducts job
G search decision
R why don't we just use a LIKE query in the database for the search box?

@wb.stock_concurrency gotcha semantic confirmed
T Stock reservation needs optimistic concurrency
C Reading stock and then writing it oversold 140 items in the 2024 spring sale. StockItem has [Timestamp] public byte[] RowVersion and reservations catch DbUpdateConcurrencyException, reload and retry up to 3 times; the hot path uses ExecuteUpdateAsync with Where(s => s.Available >= qty).
P dbupdateconcurrencyexception on stock | stock reservation concurrency | rowversion on stockitem
G ef-core inventory concurrency
E seeing DbUpdateConcurrencyException on stock during the load test, is that expected?

@wb.bunit standard semantic confirmed
T Component tests use bUnit and Verify
C Component tests use bUnit with xUnit. Use JSInterop.Mode = JSRuntimeMode.Loose only in layout tests; elsewhere set up each JS call explicitly. Markup snapshots use Verify.Bunit.
P bunit component tests | jsruntimemode.loose only in layout tests
G testing blazor
R how should I unit test the new cart drawer razor component?

@wb.playwright procedure procedural confirmed
T Running the Playwright end-to-end tests
C Once per machine: dotnet build tests/E2E && pwsh tests/E2E/bin/Debug/net9.0/playwright.ps1 install --with-deps chromium.
C Run: dotnet test tests/E2E -- Playwright.BrowserName=chromium. Traces are written to tests/E2E/traces on failure.
P playwright for .net | install playwright browsers | run e2e tests
G testing e2e
E the e2e project says browsers are missing, how do I install them for playwright for .net?

@wb.js_interop gotcha semantic confirmed
T JS interop only in OnAfterRenderAsync
C Error: "JavaScript interop calls cannot be issued at this time. This is because the component is being statically rendered." Calls to IJSRuntime must wait for OnAfterRenderAsync(firstRender: true); during prerendering there is no browser connection.
P javascript interop calls cannot be issued at this time | js interop in onafterrenderasync
G blazor js-interop prerendering
E the store map throws "JavaScript interop calls cannot be issued at this time" on first load
R calling the leaflet init function from OnInitializedAsync crashes during the first render, where should it go?

@wb.serilog standard semantic confirmed
T Structured logging with Serilog message templates
C Log with message templates, never string interpolation: logger.LogInformation("Order {OrderId} paid with {Method}", order.Id, method). Serilog ships to Application Insights and the properties become custom dimensions; interpolated strings lose them and allocate on every call.
P no string interpolation in log messages | serilog message templates
G logging style
R can I write $"Order {id} paid" in the logger call?

@wb.minimal_apis preference semantic contested
T Prefer Minimal APIs for new storefront endpoints
C New storefront endpoints are Minimal APIs grouped per feature (app.MapGroup("/api/cart").MapCartEndpoints()) with TypedResults. Existing storefront controllers are migrated only when touched anyway.
P prefer minimal apis for new endpoints | mapgroup per feature | typedresults
G api style aspnet-core
R for the new endpoint that returns delivery slots, do I add a controller action?

@wb.admin_controllers decision semantic confirmed
T The admin API stays on controllers because of OData
C The admin API (/odata/*) keeps ASP.NET Core controllers: Microsoft.AspNetCore.OData needs them for $filter/$expand on the back-office grids. Do not port admin endpoints to Minimal APIs.
P admin api stays on controllers | do not port admin endpoints to minimal apis | odata needs controllers
G api aspnet-core odata admin
E adding an export to the back office: the admin api stays on controllers, right? or is it minimal apis now?

@wb.postnl_sandbox solution episodic confirmed
T PostNL 401 "apikey invalid" in staging
C Symptom: label creation in staging returned 401 {"fault":{"faultstring":"Invalid ApiKey"}}.
C Cause: PostNL sandbox has its own key and base URL (https://api-sandbox.postnl.nl). Staging reads Shipping:PostNL:BaseUrl and secret postnl-api-key-sandbox; production uses https://api.postnl.nl.
P postnl invalid apikey | postnl sandbox base url
G shipping postnl integration
E label creation fails with postnl invalid apikey in staging
R the parcel label call works on prod but staging gets unauthorized from the carrier, what's different?

@wb.sql_timeout solution episodic confirmed
T Order export timeout: AsSplitQuery and a covering index
C Symptom: "Microsoft.Data.SqlClient.SqlException: Execution Timeout Expired. The timeout period elapsed prior to completion of the operation" in the nightly order export.
C Cause: Include(o => o.Lines).Include(o => o.Payments) produced a cartesian explosion and Orders had no index on (Status, CreatedAt). Fix: AsSplitQuery() plus index IX_Orders_Status_CreatedAt INCLUDE (CustomerId, Total).
P execution timeout expired | assplitquery for includes | cartesian explosion
G ef-core sql-server performance incident
E the export job dies with "Execution Timeout Expired" after the new include
R pulling orders with their lines and payments in one go got extremely slow; how was this solved before?

@wb.free_shipping_calc pattern semantic inferred
T Shipping cost is computed in ShippingQuoteService only
C All shipping prices come from ShippingQuoteService.QuoteAsync(cart, address); components must not compute thresholds themselves. The service reads Shipping:FreeThreshold from configuration and applies carrier surcharges for islands (Wadden) and Belgium.
P shippingquoteservice | do not compute shipping in components
G shipping pricing
R where does the delivery fee shown in the basket come from?

@wb.gift_cards gotcha semantic inferred
T Gift card balances are owned by the ERP
C Gift card balances live in Exact Online; the shop only caches them for 60 seconds. Never decrement the cached balance locally: a double redemption in 2024 came from a local decrement racing the ERP sync.
P gift card balance source of truth | never decrement cached balance
G gift-cards erp
R can I subtract the voucher amount in our own table when the customer pays with it?
"""


# ---------------------------------------------------------------------------
# platform-team: hand-written core memories
# ---------------------------------------------------------------------------

CORE_PF = r"""
@pf.concurrently solution procedural confirmed
T Create indexes concurrently in a non-atomic migration
C Error: "django.db.utils.NotSupportedError: CREATE INDEX CONCURRENTLY cannot run inside a transaction block".
C Use django.contrib.postgres.operations.AddIndexConcurrently and set atomic = False on the Migration class. Put nothing else in that migration, so a failure leaves no half-applied state; if it fails, drop the INVALID index before retrying.
P create index concurrently cannot run inside a transaction block | addindexconcurrently with atomic = false
G postgres migrations django
E migration fails with "CREATE INDEX CONCURRENTLY cannot run inside a transaction block"
R I want to add an index on a huge table without locking writes; the migration blows up saying it can't run in a transaction

@pf.relation_missing solution episodic confirmed
T "relation does not exist" after a migration: missing dependency
C Error: django.db.utils.ProgrammingError: relation "billing_invoice" does not exist, usually in CI on a fresh database.
C Cause so far every time: a migration in another app (reports, audit) references billing models without listing ("billing", "00xx_...") in dependencies, so it runs first on an empty schema. Check with manage.py showmigrations --plan and add the dependency.
P relation does not exist | missing migration dependency | showmigrations --plan
G postgres migrations django ci
E getting 'relation does not exist' after the migration in CI
R tests on a blank database fail because a table isn't there yet, but locally everything works

@pf.uuidv7 decision semantic confirmed
T New tables use UUIDv7 primary keys
C New models use id = models.UUIDField(primary_key=True, default=uuid_utils.compat.uuid7). UUIDv7 is time-ordered, so inserts append to the right edge of the B-tree instead of splitting random pages as UUIDv4 did (audit_entry index was 3x larger than needed). Existing bigint ids stay.
P uuidv7 primary keys | uuid_utils uuid7 default | avoid uuid4 for new primary keys
G postgres django models decision
R what id type should the new subscriptions model get? :: creating the subscriptions app

@pf.select_for_update gotcha semantic confirmed
T select_for_update only inside transaction.atomic
C "django.db.transaction.TransactionManagementError: select_for_update cannot be used outside of a transaction." The queryset is lazy: the atomic block must also cover the moment it is evaluated. Use select_for_update(skip_locked=True) for queue-like tables such as payouts_payout.
P select_for_update cannot be used outside of a transaction | skip_locked for queue tables
G django postgres locking
E "select_for_update cannot be used outside of a transaction" but I'm calling it inside a service function
R how do I lock the payout rows while a worker processes them, so two workers don't grab the same one?

@pf.n_plus_one standard semantic confirmed
T List endpoints are guarded against N+1 queries
C Every list endpoint uses select_related/prefetch_related and has a test with django_assert_max_num_queries (pytest-django) that creates 3 and then 10 objects and asserts the same query count.
P django_assert_max_num_queries | n+1 queries on list endpoints
G django performance testing
R the invoices listing does one SQL call per row, how do we catch that in tests?

@pf.celery_on_commit standard semantic confirmed
T Enqueue Celery tasks with transaction.on_commit
C Call transaction.on_commit(lambda: send_invoice.delay(invoice.id)) instead of .delay() inside the transaction. Otherwise the worker can start before the commit and fail with "billing.models.Invoice.DoesNotExist: Invoice matching query does not exist."
P transaction.on_commit for celery tasks | matching query does not exist
G celery django transactions
E the celery task says "Invoice matching query does not exist" right after we create it
R the background job sometimes can't find the row we just saved, but a retry works

@pf.celery_visibility gotcha semantic confirmed
T Long Celery tasks are redelivered after the visibility timeout
C With the Redis broker, tasks with acks_late=True that run longer than broker_transport_options["visibility_timeout"] (3600 s) are delivered again to a second worker. The monthly statements task ran twice in March 2024. Long tasks must be idempotent or split into chunks under 30 minutes.
P celery visibility timeout redelivery | acks_late tasks must be idempotent
G celery redis reliability
R a long report job ran twice at the same time on two workers, how can that happen?

@pf.pgbouncer gotcha semantic confirmed
T PgBouncer transaction pooling: no server-side cursors
C Production connects through PgBouncer in transaction pooling mode. Set DISABLE_SERVER_SIDE_CURSORS = True in DATABASES, otherwise .iterator() fails with 'cursor "_django_curs_140..." does not exist'. Session-level SET, LISTEN and advisory locks across statements do not work either.
P disable_server_side_cursors | pgbouncer transaction pooling | _django_curs does not exist
G postgres pgbouncer django
E do we need DISABLE_SERVER_SIDE_CURSORS for the new reports database alias?
R iterating over a big queryset in chunks fails in production but not locally, something about a cursor missing

@pf.statement_timeout standard semantic confirmed
T Statement timeouts are set per database role
C app_web has statement_timeout = '30s', app_worker '15min', app_migrate '0' (none). Set with ALTER ROLE app_web SET statement_timeout = '30s'. Errors show up as "canceling statement due to statement timeout"; move the work to a Celery task rather than raising the web limit.
P canceling statement due to statement timeout | statement_timeout per role
G postgres reliability
E the admin export hits "canceling statement due to statement timeout" after 30 seconds
R a request that builds a big CSV gets cut off by the database after half a minute; should we raise the limit?

@pf.lock_timeout procedure procedural confirmed
T Migrations on hot tables set lock_timeout
C Schema changes on hot tables (accounts_user, billing_invoice, events_event) start with migrations.RunSQL("SET lock_timeout = '5s'"). If the ALTER cannot get its lock in 5 s it fails instead of queueing every query behind it; rerun the deploy off-peak.
P lock_timeout in migrations | set lock_timeout 5s
G postgres migrations reliability
R adding a column to the users table froze the whole site for a minute last time, how do we avoid that?

@pf.not_null_column procedure procedural confirmed
T Adding a NOT NULL column to a large table
C 1. Add the column nullable (or with a constant default, which Postgres 11+ adds without a rewrite).
C 2. Backfill in batches of 10,000 ids with a management command, sleeping 0.5 s between batches.
C 3. Add a CHECK (col IS NOT NULL) NOT VALID constraint, then VALIDATE CONSTRAINT in a separate migration.
C 4. Only then SET NOT NULL (Postgres uses the validated constraint and skips the scan).
P add not null column safely | backfill in batches | validate constraint separately
G postgres migrations procedure
E what's the procedure to add not null column safely on billing_invoice?

@pf.ruff standard semantic confirmed
T ruff for linting and formatting, line length 100
C All repositories use ruff check and ruff format (line-length = 100) through pre-commit. black, isort and flake8 were removed in 2024; do not add their configs back.
P ruff format line length 100 | no black or isort
G python linting tooling
R which formatter and import sorter do we run before committing?

@pf.mypy preference semantic inferred
T mypy strict for new apps, with error codes on ignores
C New Django apps are added to the strict section of mypy.ini (django-stubs, djangorestframework-stubs). Every "# type: ignore" names its code, e.g. # type: ignore[attr-defined].
P mypy strict for new apps | type ignore must name the code
G python typing tooling
R how strict should type checking be for the new subscriptions app?

@pf.drf_stay decision semantic confirmed
T Stay on Django REST Framework; django-ninja was rejected
C django-ninja was evaluated in Q2 2024 and rejected: we would lose serializer reuse across 40 endpoints and drf-spectacular's schema that the mobile team generates clients from. New APIs stay on DRF.
P stay on drf | django-ninja rejected
G api django decision
R could the new public endpoints be written with that FastAPI-style Django library instead?

@pf.factory_boy standard semantic confirmed
T Test data comes from factory_boy factories
C Tests build data with factory_boy factories in <app>/tests/factories.py (InvoiceFactory, UserFactory). No JSON fixtures and no loaddata in tests; they went stale with every migration.
P factory_boy factories not json fixtures | no loaddata in tests
G testing django
R what's the preferred way to create sample invoices in a test?

@pf.argocd_deploy procedure procedural confirmed
T Deploying a service through Argo CD
C 1. Merge to main; GitHub Actions builds ghcr.io/acme/<service>:<sha>.
C 2. The release bot opens a PR in platform-deploy bumping image.tag in envs/prod/<service>/values.yaml.
C 3. Merge it; Argo CD syncs. A PreSync hook Job named migrate runs manage.py migrate --noinput before the new pods start.
P argo cd presync migrate job | bump image tag in platform-deploy
G deployment kubernetes release
E where does the argo cd presync migrate job come from?
R after merging, how does my change actually reach production?

@pf.rollback procedure procedural confirmed
T Rolling back a bad deploy
C Revert the image.tag commit in platform-deploy and let Argo CD sync. Migrations are NOT reversed: every migration must be compatible with the previous release (expand/contract: add columns first, drop them one release later).
P rollback by reverting the tag commit | expand and contract migrations
G deployment release reliability
E how do we do a rollback by reverting the tag commit when a migration already ran?

@pf.external_secrets project_fact semantic confirmed
T Secrets come from Vault through external-secrets
C Kubernetes secrets are ExternalSecret resources synced from Vault path kv/platform/<service>/<env> every 10 minutes. Check with kubectl get externalsecret -n <service>. Nothing secret goes in values.yaml or in a committed .env.
P vault external secrets | kubectl get externalsecret
G secrets kubernetes security
R where should I put the new API key for the SMS provider?

@pf.disallowed_host solution episodic confirmed
T Sentry flooded by DisallowedHost from scanners
C Symptom: thousands of "Invalid HTTP_HOST header: '45.x.x.x'. You may need to add '45.x.x.x' to ALLOWED_HOSTS." events a day.
C Fix: the ingress now rejects unknown hosts, and sentry_sdk.init(ignore_errors=[DisallowedHost]) drops the rest. Do not add IPs to ALLOWED_HOSTS.
P invalid http_host header | disallowedhost noise in sentry
G sentry django security
E sentry is full of "Invalid HTTP_HOST header" errors from random IPs
R error tracking is drowning in host-name complaints from bots; should I whitelist those addresses?

@pf.worker_sigkill solution episodic confirmed
T Celery worker SIGKILL: cap memory per child
C Symptom: "billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL)" on the reports worker.
C Cause: pandas-based report tasks leak memory until the pod hits its 2 GiB limit. Fix: worker_max_memory_per_child = 300000 (KiB) and --max-tasks-per-child=100.
P worker exited prematurely: signal 9 | worker_max_memory_per_child | workerlosterror
G celery kubernetes memory incident
E reports worker logs "Worker exited prematurely: signal 9 (SIGKILL)" a few times a day
R the pod running report jobs keeps getting OOM-killed and jobs vanish halfway

@pf.redis_clients solution episodic confirmed
T Redis "max number of clients reached"
C Error: redis.exceptions.ConnectionError: max number of clients reached.
C Each gunicorn worker and Celery process opened its own unbounded pool. Fix: broker_pool_limit = 10 for Celery and CONNECTION_POOL_KWARGS = {"max_connections": 20} for django-redis; the ElastiCache maxclients is 10,000 shared by all services.
P max number of clients reached | django-redis max_connections | broker_pool_limit
G redis celery incident
E redis.exceptions.ConnectionError: max number of clients reached during the sale

@pf.structlog standard semantic confirmed
T Services log JSON via structlog with the request id
C Log one JSON object per line to stdout with structlog. Bind request_id from the X-Request-ID header (the ingress generates one) and pass it to Celery tasks through headers, so Loki queries can follow a request across services.
P structlog json logs | x-request-id correlation
G logging observability
R how can I follow a single request through the API and the worker in the log viewer?

@pf.timezone standard semantic confirmed
T Timezone-aware datetimes only
C USE_TZ = True and everything is stored in UTC. Use django.utils.timezone.now(), never datetime.now(); convert for display in templates or serializers only. Warnings like "DateTimeField Invoice.due_at received a naive datetime while time zone support is active" fail CI (-W error::RuntimeWarning).
P received a naive datetime | use timezone.now | store utc
G django python time
E tests print "DateTimeField Invoice.due_at received a naive datetime" warnings
R what's the right way to get the current moment in code so it works with our settings?

@pf.explain_replica procedure procedural confirmed
T Investigating a slow query
C 1. Find it in pg_stat_statements (order by total_exec_time) or the Grafana "Postgres top queries" panel.
C 2. Run EXPLAIN (ANALYZE, BUFFERS) on the read replica pg-main-ro, never on the primary during business hours.
C 3. Paste the plan into the ticket; check for Seq Scan on large tables and misestimated rows.
P explain analyze buffers on the replica | pg_stat_statements top queries
G postgres performance procedure
E should I run explain analyze buffers on the replica or is the primary fine?
R a dashboard request is slow and I suspect the SQL; how do we look into it?

@pf.no_vacuum_full gotcha semantic confirmed
T Never run VACUUM FULL on events_event
C events_event bloats quickly; it has per-table autovacuum_vacuum_scale_factor = 0.01. Do not run VACUUM FULL: it takes an ACCESS EXCLUSIVE lock for the whole rewrite (40+ minutes). Use pg_repack from the ops toolbox pod if bloat must be removed.
P avoid vacuum full | pg_repack for bloat | autovacuum scale factor per table
G postgres maintenance
R the events table is twice the size it should be; can I just compact it right now?

@pf.jsonb_gin gotcha semantic confirmed
T audit_entry.payload GIN index only serves containment
C audit_entry.payload is jsonb with a GIN index using jsonb_path_ops. Only containment uses it: AuditEntry.objects.filter(payload__contains={"order_id": 42}). payload__order_id=42 compiles to (payload -> 'order_id') = '42' and scans the table.
P jsonb_path_ops gin index | payload__contains uses the index
G postgres django performance
R filtering audit records by a key inside the JSON column is slow even though there's an index

@pf.waffle_flags decision semantic confirmed
T Feature flags with django-waffle, removed within two sprints
C Flags are django-waffle Flags named <team>_<feature>_<yyyymm> (billing_dunning_v2_202502). After full rollout the flag and its dead branch are removed within two sprints; the weekly report lists flags older than 60 days.
P django-waffle flags | remove flags within two sprints | flag naming team_feature_yyyymm
G feature-flags django decision
R how do I hide the new dunning flow from most customers while we test it?

@pf.api_versioning standard semantic confirmed
T API versioning and deprecation
C Public APIs are versioned in the URL (/api/v2/). Breaking changes need a new version. Deprecated endpoints send Deprecation and Sunset headers for at least 90 days before removal, and the changelog entry links the replacement.
P url versioning /api/v2 | sunset header 90 days
G api standards
R I need to rename a field in the public invoices response; what do I have to do?

@pf.single_beat gotcha semantic confirmed
T Run exactly one Celery beat
C celery beat must run as a single replica (Deployment replicas: 1, strategy Recreate). During INC-1873 a rolling update briefly ran two beats and every dunning email went out twice.
P run exactly one celery beat | beat strategy recreate
G celery kubernetes incident
R customers got each reminder email twice after yesterday's deploy; what could duplicate scheduled jobs?

@pf.httpx_timeouts standard semantic confirmed
T Outbound HTTP calls always set timeouts
C Use the shared httpx client from platform_common.http: connect timeout 3 s, read timeout 10 s, 2 retries with backoff for idempotent methods only. requests.get without timeout= is flagged by the ruff rule S113.
P outbound http timeouts | shared httpx client
G http reliability
R calling the tax provider's API from a view: anything I must configure on the client?
"""


# ---------------------------------------------------------------------------
# frontend-react: hand-written core memories
# ---------------------------------------------------------------------------

CORE_FE = r"""
@fe.server_state decision semantic confirmed
T Server data lives in TanStack Query, not Zustand
C Anything fetched from the API is cached by TanStack Query (v5). Zustand stores hold UI state only: sidebar open, draft filters, the selected rows of a table. Copying query data into a store caused stale order totals in 2024.
P server state in tanstack query | zustand only for ui state
G react state-management decision
R where should the list of invoices I get from the backend be kept so several components can read it?

@fe.no_redux decision semantic confirmed
T Redux Toolkit is being removed; no new slices
C Redux Toolkit was removed from the portal in 2024 except the legacy checkout slice (src/legacy/checkoutSlice.ts), which is scheduled for deletion. Do not add slices, RTK Query endpoints or new useSelector calls.
P no new redux slices | redux toolkit removed
G react state-management decision
E the old checkout uses redux toolkit removed elsewhere, can I add one more slice there?

@fe.query_keys standard semantic confirmed
T Query keys come from key factories
C Query keys are built with the factories in src/api/queryKeys.ts, e.g. orderKeys.detail(id) or orderKeys.list(filters); never inline arrays like ['orders', id]. Invalidation relies on the hierarchy all > lists > list(filters) > detail(id).
P query key factories | orderkeys.detail | no inline query key arrays
G react tanstack-query standards
R what should I pass as the cache identifier for the new useInvoice hook?

@fe.invalidate solution procedural confirmed
T List not refreshing after a mutation: invalidate in onSuccess
C After useUpdateOrder the table kept the old status. Fix: in the mutation's onSuccess call queryClient.invalidateQueries({ queryKey: orderKeys.lists() }) and setQueryData for the detail. v5 only accepts the object syntax; invalidateQueries(['orders']) silently matches nothing under TypeScript casts.
P invalidatequeries in onsuccess | list not refreshing after mutation
G react tanstack-query
E list not refreshing after mutation even though the PATCH returns 200
R after I edit an order and close the drawer, the table still shows the previous status until I reload

@fe.strictmode_effects gotcha semantic confirmed
T Effects run twice in development under StrictMode
C React 18 StrictMode mounts, unmounts and remounts components in development, so effects run twice. Do not remove <StrictMode>; make effects idempotent with a cleanup (AbortController for fetches, unsubscribe for listeners).
P useeffect runs twice in development | strictmode double invoke | abortcontroller cleanup
G react hooks
E useEffect runs twice in development and our analytics pageview fires twice
R my request inside the effect fires two times locally but once in the deployed build; why?

@fe.hooks_order solution semantic confirmed
T "Rendered more hooks than during the previous render"
C Error: "Rendered more hooks than during the previous render." Cause: a hook placed after an early return (if (!order) return <Spinner/>). All hooks must run before any return; move the guard below the hooks or split the component.
P rendered more hooks than during the previous render | hook after early return
G react hooks
E "Rendered more hooks than during the previous render" after I added a loading guard

@fe.list_keys solution semantic confirmed
T Stable keys for list rows, not the index
C Warning: Each child in a list should have a unique "key" prop. Use the entity id, never the array index: index keys in OrdersTable made the inline editor jump to the wrong row after sorting.
P each child in a list should have a unique "key" prop | do not use index as key
G react lists
E console warns each child in a list should have a unique "key" prop in the returns table
R after sorting, the edit box I opened moves to another row; what did we get wrong?

@fe.ts_strict standard semantic confirmed
T TypeScript strict, noUncheckedIndexedAccess, no any
C tsconfig has "strict": true and "noUncheckedIndexedAccess": true. @typescript-eslint/no-explicit-any is an error: use unknown and narrow it, or a zod schema at the boundary. // @ts-expect-error needs a reason after it.
P no explicit any | nouncheckedindexedaccess | use unknown and narrow
G typescript standards
R the compiler complains my array lookup may be undefined, can I just cast it?

@fe.zod_boundary standard semantic confirmed
T Validate API responses with zod
C Every API function in src/api parses the response with a zod schema from src/api/schemas and exports the type with z.infer<typeof OrderSchema>. Handwritten interfaces for API payloads are not allowed; a mismatch throws ApiSchemaError which Sentry groups per endpoint.
P validate api responses with zod | z.infer types | apischemaerror
G typescript api validation
R how do I make sure the JSON from the backend actually has the shape I expect at runtime?

@fe.forms preference semantic confirmed
T Forms use react-hook-form with zodResolver
C Forms are built with react-hook-form and zodResolver(schema); the field components in @acme/ui (TextField, Select, DateField) accept the control prop. No Formik, no hand-rolled useState per field.
P react-hook-form with zodresolver | no formik
G react forms
R building the address edit screen with six inputs and validation, which approach do we use?

@fe.tailwind_cn preference semantic confirmed
T Tailwind utilities and the cn() helper; no new CSS modules
C Style new components with Tailwind classes and merge conditional classes with cn() from src/lib/cn.ts (clsx + tailwind-merge). CSS modules remain only in legacy components.
P tailwind with cn helper | no new css modules | tailwind-merge
G css tailwind style
R how should I combine the base button classes with the ones passed in via props?

@fe.tailwind_dynamic gotcha semantic confirmed
T Tailwind cannot see classes built by string concatenation
C Tailwind only generates classes it finds as complete strings in the source. bg-${color}-500 never appears, so the class is missing from the CSS. Map values to full class names: const tone = { paid: 'bg-green-500', due: 'bg-amber-500' }[status].
P dynamic tailwind class names | tailwind class not generated
G css tailwind
R the background colour I compute from the status variable never shows up, although the class is in the DOM

@fe.vite_env gotcha semantic confirmed
T Only VITE_ variables reach the browser
C Use import.meta.env.VITE_API_URL. process.env does not exist in the browser bundle ("ReferenceError: process is not defined"), and variables without the VITE_ prefix are not exposed. Types are declared in src/vite-env.d.ts.
P process is not defined | import.meta.env vite_ prefix
G vite configuration
E the sentry init crashes with "ReferenceError: process is not defined"
R my new setting from the .env file reads as undefined in the app; the file definitely has it

@fe.vite_proxy solution procedural confirmed
T Local CORS errors: use the Vite dev proxy
C "Access to fetch at 'http://localhost:8000/api/...' has been blocked by CORS policy: No 'Access-Control-Allow-Origin' header is present." Do not ask the backend to open CORS for localhost. vite.config.ts proxies /api to http://localhost:8000 (server.proxy); call relative URLs (/api/...).
P no 'access-control-allow-origin' header is present | vite dev proxy for api
G vite local-dev cors
E local dev shows "No 'Access-Control-Allow-Origin' header is present" for the orders call
R the browser blocks my calls to the backend running on my machine; should the backend allow my origin?

@fe.testing_library standard semantic confirmed
T Unit tests: Vitest, Testing Library by role, MSW
C Tests use Vitest and Testing Library, querying by role and name (getByRole('button', { name: /save/i })). data-testid only when no accessible role exists. Network is mocked with MSW handlers in src/test/handlers.ts, never by mocking fetch.
P query by role in tests | msw for network mocks | vitest and testing library
G testing react
R what's the preferred way to find the submit button in a component test?

@fe.act_warning solution semantic confirmed
T "not wrapped in act(...)" warnings in tests
C Warning: An update to OrderForm inside a test was not wrapped in act(...). The test ended before a state update: create user = userEvent.setup(), await every user.* call and wait with await screen.findBy... or waitFor for async results.
P not wrapped in act(...) | await userevent calls
G testing react
E every test of the form prints "was not wrapped in act(...)"

@fe.playwright_e2e procedure procedural confirmed
T Running Playwright e2e tests
C pnpm build && pnpm e2e runs Playwright against pnpm preview on port 4173. Traces are kept on first retry (trace: 'on-first-retry'); open them with pnpm exec playwright show-trace. Update screenshots with pnpm e2e --update-snapshots and commit the PNGs from Linux (the CI container), never from macOS.
P pnpm e2e --update-snapshots | playwright traces on first retry | screenshots from linux
G testing e2e
E how do I run pnpm e2e --update-snapshots so CI accepts the images?

@fe.pnpm_only standard semantic confirmed
T pnpm only, through corepack
C The repo uses pnpm 9 via corepack (packageManager field in package.json). npm install creates a package-lock.json and resolves different versions; CI fails if one is present.
P pnpm only | corepack enable | no package-lock.json
G tooling dependencies
R can I use npm to add the date picker package?

@fe.bundle_budget standard semantic confirmed
T Bundle budget: 250 kB gzip for the entry chunk
C size-limit in CI (pnpm size) fails when the entry chunk exceeds 250 kB gzip. Routes are lazy-loaded with React.lazy in src/routes.tsx; heavy libraries (charts, pdf) are imported inside the route that uses them.
P bundle budget 250 kb | size-limit in ci | lazy-load routes
G performance build
R CI says the main JS file is too big after I added the chart library; what's the rule?

@fe.date_fns decision semantic confirmed
T date-fns v3 for dates; moment is banned
C Dates use date-fns 3 and date-fns-tz: formatInTimeZone(date, user.timeZone, 'd MMM yyyy HH:mm'). moment and dayjs are blocked by the no-restricted-imports rule. API timestamps are ISO 8601 UTC.
P date-fns formatintimezone | moment is banned
G dates dependencies decision
R which library should I use to show the delivery time in the customer's own zone?

@fe.a11y standard semantic confirmed
T Accessibility baseline
C Every interactive element is reachable and operable by keyboard, has a visible focus ring (focus-visible:ring-2) and an accessible name. eslint-plugin-jsx-a11y runs in CI and Playwright runs @axe-core/playwright on the checkout, login and orders pages.
P keyboard accessible interactive elements | axe checks in playwright | jsx-a11y
G accessibility standards
R what do I need so that screen reader and keyboard users can use the new filter chips?

@fe.icons preference semantic inferred
T lucide-react icons at fixed sizes
C Icons come from lucide-react: size 16 in tables and inline text, 20 in buttons, 24 in empty states. Decorative icons get aria-hidden="true"; icon-only buttons need aria-label.
P lucide-react icons | icon sizes 16 20 24
G ui icons
R which icon set do we use, and how big should a trash-can symbol in a table row be?

@fe.route_errors pattern semantic confirmed
T Route-level error boundaries report to Sentry
C Each top-level route has errorElement: <RouteError/>, which reads useRouteError(), shows a retry button and calls Sentry.captureException once. Components do not add their own ErrorBoundary unless they can render a useful partial fallback.
P route errorelement with userouteerror | sentry captureexception in route error
G react error-handling
R where should a crash inside the orders page get caught and reported?

@fe.chunk_load solution episodic confirmed
T "Failed to fetch dynamically imported module" after deploys
C Symptom: "TypeError: Failed to fetch dynamically imported module: https://portal.acme.com/assets/Orders-3f9a1c.js" for users with an open tab during a deploy.
C Fix: the deploy keeps the previous build's /assets for 7 days in S3, and main.tsx listens for vite:preloadError and reloads the page once (sessionStorage guard).
P failed to fetch dynamically imported module | vite:preloaderror reload
G deployment vite incident
E users report "Failed to fetch dynamically imported module" right after every release
R people with the portal open during a release get a blank page when they navigate; what did we do about it?

@fe.storybook procedure procedural confirmed
T Every shared UI component needs a story
C Components in src/components/ui get a *.stories.tsx with the default, disabled and error states. pnpm storybook runs locally; Chromatic runs on every PR and its visual changes must be accepted by the author.
P every shared component gets a story | chromatic on pull requests
G storybook ui testing
R I built a reusable badge component, what else does the PR need?

@fe.i18n project_fact semantic confirmed
T i18next namespaces per feature, strings in Lokalise
C Translations use i18next with one namespace per feature (orders, billing, account). Keys look like orders.list.empty. Source strings are edited in Lokalise, never in the JSON files; pnpm i18n:pull downloads them.
P i18next namespace per feature | pnpm i18n:pull | edit strings in lokalise
G i18n localization
R I need to change the wording of the empty-orders message, where do I do that?

@fe.memo_sparingly preference semantic confirmed
T Don't sprinkle useMemo and useCallback
C Use useMemo/useCallback only for measured hot paths or when a stable reference is required by a memoised child or an effect dependency. Wrapping everything made the code harder to read and saved nothing in the 2024 profiling session.
P do not sprinkle usememo | memoize only measured hot paths
G react performance style
R should I wrap all the handlers in this component in the callback hook just in case?

@fe.memo_table_columns gotcha semantic confirmed
T TanStack Table column definitions must be memoised
C Exception to the useMemo rule: columns and data passed to useReactTable must be stable (useMemo or defined outside the component). A new columns array every render resets sorting and column sizing and can loop renders.
P memoize tanstack table columns | table state resets on every render
G react tanstack-table performance
R the data grid loses its sort order whenever the parent re-renders

@fe.feature_folders standard semantic confirmed
T Feature folders with enforced boundaries
C Code lives in src/features/<feature>/{components,api,hooks,routes}. Other features import only from src/features/<feature>/index.ts; eslint-plugin-boundaries fails CI on deep imports. Shared code goes to src/components/ui or src/lib.
P feature folders | no deep imports between features | eslint-plugin-boundaries
G architecture standards
R the billing page needs the order status badge from the orders feature; can I import the file directly?

@fe.auth_oidc project_fact semantic confirmed
T Portal auth: Keycloak via oidc-client-ts
C The portal signs in with Keycloak (realm acme-customers, client portal-spa) using oidc-client-ts with PKCE. Tokens are renewed silently 60 s before expiry; apiFetch retries once on 401 after a renew and then redirects to /login.
P keycloak oidc-client-ts | silent token renew | apifetch retries on 401
G auth api
R the user's session expired mid-form, what is supposed to happen with the next API call? ++ fe.http.401
"""


# ---------------------------------------------------------------------------
# data-pipeline: hand-written core memories
# ---------------------------------------------------------------------------

CORE_DP = r"""
@dp.incremental_lookback standard semantic confirmed
T Incremental models: unique_key and a 3-day lookback
C Every incremental model sets unique_key and filters with a lookback, not max(updated_at) alone:
C {% if is_incremental() %} where updated_at > (select dateadd(day, -3, max(updated_at)) from {{ this }}) {% endif %}
C The lookback covers late events from the mobile offline queue (see the late-arriving events note).
P incremental model lookback 3 days | unique_key required for incremental models | is_incremental filter
G dbt incremental standards
E what's the incremental model lookback 3 days rule exactly, is it on updated_at?
R my new model only processes rows newer than what's already in the table; is that enough?

@dp.late_events gotcha semantic confirmed
T Mobile order events arrive up to 48 hours late
C The mobile apps queue events offline and upload them when back online; 0.7% of order events reach RAW.EVENTS more than 24 h late and a few up to 48 h. Daily aggregates for the last 2 days change after they are first published; finance knows this.
P late arriving mobile events | events up to 48 hours late
G events data-quality mobile
R yesterday's order count changed overnight after the report went out; is something broken?

@dp.merge_duplicates solution procedural confirmed
T "Duplicate row detected during DML action" on incremental merge
C Error: "100090 (42P18): Duplicate row detected during DML action" from the Snowflake MERGE of an incremental model.
C The batch had two rows per unique_key (the source re-sent updates). Deduplicate before the merge: qualify row_number() over (partition by order_id order by _loaded_at desc) = 1.
P duplicate row detected during dml action | dedupe with qualify row_number
G dbt snowflake incremental
E fct_payments fails with "Duplicate row detected during DML action"
R the merge into my incremental table complains the same key shows up twice in one batch

@dp.full_refresh_cost gotcha semantic confirmed
T Full refresh of fct_events costs about 3 hours on XL
C dbt run --full-refresh -s fct_events rebuilds 4 billion rows: about 3 hours on an XL warehouse, roughly 24 credits. Announce it in #data-eng first and never run it during business hours; prefer a targeted backfill with --vars '{start_date: ..., end_date: ...}'.
P full refresh of fct_events | announce full refresh in #data-eng
G dbt snowflake cost
R I changed a column type in the big events fact; can I rebuild it from scratch this afternoon?

@dp.catchup_false standard semantic confirmed
T DAGs use catchup=False and a fixed start_date
C Every DAG sets catchup=False unless it is meant to backfill, and a fixed start_date=pendulum.datetime(2024, 1, 1, tz="UTC"); never days_ago() or datetime.now(), which make the scheduler create unexpected runs.
P catchup=false | fixed start_date | no days_ago
G airflow standards
R I unpaused my new DAG and it started hundreds of runs for past dates

@dp.backfill procedure procedural confirmed
T Backfilling a DAG
C 1. Pause the DAG in the UI.
C 2. From the scheduler pod: airflow dags backfill -s 2024-01-01 -e 2024-01-31 --reset-dagruns -y <dag_id>
C 3. Keep max_active_runs at 3 so the API pools are not starved.
C 4. Unpause and check the next scheduled run.
P airflow dags backfill | reset-dagruns | max_active_runs during backfill
G airflow backfill procedure
E what flags do I pass to airflow dags backfill for January?
R we found a bug in last month's loads, how do I rerun those days?

@dp.xcom_small gotcha semantic confirmed
T Do not pass data frames through XCom
C XCom values are stored in the Airflow metadata database. Pushing a DataFrame bloated the xcom table to 30 GB in 2023. Write data to s3://acme-airflow-stage/<dag_id>/<run_id>/ and push only the key.
P do not pass dataframes through xcom | push the s3 key not the data
G airflow
R can I return the extracted records from one task so the next task can load them?

@dp.zombie_oom solution episodic confirmed
T "Detected zombie job" was a worker pod OOM
C Symptom: tasks marked failed with "Detected zombie job: {...}" and no error in the task log.
C Cause: the KubernetesExecutor pod was OOM-killed (kubectl describe pod shows OOMKilled). Fix: raise memory through executor_config={"pod_override": k8s.V1Pod(...)} with resources.limits.memory 4Gi for the heavy task only.
P detected zombie job | executor_config pod_override memory
G airflow kubernetes incident
E the load task failed with "Detected zombie job" and nothing in its log
R a task silently dies halfway and Airflow marks it failed without any traceback

@dp.deferrable_sensors standard semantic confirmed
T Sensors are deferrable or in reschedule mode
C Sensors use deferrable=True where the operator supports it, otherwise mode="reschedule" with poke_interval >= 300. Poke-mode sensors held 40 worker slots waiting on S3 files in 2024.
P deferrable sensors | mode reschedule | no poke mode sensors
G airflow standards
R my DAG waits for a file from the vendor; how should the waiting task be set up?

@dp.warehouses decision semantic confirmed
T Which Snowflake warehouse for what
C dbt and Airflow transformations run on TRANSFORM_WH; BI tools (Looker) use REPORTING_WH (multi-cluster 1-3); people use ADHOC_WH for exploration; data science uses DS_WH. Separate warehouses keep costs attributable and stop a heavy ad hoc query slowing dashboards.
P which snowflake warehouse to use | separate warehouses per workload
G snowflake cost decision
R I'm exploring some data in a worksheet; which compute should I pick? ++ dp.wh.adhoc-wh

@dp.timestamps_utc standard semantic confirmed
T Timestamps are TIMESTAMP_NTZ in UTC, named *_at
C All timestamps in staging and marts are TIMESTAMP_NTZ holding UTC, named <event>_at (created_at, paid_at). Local times appear only in the BI layer. Convert sources with convert_timezone('UTC', col) in staging.
P timestamp_ntz in utc | convert_timezone in staging
G snowflake standards time
R the CRM export gives times in Amsterdam local time; what should the staging model store?

@dp.model_naming standard semantic confirmed
T Model naming: stg_, int_, fct_, dim_
C Staging models are stg_<source>__<table> (one per source table, renames and casts only), intermediate int_<entity>_<verb>, marts fct_<event> and dim_<entity>. Marts never select from sources directly.
P stg_ source table naming | fct_ and dim_ marts | marts never select from sources
G dbt standards naming
R what should I call the new model that cleans up the raw HubSpot deals table?

@dp.model_tests standard semantic confirmed
T Every model's primary key is tested
C Each model has unique and not_null tests on its primary key in the schema YAML; fact foreign keys get relationships tests with severity: warn. Freshness is declared on sources, not models.
P primary key unique and not_null tests | relationships tests on foreign keys
G dbt testing standards
R what tests does a new mart table need before review?

@dp.slim_ci procedure procedural confirmed
T Slim CI for dbt pull requests
C CI downloads the production manifest from s3://acme-dbt-artifacts/prod/manifest.json into prod-artifacts/ and runs dbt build --select state:modified+ --defer --state prod-artifacts/ against a schema named pr_<number>. The schema is dropped when the PR closes.
P dbt build state:modified+ | state:modified+ | defer to prod artifacts
G dbt ci procedure
E how does the state:modified+ build in CI know about production?

@dp.future_grants solution procedural confirmed
T "does not exist or not authorized" on a new RAW schema
C Error: "SQL compilation error: Object 'RAW.STRIPE.CHARGES' does not exist or not authorized."
C The table exists; role TRANSFORMER lacks a grant on tables created after the schema. Fix (as SECURITYADMIN): grant select on future tables in schema RAW.STRIPE to role TRANSFORMER; plus grant select on all tables for the existing ones.
P does not exist or not authorized | grant select on future tables
G snowflake permissions
E dbt says "Object 'RAW.HUBSPOT.DEALS' does not exist or not authorized" but I can see the table
R the transformation user can't read a table Fivetran created yesterday, even though it's there

@dp.variant_case gotcha semantic confirmed
T VARIANT paths are case-sensitive
C payload:amount::number and payload:Amount::number are different paths; a wrong case silently returns NULL. Stripe payloads are lower_snake_case, HubSpot properties camelCase. Check with select object_keys(payload) first.
P variant paths are case-sensitive | object_keys to check json keys
G snowflake json
R pulling a field out of the semi-structured column gives nulls but the JSON clearly has it

@dp.fivetran_sync project_fact semantic confirmed
T Fivetran connectors and sync frequency
C Fivetran loads Stripe every 15 minutes, Salesforce and Zendesk hourly, and HubSpot every 6 hours into RAW.<source>. Schema changes are set to "allow columns", block tables: new tables must be enabled in the Fivetran UI.
P fivetran sync frequency | allow columns block tables
G fivetran ingestion
R how often does Salesforce data get copied into the warehouse?

@dp.pii_masking standard semantic confirmed
T PII columns carry the pii tag and a masking policy
C Columns with personal data get the Snowflake tag governance.tags.pii = 'email' | 'name' | 'phone' | 'address', which attaches masking policy mask_pii_string. Only role PII_READER sees clear text. dbt applies the tags from meta: {pii: email} in the schema YAML.
P pii tag and masking policy | pii_reader role | meta pii in schema yaml
G pii security snowflake
R the new customers model has email addresses; what do I have to do in the YAML?

@dp.adhoc_timeout gotcha semantic confirmed
T ADHOC_WH has a one-hour statement timeout
C A forgotten cross join on an XL warehouse ran overnight in 2024 and cost about $900. Since then ADHOC_WH has statement_timeout_in_seconds = 3600 and auto_suspend = 60. Long jobs belong in Airflow on TRANSFORM_WH.
P statement_timeout_in_seconds | adhoc query cancelled after an hour
G snowflake cost
E my worksheet query died after an hour with statement_timeout_in_seconds exceeded
R a notebook query got killed exactly at sixty minutes; is there a limit?

@dp.slack_alerts standard semantic confirmed
T Failure alerts go to #data-alerts; SLAs only for critical DAGs
C default_args include on_failure_callback=notify_slack (SlackWebhookHook, connection slack_data_alerts) posting to #data-alerts with the log URL. sla= is set only on the finance_daily and exec_dashboard DAGs; SLA-miss emails for everything else were noise.
P on_failure_callback to slack | sla only on critical dags
G airflow alerting
R how will I find out when my new DAG breaks at night?

@dp.api_pools standard semantic confirmed
T DAGs calling external APIs use a pool
C Tasks hitting rate-limited APIs run in a pool: stripe_api (4 slots), hubspot_api (2), zendesk_api (3). Without it parallel backfills got "429 Too Many Requests" and Stripe throttled the whole account.
P airflow pools for api calls | 429 too many requests
G airflow rate-limits
E backfill tasks get "429 Too Many Requests" from stripe
R ten parallel runs of my extract hammer the vendor's API and it starts refusing us

@dp.snapshots decision semantic confirmed
T SCD2 history with dbt snapshots
C customers and subscriptions are snapshotted with strategy='timestamp', updated_at='updated_at'; products has no reliable updated_at and uses strategy='check', check_cols=['price', 'status', 'category_id']. Snapshots run before models in the dbt_daily DAG.
P dbt snapshots timestamp strategy | check strategy for products | scd2 history
G dbt history decision
R we need to know what a customer's plan was on a given past date; how is that tracked? ++ dp.model.dim_customers_history

@dp.dbt_deps solution semantic confirmed
T "only 0 package(s) installed": run dbt deps
C Error: "Compilation Error: dbt found 2 package(s) specified in packages.yml, but only 0 package(s) installed in dbt_packages. Run "dbt deps" to install package dependencies."
C Locally run dbt deps. In Airflow the image bakes the packages at build time, so a new package needs a new image tag in airflow/values.yaml.
P only 0 package(s) installed | run dbt deps | packages baked into the airflow image
G dbt airflow
E dbt found 2 package(s) specified in packages.yml, but only 0 package(s) installed in the airflow run

@dp.sqlfluff standard semantic confirmed
T SQL style enforced by sqlfluff
C sqlfluff with the dbt templater: lowercase keywords and identifiers, trailing commas, explicit column aliases with as, CTEs instead of subqueries. Run sqlfluff fix models/ before pushing; CI runs sqlfluff lint on changed files.
P sqlfluff with dbt templater | lowercase keywords trailing commas
G sql style linting
R does it matter whether I write SELECT in capitals in my models?

@dp.surrogate_keys preference semantic confirmed
T Use dbt_utils.generate_surrogate_key, not the old md5 macro
C Surrogate keys come from dbt_utils.generate_surrogate_key(['order_id', 'line_no']). The old macro md5_concat treated NULL and empty string alike, which produced colliding keys. Do not use md5_concat in new models.
P generate_surrogate_key | avoid md5_concat macro
G dbt keys
R I need a single id column built from order and line number; how do I hash them together?

@dp.dst_schedule gotcha semantic confirmed
T Schedules are UTC; local-time reports need a timezone-aware start_date
C Airflow cron schedules are evaluated in the DAG's timezone, UTC by default. The 06:00 Amsterdam sales report moved by an hour at every DST change until its start_date got tz=pendulum.timezone("Europe/Amsterdam").
P airflow schedules are utc | timezone-aware start_date | dst shift
G airflow time
R the morning report arrives an hour late since the clocks changed

@dp.zero_copy_clone procedure procedural confirmed
T Personal dev databases are zero-copy clones
C create database ANALYTICS_DEV_<USER> clone ANALYTICS; costs nothing until data diverges. Point your dbt profile target dev at it. A cleanup task drops clones older than 7 days, so recreate rather than extend.
P zero-copy clone for dev | analytics_dev clone dropped after 7 days
G snowflake local-dev
R I need a copy of production analytics to test my model changes; how do I get one cheaply?

@dp.query_tags standard semantic inferred
T dbt sets a query_tag per model
C dbt_project.yml sets +query_tag: "dbt:{{ model.name }}" (through the set_query_tag macro) so Snowflake's QUERY_HISTORY can attribute credits per model. Airflow tasks set QUERY_TAG=airflow:<dag_id>.<task_id> in the connection session parameters.
P query_tag per model | credit attribution in query_history
G snowflake cost dbt
R finance wants to know which model burns the most credits; is there a way to tell?

@dp.dynamic_mapping pattern semantic confirmed
T Per-tenant loads use dynamic task mapping
C Load one task per tenant with load_tenant.expand(tenant_id=get_tenants()) instead of generating DAGs or tasks in a Python loop at parse time. The tenant list comes from the tenants table at run time and the DAG file parses in under 1 s.
P dynamic task mapping with expand | no dags generated in loops
G airflow patterns
R we onboard new tenants every week; how do I avoid editing the DAG each time?

@dp.revenue_owner project_fact semantic inferred
T Finance owns the revenue definitions in fct_revenue
C Metric definitions in fct_revenue and the semantic layer (gross, net, recognized revenue) are owned by the finance analytics team (Priya Raman). Changes need her approval in the PR and a note in #finance-data.
P finance owns revenue definitions | fct_revenue changes need approval
G finance governance
R can I change how refunds are counted in the revenue model on my own?
"""


# ---------------------------------------------------------------------------
# mobile-app: hand-written core memories
# ---------------------------------------------------------------------------

CORE_MB = r"""
@mb.state_hoisting standard semantic confirmed
T Compose screens take UiState and event lambdas
C Each screen has a stateful Route composable that collects viewModel.uiState with collectAsStateWithLifecycle() and a stateless Screen(uiState, onEvent) composable used by previews and screenshot tests. ViewModels expose StateFlow<UiState>, never MutableStateFlow.
P state hoisting with uistate | collectasstatewithlifecycle | stateless screen composable
G android compose architecture
R how should the new returns screen get its data from the view model so I can preview it?

@mb.no_livedata decision semantic confirmed
T No new LiveData; use StateFlow
C LiveData is legacy in the Android app. New ViewModels expose StateFlow (UI state) and Channel/SharedFlow for one-off events; existing LiveData is converted when a screen is touched.
P no new livedata | stateflow in viewmodels
G android kotlin decision
E the no new livedata rule: does it apply when I only add one field to the old profile screen?

@mb.hilt_di standard semantic confirmed
T Dependency injection: Hilt on Android, swift-dependencies on iOS
C Android uses Hilt (@HiltViewModel, @Inject constructor, modules in each :feature module's di package). iOS uses swift-dependencies: @Dependency(\.ordersClient) with live, preview and test values.
P hilt on android | swift-dependencies on ios
G android ios dependency-injection
R how do I give the new view model access to the orders API on both platforms?

@mb.network_main_thread solution semantic confirmed
T NetworkOnMainThreadException: use suspend repositories
C Crash: android.os.NetworkOnMainThreadException. A blocking OkHttp call ran in a click handler. Repositories expose suspend functions that switch with withContext(ioDispatcher); ViewModels call them inside viewModelScope.launch.
P networkonmainthreadexception | withcontext io dispatcher in repositories
G android kotlin coroutines
E app crashes with android.os.NetworkOnMainThreadException when tapping reorder

@mb.unstable_params gotcha semantic confirmed
T Unstable List parameters cause recomposition
C Compose treats kotlin.collections.List as unstable, so every row of OrdersList recomposed on each scroll frame. UI models use kotlinx.collections.immutable (ImmutableList, persistentListOf()) and are annotated @Immutable; check with the compose compiler reports (./gradlew assembleRelease -PcomposeCompilerReports=true).
P unstable list parameters | immutablelist in ui models | compose compiler reports
G android compose performance
R scrolling the order history is janky and the layout inspector shows every row redrawing

@mb.gson_r8 solution episodic confirmed
T R8 broke Gson models in the release build
C Crash in release only: "java.lang.RuntimeException: Unable to invoke no-args constructor for class com.acme.checkout.data.CartDto". R8 removed or renamed fields of Gson models. Short-term fix: -keep class com.acme.checkout.data.** { *; } in proguard-rules.pro. New code uses kotlinx.serialization, which needs no keep rules.
P unable to invoke no-args constructor | r8 strips gson models | proguard keep rules for checkout
G android r8 serialization incident
E release build crashes with "Unable to invoke no-args constructor for class CartDto"
R the debug build parses the cart fine but the store build crashes on the same JSON

@mb.kotlinx_serialization decision semantic confirmed
T kotlinx.serialization for new code; Gson only in legacy checkout
C New data classes use @Serializable with kotlinx.serialization and the Retrofit converter. Gson remains only in :feature-checkout until the checkout rewrite; do not add Gson to other modules.
P kotlinx.serialization for new code | gson only in legacy checkout
G android serialization decision
R which JSON library should the new loyalty module use?

@mb.observable_min_ios decision semantic confirmed
T iOS view models use ObservableObject until the minimum is iOS 17
C View models are @MainActor final class ... : ObservableObject with @Published properties. The @Observable macro needs iOS 17 and the app still supports iOS 16, so it is not allowed yet.
P observableobject until ios 17 | no @observable macro yet
G ios swiftui decision
R can I use the new observation macro for the returns view model?

@mb.main_actor solution semantic confirmed
T "Publishing changes from background threads is not allowed"
C Runtime warning: "Publishing changes from background threads is not allowed; make sure to publish values from the main thread (via operators like receive(on:)) on model updates." Mark the view model @MainActor; async work awaits the client and assigns back on the main actor.
P publishing changes from background threads is not allowed | mainactor view models
G ios swiftui concurrency
E Xcode shows "Publishing changes from background threads is not allowed" when the order list loads

@mb.android_release procedure procedural confirmed
T Android release and staged rollout
C 1. Bump versionCode/versionName in gradle/libs.versions.toml (appVersionCode, appVersionName).
C 2. bundle exec fastlane android internal builds the AAB and uploads it to the internal track.
C 3. Promote to production at 10%, then 50% after 24 h and 100% after 72 h if crash-free users stay at or above 99.5%.
P android staged rollout | fastlane android internal | versioncode bump
G android release procedure
E what percentages does the android staged rollout use?
R the Play build is approved, how do we put it in people's hands step by step? ++ mb.lane.fastlane-android-promote

@mb.ios_release procedure procedural confirmed
T iOS release through TestFlight and phased release
C 1. bundle exec fastlane ios beta builds, signs with match and uploads to TestFlight.
C 2. QA signs off on the TestFlight build; submit for review with the demo account from the App Review notes.
C 3. Release with phased release (7 days); pause it from App Store Connect if the crash rate rises.
P fastlane ios beta | phased release 7 days | testflight sign-off
G ios release procedure
R how do I ship the iPhone build once QA is happy? ++ mb.lane.fastlane-ios-release

@mb.rollout_halt standard semantic confirmed
T Halt a rollout on crash-free < 99.5% or ANR > 0.47%
C Stop the staged or phased rollout when crash-free users drop below 99.5% in Crashlytics or the user-perceived ANR rate exceeds 0.47% (the Play bad-behaviour threshold). Halting is the on-call's decision, no meeting needed.
P halt rollout below 99.5 crash-free | anr threshold 0.47
G release crashlytics standards
R crashes went up a bit since yesterday's update reached half the users; when do we stop it?

@mb.app_links project_fact semantic confirmed
T App link domain and path patterns
C Universal/App Links use links.acme.app. Paths: /o/{orderId} (order detail), /p/{sku} (product), /r/{returnId} (return). assetlinks.json and apple-app-site-association are served by the platform team from the links service; changes go through their repo.
P app links domain links.acme.app | apple-app-site-association | assetlinks.json
G deep-links android ios
R what URL should a marketing email use so it opens the product inside the app?

@mb.assetlinks_fingerprint solution episodic confirmed
T App Links not verifying: Play signing key missing from assetlinks.json
C adb shell pm get-app-links com.acme.shop showed "links.acme.app: legacy_failure". assetlinks.json only listed the upload key's SHA-256; Play App Signing re-signs with a different key. Both fingerprints are now listed.
P legacy_failure app links | play app signing fingerprint | pm get-app-links
G deep-links android incident
E pm get-app-links shows legacy_failure for links.acme.app
R tapping our links opens the browser instead of the app, only for builds from the Play Store

@mb.keychain_reinstall gotcha semantic confirmed
T iOS keychain survives app deletion
C Keychain items persist after the app is deleted, so a reinstall logged users straight in with an old refresh token. On launch, if UserDefaults has no hasLaunchedBefore flag, delete the tokens from the keychain first.
P keychain survives uninstall | clear tokens on first launch
G ios security auth
R after deleting and reinstalling the app, a tester was still signed in; how?

@mb.apns_env solution episodic confirmed
T Push not arriving in TestFlight builds: APNs environment
C Pushes worked from Xcode but not in TestFlight. TestFlight builds use the production APNs environment (aps-environment = production) and the backend sent them to the sandbox gateway. The notification service now picks the gateway from the token's registered environment.
P testflight push not arriving | aps-environment production
G ios push incident
R notifications show up on my debug build but the beta testers never get them

@mb.offline_queue pattern semantic confirmed
T Offline actions queue with idempotency keys
C Order actions (cancel, return request, address change) are queued when offline: WorkManager with a NetworkType.CONNECTED constraint on Android, BGTaskScheduler on iOS. Each queued request carries an Idempotency-Key generated when queued, and the queue replays in order.
P offline action queue | workmanager network constraint | idempotency key per queued action
G offline android ios patterns
R if the user cancels an order on the train with no signal, what should the app do?

@mb.image_loading preference semantic confirmed
T Coil on Android, Nuke on iOS
C Images load with Coil 3 (AsyncImage) on Android and Nuke (LazyImage) on iOS, both with the CDN's ?w= parameter set to the view's pixel width. Glide and Kingfisher were removed in 2024.
P coil on android | nuke on ios | cdn width parameter
G images android ios
R which library should load product photos in the new wishlist grid?

@mb.kmp_shared decision semantic confirmed
T Shared business logic in Kotlin Multiplatform; UI stays native
C Pricing, cart validation and promo rules live in the KMP module :shared (published to iOS as the AcmeShared XCFramework via SKIE). UI is native on both platforms; Compose Multiplatform was evaluated and rejected in 2024.
P kotlin multiplatform shared module | ui stays native | compose multiplatform rejected
G kmp architecture decision
R can we write the new cart screen once for both phones?

@mb.version_catalog standard semantic confirmed
T Dependency versions live in the version catalog
C Every dependency version is declared in gradle/libs.versions.toml and referenced as libs.<alias>; no version strings in build.gradle.kts files. Renovate opens the update PRs against the catalog.
P libs.versions.toml | no hard-coded versions in gradle files
G android build dependencies
R where do I add the version for the new charting library?

@mb.linters standard semantic confirmed
T ktlint, detekt, SwiftLint and SwiftFormat fail CI on warnings
C Android CI runs ./gradlew ktlintCheck detekt; iOS CI runs swiftlint --strict and swiftformat --lint. Warnings fail the build; baseline files may only shrink.
P ktlint and detekt | swiftlint --strict | baseline files only shrink
G linting android ios
R CI is red because of a style complaint about my Swift file; can I add it to the baseline?

@mb.screenshot_tests standard semantic confirmed
T Screenshot tests: Paparazzi and swift-snapshot-testing
C Android screens have Paparazzi tests; record with ./gradlew recordPaparazziDebug and verify with verifyPaparazziDebug. iOS uses swift-snapshot-testing with record: .missing. Images are committed via Git LFS.
P paparazzi screenshot tests | recordpaparazzidebug | swift-snapshot-testing
G testing android ios
E how do I update images with recordPaparazziDebug after changing the button style?

@mb.cancellation gotcha semantic confirmed
T Never swallow CancellationException
C catch (e: Exception) inside a coroutine also catches CancellationException, so the coroutine keeps running after its scope is cancelled (spinners that never stop, work after the screen closed). Rethrow it or use runCatching wrappers from :core that rethrow cancellation.
P swallowing cancellationexception | rethrow cancellation in catch blocks
G kotlin coroutines
R my loading indicator keeps going after leaving the screen; the job doesn't seem to stop

@mb.match_signing solution procedural confirmed
T "No profiles for 'com.acme.shop' were found" on CI
C Error: "No profiles for 'com.acme.shop' were found: Xcode couldn't find any iOS App Store provisioning profiles matching 'com.acme.shop'."
C CI must run fastlane match appstore --readonly with MATCH_PASSWORD and MATCH_GIT_BASIC_AUTHORIZATION set; certificates live in the private repo ios-certificates. Never create profiles by hand in the portal.
P no profiles for 'com.acme.shop' were found | fastlane match readonly
G ios ci signing
E CI archive fails with "No profiles for 'com.acme.shop' were found"
R the signing step on the build server can't find a provisioning profile

@mb.touch_targets standard semantic confirmed
T Accessibility: 48dp / 44pt targets and dynamic type
C Touch targets are at least 48dp (Android) and 44pt (iOS). Text uses the type scale so it follows the system font size (no fixed sp/pt sizes). Icon-only buttons have contentDescription / accessibilityLabel.
P minimum touch target 48dp 44pt | dynamic type support
G accessibility android ios
R how big must the little close button on the promo banner be?

@mb.remote_config project_fact semantic confirmed
T Feature switches come from Firebase Remote Config
C Feature switches are Firebase Remote Config parameters with in-app defaults (res/xml/remote_config_defaults.xml and RemoteConfigDefaults.plist). Fetch interval is 1 hour in production and 0 in debug builds. Values are activated on the next cold start, not mid-session.
P firebase remote config defaults | fetch interval one hour | activate on next cold start
G feature-flags android ios
R I flipped a switch in the console but my phone still shows the old behaviour

@mb.analytics_naming standard semantic confirmed
T Analytics event naming and limits
C Events are snake_case verbs in the past tense (checkout_started, coupon_applied), at most 40 characters with at most 25 parameters, per Firebase limits. Every event is listed in docs/tracking-plan.md before it ships.
P analytics event naming snake_case | tracking plan | 40 character event names
G analytics standards
R what should I call the event for when someone saves an item for later? ++ mb.event.wishlist_added

@mb.webview_3ds gotcha semantic confirmed
T 3-D Secure in WebView loses cookies; use Custom Tabs
C The 3DS challenge failed in the embedded WebView because the bank's page relies on third-party cookies. Card authentication opens in Custom Tabs (Android) / ASWebAuthenticationSession (iOS) and returns through the acme://payment-return URL.
P 3ds in webview fails | custom tabs for 3-d secure | aswebauthenticationsession
G payments android ios
R the bank verification page shows a blank screen inside the app during card payment
"""


# ---------------------------------------------------------------------------
# user-maya: hand-written core memories (personal assistant)
# ---------------------------------------------------------------------------

CORE_PA = r"""
@pa.vegetarian fact semantic confirmed
T Maya is vegetarian (eggs and dairy yes, fish no)
C Maya has been vegetarian since 2019: eggs and dairy are fine, no meat, no fish or seafood, and no gelatine. Restaurant suggestions should have real vegetarian mains, not just salads.
P maya is vegetarian | no fish or seafood | no gelatine
G diet food
E find a place for Friday dinner, remember maya is vegetarian
R can you book a seafood place for my birthday dinner with friends? :: planning Maya's birthday dinner ++ pa.place.bar-fisk

@pa.nut_allergy fact semantic confirmed
T Allergic to cashews and pistachios; peanuts are fine
C Maya is allergic to cashews and pistachios (same plant family; she carries antihistamines, not an EpiPen). Peanuts, almonds and walnuts are fine. Check pesto, korma sauces and vegan "cheese", which often contain cashews.
P allergic to cashews and pistachios | peanuts are fine | check pesto and vegan cheese for cashews
G diet food health allergy
E is this korma ok given I'm allergic to cashews and pistachios?
R would a plant-based cheese platter be safe for me?

@pa.coffee preference semantic confirmed
T Oat flat white; no caffeine after 14:00
C Coffee order: oat milk flat white. No caffeine after 14:00 because it wrecks her sleep; afternoon meetings in cafés should be tea or decaf.
P oat milk flat white | no caffeine after 2pm
G food sleep
R I'm meeting Lotte at 4 at a café, what should I get?

@pa.meeting_hours preference semantic confirmed
T No meetings before 10:00; 25 or 50 minute slots
C Maya does not take meetings before 10:00 (deep work and running mornings). Meetings are 25 or 50 minutes, never a full hour back to back. Friday afternoons are kept free of meetings for focus work.
P no meetings before 10 | 25 or 50 minute meetings | meeting-free friday afternoons
G schedule work meetings
E the vendor wants 9:00 on Tuesday but there are no meetings before 10 for me, suggest alternatives
R can you put a one-hour call with the recruiter at 8:30 tomorrow?

@pa.calendars fact semantic confirmed
T Work calendar in Google, personal in iCloud
C Work calendar: Google Workspace (maya@northwind.io). Personal: iCloud. Personal appointments go in iCloud with a "busy" block (no details) on the work calendar so colleagues don't book over them.
P work calendar google personal icloud | busy block on the work calendar
G schedule calendar
R where should I put my dentist appointment so colleagues don't schedule over it?

@pa.travel_seats preference semantic confirmed
T Aisle seat, front of the plane, no red-eyes
C When flying: aisle seat in the front third, no red-eye flights, hand luggage only for trips up to 4 days. For Europe, train if it takes under 6 hours door to door (Amsterdam–Paris, Amsterdam–Brussels, Amsterdam–Cologne).
P aisle seat front third | no red-eye flights | train if under 6 hours
G travel flights trains
R book me something to Paris for the conference on the 14th ++ pa.trip.paris-conference

@pa.loyalty fact semantic confirmed
T Loyalty programmes: Flying Blue and NS Flex
C Flying Blue (Silver); the number is in 1Password item "Flying Blue". Train: NS Flex Dal Voordeel on the OV-chipkaart (40% off off-peak). Eurostar Club number also in 1Password.
P flying blue number in 1password | ns flex dal voordeel
G travel loyalty
R which frequent flyer scheme should I add to the KLM booking?

@pa.passport fact semantic confirmed
T Passport expires August 2027
C Maya's Dutch passport expires in August 2027; ID card in March 2029. Several countries require 6 months of passport validity at entry, so trips after February 2027 need a renewal first (renewal takes about 5 weeks at the Amsterdam city office).
P passport expires august 2027 | six months validity rule
G travel documents
R am I fine to travel to Thailand in spring 2027 with my current documents?

@pa.running topic semantic confirmed
T Training for the Rotterdam half marathon
C Maya is training for the Rotterdam half marathon in April. Runs Tuesday and Thursday mornings and a long run on Sunday. Left IT band gets sore on long downhills, so avoid hilly routes and schedule a rest day after the long run.
P rotterdam half marathon training | runs tuesday thursday sunday | it band avoid downhills
G running health schedule
R which kind of routes should I avoid when I go out jogging, and why?

@pa.summary_style style semantic confirmed
T Answers: up to 5 bullets first, then details; no emojis
C Maya wants answers that start with at most 5 short bullets, then the details below. No emojis, no exclamation marks, no filler like "Great question".
P max five bullets first | no emojis
G style communication
R how do I like you to format long answers?

@pa.email_language style semantic confirmed
T Emails: Dutch to family, English for work
C Drafts to family and friends are in Dutch and signed "Liefs, Maya". Work emails are in English, signed "Best, Maya". Keep work emails under 150 words.
P dutch for family emails | english for work emails | sign off liefs maya
G style email language
R draft a note to my aunt thanking her for the dinner

@pa.groceries_budget fact semantic confirmed
T Groceries budget is 450 euro a month, tracked in YNAB
C The monthly groceries budget is €450, tracked in the YNAB category "Groceries". Takeaway counts under "Eating out" (€150). Weekly shop at Albert Heijn, vegetables from the Saturday market.
P groceries budget 450 | ynab groceries category
G budget food
R how much am I supposed to spend on food shopping each month?

@pa.partner fact semantic confirmed
T Partner Ruben works night shifts Wednesday to Friday
C Maya's partner Ruben is an ICU nurse on night shifts Wednesday to Friday. He sleeps until about 14:00 on Thursdays, Fridays and Saturdays, so no deliveries, calls or contractor visits at home before then.
P ruben night shifts | no deliveries before 14:00 on thursdays
G family schedule
R the plumber can come Thursday at 9, is that ok?

@pa.cat fact semantic confirmed
T Cat Miso: vet and vaccinations
C Miso (cat, born 2020) sees Dierenkliniek Oost on Linnaeusstraat. Yearly vaccination due every October; she needs a carrier with a top opening. Food: Royal Canin Indoor, 2 pouches a day.
P miso vet dierenkliniek oost | yearly vaccination october
G pets health
R when does the furball need her next shots?

@pa.reading preference semantic confirmed
T Reads non-fiction history on a Kobo
C Maya reads on a Kobo Libra (EPUB, no Kindle formats). Favourite genre: narrative non-fiction about history and science. Borrowing from the online library (OBA) first, buying only if not available.
P kobo epub only | narrative non-fiction history | borrow from the library first
G reading books
R recommend my next book and tell me where to get it ++ pa.book.the-silk-roads, pa.shop.books

@pa.weeknight_cooking preference semantic confirmed
T Weeknight recipes: 30 minutes, one pan
C Weeknight dinners should take at most 30 minutes and use one pan or tray. Likes Ottolenghi-style flavours but simplified (no more than 10 ingredients). Batch cooking happens on Sunday.
P weeknight recipes 30 minutes | one pan dinners | simplified ottolenghi
G food cooking
R suggest something for dinner tonight, I get home at seven and I'm tired

@pa.coriander preference semantic confirmed
T Dislikes coriander
C Coriander (cilantro) tastes like soap to Maya; leave it out or swap for flat-leaf parsley and lime. Mushrooms, olives and blue cheese are fine.
P dislikes coriander | swap coriander for parsley
G food preferences
R adapt this tacos recipe to my taste ++ pa.recipe.black-bean-tacos

@pa.gp fact semantic confirmed
T GP practice and how to book
C GP: Huisartsenpraktijk Oosterpark, Dr. Visser. Appointments through the practice app (Uw Zorg online) or by phone 08:00–10:00. Repeat prescriptions (antihistamines) also through the app.
P gp dr visser | book through uw zorg online
G health admin
R I need more allergy pills, how do I get them?

@pa.hotels preference semantic confirmed
T Hotels: quiet room, high floor, gym; apartments for longer stays
C Hotel requests: quiet room on a high floor away from the lift, with a gym in the building. For stays longer than 4 nights prefer an apartment with a kitchen.
P quiet room high floor | apartment for stays over four nights
G travel hotels
R find me a place to sleep in Lisbon for that May work trip ++ pa.trip.lisbon-workation

@pa.team_overlap fact semantic confirmed
T Lives in Amsterdam; team overlap with Boston 15:00–18:00
C Maya lives in Amsterdam (CET/CEST). Most of her team is in Boston, so overlapping hours are 15:00–18:00 her time; schedule team calls there, never after 19:00.
P overlap with boston 15:00-18:00 | amsterdam time zone
G schedule work timezone
R when's a good time for a call with Jake and the US folks?

@pa.python_learning topic semantic confirmed
T Learning Python for data analysis
C Maya is learning Python for data analysis (pandas, matplotlib) with the course "Python for Everybody" and a Jupyter setup via uv. Explain with small pandas examples on her own data (running logs, YNAB exports) rather than abstract ones.
P learning python for data analysis | examples with pandas on own data
G learning python
R explain group-by to me, I keep getting confused

@pa.mother_birthday fact semantic confirmed
T Mother Ingrid: birthday 3 June, loves gardening
C Maya's mother Ingrid's birthday is 3 June. She loves gardening (orchids, old roses) and Scandinavian crime novels. She doesn't want gadgets. Maya usually visits her in Haarlem that weekend.
P mother ingrid birthday 3 june | gardening gift ideas
G family gifts birthdays
R what should I get mum this year?

@pa.no_car fact semantic confirmed
T No car: public transport, Swapfiets, Greenwheels
C Maya has no car. She cycles (Swapfiets), uses public transport with the OV-chipkaart and rents a Greenwheels car for trips like IKEA. Directions should default to cycling or transit.
P no car | cycling or public transport by default | greenwheels for car trips
G transport travel
R how do I get to the garden centre in Amstelveen on Saturday?

@pa.sleep fact semantic confirmed
T Bedtime 23:00; no screens after 22:30
C Maya aims for lights out at 23:00 and no screens after 22:30. Don't schedule calls or reminders after 22:00 except for travel days.
P bedtime 23:00 | no screens after 22:30
G sleep health schedule
R can you remind me at 22:45 to reply to Ben?

@pa.weekly_review procedure procedural confirmed
T Sunday evening weekly review
C Every Sunday at 19:00: 1. review last week's calendar and open tasks in Todoist, 2. pick the top 3 priorities for the week, 3. check the running plan and meal plan, 4. block focus time. Keep the prompt short; Maya fills in the answers.
P sunday weekly review | top 3 priorities for the week
G planning productivity
R help me plan the coming week like I usually do

@pa.reply_language style semantic confirmed
T Reply in English unless she writes in Dutch
C Reply in English by default. If Maya writes in Dutch, answer in Dutch. Keep Dutch place names and food names untranslated.
P reply in english unless dutch | keep dutch place names
G style language
R what language should you answer me in?

@pa.climbing fact semantic confirmed
T Bouldering on Mondays with Jonas
C Maya boulders at Monk Amsterdam (Bouldering Amsterdam West) on Mondays at 19:00 with her friend Jonas. Keep Monday evenings free; her chalk and shoes are in the blue locker bag.
P bouldering mondays with jonas | monk amsterdam
G sport schedule friends
R can we do the team drinks on Monday evening? ++ pa.sched.bouldering-with-jonas

@pa.insurance fact semantic unverified
T Travel insurance: annual policy, no winter sports
C Maya has annual travel insurance (continental cover) without the winter sports add-on; the policy number is in 1Password under "Reisverzekering". Ski trips need the add-on bought before departure.
P annual travel insurance | no winter sports cover
G travel insurance
R I'm going skiing in Austria in February; am I covered? ++ pa.trip.ski-week-in-austria

@pa.spanish_method topic semantic confirmed
T Spanish: Anki daily, weak on the subjunctive
C Maya studies Spanish with the Anki deck "Spanish verbs" (20 new cards a day) and a weekly italki lesson with Lucía on Wednesday at 20:00. Weak spot: the subjunctive; practise it with short dialogues, not grammar tables.
P spanish anki deck | italki lesson wednesday | practise the subjunctive with dialogues
G learning spanish
R give me an exercise for the grammar I keep messing up in my language lessons
"""


# ---------------------------------------------------------------------------
# Recency groups: the same fact recorded at different times. The first variant
# is the current one (newest, recently used); the text cannot tell them apart.
# ---------------------------------------------------------------------------

RECENCY = r"""
@@wb.r_target_framework project_fact semantic
T Target framework for the webshop projects
C All webshop projects target {0} through Directory.Build.props (<TargetFramework>{0}</TargetFramework>); the build agents have the {1} SDK installed.
P webshop target framework | directory.build.props targetframework
G dotnet build
V net9.0 ; 9.0.200 | net8.0 ; 8.0.404 | net7.0 ; 7.0.410 | net6.0 ; 6.0.428
Q which target framework should the new test project use? :: adding Webshop.Reporting.Tests

@@wb.r_mudblazor project_fact semantic
T MudBlazor version in use
C The webshop uses MudBlazor {0}. Check the docs for that major version: {1}
P mudblazor version | mudblazor docs for our major version
G mudblazor dependencies
V 7.15.0 ; parameters such as MudDataGrid's Items changed, and MudDialog is shown with ShowAsync. | 6.11.2 ; MudDataGrid still needs the ServerData signature from 6.x and dialogs use Show. | 6.1.9 ; MudTable is used instead of MudDataGrid in all grids.
Q which MudBlazor version are we on? the docs differ between majors :: fixing a dialog that doesn't open

@@wb.r_free_shipping project_fact semantic
T Free shipping threshold
C Orders above {0} ship free within the Netherlands (Shipping:FreeThreshold = {1}); below it shipping costs {2}.
P free shipping threshold | shipping:freethreshold
G shipping pricing
V €50 ; 50 ; €4.95 | €40 ; 40 ; €4.50 | €35 ; 35 ; €3.95
Q what's the free shipping threshold? a customer is asking on chat

@@wb.r_release_manager project_fact semantic
T Webshop release manager
C The webshop release manager is {0}; ping them in #webshop-releases before any hotfix or freeze exception.
P webshop release manager | who approves hotfixes
G release people
V Priya de Wit | Tom Bakker | Sanne Visser
Q who's the release manager I need to ask for a hotfix?

@@wb.r_sql_tier project_fact semantic
T Production Azure SQL tier
C The production database runs on Azure SQL {0} ({1}); the read replica {2}.
P production azure sql tier | read replica for reporting
G sql-server azure
V Business Critical BC_Gen5_8 ; 8 vCores ; is the built-in readable secondary, use ApplicationIntent=ReadOnly | General Purpose GP_Gen5_8 ; 8 vCores ; is a geo-replica in West Europe | General Purpose GP_Gen5_4 ; 4 vCores ; does not exist, reports run on the primary
Q what tier is the production database and is there a replica for reports?

@@wb.r_payment_methods project_fact semantic
T Payment methods enabled at checkout
C Checkout offers {0} through Adyen Drop-in.
P checkout payment methods | adyen drop-in methods
G payments checkout
V iDEAL, cards, PayPal, Klarna Pay Later, Apple Pay and Google Pay | iDEAL, cards, PayPal and Klarna Pay Later | iDEAL, cards and PayPal
Q which payment options does the checkout support?

@@wb.r_staging_url project_fact semantic
T Staging environment URL
C Staging runs at {0} (basic auth user acme, password in Key Vault secret staging-basic-auth).
P webshop staging url | staging basic auth
G staging environments
V https://staging.shop.acme.nl | https://acme-shop-staging.azurewebsites.net | https://test.shop.acme.nl
Q what's the staging URL again? I want to check the new banner

@@pf.r_postgres_version project_fact semantic
T Production Postgres version
C Production Postgres (pg-main) runs {0}; {1}
P production postgres version | postgres major version
G postgres infrastructure
V PostgreSQL 16.4 ; MERGE ... RETURNING and logical replication from standbys are available. | PostgreSQL 15.6 ; MERGE is available, but not pg_stat_io. | PostgreSQL 14.10 ; no MERGE, use INSERT ... ON CONFLICT. | PostgreSQL 13.13 ; no MERGE, and no multirange types.
Q which postgres version is production on? can I use the newer SQL features

@@pf.r_django_version project_fact semantic
T Django version of the platform services
C Platform services run Django {0} on Python {1}.
P django version | python version of the services
G django python dependencies
V 5.1 ; 3.12 | 4.2 LTS ; 3.11 | 4.1 ; 3.10
Q what Django version are we on? looking at the docs for GeneratedField

@@pf.r_incident_lead project_fact semantic
T Incident commander rota lead
C The incident commander rota is run by {0}; page them via PagerDuty schedule "Platform IC" for SEV1/SEV2.
P incident commander rota | who leads incidents
G incidents on-call people
V Jana Novak | Ahmed El Amrani | Lisa Chen
Q who runs the incident commander rota? need to swap a shift

@@pf.r_staging_db project_fact semantic
T Staging database host
C The staging Postgres primary is {0}; connect through the bastion: ssh -L 5433:{0}:5432 bastion-stg.acme.internal.
P staging database host | staging postgres via bastion
G postgres staging
V pg-stg-07.acme.internal | pg-stg-04.acme.internal | pg-stg-02.acme.internal
Q what's the staging db host? I need to tunnel in to check a migration

@@pf.r_base_image project_fact semantic
T Base container image for services
C Services build FROM {0}; the image includes the Postgres client {1}.
P base container image | dockerfile from
G docker build
V ghcr.io/acme/python-base:3.12-bookworm-2025.05 ; 16 | ghcr.io/acme/python-base:3.11-bookworm-2024.10 ; 15 | python:3.10-slim-bullseye ; 13
Q which base image should the Dockerfile of the new service use?

@@pf.r_deploy_window standard semantic
T Production deploy window
C Production deploys are allowed {0}.
P production deploy window | when can we deploy
G deployment release policy
V Monday to Thursday 09:00-16:00 CET, Friday until 12:00 | Monday to Thursday 10:00-15:00 CET, never on Friday | Tuesday and Thursday 10:00-12:00 CET only
Q when am I allowed to deploy to production?

@@pf.r_celery_concurrency project_fact semantic
T Default Celery worker concurrency
C Default Celery workers run with --concurrency={0} and --prefetch-multiplier={1}; tune per queue in the Helm values.
P default celery concurrency | prefetch multiplier
G celery kubernetes
V 8 ; 1 | 4 ; 4 | 2 ; 4
Q what concurrency do the celery workers use by default?

@@fe.r_node_version project_fact semantic
T Node version for the portal
C The portal builds with Node {0} (see .nvmrc); CI uses the {1} image.
P node version | .nvmrc
G tooling node
V 22 LTS ; node:22-bookworm | 20 LTS ; node:20-bookworm | 18 LTS ; node:18-bullseye | 16 LTS ; node:16-bullseye
Q which node version should I install for the portal?

@@fe.r_router project_fact semantic
T Routing library version and mode
C Routing uses {0}; {1}
P react router version | route definitions
G react routing
V React Router 7 in data mode ; routes are objects in src/routes.tsx with loader and lazy. | React Router 6.26 with createBrowserRouter ; loaders are allowed but most pages still fetch in components. | React Router 6.4 with <Routes> in JSX ; no loaders.
Q which react router version and style do we use for the new settings page?

@@fe.r_ui_library project_fact semantic
T Shared component library version
C The portal uses @acme/ui {0}, built on {1}.
P acme ui version | shared component library
G ui dependencies
V 4.2.0 ; Radix primitives and Tailwind 4 | 3.8.1 ; Radix primitives and Tailwind 3 | 2.5.0 ; Headless UI and Tailwind 3
Q what version of our component library is the portal on? the props differ

@@fe.r_api_base project_fact semantic
T API base URL for the staging portal
C The staging portal talks to {0} (VITE_API_URL in .env.staging).
P staging api base url | vite_api_url staging
G api environments
V https://api.staging.acme.com/v2 | https://staging-api.acme.com/v2 | https://staging-api.acme.com/v1
Q what API URL does the staging build point at?

@@fe.r_browserslist standard semantic
T Supported browsers
C The portal supports {0} (browserslist in package.json).
P supported browsers | browserslist
G browsers standards
V the last 2 versions of Chrome, Edge, Firefox and Safari 16.4+ | the last 2 versions of Chrome, Edge, Firefox and Safari 15+ | the last 2 versions of evergreen browsers and Safari 14+
Q which browsers do we need to support? can I use CSS nesting

@@fe.r_test_runner decision semantic
T Unit test runner
C Unit tests run with {0}; {1}
P unit test runner | test command
G testing tooling
V Vitest 2 ; pnpm test runs in watch mode locally and pnpm test --run in CI. | Vitest 1 ; pnpm test runs once, use pnpm test:watch locally. | Jest 29 with babel-jest ; pnpm test runs jest --ci.
Q how do I run the unit tests, which runner is it?

@@fe.r_design_tokens project_fact semantic
T Primary brand colour token
C The primary brand colour is {0} (token color.brand.primary, Tailwind class bg-brand).
P primary brand colour | color.brand.primary
G design ui
V #1F5EFF | #2A6DF4 | #3366CC
Q what's the hex for the primary brand colour? design asked

@@dp.r_dbt_version project_fact semantic
T dbt version used by the pipeline
C The pipeline runs dbt-core {0} with dbt-snowflake {1}; {2}
P dbt version | dbt-snowflake adapter version
G dbt dependencies
V 1.9 ; 1.9 ; microbatch incremental strategy and snapshot YAML configs are available. | 1.8 ; 1.8 ; unit tests are available, microbatch is not. | 1.7 ; 1.7 ; no unit tests yet. | 1.6 ; 1.6 ; no unit tests and no semantic layer yet.
Q which dbt version are we on? can I write a unit test for a model

@@dp.r_airflow_version project_fact semantic
T Airflow version
C Airflow runs {0} on the KubernetesExecutor; {1}
P airflow version | kubernetes executor
G airflow dependencies
V 2.10.4 ; dataset-triggered DAGs and the DatasetAlias are available. | 2.9.3 ; datasets are available without aliases. | 2.7.3 ; setup/teardown tasks are available, dataset aliases are not.
Q what Airflow version do we run? thinking about data-aware scheduling

@@dp.r_finance_freshness standard semantic
T Finance mart freshness target
C The finance mart (fct_revenue, fct_invoices) must be refreshed by {0} each day; {1}
P finance mart freshness | finance daily deadline
G finance sla
V 07:00 Europe/Amsterdam ; the finance_daily DAG has sla=timedelta(hours=2). | 08:00 Europe/Amsterdam ; the finance_daily DAG has sla=timedelta(hours=3). | 09:00 Europe/Amsterdam ; no SLA is set.
Q by what time does the finance mart have to be ready each morning?

@@dp.r_oncall project_fact semantic
T Data platform on-call contact
C Data platform on-call is reached through {0}.
P data platform on-call | who to page for airflow
G on-call alerting
V PagerDuty service "Data Platform" (escalation: Priya Raman after 30 min) | PagerDuty service "Data Eng" (escalation: Marco Rossi after 30 min) | the #data-eng channel with @data-oncall (no PagerDuty)
Q who do I page when the nightly dbt run fails?

@@dp.r_transform_size decision semantic
T TRANSFORM_WH size
C TRANSFORM_WH is size {0} with auto_suspend = {1}.
P transform_wh size | warehouse auto_suspend
G snowflake cost
V LARGE ; 120 | MEDIUM ; 60 | X-LARGE ; 300
Q how big is the transformation warehouse?

@@dp.r_raw_database project_fact semantic
T Landing database for raw data
C Fivetran and custom loaders write to the {0} database; dbt sources point at {0}.<source>.
P raw landing database | dbt sources database
G ingestion snowflake
V RAW | LANDING | FIVETRAN_DB
Q which database do the raw loads land in?

@@dp.r_net_revenue decision semantic
T Net revenue definition
C Net revenue = gross order value minus {0}.
P net revenue definition | how net revenue is calculated
G finance metrics
V VAT, refunds, cancellations and voucher discounts (shipping fees included) | VAT, refunds and cancellations (vouchers counted as marketing cost) | VAT and refunds only
Q how is net revenue defined in the marts?

@@mb.r_min_ios project_fact semantic
T Minimum iOS version
C The iOS app supports iOS {0} and later; {1}
P minimum ios version | deployment target
G ios compatibility
V 16.0 ; NavigationStack is available everywhere. | 15.0 ; NavigationStack needs an availability check. | 14.0 ; use NavigationView only.
Q what's the minimum iOS version? can I use NavigationStack everywhere

@@mb.r_kotlin_version project_fact semantic
T Kotlin and AGP versions
C The Android build uses Kotlin {0} and Android Gradle Plugin {1}; {2}
P kotlin version | android gradle plugin version
G android build dependencies
V 2.1.0 ; 8.7.3 ; the Compose compiler comes from the Kotlin Gradle plugin. | 2.0.21 ; 8.5.2 ; the Compose compiler comes from the Kotlin Gradle plugin. | 1.9.24 ; 8.3.2 ; the Compose compiler is set with composeOptions.kotlinCompilerExtensionVersion. | 1.9.10 ; 8.1.2 ; the Compose compiler is set with composeOptions.kotlinCompilerExtensionVersion.
Q which kotlin version are we on? do I still set the compose compiler version

@@mb.r_target_sdk project_fact semantic
T Android targetSdk and minSdk
C The Android app has targetSdk {0} and minSdk {1}.
P android targetsdk | android minsdk
G android compatibility
V 35 ; 26 | 34 ; 26 | 33 ; 24
Q what targetSdk do we build with?

@@mb.r_release_train standard semantic
T Mobile release cadence
C Mobile releases follow a {0}: code freeze {1}, store submission {2}.
P mobile release cadence | release train schedule
G release schedule
V two-week train ; every second Tuesday at 12:00 ; the Thursday after | weekly train ; every Wednesday at 12:00 ; the same Thursday | monthly release ; the first Monday of the month ; that Wednesday
Q when is the next code freeze for the app, how often do we release?

@@mb.r_review_account project_fact semantic
T App Review demo account
C The App Review / Play pre-launch demo account is {0}; the password is in 1Password item "Store review account". {1}
P app review demo account | store review login
G release ios android
V review+2025@acme.app ; It has two past orders and a pending return. | review+2024@acme.app ; It has one past order. | appreview@acme.app ; It has no orders.
Q which demo login do we give Apple's reviewers?

@@mb.r_xcode project_fact semantic
T Xcode version on CI
C CI builds iOS with Xcode {0} on {1} runners.
P xcode version on ci | ios ci runners
G ios ci
V 16.2 ; macos-15 | 15.4 ; macos-14 | 15.0 ; macos-13
Q what Xcode version does CI use? my local build differs

@@pa.r_gym fact semantic
T Gym membership
C Maya's gym membership is {0}; {1}
P gym membership | gym location
G sport health
V SportCity Amsterdam Oost ; membership renews monthly, classes booked in the app. | Basic-Fit Wibautstraat ; annual contract, no classes. | Fitness Factory Zuid ; pay per visit card.
Q which gym am I at again? I want to book a class

@@pa.r_protein fact semantic
T Daily protein target
C Maya's protein target is {0} g per day {1}
P protein target | daily protein
G diet running
V 95 ; while training for the half marathon. | 75 ; for general fitness. | 60 ; as suggested by the first dietician.
Q how much protein am I aiming for each day?

@@pa.r_race_goal fact semantic
T Half marathon goal time
C Maya's goal for the half marathon is {0} ({1} per km).
P half marathon goal time | target pace
G running goals
V 1:55 ; 5:27 | 2:00 ; 5:41 | 2:05 ; 5:55
Q what pace should my long runs aim for relative to my race goal?

@@pa.r_work_hours fact semantic
T Working hours
C Maya's working hours are {0}; {1}
P working hours | when maya works
G work schedule
V 09:30–18:00 Monday to Thursday ; Fridays are 09:30–13:00. | 09:00–17:30 Monday to Friday ; no fixed short day. | 08:30–17:00 Monday to Friday ; Wednesday afternoons off.
Q when does my work day start and end?

@@pa.r_spanish_level fact semantic
T Spanish level
C Maya's Spanish is at {0} level; {1}
P spanish level | current spanish level
G learning spanish
V B1 ; she can handle conversations about work and travel and is working towards B2. | A2 ; she can order food and do small talk. | A1 ; she knows basic phrases only.
Q pitch the Spanish exercise at the right level for me

@@pa.r_manager fact semantic
T Maya's manager
C Maya's manager is {0}; {1}
P maya's manager | who maya reports to
G work people
V Jake Morrison ; 1:1 on Tuesdays at 16:00 Amsterdam time. | Hannah Kim ; 1:1 every other Monday at 15:30. | Peter de Boer ; 1:1 on Thursday mornings.
Q who's my manager these days, and when is our 1:1?

@@pa.r_dentist fact semantic
T Dentist
C Maya's dentist is {0}; {1}
P dentist | dental check-up
G health admin
V Tandartspraktijk Oost, Dr. Amrani ; check-ups every 6 months, next one in November. | Tandheelkundig Centrum Zuid, Dr. Kok ; yearly check-ups. | Dr. Jansen in Haarlem ; yearly check-ups.
Q which dentist do I go to? I need to book a check-up
"""


# ---------------------------------------------------------------------------
# Families: systematic variations from hand-written tables
# ---------------------------------------------------------------------------


def slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def fam(key, kind, title, content, phrases, tags, memory_type="semantic", reliability="confirmed"):
    return {
        "key": key, "kind": kind, "memory_type": memory_type, "reliability": reliability,
        "title": title, "content": content, "canonical_phrases": phrases, "tags": tags,
    }


WB_PAGES = [
    ("/", "Home.razor", "Webshop.Web", "static SSR with streaming rendering", "anonymous", "Hero banners come from Storyblok and are cached for 5 minutes.", "storefront"),
    ("/c/{slug}", "CategoryPage.razor", "Webshop.Web", "static SSR with streaming rendering", "anonymous", "Facets come from Azure AI Search; the page size is 48.", "storefront"),
    ("/p/{slug}", "ProductDetail.razor", "Webshop.Web", "static SSR with streaming rendering", "anonymous", "Stock badges are loaded by a small InteractiveServer island (StockBadge.razor).", "storefront"),
    ("/search", "SearchPage.razor", "Webshop.Web", "static SSR, query in the URL", "anonymous", "Empty results show the top 8 bestsellers of the last 7 days.", "storefront"),
    ("/cart", "CartPage.razor", "Webshop.Web", "InteractiveServer", "anonymous (cart cookie)", "Quantity changes are debounced by 400 ms before calling CartService.", "checkout"),
    ("/checkout/address", "CheckoutAddress.razor", "Webshop.Web", "InteractiveServer", "guest or signed-in customer", "Postcode lookup uses the PostNL address API (postcode + house number).", "checkout"),
    ("/checkout/shipping", "CheckoutShipping.razor", "Webshop.Web", "InteractiveServer", "guest or signed-in customer", "Delivery slots are fetched from ShippingQuoteService for the chosen address.", "checkout"),
    ("/checkout/payment", "CheckoutPayment.razor", "Webshop.Web", "InteractiveServer", "guest or signed-in customer", "Hosts the Adyen Drop-in through JS interop (adyen-dropin.js).", "checkout"),
    ("/checkout/confirmation/{orderNumber}", "CheckoutConfirmation.razor", "Webshop.Web", "static SSR", "order token in the URL", "Fires the purchase event to GTM once per order number.", "checkout"),
    ("/account/orders", "OrderHistory.razor", "Webshop.Web", "InteractiveServer", "customer policy", "Shows 20 orders per page, newest first.", "account"),
    ("/account/orders/{number}", "OrderDetail.razor", "Webshop.Web", "InteractiveServer", "customer policy, own orders only", "Track-and-trace links come from the carrier on the shipment.", "account"),
    ("/account/returns", "Returns.razor", "Webshop.Web", "InteractiveServer", "customer policy", "Returns are allowed for 30 days after delivery, 100 days in December.", "account"),
    ("/account/addresses", "Addresses.razor", "Webshop.Web", "InteractiveServer", "customer policy", "A customer can store at most 10 addresses.", "account"),
    ("/account/profile", "Profile.razor", "Webshop.Web", "InteractiveServer", "customer policy", "E-mail changes require confirming a link sent to the new address.", "account"),
    ("/wishlist", "Wishlist.razor", "Webshop.Web", "InteractiveServer", "customer policy", "Guests are redirected to login with a returnUrl.", "account"),
    ("/stores", "StoreLocator.razor", "Webshop.Web", "static SSR plus a Leaflet map via JS interop", "anonymous", "Store data comes from the ERP every night.", "storefront"),
    ("/gift-cards", "GiftCards.razor", "Webshop.Web", "static SSR", "anonymous", "Balance checks call the ERP through GiftCardService with a 60 s cache.", "storefront"),
    ("/help/{slug}", "HelpArticle.razor", "Webshop.Web", "static SSR", "anonymous", "Articles come from Storyblok, cached for one hour.", "storefront"),
    ("/admin/products", "ProductList.razor", "Webshop.Admin", "InteractiveServer", "CatalogEditor role", "MudDataGrid with server-side paging over OData.", "admin"),
    ("/admin/products/{id}", "ProductEditor.razor", "Webshop.Admin", "InteractiveServer", "CatalogEditor role", "Image uploads go straight to blob storage with a SAS token.", "admin"),
    ("/admin/orders", "AdminOrders.razor", "Webshop.Admin", "InteractiveServer", "CustomerService role", "Filters are kept in the query string so links can be shared.", "admin"),
    ("/admin/refunds", "Refunds.razor", "Webshop.Admin", "InteractiveServer", "Finance role", "Refunds above €500 need a second approver.", "admin"),
    ("/admin/promotions", "Promotions.razor", "Webshop.Admin", "InteractiveServer", "Marketing role", "Promotion rules are evaluated by PromotionEngine; the page only edits them.", "admin"),
    ("/admin/customers", "Customers.razor", "Webshop.Admin", "InteractiveServer", "CustomerService role", "Personal data is masked unless the user clicks Reveal, which is audited.", "admin"),
    ("/admin/stock", "StockOverview.razor", "Webshop.Admin", "InteractiveServer", "Warehouse role", "Read-only; stock is owned by the ERP sync.", "admin"),
    ("/admin/reports/sales", "SalesReport.razor", "Webshop.Admin", "InteractiveServer", "Finance role", "Reads from the read replica through ReportingDbContext.", "admin"),
]

WB_FLAGS = [
    ("Checkout.ApplePay", "Apple Pay in the Adyen Drop-in", "on", "on", "Payments team", "Targets Safari user agents only."),
    ("Checkout.KlarnaPayLater", "Klarna Pay Later", "on", "on", "Payments team", "Disabled automatically for orders above €1,500."),
    ("Checkout.AddressLookup", "PostNL postcode lookup", "on", "on", "Checkout team", "Falls back to free-text entry when the API fails."),
    ("Checkout.ExpressShipping", "same-day delivery option", "on for 20% of sessions", "on", "Checkout team", "Uses a percentage filter while capacity is tested."),
    ("Cart.SaveForLater", "save-for-later list in the cart", "off", "on", "Storefront team", "Waiting for the wishlist merge."),
    ("Catalog.NewFacets", "new facet sidebar on category pages", "on", "on", "Search team", "Old sidebar code is scheduled for removal."),
    ("Catalog.SponsoredProducts", "sponsored product slots in search", "off", "on", "Marketing team", "Legal review pending."),
    ("Search.Typeahead", "typeahead suggestions in the search box", "on", "on", "Search team", "Suggestions come from the products-v3 suggester."),
    ("Account.ReturnsV2", "new returns flow with QR codes", "on for 50% of customers", "on", "Customer team", "Targeting filter by customer id hash."),
    ("Account.DeleteAccount", "self-service account deletion", "on", "on", "Customer team", "Deletion is executed by a Hangfire job after 14 days."),
    ("Admin.BulkPriceEdit", "bulk price editing in the product grid", "on for the Pricing group", "on", "Back-office team", "Targeting filter on the Entra group sg-pricing."),
    ("Admin.RefundAutoApprove", "automatic approval of refunds under €50", "off", "on", "Finance", "Pending sign-off from the finance controller."),
    ("Promo.Bundles", "bundle discounts in PromotionEngine", "on", "on", "Marketing team", "Bundles cannot be combined with coupon codes."),
    ("Promo.BlackFridayBanner", "Black Friday countdown banner", "time window 20-29 November", "on", "Marketing team", "Uses a TimeWindow filter."),
    ("Shipping.PickupPoints", "PostNL pick-up points at checkout", "on", "on", "Checkout team", "Pick-up point list comes from the PostNL locations API."),
    ("Shipping.DhlFallback", "fall back to DHL when PostNL label creation fails", "on", "off", "Checkout team", "Only for parcels under 20 kg."),
    ("Reviews.Trustpilot", "Trustpilot stars on product pages", "on", "on", "Storefront team", "Widget is lazy-loaded below the fold."),
    ("Perf.ImageAvif", "serve AVIF images where supported", "off", "on", "Storefront team", "CPU cost of AVIF encoding is being measured."),
    ("Loyalty.Points", "loyalty points on orders", "off", "on", "Customer team", "Launch planned with the new ERP module."),
    ("Gdpr.ConsentModeV2", "Google consent mode v2", "on", "on", "Marketing team", "Required for ads measurement in the EU."),
]

WB_CONFIG = [
    ("Shipping:PostNL:TimeoutSeconds", "15", "30", "Label creation is slow in the PostNL sandbox."),
    ("Shipping:DHL:TimeoutSeconds", "20", "30", "Used only by the DHL fallback."),
    ("Payments:Adyen:MerchantAccount", "AcmeShopNL", "AcmeShopNL_TEST", "The merchant account decides which payment methods are available."),
    ("Payments:Adyen:Environment", "Live", "Test", "The live endpoint prefix is set separately under Payments:Adyen:LivePrefix."),
    ("Search:IndexName", "products-v3", "products-v3-staging", "Changing it requires a full reindex first."),
    ("Search:QueryTimeoutMs", "800", "2000", "Above the timeout the page falls back to bestsellers."),
    ("Cart:ReservationMinutes", "20", "5", "Stock is reserved while the customer is in checkout."),
    ("Cart:MaxLines", "100", "100", "Prevents bots from building huge carts."),
    ("Cache:ProductTtlSeconds", "300", "30", "HybridCache entry lifetime for product detail data."),
    ("Cache:CategoryTreeTtlSeconds", "3600", "60", "The category tree changes a few times a week."),
    ("Email:SendGrid:FromAddress", "orders@acme.nl", "orders-staging@acme.nl", "The staging address is on a SendGrid suppression-safe subdomain."),
    ("Email:SendGrid:Sandbox", "false", "true", "Sandbox mode accepts mails without delivering them."),
    ("Erp:ExactOnline:Division", "2910341", "3004417", "Each division is a separate administration in Exact Online."),
    ("Erp:SyncIntervalMinutes", "15", "60", "Stock and gift card balances sync on this interval."),
    ("Storyblok:Version", "published", "draft", "Staging shows draft content so editors can preview."),
    ("Images:MaxWidth", "1600", "1600", "Requests for wider images are clamped by ImageSharp.Web."),
    ("Orders:NumberPrefix", "NL", "TST", "Order numbers look like NL-2025-004211."),
    ("Returns:WindowDays", "30", "30", "December purchases get 100 days through a separate rule."),
    ("Auth:CookieExpirationDays", "14", "1", "Sliding expiration for the storefront cookie."),
    ("RateLimiting:Checkout:PermitLimit", "30", "300", "Fixed window per IP per minute on /api/checkout/*."),
    ("Hangfire:WorkerCount", "10", "2", "Workers per instance; three instances in production."),
    ("Trustpilot:BusinessUnitId", "5f1c2e0a9b8d", "5f1c2e0a9b8d", "Same unit for both; the widget is read-only."),
    ("Logging:LogLevel:Microsoft.EntityFrameworkCore", "Warning", "Information", "Information in production logs every SQL command."),
    ("Features:Label", "prod", "staging", "Label used when reading flags from Azure App Configuration."),
]

WB_ENTITIES = [
    ("Order", "dbo.Orders", "Id (uniqueidentifier), unique index on Number", "Status is stored as a string (HasConversion<string>()).", "Soft-deleted orders are filtered by a global query filter on IsDeleted."),
    ("OrderLine", "dbo.OrderLines", "composite key (OrderId, LineNo)", "UnitPrice and VatAmount are decimal(18,4).", "Lines are owned by Order and never loaded on their own."),
    ("Payment", "dbo.Payments", "Id, unique index on PspReference", "Amount in minor units (long) to match Adyen.", "A payment row is written before calling Adyen, status Pending."),
    ("Refund", "dbo.Refunds", "Id, foreign key to Payments", "Reason is required; ApprovedBy holds the Entra object id.", "Refunds are never deleted."),
    ("Customer", "dbo.Customers", "Id = AspNetUsers.Id", "Email is unique and stored lower-case.", "Personal data is encrypted with Always Encrypted on Phone and BirthDate."),
    ("Address", "dbo.Addresses", "Id, foreign key CustomerId", "Country is ISO 3166-1 alpha-2.", "An order copies the address as an owned type; editing an address never changes old orders."),
    ("Product", "dbo.Products", "Id, unique index on Sku", "Name and Description are per culture in ProductTranslations.", "Price history is kept in ProductPrices with ValidFrom/ValidTo."),
    ("ProductPrice", "dbo.ProductPrices", "Id, index on (ProductId, ValidFrom)", "Amount decimal(18,4), Currency always EUR.", "The current price is the row with ValidTo IS NULL."),
    ("StockItem", "dbo.StockItems", "ProductId (one row per product)", "Available and Reserved are int; RowVersion is a rowversion column.", "Written by the ERP sync and by reservations only."),
    ("Category", "dbo.Categories", "Id, unique index on Slug", "ParentId builds the tree; depth is at most 4.", "The tree is cached for an hour (Cache:CategoryTreeTtlSeconds)."),
    ("Promotion", "dbo.Promotions", "Id", "Rules are stored as JSON (RulesJson) and validated by PromotionEngine.", "Promotions have a time window and a priority; the highest priority wins."),
    ("Coupon", "dbo.Coupons", "Id, unique index on Code", "Code is stored upper-case.", "MaxRedemptions is enforced with an UPDATE ... WHERE Redemptions < MaxRedemptions."),
    ("Shipment", "dbo.Shipments", "Id, foreign key OrderId", "Carrier is PostNL or DHL; Barcode unique per carrier.", "Created when the label is printed, not at order time."),
    ("ReturnRequest", "dbo.ReturnRequests", "Id, foreign key OrderId", "Status Requested, Received, Refunded or Rejected.", "The QR code for drop-off is generated by PostNL."),
    ("GiftCard", "dbo.GiftCards", "Id, unique index on CardNumberHash", "Only a SHA-256 hash of the card number is stored.", "The balance is cached from the ERP, never authoritative."),
    ("WishlistItem", "dbo.WishlistItems", "composite key (CustomerId, ProductId)", "AddedAt datetime2.", "Guests keep their wishlist in local storage until login."),
    ("Review", "dbo.Reviews", "Id", "Imported from Trustpilot; Rating tinyint 1-5.", "Read-only in the shop; moderation happens in Trustpilot."),
    ("AuditLog", "audit.AuditLog", "Id bigint identity", "Payload nvarchar(max) with JSON.", "Written by a SaveChanges interceptor for admin changes."),
    ("Store", "dbo.Stores", "Id, unique index on ErpCode", "Latitude/Longitude decimal(9,6).", "Opening hours are a JSON column edited in the ERP."),
    ("NewsletterSubscription", "dbo.NewsletterSubscriptions", "Id, unique index on Email", "ConsentedAt and Source are required.", "Synced to Klaviyo by a Hangfire job every 10 minutes."),
]

WB_INTEGRATIONS = {
    "Adyen": {"area": "payments", "timeout": "10 s for /payments, 30 s for /payments/details", "retries": "2 retries on 5xx and timeouts, always with the same Idempotency-Key", "sandbox": "the test environment checkout-test.adyen.com with merchant account AcmeShopNL_TEST", "owner": "the Payments team (#team-payments); Adyen support ticket for outages", "secret": "Key Vault secrets adyen-api-key and adyen-webhook-hmac"},
    "PostNL": {"area": "shipping", "timeout": "15 s (label creation can be slow)", "retries": "1 retry after 2 s; then the DHL fallback if Shipping.DhlFallback is on", "sandbox": "https://api-sandbox.postnl.nl with its own API key", "owner": "the Checkout team (#team-checkout); PostNL account manager for contract issues", "secret": "Key Vault secrets postnl-api-key and postnl-api-key-sandbox"},
    "DHL Parcel": {"area": "shipping", "timeout": "20 s", "retries": "2 retries with exponential backoff", "sandbox": "the DHL Parcel NL acceptance API (api-gw-accept.dhlparcel.nl)", "owner": "the Checkout team (#team-checkout)", "secret": "Key Vault secrets dhl-user-id and dhl-api-key"},
    "Exact Online": {"area": "erp", "timeout": "30 s", "retries": "3 retries; Exact's rate limit is 60 calls per minute per division, so calls go through ErpThrottler", "sandbox": "a separate test division (3004417) in the same Exact tenant", "owner": "the Back-office team (#team-backoffice) with finance as business owner", "secret": "Key Vault secret exact-refresh-token, rotated automatically by the token job"},
    "SendGrid": {"area": "email", "timeout": "10 s", "retries": "3 retries; failures are queued in Hangfire for an hour", "sandbox": "sandbox mode (mail_settings.sandbox_mode) in staging", "owner": "the Customer team (#team-customer)", "secret": "Key Vault secret sendgrid-api-key"},
    "Storyblok": {"area": "cms", "timeout": "5 s", "retries": "no retries; the last cached content is served", "sandbox": "the draft version of the same space with a preview token", "owner": "the Storefront team (#team-storefront); editors are in marketing", "secret": "Key Vault secrets storyblok-public-token and storyblok-preview-token"},
    "Azure AI Search": {"area": "search", "timeout": "800 ms for queries, 60 s for indexing batches", "retries": "queries are not retried; indexing batches retry 3 times", "sandbox": "the index products-v3-staging on the same search service", "owner": "the Search team (#team-search)", "secret": "managed identity; no keys in configuration"},
    "Trustpilot": {"area": "reviews", "timeout": "5 s", "retries": "no retries; the nightly import simply runs again", "sandbox": "no sandbox; staging reads production reviews read-only", "owner": "the Storefront team (#team-storefront)", "secret": "Key Vault secret trustpilot-api-key"},
    "Klaviyo": {"area": "marketing", "timeout": "10 s", "retries": "3 retries; the newsletter sync job is idempotent", "sandbox": "a separate Klaviyo test account", "owner": "the Marketing team (#team-marketing)", "secret": "Key Vault secret klaviyo-private-key"},
}

WB_INTEGRATION_ATTRS = [
    ("timeouts", "{name} timeouts and retries", "Calls to {name} use a timeout of {timeout} and {retries}. The Polly pipeline is registered in AddIntegrationClients() in Webshop.Infrastructure.", ["{n} timeout", "{n} retry policy"], "fact"),
    ("sandbox", "{name} test environment", "In staging and locally, {name} is reached through {sandbox}. Never point a developer machine at the production {name} account.", ["{n} sandbox", "{n} test environment"], "project_fact"),
    ("owner", "Who owns the {name} integration", "The {name} integration is owned by {owner}. Incidents with {name} are reported in #webshop-incidents first.", ["{n} integration owner", "who owns {n}"], "project_fact"),
    ("secrets", "{name} credentials location", "{name} credentials: {secret}. App Service reads Key Vault references; locally use dotnet user-secrets with the same key names.", ["{n} credentials", "{n} api key location"], "fact"),
]

WB_JOBS = [
    ("ReindexProducts", "0 2 * * *", "rebuilds the products-v3 search documents", "search", "Takes about 25 minutes; do not run it manually during the day."),
    ("SyncStockFromErp", "*/15 * * * *", "pulls stock levels from Exact Online", "erp", "Skips a run if the previous one is still going (DisableConcurrentExecution)."),
    ("SyncGiftCardBalances", "*/15 * * * *", "refreshes cached gift card balances", "erp", "Only cards used in the last 90 days are refreshed."),
    ("ExportOrdersToErp", "*/5 * * * *", "sends paid orders to Exact Online", "erp", "Orders are exported once; failures land in the failed-exports admin page."),
    ("NightlyOrderExport", "30 1 * * *", "writes the daily order CSV for finance to blob container exports", "reports", "Uses AsSplitQuery to avoid the old timeout."),
    ("ReleaseExpiredReservations", "* * * * *", "frees stock reserved by abandoned checkouts", "default", "Reservation length is Cart:ReservationMinutes."),
    ("SendAbandonedCartEmails", "0 * * * *", "mails customers who left a cart 3 hours ago", "email", "Only with marketing consent; at most one mail per cart."),
    ("ImportTrustpilotReviews", "0 4 * * *", "imports new Trustpilot reviews", "default", "Ratings are averaged per product after the import."),
    ("SyncNewsletterToKlaviyo", "*/10 * * * *", "pushes newsletter subscriptions to Klaviyo", "marketing", "Unsubscribes are pulled back from Klaviyo in the same job."),
    ("DeleteRequestedAccounts", "0 3 * * *", "deletes accounts 14 days after the customer asked", "default", "Orders are kept but anonymised for the 7-year bookkeeping rule."),
    ("RotateExactToken", "0 */6 * * *", "refreshes the Exact Online OAuth token", "erp", "If it fails twice, the ERP jobs stop; it pages the back-office on-call."),
    ("GenerateSitemaps", "0 5 * * *", "writes sitemap.xml files per culture", "default", "Sitemaps are stored in blob container public-sitemaps."),
    ("CleanupHangfireJobs", "0 0 * * 0", "removes succeeded job data older than 7 days", "default", "Keeps the hangfire schema under 2 GB."),
    ("RecalculateBestsellers", "15 * * * *", "recomputes the bestseller list per category", "reports", "Uses the read replica."),
    ("ExpirePromotions", "0 0 * * *", "deactivates promotions whose window has ended", "default", "Also clears the promotion cache."),
    ("CarrierStatusPolling", "*/30 * * * *", "polls PostNL and DHL for shipment status changes", "shipping", "Customers get a mail when a parcel is out for delivery."),
]


def families_wb():
    out = []
    for route, comp, project, render, auth, note, area in WB_PAGES:
        name = comp.removesuffix(".razor")
        out.append(fam(
            f"wb.page.{slug(name)}", "project_fact", f"Route {route} is {comp}",
            f"{route} is rendered by {comp} in {project}. Render mode: {render}. Access: {auth}. {note}",
            [f"route {route}", f"{name.lower()} component"], ["routing", "blazor", area]))
    for flag, desc, prod, stg, owner, note in WB_FLAGS:
        out.append(fam(
            f"wb.flag.{slug(flag)}", "project_fact", f"Feature flag {flag}",
            f"Flag {flag} ({desc}). Production: {prod}; staging: {stg}. Owner: {owner}. {note} Flags are read from Azure App Configuration with Microsoft.FeatureManagement.",
            [f"feature flag {flag.lower()}", f"{desc.lower()} flag"], ["feature-flags", slug(flag.split('.')[0])]))
    for key, prod, stg, note in WB_CONFIG:
        section = key.split(":")[0]
        out.append(fam(
            f"wb.config.{slug(key)}", "fact", f"Setting {key}",
            f"{key} is {prod} in production and {stg} in staging. {note} Values come from App Service settings (double underscores: {key.replace(':', '__')}).",
            [f"{key.lower()} setting"], ["configuration", slug(section)]))
    for entity, table, keydef, cols, note in WB_ENTITIES:
        out.append(fam(
            f"wb.entity.{slug(entity)}", "fact", f"{entity} entity mapping",
            f"{entity} maps to {table}; key: {keydef}. {cols} {note}",
            [f"{entity.lower()} entity", f"{table.lower()} table"], ["ef-core", "data-model"]))
    for name, d in WB_INTEGRATIONS.items():
        for attr, title, content, phrases, kind in WB_INTEGRATION_ATTRS:
            out.append(fam(
                f"wb.int.{slug(name)}.{attr}", kind, title.format(name=name),
                content.format(name=name, **d),
                [p.format(n=name.lower()) for p in phrases], ["integration", slug(name), d["area"]]))
    for job, cron, what, queue, note in WB_JOBS:
        out.append(fam(
            f"wb.job.{slug(job)}", "project_fact", f"Hangfire job {job}",
            f"The recurring Hangfire job {job} {what}. Cron: {cron} (UTC), queue: {queue}. {note}",
            [f"{job.lower()} job", f"{job.lower()} schedule"], ["hangfire", "recurring-jobs"]))
    return out


PF_SERVICES = [
    # name, team, slack, db, pool, queues, concurrency, slo_avail, p95, cpu, mem, hpa, sentry
    ("billing-api", "Billing", "#team-billing", "billing", 20, ["billing.default", "billing.invoices", "billing.dunning"], 4, "99.9", 300, "500m", "1Gi", "3-12", "billing-api"),
    ("accounts", "Identity", "#team-identity", "accounts", 30, ["accounts.default", "accounts.emails"], 4, "99.95", 200, "500m", "768Mi", "4-16", "accounts"),
    ("notifications", "Engagement", "#team-engagement", "notifications", 10, ["notifications.email", "notifications.sms", "notifications.push"], 8, "99.5", 500, "250m", "512Mi", "2-8", "notifications"),
    ("search-indexer", "Search", "#team-search", "catalog (read-only role)", 5, ["search.index", "search.reindex"], 2, "99.0", 0, "1", "2Gi", "1-4", "search-indexer"),
    ("audit-log", "Platform", "#team-platform", "audit", 10, ["audit.ingest"], 4, "99.9", 150, "250m", "512Mi", "2-6", "audit-log"),
    ("reports", "Data Products", "#team-data-products", "billing replica (pg-main-ro)", 8, ["reports.default", "reports.heavy"], 2, "99.0", 2000, "1", "2Gi", "1-3", "reports"),
    ("gateway", "Platform", "#team-platform", "it is stateless", 0, [], 0, "99.95", 80, "500m", "256Mi", "4-20", "gateway"),
    ("payments-worker", "Billing", "#team-billing", "billing", 10, ["payments.capture", "payments.refunds", "payments.webhooks"], 4, "99.9", 0, "250m", "512Mi", "2-6", "payments-worker"),
    ("files", "Platform", "#team-platform", "files", 10, ["files.thumbnails", "files.virus-scan"], 2, "99.5", 400, "500m", "1Gi", "2-6", "files"),
    ("pricing", "Commerce", "#team-commerce", "pricing", 20, ["pricing.recalc"], 4, "99.9", 120, "500m", "768Mi", "3-10", "pricing"),
    ("inventory-sync", "Commerce", "#team-commerce", "inventory", 10, ["inventory.sync", "inventory.reconcile"], 2, "99.5", 0, "250m", "512Mi", "1-4", "inventory-sync"),
    ("webhooks-out", "Integrations", "#team-integrations", "webhooks", 10, ["webhooks.deliver", "webhooks.retry"], 8, "99.5", 0, "250m", "384Mi", "2-8", "webhooks-out"),
    ("subscriptions", "Billing", "#team-billing", "billing", 15, ["subscriptions.renewals"], 2, "99.9", 250, "250m", "512Mi", "2-6", "subscriptions"),
    ("tax-calc", "Commerce", "#team-commerce", "it only calls the tax provider", 0, [], 0, "99.9", 250, "250m", "384Mi", "2-8", "tax-calc"),
]

PF_TABLES = [
    ("billing_invoice", "Billing", "41M rows", "(customer_id, created_at) and partial index on status WHERE status = 'open'", "kept forever (bookkeeping)"),
    ("billing_invoiceline", "Billing", "190M rows", "(invoice_id)", "kept forever"),
    ("billing_payment", "Billing", "38M rows", "unique (psp_reference)", "kept forever"),
    ("accounts_user", "Identity", "6.2M rows", "unique lower(email) via a functional index", "deleted accounts anonymised after 30 days"),
    ("accounts_session", "Identity", "18M rows", "(user_id, expires_at)", "expired rows deleted nightly"),
    ("events_event", "Platform", "2.4B rows, partitioned by month", "(occurred_at) BRIN and (subject_id, occurred_at)", "partitions older than 13 months are detached and archived to S3"),
    ("audit_entry", "Platform", "900M rows, partitioned by month", "GIN (payload jsonb_path_ops) and (actor_id, created_at)", "7 years, then dropped"),
    ("notifications_message", "Engagement", "310M rows", "(recipient_id, created_at)", "90 days"),
    ("notifications_template", "Engagement", "1,200 rows", "unique (key, locale)", "kept forever"),
    ("files_file", "Platform", "55M rows", "unique (sha256) and (owner_id)", "orphaned files purged after 30 days"),
    ("pricing_pricelist", "Commerce", "3,400 rows", "unique (code, valid_from)", "kept forever"),
    ("pricing_price", "Commerce", "74M rows", "(product_id, pricelist_id, valid_from)", "prices older than 2 years archived"),
    ("inventory_stocklevel", "Commerce", "2.1M rows", "unique (sku, warehouse_id)", "current state only"),
    ("inventory_movement", "Commerce", "420M rows, partitioned by quarter", "(sku, created_at)", "3 years"),
    ("webhooks_delivery", "Integrations", "260M rows", "(endpoint_id, created_at) and partial index WHERE status = 'failed'", "30 days"),
    ("subscriptions_subscription", "Billing", "1.8M rows", "(customer_id) and (renews_at) WHERE status = 'active'", "kept forever"),
    ("reports_export", "Data Products", "400k rows", "(requested_by, created_at)", "files expire after 7 days"),
    ("django_q_task", "Platform", "varies", "(started) ", "succeeded tasks older than 14 days are deleted"),
    ("payouts_payout", "Billing", "2.5M rows", "(status, scheduled_for) WHERE status = 'pending'", "kept forever"),
    ("tax_rate", "Commerce", "9,000 rows", "unique (country, region, category, valid_from)", "kept forever"),
]

PF_COMMANDS = [
    ("backfill_invoice_totals", "billing", "recomputes invoice totals in batches", "--batch-size 10000 --sleep 0.5 --dry-run", "Run from the toolbox pod, never from a web pod."),
    ("resend_failed_webhooks", "webhooks", "requeues failed webhook deliveries", "--endpoint <id> --since 2025-01-01", "Receivers must be idempotent; check with the integration owner first."),
    ("anonymise_user", "accounts", "anonymises one user for a GDPR request", "--user-id <id> --ticket <JIRA-123>", "Irreversible; the ticket id is stored in the audit log."),
    ("reindex_catalog", "search", "rebuilds the OpenSearch catalog index", "--alias catalog --swap", "Builds a new index and swaps the alias; takes about 40 minutes."),
    ("detach_old_partitions", "events", "detaches and archives event partitions older than 13 months", "--months 13 --archive s3://acme-archive/events", "Runs monthly from a CronJob; manual runs need a platform review."),
    ("sync_tax_rates", "tax", "pulls tax rates from the provider", "--country NL --dry-run", "Rates take effect on valid_from, not at import."),
    ("rotate_webhook_secrets", "webhooks", "rotates the signing secret of an endpoint", "--endpoint <id> --grace-hours 24", "Both secrets sign during the grace period."),
    ("rebuild_pricelist", "pricing", "recalculates a price list from its rules", "--code <code> --valid-from <date>", "Enqueues pricing.recalc tasks; watch the queue length in Grafana."),
    ("reconcile_stock", "inventory", "compares stock levels with the warehouse system", "--warehouse AMS1 --fix", "Without --fix it only reports differences."),
    ("expire_sessions", "accounts", "logs out users by deleting sessions", "--user-id <id> | --all-before <datetime>", "Use --all-before after a credential leak."),
    ("purge_orphan_files", "files", "removes files not referenced for 30 days", "--older-than 30 --dry-run", "Deletes from S3 too; keep --dry-run on the first run."),
    ("replay_payment_webhooks", "payments", "re-processes PSP webhooks stored in the inbox table", "--from <datetime> --to <datetime>", "Safe to run twice; handlers deduplicate on psp_reference."),
]

PF_RATE_LIMITS = [
    ("POST /api/v2/auth/token", "10 per minute per IP, 5 per minute per username", "Blocks credential stuffing; lockout after 10 failures in 15 minutes."),
    ("POST /api/v2/auth/password-reset", "3 per hour per email", "Always answers 202 so emails cannot be enumerated."),
    ("GET /api/v2/invoices", "600 per minute per token", "Page size at most 200."),
    ("GET /api/v2/invoices/{id}/pdf", "60 per minute per token", "PDFs are rendered once and cached in S3."),
    ("POST /api/v2/payments", "120 per minute per merchant", "Requests need an Idempotency-Key header."),
    ("POST /api/v2/webhooks/endpoints", "20 per hour per account", "Each account may have 10 endpoints."),
    ("GET /api/v2/catalog/search", "1,200 per minute per token", "Served from OpenSearch; no database hit."),
    ("POST /api/v2/files", "100 per minute per user, 50 MB per file", "Virus scan runs asynchronously; files are quarantined until clean."),
    ("POST /api/v2/reports/exports", "10 per hour per user", "Exports run on the reports.heavy queue."),
    ("GET /api/v2/prices", "2,000 per minute per token", "Cached for 60 s at the gateway."),
    ("POST /api/v2/notifications/sms", "30 per minute per account", "SMS costs money; the limit is also enforced by the provider."),
    ("GET /api/v2/audit", "120 per minute per token", "Only for tokens with the audit:read scope."),
    ("POST /api/v2/subscriptions/{id}/cancel", "10 per minute per account", "Cancellation is effective at the end of the period."),
    ("GET /api/v2/stock", "1,000 per minute per token", "Stock is eventually consistent, up to 2 minutes behind."),
]


def families_pf():
    out = []
    for name, team, slack, db, pool, queues, conc, avail, p95, cpu, mem, hpa, sentry in PF_SERVICES:
        s = slug(name)
        if pool:
            dbtext = f"{name} uses the {db} database through PgBouncer with a pool of {pool} server connections; CONN_MAX_AGE = 60 and CONN_HEALTH_CHECKS = True."
        else:
            dbtext = f"{name} has no database of its own ({db}) and keeps no connections to Postgres."
        out.append(fam(f"pf.svc.{s}.db", "project_fact", f"{name} database connections", dbtext,
                       [f"{name} database pool", f"{name} connections"], ["postgres", "pgbouncer", s]))
        if queues:
            qtext = f"{name} workers consume {', '.join(queues)} with --concurrency={conc} and prefetch multiplier 1. Tasks are routed in CELERY_TASK_ROUTES in {s.replace('-', '_')}/celery.py."
        else:
            qtext = f"{name} runs no Celery workers; everything is synchronous in the request. Background work for it goes through another service's queues."
        out.append(fam(f"pf.svc.{s}.celery", "project_fact", f"{name} Celery queues", qtext,
                       [f"{name} celery queues", f"{name} worker concurrency"], ["celery", s]))
        out.append(fam(f"pf.svc.{s}.owner", "project_fact", f"{name} owner and on-call",
                       f"{name} is owned by the {team} team ({slack}). Pages go to the PagerDuty service \"{name}\", escalating to the {team} lead after 15 minutes.",
                       [f"{name} owner", f"{name} on-call"], ["ownership", "on-call", s]))
        latency = f"p95 latency under {p95} ms" if p95 else "no latency objective (asynchronous work), queue age under 5 minutes instead"
        out.append(fam(f"pf.svc.{s}.slo", "standard", f"{name} SLO",
                       f"{name} SLO: {avail}% availability over 30 days and {latency}. Dashboard: Grafana \"{name} / SLO\"; burn-rate alerts at 2% and 5% of the error budget per hour.",
                       [f"{name} slo", f"{name} error budget"], ["slo", "observability", s]))
        out.append(fam(f"pf.svc.{s}.resources", "project_fact", f"{name} pod resources and autoscaling",
                       f"{name} pods request {cpu} CPU and {mem} memory (limit = request for memory). HPA keeps {hpa} replicas, scaling at 70% CPU. Sentry project: {sentry}.",
                       [f"{name} resources", f"{name} replicas"], ["kubernetes", "autoscaling", s]))
    for table, team, size, idx, retention in PF_TABLES:
        out.append(fam(f"pf.table.{table}", "fact", f"Table {table}",
                       f"{table} ({team}) holds about {size}. Main indexes: {idx}. Retention: {retention}.",
                       [f"{table} table", f"{table} indexes"], ["postgres", "data-model", slug(team)]))
    for cmd, app, what, flags, caution in PF_COMMANDS:
        out.append(fam(f"pf.cmd.{cmd}", "procedure", f"manage.py {cmd}",
                       f"manage.py {cmd} ({app} app) {what}. Usage: manage.py {cmd} {flags}. {caution}",
                       [f"manage.py {cmd}", f"{cmd.replace('_', ' ')}"], ["management-commands", slug(app)], memory_type="procedural"))
    for endpoint, limit, note in PF_RATE_LIMITS:
        method, path = endpoint.split(" ", 1)
        out.append(fam(f"pf.rl.{slug(endpoint)}", "standard", f"Rate limit for {endpoint}",
                       f"{endpoint} is limited to {limit} at the gateway (django-ratelimit keys in settings.RATE_LIMITS). Over the limit it answers 429 with Retry-After. {note}",
                       [f"rate limit {path.lower()}", f"{method.lower()} {path.lower()} limit"], ["rate-limits", "api"]))
    return out


FE_COMPONENTS = [
    ("DataTable", "tabular data with sorting, column resizing and server-side pagination", "simple key/value lists (use DescriptionList)"),
    ("DescriptionList", "read-only key/value details such as an order summary", "editable forms"),
    ("Toast", "short confirmations after an action (toast.success('Saved'))", "errors that need a decision (use AlertDialog)"),
    ("AlertDialog", "confirming destructive actions such as cancelling an order", "informational messages"),
    ("Sheet", "side panels for editing a record without leaving the list", "multi-step flows (use a route)"),
    ("Combobox", "searchable selection from long lists (countries, products)", "fewer than 8 options (use Select)"),
    ("Select", "choosing one of a few fixed options", "long or searchable lists"),
    ("DateRangePicker", "picking a from/to range in reports", "single dates (use DateField)"),
    ("DateField", "a single date with keyboard entry and a calendar popover", "date ranges"),
    ("Badge", "status labels such as Paid, Due, Overdue", "counts on icons (use CountDot)"),
    ("CountDot", "small unread counters on icons", "status text"),
    ("EmptyState", "empty lists with an illustration and a primary action", "loading states (use Skeleton)"),
    ("Skeleton", "loading placeholders shaped like the final content", "spinners inside buttons (use Button loading)"),
    ("Button", "all actions; loading and disabled states built in", "navigation (use Link)"),
    ("Link", "navigation between routes, wraps the router Link", "actions that change data"),
    ("Tabs", "switching between sibling views of one record", "top-level navigation"),
    ("Stepper", "multi-step flows like returns and onboarding", "tabs that can be visited in any order"),
    ("Tooltip", "short hints on icon-only buttons", "essential information (it is invisible on touch)"),
    ("Popover", "small interactive content anchored to a trigger", "long forms"),
    ("Pagination", "page navigation under lists when infinite scroll is not wanted", "tables (DataTable has its own)"),
    ("FileDropzone", "uploading invoices and attachments with drag and drop", "avatar uploads (use AvatarUpload)"),
    ("AvatarUpload", "profile pictures with cropping", "documents"),
    ("CurrencyInput", "money amounts with locale formatting and minor units", "plain numbers"),
    ("Banner", "page-wide notices such as maintenance windows", "per-field validation"),
    ("CommandMenu", "the Cmd+K quick navigation", "regular menus"),
]

FE_HOOKS = [
    ("useOrders", "src/features/orders/api/useOrders.ts", "GET /v2/orders", "30 s", "keepPreviousData while paging"),
    ("useOrder", "src/features/orders/api/useOrder.ts", "GET /v2/orders/{id}", "30 s", "seeded from the list cache with initialData"),
    ("useUpdateOrder", "src/features/orders/api/useUpdateOrder.ts", "PATCH /v2/orders/{id}", "-", "invalidates orderKeys.lists() on success"),
    ("useCancelOrder", "src/features/orders/api/useCancelOrder.ts", "POST /v2/orders/{id}/cancel", "-", "optimistic update with rollback in onError"),
    ("useInvoices", "src/features/billing/api/useInvoices.ts", "GET /v2/invoices", "60 s", "filters are part of the query key"),
    ("useInvoicePdf", "src/features/billing/api/useInvoicePdf.ts", "GET /v2/invoices/{id}/pdf", "5 min", "returns a blob URL that must be revoked on unmount"),
    ("usePaymentMethods", "src/features/billing/api/usePaymentMethods.ts", "GET /v2/payment-methods", "5 min", "refetched after returning from the PSP page"),
    ("useSubscription", "src/features/billing/api/useSubscription.ts", "GET /v2/subscriptions/current", "5 min", "null when the customer has no plan"),
    ("useCurrentUser", "src/features/account/api/useCurrentUser.ts", "GET /v2/me", "Infinity", "cleared on logout by queryClient.clear()"),
    ("useUpdateProfile", "src/features/account/api/useUpdateProfile.ts", "PATCH /v2/me", "-", "updates the useCurrentUser cache with setQueryData"),
    ("useAddresses", "src/features/account/api/useAddresses.ts", "GET /v2/me/addresses", "5 min", "sorted with the default address first"),
    ("useReturns", "src/features/returns/api/useReturns.ts", "GET /v2/returns", "30 s", "polls every 10 s while a return is being processed"),
    ("useCreateReturn", "src/features/returns/api/useCreateReturn.ts", "POST /v2/returns", "-", "sends an Idempotency-Key generated when the form opens"),
    ("useNotifications", "src/features/inbox/api/useNotifications.ts", "GET /v2/notifications", "15 s", "uses useInfiniteQuery with a cursor"),
    ("useMarkNotificationRead", "src/features/inbox/api/useMarkNotificationRead.ts", "POST /v2/notifications/{id}/read", "-", "optimistic; no refetch"),
    ("useProductSearch", "src/features/catalog/api/useProductSearch.ts", "GET /v2/catalog/search", "60 s", "debounced by 250 ms in the component, not in the hook"),
    ("useProduct", "src/features/catalog/api/useProduct.ts", "GET /v2/catalog/products/{sku}", "10 min", "prefetched on hover in product lists"),
    ("useStock", "src/features/catalog/api/useStock.ts", "GET /v2/stock?sku=", "20 s", "batched: up to 50 SKUs per request"),
    ("useFeatureFlags", "src/lib/flags/useFeatureFlags.ts", "GET /v2/flags", "10 min", "defaults to all-off while loading"),
    ("useUploadFile", "src/features/files/api/useUploadFile.ts", "POST /v2/files", "-", "reports progress through an XMLHttpRequest, not fetch"),
]

FE_ROUTES = [
    ("/orders", "orders", "Orders team", "signed-in customer"),
    ("/orders/:orderId", "orders", "Orders team", "signed-in customer, own orders"),
    ("/returns", "returns", "Orders team", "signed-in customer"),
    ("/returns/new/:orderId", "returns", "Orders team", "signed-in customer, order delivered less than 30 days ago"),
    ("/billing/invoices", "billing", "Billing team", "signed-in customer with billing permission"),
    ("/billing/payment-methods", "billing", "Billing team", "account owner only"),
    ("/billing/subscription", "billing", "Billing team", "account owner only"),
    ("/account/profile", "account", "Identity team", "signed-in customer"),
    ("/account/security", "account", "Identity team", "signed-in customer, recent login within 10 minutes"),
    ("/account/addresses", "account", "Identity team", "signed-in customer"),
    ("/account/team", "account", "Identity team", "account owner or admin"),
    ("/inbox", "inbox", "Engagement team", "signed-in customer"),
    ("/catalog", "catalog", "Commerce team", "anyone"),
    ("/catalog/:sku", "catalog", "Commerce team", "anyone"),
    ("/files", "files", "Platform team", "signed-in customer"),
    ("/reports", "reports", "Data Products team", "account admin"),
    ("/login", "auth", "Identity team", "anonymous only"),
    ("/onboarding", "onboarding", "Growth team", "new accounts in their first 14 days"),
]

FE_ESLINT = [
    ("@typescript-eslint/no-explicit-any", "error", "use unknown and narrow, or a zod schema"),
    ("@typescript-eslint/no-floating-promises", "error", "unhandled promises hid failed saves; await them or mark with void"),
    ("react-hooks/exhaustive-deps", "error", "missing dependencies caused stale closures in filters"),
    ("react-hooks/rules-of-hooks", "error", "hooks after early returns crash at runtime"),
    ("no-restricted-imports (moment, dayjs, lodash)", "error", "use date-fns and native array methods or lodash-es per function"),
    ("import/no-cycle", "error", "cycles broke lazy loading of routes"),
    ("boundaries/element-types", "error", "features may only import other features through index.ts"),
    ("jsx-a11y/no-autofocus", "warn", "autofocus is allowed only in dialogs"),
    ("jsx-a11y/click-events-have-key-events", "error", "clickable divs must be buttons"),
    ("@tanstack/query/exhaustive-deps", "error", "every variable used in queryFn must be in the query key"),
    ("no-console", "error", "use the logger in src/lib/log.ts; console is stripped in production anyway"),
    ("react/jsx-no-leaked-render", "error", "{count && <Badge/>} renders 0; use count > 0 &&"),
    ("@typescript-eslint/consistent-type-imports", "error", "type-only imports keep chunks smaller"),
    ("testing-library/prefer-screen-queries", "error", "query through screen, not the render result"),
]

FE_ENV = [
    ("VITE_API_URL", "base URL of the public API", "http://localhost:5173/api in dev (proxied), https://api.acme.com/v2 in production"),
    ("VITE_OIDC_AUTHORITY", "Keycloak realm URL", "https://login.acme.com/realms/acme-customers"),
    ("VITE_OIDC_CLIENT_ID", "OIDC client id", "portal-spa"),
    ("VITE_SENTRY_DSN", "Sentry DSN of the portal project", "empty locally, which disables Sentry"),
    ("VITE_SENTRY_ENV", "environment tag in Sentry", "development, staging or production"),
    ("VITE_RELEASE", "release name for Sentry and the footer", "set by CI to the git SHA"),
    ("VITE_GTM_ID", "Google Tag Manager container", "GTM-P4K2XQ in production, empty elsewhere"),
    ("VITE_FLAGS_OVERRIDE", "comma-separated flags forced on in dev", "empty by default, e.g. newInbox,returnsV2"),
    ("VITE_MAPS_KEY", "browser key for the store map tiles", "restricted by HTTP referrer"),
    ("VITE_CDN_URL", "base URL for product images", "https://img.acme.com"),
    ("VITE_SUPPORT_CHAT_ID", "support chat widget id", "only set in production"),
    ("VITE_MSW", "turns on MSW mocks in the browser", "true only for pnpm dev:mock"),
]

FE_TOKENS = [
    ("color.text.primary", "#111827", "body text"),
    ("color.text.muted", "#6B7280", "secondary text and captions"),
    ("color.status.success", "#15803D", "Paid and Delivered badges"),
    ("color.status.warning", "#B45309", "Due soon badges"),
    ("color.status.danger", "#B91C1C", "Overdue badges and destructive buttons"),
    ("radius.md", "8px", "cards and inputs"),
    ("radius.full", "9999px", "badges and avatars"),
    ("space.page-gutter", "24px on desktop, 16px on mobile", "page padding"),
    ("font.family.sans", "Inter, system-ui", "all text"),
    ("shadow.overlay", "0 8px 24px rgb(0 0 0 / 0.12)", "sheets, popovers and dialogs"),
    ("breakpoint.md", "768px", "switch from the mobile to the desktop layout"),
    ("z.toast", "60", "toasts above dialogs (z.dialog is 50)"),
]


def families_fe():
    out = []
    for comp, use, avoid in FE_COMPONENTS:
        out.append(fam(f"fe.ui.{slug(comp)}", "standard", f"@acme/ui {comp}: when to use it",
                       f"Use <{comp}> from @acme/ui for {use}. Not for {avoid}. Props and examples are in Storybook under UI/{comp}.",
                       [f"{comp.lower()} component", f"when to use {comp.lower()}"], ["ui", "components"]))
    for hook, path, endpoint, stale, note in FE_HOOKS:
        stale_text = "It is a mutation." if stale == "-" else f"staleTime is {stale}."
        feature = path.split("/")[2] if path.startswith("src/features/") else "lib"
        out.append(fam(f"fe.hook.{slug(hook)}", "project_fact", f"{hook} hook",
                       f"{hook} lives in {path} and wraps {endpoint}. {stale_text} Note: {note}.",
                       [f"{hook.lower()} hook", f"{endpoint.lower()} hook"], ["tanstack-query", "api", feature]))
    for path, feature, team, guard in FE_ROUTES:
        out.append(fam(f"fe.route.{slug(path) or 'root'}", "project_fact", f"Route {path}",
                       f"{path} belongs to src/features/{feature} (owner: {team}). Access: {guard}. The route module is lazy-loaded from src/routes.tsx.",
                       [f"route {path}", f"{path} owner"], ["routing", feature]))
    for rule, level, why in FE_ESLINT:
        name = rule.split(" ")[0]
        out.append(fam(f"fe.lint.{slug(name)}", "standard", f"ESLint rule {name}",
                       f"{rule} is set to {level}: {why}. Disabling it inline needs an eslint-disable-next-line comment with a reason.",
                       [f"{name.lower()} rule"], ["eslint", "linting"]))
    for var, purpose, values in FE_ENV:
        out.append(fam(f"fe.env.{slug(var)}", "fact", f"Environment variable {var}",
                       f"{var}: {purpose}. Values: {values}. Declared in src/vite-env.d.ts and read via import.meta.env.",
                       [f"{var.lower()}"], ["configuration", "env-vars"]))
    for token, value, usage in FE_TOKENS:
        out.append(fam(f"fe.token.{slug(token)}", "fact", f"Design token {token}",
                       f"Design token {token} = {value}; used for {usage}. Tokens come from @acme/tokens; do not hard-code the value.",
                       [f"token {token}", f"{token} value"], ["design", "tokens"]))
    return out


DP_DAGS = [
    # dag_id, schedule, pool, sla, owner, what, failure note
    ("ingest_stripe_charges", "every hour at :15", "stripe_api", "45 min", "data-eng", "copies Stripe charges and refunds not covered by Fivetran into RAW.STRIPE_EXTRA", "Safe to rerun; loads are keyed on charge id."),
    ("ingest_hubspot_engagements", "every 6 hours", "hubspot_api", "none", "data-eng", "loads HubSpot engagements (calls, meetings) into RAW.HUBSPOT_EXTRA", "HubSpot's daily API quota is shared with marketing tools; check the quota dashboard before rerunning."),
    ("ingest_app_events", "every 10 minutes", "default_pool", "20 min", "data-eng", "copies mobile and web events from S3 (Snowpipe backlog check) into RAW.EVENTS", "If Snowpipe is behind, the DAG only alerts; it never loads files itself."),
    ("ingest_zendesk_extras", "daily at 03:00 UTC", "zendesk_api", "none", "data-eng", "pulls ticket metrics and CSAT scores missing from Fivetran", "Zendesk returns 429 above 700 requests per minute."),
    ("ingest_exchange_rates", "daily at 05:30 UTC", "default_pool", "1 hour", "data-eng", "loads ECB reference rates into RAW.FX.RATES", "Weekends have no ECB rates; the model forward-fills Friday."),
    ("ingest_google_ads", "daily at 04:00 UTC", "google_ads_api", "none", "marketing-analytics", "loads campaign costs from the Google Ads API", "Costs for the last 3 days are reloaded because Google adjusts them."),
    ("ingest_meta_ads", "daily at 04:30 UTC", "meta_ads_api", "none", "marketing-analytics", "loads Meta ads spend and conversions", "Tokens expire every 60 days; renewal is in the marketing-analytics runbook."),
    ("ingest_warehouse_wms", "every 30 minutes", "default_pool", "1 hour", "ops-analytics", "copies stock movements from the warehouse system's SFTP drop", "Files arrive as CSV with a semicolon separator and Latin-1 encoding."),
    ("ingest_erp_invoices", "daily at 02:00 UTC", "erp_api", "2 hours", "finance-analytics", "loads invoices and credit notes from the ERP", "Month-end closing runs twice: on the 1st and the 3rd working day."),
    ("ingest_postgres_billing", "every hour at :05", "default_pool", "30 min", "data-eng", "replicates billing tables from the platform read replica with an incremental extract on updated_at", "Uses the platform replica pg-main-ro; never connect to the primary."),
    ("dbt_hourly", "every hour at :40", "dbt", "50 min", "data-eng", "runs dbt build for models tagged hourly", "If it overlaps the next run, the next run is skipped (max_active_runs=1)."),
    ("dbt_daily", "daily at 04:30 UTC", "dbt", "2 hours", "data-eng", "runs snapshots, then dbt build for everything not tagged hourly", "A failed model does not stop unrelated branches (--fail-fast is off)."),
    ("dbt_source_freshness", "every 30 minutes", "dbt", "none", "data-eng", "runs dbt source freshness and posts stale sources to #data-alerts", "Warnings only post once per source per day."),
    ("finance_daily", "daily at 05:00 Europe/Amsterdam", "dbt", "see the finance freshness target", "finance-analytics", "builds fct_revenue and fct_invoices and refreshes the finance dashboards", "Finance must be told in #finance-data if it is late."),
    ("exec_dashboard", "daily at 06:00 Europe/Amsterdam", "default_pool", "1 hour", "data-products", "refreshes the executive Looker dashboard cache", "Runs after finance_daily through an ExternalTaskSensor (deferrable)."),
    ("reverse_etl_hubspot", "every 2 hours", "hubspot_api", "none", "marketing-analytics", "syncs customer health scores back to HubSpot", "Writes only changed rows; a full resync needs marketing approval."),
    ("reverse_etl_zendesk", "daily at 06:30 UTC", "zendesk_api", "none", "ops-analytics", "pushes lifetime value and plan to Zendesk user fields", "Zendesk user fields must exist first; the task fails on unknown fields."),
    ("ml_churn_scoring", "daily at 07:00 UTC", "ml", "none", "data-science", "scores churn risk with the model from the registry and writes ANALYTICS.ML.CHURN_SCORES", "Uses DS_WH and a KubernetesPodOperator with 8 GiB memory."),
    ("ml_demand_forecast", "weekly on Monday 03:00 UTC", "ml", "none", "data-science", "forecasts demand per SKU for the next 8 weeks", "Takes about 90 minutes; do not backfill more than 4 weeks at once."),
    ("gdpr_deletions", "daily at 01:00 UTC", "default_pool", "none", "data-eng", "deletes or masks personal data for GDPR requests across RAW and ANALYTICS", "Never disable it; legal deadline is 30 days."),
    ("snowflake_cost_report", "daily at 08:00 UTC", "default_pool", "none", "data-eng", "posts yesterday's credits per warehouse and query tag to #data-costs", "Reads SNOWFLAKE.ACCOUNT_USAGE, which lags up to 3 hours."),
    ("s3_stage_cleanup", "daily at 00:30 UTC", "default_pool", "none", "data-eng", "deletes staged files older than 14 days from s3://acme-airflow-stage", "Keeps files of failed runs for 30 days."),
    ("export_partner_feeds", "daily at 06:00 UTC", "sftp", "1 hour", "data-products", "writes product and price feeds to partner SFTP servers", "Each partner has its own connection id sftp_<partner>."),
    ("looker_pdt_trigger", "every hour at :55", "default_pool", "none", "data-products", "triggers Looker datagroups after dbt_hourly finishes", "Uses the Looker API credentials in connection looker_api."),
]

DP_MODELS = [
    # model, materialization, grain/unique key, schema, upstream, note
    ("stg_stripe__charges", "view", "charge_id", "STAGING", "RAW.STRIPE.CHARGE", "Amounts converted from cents to decimals here."),
    ("stg_stripe__refunds", "view", "refund_id", "STAGING", "RAW.STRIPE.REFUND", "Refund status 'succeeded' only counts for revenue."),
    ("stg_salesforce__accounts", "view", "account_id", "STAGING", "RAW.SALESFORCE.ACCOUNT", "Deleted accounts (is_deleted = true) are filtered out."),
    ("stg_zendesk__tickets", "view", "ticket_id", "STAGING", "RAW.ZENDESK.TICKET", "Custom field ids are mapped to names with a seed file."),
    ("stg_app__events", "incremental (append)", "event_id", "STAGING", "RAW.EVENTS.APP_EVENTS", "Parses the VARIANT payload; unknown event names go to a quarantine model."),
    ("stg_billing__invoices", "incremental (merge)", "invoice_id", "STAGING", "RAW.BILLING.INVOICES", "Source is the hourly Postgres extract."),
    ("int_orders_enriched", "ephemeral", "order_id", "-", "stg_shop__orders, stg_stripe__charges", "Joins payment status onto orders."),
    ("int_sessions_stitched", "incremental (merge)", "session_id", "INTERMEDIATE", "stg_app__events", "Stitches anonymous and logged-in events by device id; 30-minute inactivity window."),
    ("fct_orders", "incremental (merge)", "order_id", "MARTS", "int_orders_enriched", "One row per order; the 3-day lookback handles late updates."),
    ("fct_order_lines", "incremental (merge)", "order_line_id", "MARTS", "stg_shop__order_lines", "Surrogate key from order_id and line_no."),
    ("fct_payments", "incremental (merge)", "payment_id", "MARTS", "stg_stripe__charges, stg_adyen__payments", "Union of both PSPs with a psp column."),
    ("fct_refunds", "incremental (merge)", "refund_id", "MARTS", "stg_stripe__refunds, stg_adyen__refunds", "Partial refunds are separate rows."),
    ("fct_revenue", "table", "date_day, market, channel", "MARTS", "fct_orders, fct_refunds", "Owned by finance analytics."),
    ("fct_invoices", "incremental (merge)", "invoice_id", "MARTS", "stg_billing__invoices, stg_erp__invoices", "Credit notes are negative invoices."),
    ("fct_events", "incremental (append)", "event_id", "MARTS", "stg_app__events", "About 4 billion rows, clustered by (event_date, event_name)."),
    ("fct_sessions", "incremental (merge)", "session_id", "MARTS", "int_sessions_stitched", "Used by the product analytics dashboards."),
    ("fct_support_tickets", "incremental (merge)", "ticket_id", "MARTS", "stg_zendesk__tickets", "First response time excludes weekends."),
    ("fct_marketing_spend", "table", "date_day, channel, campaign_id", "MARTS", "stg_google_ads__costs, stg_meta__spend", "Costs are in EUR using the daily ECB rate."),
    ("fct_stock_movements", "incremental (append)", "movement_id", "MARTS", "stg_wms__movements", "Negative quantities are outbound."),
    ("dim_customers", "table", "customer_id", "MARTS", "stg_shop__customers, stg_salesforce__accounts", "PII columns tagged for masking."),
    ("dim_customers_history", "snapshot", "customer_id, dbt_valid_from", "SNAPSHOTS", "stg_shop__customers", "Timestamp strategy on updated_at."),
    ("dim_products", "table", "product_id", "MARTS", "stg_shop__products", "Category path flattened into category_l1..l3."),
    ("dim_products_history", "snapshot", "product_id, dbt_valid_from", "SNAPSHOTS", "stg_shop__products", "Check strategy on price, status and category_id."),
    ("dim_dates", "table", "date_day", "MARTS", "dbt_utils.date_spine", "Includes Dutch public holidays and ISO weeks."),
    ("dim_markets", "table", "market_code", "MARTS", "seed markets.csv", "NL, BE, DE with currency and VAT rates."),
    ("dim_campaigns", "table", "campaign_id", "MARTS", "stg_google_ads__campaigns, stg_meta__campaigns", "Campaign names parsed into channel and objective."),
    ("agg_daily_kpis", "table", "date_day, market", "MARTS", "fct_orders, fct_sessions", "Feeds the executive dashboard."),
    ("agg_cohort_retention", "table", "cohort_month, months_since_first_order", "MARTS", "fct_orders, dim_customers", "Rebuilt daily; cohorts by first paid order."),
    ("ml_churn_features", "table", "customer_id", "ML", "fct_orders, fct_support_tickets, fct_sessions", "Feature set version 3; changes need data science review."),
    ("rpt_partner_feed", "view", "product_id, partner", "EXPORTS", "dim_products, fct_stock_movements", "Read by export_partner_feeds."),
]

DP_SOURCES = [
    ("stripe.charge", "created", "30 minutes", "2 hours"),
    ("stripe.refund", "created", "30 minutes", "2 hours"),
    ("salesforce.account", "system_modstamp", "2 hours", "6 hours"),
    ("salesforce.opportunity", "system_modstamp", "2 hours", "6 hours"),
    ("zendesk.ticket", "updated_at", "2 hours", "12 hours"),
    ("hubspot.contact", "_fivetran_synced", "8 hours", "24 hours"),
    ("events.app_events", "received_at", "20 minutes", "1 hour"),
    ("billing.invoices", "updated_at", "90 minutes", "4 hours"),
    ("erp.invoices", "_loaded_at", "26 hours", "48 hours"),
    ("wms.movements", "file_timestamp", "1 hour", "3 hours"),
    ("fx.rates", "rate_date", "3 days", "5 days"),
    ("google_ads.costs", "_loaded_at", "26 hours", "48 hours"),
    ("meta.spend", "_loaded_at", "26 hours", "48 hours"),
    ("shop.orders", "updated_at", "1 hour", "3 hours"),
]

DP_WAREHOUSES = [
    ("TRANSFORM_WH", "dbt and Airflow transformations", "role TRANSFORMER", "resource monitor RM_TRANSFORM, 900 credits per month"),
    ("REPORTING_WH", "Looker and other BI tools", "role REPORTER", "multi-cluster 1-3, scaling policy STANDARD"),
    ("ADHOC_WH", "people exploring data in worksheets and notebooks", "role ANALYST", "X-SMALL, statement timeout 1 hour"),
    ("DS_WH", "data science training and scoring jobs", "role DATA_SCIENTIST", "MEDIUM, resource monitor RM_DS 300 credits per month"),
    ("LOADER_WH", "Fivetran and custom loaders", "role LOADER", "X-SMALL, auto_suspend 60"),
    ("REVERSE_ETL_WH", "reverse ETL syncs to HubSpot and Zendesk", "role REVERSE_ETL", "X-SMALL"),
    ("CI_WH", "dbt slim CI builds for pull requests", "role CI_RUNNER", "SMALL, statement timeout 30 minutes"),
]

DP_ROLES = [
    ("LOADER", "write RAW", "Fivetran and Airflow ingestion"),
    ("TRANSFORMER", "read RAW, write STAGING, INTERMEDIATE, MARTS, SNAPSHOTS", "dbt in Airflow"),
    ("REPORTER", "read MARTS", "Looker and other BI tools"),
    ("ANALYST", "read STAGING and MARTS, masked PII", "analysts in worksheets"),
    ("PII_READER", "read PII columns in clear text", "people with an approved access ticket (granted for 30 days)"),
    ("DATA_SCIENTIST", "read MARTS, write ML", "data science"),
    ("CI_RUNNER", "read RAW, write PR schemas in ANALYTICS_CI", "dbt slim CI"),
    ("REVERSE_ETL", "read MARTS.REVERSE_ETL views only", "reverse ETL DAGs"),
]


def families_dp():
    out = []
    for dag, sched, pool, sla, owner, what, note in DP_DAGS:
        sla_text = "no SLA" if sla == "none" else f"SLA {sla}"
        out.append(fam(f"dp.dag.{dag}", "project_fact", f"DAG {dag}",
                       f"{dag} {what}. Schedule: {sched}; pool: {pool}; {sla_text}; owner: {owner}.",
                       [f"dag {dag}", f"{dag} schedule"], ["airflow", "dags", slug(owner)]))
        out.append(fam(f"dp.dagrun.{dag}", "procedure", f"When {dag} fails",
                       f"If {dag} fails: read the task log link in #data-alerts, clear the failed task (not the whole run) after fixing the cause. {note}",
                       [f"{dag} failure", f"rerun {dag}"], ["airflow", "runbook", slug(owner)], memory_type="procedural"))
    for model, mat, key, schema, upstream, note in DP_MODELS:
        out.append(fam(f"dp.model.{model}", "fact", f"dbt model {model}",
                       f"{model} is materialized as {mat} in {schema}; grain/unique key: {key}. Built from {upstream}. {note}",
                       [f"{model} model", f"{model} grain"], ["dbt", "models", model.split("_")[0]]))
    for src, field, warn, err in DP_SOURCES:
        out.append(fam(f"dp.src.{slug(src)}", "standard", f"Freshness of source {src}",
                       f"Source {src} has loaded_at_field {field}; freshness warns after {warn} and errors after {err}. Thresholds live in models/sources/{src.split('.')[0]}.yml.",
                       [f"{src} freshness", f"{src} source"], ["dbt", "freshness", slug(src.split('.')[0])]))
    for wh, use, role, conf in DP_WAREHOUSES:
        out.append(fam(f"dp.wh.{slug(wh)}", "project_fact", f"Warehouse {wh}",
                       f"{wh} is for {use}; used by {role}. Settings: {conf}.",
                       [f"{wh.lower()} warehouse", f"{wh.lower()} settings"], ["snowflake", "warehouses"]))
    for role, grants, who in DP_ROLES:
        out.append(fam(f"dp.role.{slug(role)}", "fact", f"Snowflake role {role}",
                       f"Role {role} can {grants}; it is used by {who}. Grants are managed in the permifrost spec (snowflake/roles.yml), never by hand.",
                       [f"{role.lower()} role", f"{role.lower()} grants"], ["snowflake", "permissions"]))
    return out


MB_SCREENS = [
    # screen, android module, ios package, deep link, note
    ("Home", ":feature-home", "HomeFeature", "acme://home", "Content blocks come from the CMS endpoint /v2/app/home and are cached for 10 minutes."),
    ("Search", ":feature-search", "SearchFeature", "acme://search?q=", "Typeahead calls /v2/catalog/suggest after 2 characters, debounced 250 ms."),
    ("ProductDetail", ":feature-catalog", "CatalogFeature", "https://links.acme.app/p/{sku}", "Stock is refreshed when the screen resumes."),
    ("Category", ":feature-catalog", "CatalogFeature", "acme://c/{slug}", "Paging 3 on Android, 40 items per page."),
    ("Cart", ":feature-cart", "CartFeature", "acme://cart", "Cart rules come from the KMP :shared module."),
    ("Checkout", ":feature-checkout", "CheckoutFeature", "none (only from the cart)", "Still uses Gson models; 3DS opens in Custom Tabs / ASWebAuthenticationSession."),
    ("OrderHistory", ":feature-orders", "OrdersFeature", "acme://orders", "Shows 20 orders per page, newest first."),
    ("OrderDetail", ":feature-orders", "OrdersFeature", "https://links.acme.app/o/{orderId}", "Track-and-trace opens the carrier page in a browser tab."),
    ("ReturnRequest", ":feature-returns", "ReturnsFeature", "https://links.acme.app/r/{returnId}", "Return requests are queued offline with an idempotency key."),
    ("Wishlist", ":feature-wishlist", "WishlistFeature", "acme://wishlist", "Guests keep the list locally until login, then it is merged."),
    ("Account", ":feature-account", "AccountFeature", "acme://account", "Shows the loyalty card barcode when Loyalty is enabled."),
    ("Addresses", ":feature-account", "AccountFeature", "acme://account/addresses", "Postcode lookup only for NL addresses."),
    ("Login", ":feature-auth", "AuthFeature", "acme://login", "Uses AppAuth (Android) / ASWebAuthenticationSession (iOS) against Keycloak."),
    ("Onboarding", ":feature-onboarding", "OnboardingFeature", "none", "Shown once; the flag lives in DataStore / UserDefaults."),
    ("StoreLocator", ":feature-stores", "StoresFeature", "acme://stores", "Uses Google Maps on Android and MapKit on iOS."),
    ("Notifications", ":feature-inbox", "InboxFeature", "acme://inbox", "Push permission is asked here, never at first launch."),
    ("Settings", ":feature-settings", "SettingsFeature", "acme://settings", "Contains the analytics consent toggles."),
    ("LoyaltyCard", ":feature-loyalty", "LoyaltyFeature", "acme://loyalty", "Barcode brightness is raised to maximum while shown."),
    ("Scanner", ":feature-scanner", "ScannerFeature", "acme://scan", "CameraX + ML Kit on Android, VisionKit DataScannerViewController on iOS."),
    ("GiftCards", ":feature-giftcards", "GiftCardsFeature", "acme://giftcards", "Balance checks are rate limited to 5 per minute."),
    ("Reviews", ":feature-reviews", "ReviewsFeature", "acme://p/{sku}/reviews", "Read-only; reviews come from Trustpilot."),
    ("Help", ":feature-help", "HelpFeature", "acme://help", "Articles are rendered from Markdown with a native renderer, no WebView."),
]

MB_EVENTS = [
    ("app_opened", "the app comes to the foreground", "source (cold, warm, push, deeplink)"),
    ("product_viewed", "a product detail screen is shown", "sku, category_id, price, in_stock"),
    ("search_performed", "a search returns results", "query_length, result_count, used_suggestion"),
    ("add_to_cart", "a product is added to the cart", "sku, quantity, price, source_screen"),
    ("cart_viewed", "the cart screen opens", "item_count, cart_value"),
    ("checkout_started", "the user taps Checkout", "item_count, cart_value, is_guest"),
    ("payment_method_selected", "a payment method is chosen", "method"),
    ("purchase_completed", "the order confirmation is shown", "order_id, value, currency, item_count"),
    ("coupon_applied", "a coupon code is accepted", "coupon_type (no code text)"),
    ("coupon_rejected", "a coupon code is refused", "reason"),
    ("wishlist_added", "an item is saved to the wishlist", "sku"),
    ("return_started", "the return flow opens", "order_id, days_since_delivery"),
    ("return_submitted", "a return request is sent", "order_id, item_count, reason"),
    ("push_opened", "a push notification is tapped", "campaign_id, type"),
    ("push_permission_result", "the OS permission prompt is answered", "granted"),
    ("login_completed", "login succeeds", "method (password, apple, google)"),
    ("signup_completed", "an account is created", "method"),
    ("store_locator_used", "the store list or map is shown", "view (list, map), has_location_permission"),
    ("barcode_scanned", "the scanner recognises a product barcode", "found (true/false)"),
    ("loyalty_card_shown", "the loyalty barcode is displayed", "none"),
    ("review_list_viewed", "the reviews screen opens", "sku, review_count"),
    ("share_tapped", "the share sheet is opened for a product", "sku, target (only on Android)"),
    ("address_added", "a new address is saved", "country"),
    ("app_rating_prompt_shown", "the in-app review prompt is requested", "trigger"),
]

MB_REMOTE_CONFIG = [
    ("checkout_apple_pay_enabled", "true", "shows Apple Pay in checkout on iOS"),
    ("checkout_google_pay_enabled", "true", "shows Google Pay in checkout on Android"),
    ("min_supported_version_android", "5.40.0", "below this version the app shows a forced-update screen"),
    ("min_supported_version_ios", "5.40.0", "below this version the app shows a forced-update screen"),
    ("home_layout_variant", "\"b\"", "A/B test of the home feed layout"),
    ("search_suggestions_enabled", "true", "turns typeahead suggestions on"),
    ("returns_qr_enabled", "true", "offers QR-code drop-off in the return flow"),
    ("loyalty_enabled", "false", "shows the loyalty card and points"),
    ("rating_prompt_min_orders", "3", "number of completed orders before asking for a store rating"),
    ("push_prompt_after_days", "2", "days after install before the push permission pre-prompt"),
    ("scanner_enabled", "true", "shows the barcode scanner entry point"),
    ("maintenance_banner_text", "\"\"", "non-empty text shows a banner on every screen"),
    ("cart_reservation_minutes", "20", "countdown shown in checkout while stock is reserved"),
    ("image_quality_low_data", "60", "JPEG quality used when the OS reports a metered connection"),
    ("offline_queue_max_age_hours", "48", "queued offline actions older than this are dropped with a notice"),
    ("giftcards_enabled", "true", "shows gift card balance checks"),
    ("reviews_enabled", "true", "shows Trustpilot reviews on product screens"),
    ("store_locator_radius_km", "25", "default search radius for nearby stores"),
]

MB_MODULES = [
    (":core:network", "Platform squad", "OkHttp client, auth interceptor, certificate pinning for api.acme.com"),
    (":core:database", "Platform squad", "Room database; migrations must have tests in MigrationTest"),
    (":core:analytics", "Growth squad", "Firebase Analytics wrapper; events must exist in the tracking plan"),
    (":core:designsystem", "Design system squad", "Compose theme, typography and components; mirrors AcmeUI on iOS"),
    (":shared", "Commerce squad", "KMP business logic: pricing, cart validation and promotions"),
    (":feature-checkout", "Checkout squad", "checkout flow, payment methods and 3DS"),
    (":feature-orders", "Orders squad", "order history and details"),
    (":feature-returns", "Orders squad", "return requests and QR drop-off"),
    (":feature-catalog", "Commerce squad", "category and product screens"),
    (":feature-search", "Commerce squad", "search and suggestions"),
    (":feature-account", "Identity squad", "profile, addresses and settings"),
    (":feature-auth", "Identity squad", "login, signup and token refresh"),
    (":feature-loyalty", "Growth squad", "loyalty card and points"),
    (":feature-inbox", "Growth squad", "notification inbox and push handling"),
]

MB_ENDPOINTS = [
    ("GET /v2/app/home", "10 minutes", "served from memory and disk cache, refreshed on pull-to-refresh"),
    ("GET /v2/catalog/products/{sku}", "5 minutes", "ETag-based revalidation"),
    ("GET /v2/catalog/suggest", "no cache", "requests are cancelled when the query changes"),
    ("GET /v2/cart", "no cache", "the cart is the source of truth on the server"),
    ("POST /v2/cart/items", "no cache", "retried once on timeout with the same Idempotency-Key"),
    ("GET /v2/orders", "1 minute", "stale data is shown while refreshing"),
    ("GET /v2/orders/{id}", "1 minute", "refreshed when a push for that order arrives"),
    ("POST /v2/returns", "no cache", "queued offline when there is no connection"),
    ("GET /v2/stores?lat=&lon=", "1 day", "cached per rounded location (2 decimals)"),
    ("GET /v2/me", "until logout", "cleared on logout together with the tokens"),
    ("GET /v2/loyalty/card", "1 hour", "works offline from the last cached value"),
    ("GET /v2/giftcards/{number}/balance", "no cache", "rate limited to 5 per minute by the server"),
]


def families_mb():
    out = []
    for screen, amod, ipkg, link, note in MB_SCREENS:
        out.append(fam(f"mb.screen.{slug(screen)}", "project_fact", f"{screen} screen",
                       f"The {screen} screen lives in {amod} on Android and the {ipkg} Swift package on iOS. Deep link: {link}. {note}",
                       [f"{screen.lower()} screen", f"{screen.lower()} deep link"], ["screens", "android", "ios"]))
    for event, trigger, params in MB_EVENTS:
        out.append(fam(f"mb.event.{event}", "standard", f"Analytics event {event}",
                       f"{event} is logged when {trigger}. Parameters: {params}. Defined in docs/tracking-plan.md and in AnalyticsEvents.kt / AnalyticsEvents.swift.",
                       [f"{event} event", f"{event} parameters"], ["analytics", "tracking-plan"]))
    for key, default, purpose in MB_REMOTE_CONFIG:
        out.append(fam(f"mb.rc.{key}", "fact", f"Remote Config key {key}",
                       f"Remote Config parameter {key} (default {default}) {purpose}. Changing it takes effect on the next cold start after a fetch.",
                       [f"{key}", f"{key.replace('_', ' ')}"], ["remote-config", "feature-flags"]))
    for mod, owner, what in MB_MODULES:
        out.append(fam(f"mb.module.{slug(mod)}", "project_fact", f"Module {mod}",
                       f"{mod} contains {what}. Owner: {owner}; changes need one review from that squad (CODEOWNERS).",
                       [f"{mod} module", f"{mod} owner"], ["modules", "ownership", "android"]))
    for endpoint, cache, note in MB_ENDPOINTS:
        out.append(fam(f"mb.api.{slug(endpoint)}", "fact", f"App caching for {endpoint}",
                       f"The apps call {endpoint} with cache lifetime: {cache}; {note}.",
                       [f"{endpoint.lower()} caching", f"{endpoint.split(' ')[1].lower()} cache"], ["api", "caching"]))
    return out


PA_PEOPLE = [
    ("Ingrid", "mother", "3 June", "gardening, orchids, Scandinavian crime novels", "Lives in Haarlem; prefers phone calls to messages."),
    ("Henk", "father", "22 September", "cycling tours, jazz records", "Lives in Haarlem with Ingrid; doesn't use WhatsApp."),
    ("Sophie", "sister", "11 January", "ceramics classes, natural wine", "Lives in Utrecht with her partner Daan and son Finn."),
    ("Finn", "nephew", "5 May", "Lego Technic, dinosaurs", "Turns 7 this year; Sophie prefers books or Lego, no screens."),
    ("Daan", "sister's partner", "19 August", "board games, craft beer", "Vegan; keep that in mind for family dinners."),
    ("Ruben", "partner", "27 February", "specialty coffee, running gear, podcasts about medicine", "ICU nurse at OLVG Oost."),
    ("Oma Truus", "grandmother", "30 November", "crosswords, Dutch cookies (speculaas)", "Lives in a care home in Zwolle; visiting hours 14:00-17:00."),
    ("Lotte", "best friend", "14 April", "yoga, Italian food, travel guides", "Meets Maya for coffee most Saturdays."),
    ("Jonas", "climbing partner", "8 October", "bouldering, sci-fi novels", "Climbs with Maya on Mondays."),
    ("Ben", "old university friend", "2 December", "photography, hiking", "Lives in Berlin; calls every few weeks."),
    ("Aisha", "friend from the running club", "17 March", "marathons, spicy food", "Runs the Sunday long runs with Maya."),
    ("Jake Morrison", "manager", "n/a (work contact)", "baseball, sourdough", "Based in Boston; prefers Slack to email."),
    ("Priya", "colleague", "n/a (work contact)", "data visualisation", "Maya's closest collaborator on the analytics project."),
    ("Lucía", "Spanish tutor", "n/a", "Latin American literature", "Teaches on italki; lessons Wednesday 20:00."),
    ("Marloes", "neighbour", "n/a", "her two cats", "Feeds Miso when Maya and Ruben travel; spare key is with her."),
    ("Thomas", "cousin", "25 July", "sailing, Formula 1", "Getting married in September in Friesland."),
    ("Emma", "Lotte's daughter (goddaughter)", "9 February", "horses, drawing", "Turns 10 this year."),
    ("Dr. Visser", "GP", "n/a", "-", "Huisartsenpraktijk Oosterpark; book through the practice app."),
]

PA_SCHEDULE = [
    ("Bouldering with Jonas", "Mondays 19:00-21:00", "Monk Amsterdam West"),
    ("Easy run", "Tuesdays 07:00, 8 km", "Oosterpark and Amstel loop"),
    ("Spanish lesson with Lucía", "Wednesdays 20:00-20:50", "italki, online"),
    ("Tempo run", "Thursdays 07:00, 10 km with 3 x 2 km at race pace", "Amstel riverside"),
    ("Long run with Aisha", "Sundays 09:00, 16-20 km", "start at Amstelpark"),
    ("Weekly review", "Sundays 19:00, 30 minutes", "at home"),
    ("Coffee with Lotte", "most Saturdays 10:30", "Coffee & Coconuts or a café near Lotte"),
    ("Saturday market", "Saturdays 09:00", "Dappermarkt"),
    ("1:1 with the manager", "Tuesdays 16:00 Amsterdam time", "Zoom"),
    ("Team sync with Boston", "Wednesdays 15:30", "Zoom"),
    ("Batch cooking", "Sundays 16:00-18:00", "at home"),
    ("Call parents", "Sunday evenings around 20:00", "phone"),
    ("Yoga", "Thursdays 19:30", "Yoga Spot Oost"),
    ("Miso's flea treatment", "the 1st of every month", "at home"),
    ("Plant watering", "Wednesdays and Saturdays", "monstera and herbs on the balcony"),
    ("Book club", "the last Friday of the month, 20:00", "rotates between members' homes"),
    ("Therapy session", "every other Thursday 17:00", "online"),
    ("Visit Oma Truus", "the first Saturday of the month", "Zwolle, by train"),
]

PA_RECIPES = [
    ("Shakshuka with feta", "25 min", "tomatoes, peppers, eggs, feta, cumin", "One pan; serve with sourdough."),
    ("Chickpea and spinach curry", "30 min", "chickpeas, spinach, coconut milk, garam masala", "Check the curry paste for cashews."),
    ("Lemon ricotta pasta", "20 min", "ricotta, lemon, parmesan, peas", "Use vegetarian parmesan-style cheese (no animal rennet)."),
    ("Sheet-pan gnocchi", "30 min", "gnocchi, cherry tomatoes, courgette, mozzarella", "Ruben's favourite."),
    ("Black bean tacos", "25 min", "black beans, corn, avocado, lime", "No coriander; parsley and lime instead."),
    ("Mushroom risotto", "40 min", "arborio, mixed mushrooms, vegetable stock", "Weekend only, it's longer than 30 minutes."),
    ("Halloumi traybake", "30 min", "halloumi, sweet potato, red onion, za'atar", "Simplified Ottolenghi."),
    ("Miso aubergine with rice", "35 min", "aubergine, white miso, sesame, rice", "Batch-cook the rice on Sunday."),
    ("Red lentil soup", "30 min", "red lentils, carrots, cumin, lemon", "Freezes well for lunches."),
    ("Pesto pasta (nut-safe)", "15 min", "basil, walnuts or pine nuts, parmesan-style cheese", "Never shop-bought pesto: often contains cashews."),
    ("Tofu stir-fry", "20 min", "firm tofu, broccoli, soy, ginger, peanuts", "Peanuts are fine for Maya."),
    ("Dutch stamppot with kale", "30 min", "potatoes, kale, vegetarian smoked sausage", "Winter staple; use the Vegetarische Slager sausage."),
    ("Overnight oats", "5 min + overnight", "oats, oat milk, chia, berries", "Pre-run breakfast on long-run Sundays."),
    ("Greek salad with white beans", "15 min", "tomato, cucumber, feta, white beans, olives", "Summer lunch."),
    ("Spinach and egg fried rice", "15 min", "leftover rice, eggs, spinach, spring onion", "Good use of leftover rice."),
    ("Pumpkin and sage orzo", "30 min", "orzo, pumpkin, sage, parmesan-style cheese", "Autumn favourite."),
]

PA_PLACES = [
    ("De Kas", "Amsterdam Oost", "seasonal set menu", "Tell them in advance about the vegetarian menu and the nut allergy."),
    ("Mediamatic ETEN", "Amsterdam", "plant-based", "Good for groups; book a greenhouse."),
    ("Bar Fisk", "Amsterdam", "seafood", "Not suitable: almost everything is fish."),
    ("Pho 91", "Amsterdam West", "Vietnamese", "Ask for no coriander; tofu pho is good."),
    ("Café Restaurant Dauphine", "Amsterdam Oost", "brasserie", "Close to home; decent vegetarian options."),
    ("Spirit", "Amsterdam centre", "vegetarian buffet", "Quick lunch near the station."),
    ("Mama Makan", "Amsterdam Oost", "Indonesian", "Several dishes contain cashews or peanut sauce; ask each time."),
    ("Coffee & Coconuts", "De Pijp", "café", "Saturday coffee spot with Lotte."),
    ("Le Pain Quotidien Haarlem", "Haarlem", "café", "Where Maya meets her parents for lunch."),
    ("Vegan Junk Food Bar", "Amsterdam", "vegan fast food", "Ruben likes it; loud, not for conversations."),
    ("Restaurant Floreyn", "Amsterdam Oost", "Dutch modern", "Vegetarian tasting menu on request 48 h ahead."),
    ("Sana Sana", "Amsterdam Zuid", "Mexican", "Order the dishes without coriander."),
]

PA_BOOKS = [
    ("The Dawn of Everything", "David Graeber and David Wengrow", "finished", "Loved it; wants more on early cities."),
    ("Sapiens", "Yuval Noah Harari", "finished", "Found it too sweeping."),
    ("The Code Breaker", "Walter Isaacson", "finished", "Enjoyed the science parts."),
    ("Empire of Pain", "Patrick Radden Keefe", "reading", "About halfway."),
    ("The Wager", "David Grann", "on the list", "Recommended by Ben."),
    ("Cien años de soledad", "Gabriel García Márquez", "on the list", "Saving it for when her Spanish is at B2; Lucía suggested it."),
    ("Atomic Habits", "James Clear", "abandoned", "Too repetitive."),
    ("The Emperor of All Maladies", "Siddhartha Mukherjee", "finished", "Ruben's recommendation."),
    ("A Short History of Nearly Everything", "Bill Bryson", "finished", "Rereads parts of it."),
    ("Born to Run", "Christopher McDougall", "finished", "Read during marathon training."),
    ("Python for Data Analysis", "Wes McKinney", "reading", "Chapter 5 (pandas basics)."),
    ("Salt, Fat, Acid, Heat", "Samin Nosrat", "reference", "Used for cooking technique."),
    ("The Silk Roads", "Peter Frankopan", "on the list", "Next history pick."),
    ("Braiding Sweetgrass", "Robin Wall Kimmerer", "on the list", "Book club pick for next month."),
]

PA_SUBSCRIPTIONS = [
    ("Spotify Duo", "€14.99 per month", "shared with Ruben", "billed on the 12th"),
    ("Netflix Standard", "€13.99 per month", "Ruben pays", "could be cancelled in summer"),
    ("NRC digital", "€17 per month", "Maya's newspaper", "renews yearly in March; ask for the loyalty discount"),
    ("YNAB", "$109 per year", "budget app", "renews in October"),
    ("1Password Families", "$59.88 per year", "shared with Ruben and Sophie", "renews in January"),
    ("iCloud+ 200 GB", "€2.99 per month", "photos and backups", "billed on the 3rd"),
    ("Strava", "€59.99 per year", "running", "renews in April, right before the race"),
    ("Swapfiets Deluxe 7", "€22.90 per month", "bike subscription", "repairs within 48 hours included"),
    ("Vattenfall", "about €120 per month", "energy", "annual settlement in June"),
    ("Ziggo internet", "€55 per month", "internet", "contract ends in November; compare offers before then"),
    ("Zilveren Kruis health insurance", "€148 per month", "basic plus dental", "can switch only in December"),
    ("OV NS Flex Dal Voordeel", "€5.60 per month", "train discount", "monthly cancellable"),
    ("Kobo Plus", "€9.99 per month", "e-book subscription", "trial ends soon; decide whether to keep it"),
    ("Anki (AnkiWeb)", "nothing", "flashcards sync", "the iOS app was a one-off purchase"),
]

PA_TRIPS = [
    ("Lisbon workation", "6 nights in May", "KLM flights, aisle seats booked", "Still looking for an apartment with a desk, ideally in Príncipe Real."),
    ("Paris conference", "2 days in March", "Eurostar there and back", "Hotel near Gare du Nord, quiet room requested."),
    ("Summer in Asturias", "10 days in August", "car-free: train to Oviedo via Paris and Madrid", "Spanish practice trip."),
    ("Christmas in Haarlem", "24-26 December", "train", "Bring the cheese board Ingrid likes."),
    ("Berlin weekend with Ben", "a weekend in October", "ICE from Amsterdam Centraal, 6 h 15", "Stays at Ben's place."),
    ("Thomas's wedding", "a weekend in September", "train to Leeuwarden plus a Greenwheels car", "Hotel booked for two nights."),
    ("Rotterdam half marathon", "a Sunday in April", "train the morning of the race", "Start wave C."),
    ("Ski week in Austria", "a week in February", "night train Nightjet to Innsbruck", "Needs the winter sports insurance add-on."),
]


def families_pa():
    out = []
    for name, rel, bday, likes, note in PA_PEOPLE:
        if bday.startswith("n/a"):
            interests = "" if likes == "-" else f" Interests: {likes}."
            content = f"{name} is Maya's {rel}.{interests} {note}"
        else:
            content = f"{name} is Maya's {rel}; birthday {bday}. Likes {likes}. {note}"
        out.append(fam(f"pa.person.{slug(name)}", "fact", f"{name} ({rel})", content,
                       [f"{name.lower()} {rel.split(' (')[0]}", f"{name.lower()}'s birthday" if not bday.startswith("n/a") else f"who is {name.lower()}"],
                       ["people", "family" if rel in {"mother", "father", "sister", "nephew", "partner", "grandmother", "cousin", "sister's partner"} else "contacts"]))
    for what, when, where in PA_SCHEDULE:
        out.append(fam(f"pa.sched.{slug(what)}", "fact", f"Recurring: {what}",
                       f"{what}: {when}, {where}. Keep this slot free when planning.",
                       [f"{what.lower()} schedule", f"when is {what.lower()}"], ["schedule", "recurring"]))
    for dish, time, ingredients, note in PA_RECIPES:
        out.append(fam(f"pa.recipe.{slug(dish)}", "fact", f"Recipe: {dish}",
                       f"{dish} takes {time}. Main ingredients: {ingredients}. {note}",
                       [f"{dish.lower()} recipe"], ["recipes", "food"]))
    for place, area, cuisine, note in PA_PLACES:
        out.append(fam(f"pa.place.{slug(place)}", "fact", f"Restaurant: {place}",
                       f"{place} ({area}, {cuisine}). {note}",
                       [f"{place.lower()}", f"{place.lower()} restaurant"], ["restaurants", "food"]))
    for title, author, status, note in PA_BOOKS:
        out.append(fam(f"pa.book.{slug(title)}", "fact", f"Book: {title}",
                       f"{title} by {author}: {status}. {note}",
                       [f"{title.lower()}"], ["reading", "books"]))
    for service, cost, what, renew in PA_SUBSCRIPTIONS:
        out.append(fam(f"pa.sub.{slug(service)}", "fact", f"Subscription: {service}",
                       f"{service} costs {cost} ({what}); {renew}.",
                       [f"{service.lower()} subscription"], ["subscriptions", "budget"]))
    for trip, when, transport, note in PA_TRIPS:
        out.append(fam(f"pa.trip.{slug(trip)}", "fact", f"Trip: {trip}",
                       f"{trip}: {when}. Getting there: {transport}. {note}",
                       [f"{trip.lower()}", f"{trip.lower()} plans"], ["travel", "trips"], memory_type="episodic"))
    return out


# More families: error codes, alerts, dashboards, known issues, household facts.

WB_EMAILS = [
    ("OrderConfirmed", "d-3f1a0c9e7b", "an order is paid", "Contains the invoice PDF link, not the PDF itself."),
    ("OrderShipped", "d-8c2b41d0aa", "the first parcel gets a barcode", "One mail per shipment for split deliveries."),
    ("OrderOutForDelivery", "d-51e9a7c3f2", "the carrier reports out-for-delivery", "Skipped between 22:00 and 07:00; sent at 07:00 instead."),
    ("OrderCancelled", "d-0d4e6b8f13", "an order is cancelled by the customer or customer service", "Mentions the refund timing (3-5 working days)."),
    ("RefundIssued", "d-7a3c9e1b55", "Adyen confirms a refund", "Amount shown in nl-NL format."),
    ("ReturnLabel", "d-2e8f4a6c90", "a return request is accepted", "Includes the PostNL QR code image."),
    ("PasswordReset", "d-9b1d3f5e27", "a customer asks for a password reset", "Link valid for 60 minutes; transactional, no consent needed."),
    ("EmailChangeConfirm", "d-4c6e8a0b12", "a customer changes the e-mail address", "Sent to the new address only."),
    ("AbandonedCart", "d-6f0b2d4e88", "the SendAbandonedCartEmails job finds a cart left for 3 hours", "Marketing mail: only with consent."),
    ("BackInStock", "d-1a3c5e7f09", "a wishlisted product is back in stock", "At most one per product per customer per week."),
    ("GiftCardDelivered", "d-8e0a2c4b61", "a digital gift card is bought", "Sent to the recipient on the chosen date at 08:00."),
    ("ReviewRequest", "d-5d7f9b1c34", "14 days after delivery", "Links to the Trustpilot invitation."),
    ("AccountDeleted", "d-3b5d7f9a76", "the DeleteRequestedAccounts job deletes an account", "Final confirmation; no links in it."),
    ("NewsletterDoubleOptIn", "d-0f2b4d6e45", "someone subscribes to the newsletter", "Subscription is active only after the click."),
]

WB_ERROR_CODES = [
    ("CHK-1001", "cart is empty or expired", "The cart cookie points to a cart older than 30 days; the client must start a new cart."),
    ("CHK-1002", "stock reservation failed", "At least one line could not be reserved; the response lists the SKUs and available quantities."),
    ("CHK-1003", "payment refused by Adyen", "resultCode Refused; show the generic message, never Adyen's refusalReason."),
    ("CHK-1004", "payment requires additional action", "3DS or redirect; the client must hand the action object to the Drop-in."),
    ("CHK-1005", "address not deliverable", "PostNL postcode check failed or the country is not served (we ship to NL and BE only)."),
    ("CHK-1006", "coupon not applicable", "The coupon exists but its rules exclude this cart; the reason field says which rule."),
    ("CHK-1007", "coupon expired or fully redeemed", "MaxRedemptions reached or outside the valid window."),
    ("CHK-1008", "price changed during checkout", "A price or promotion changed after the cart was priced; the client must reload the totals."),
    ("CHK-1009", "delivery slot no longer available", "The chosen same-day slot filled up; offer the next slots."),
    ("CHK-1010", "gift card balance insufficient", "The ERP balance is lower than the amount requested."),
    ("CHK-1011", "order already paid", "Duplicate payment attempt for a paid order; return the existing confirmation."),
    ("CHK-1012", "rate limit exceeded", "More than RateLimiting:Checkout:PermitLimit calls per minute from one IP."),
    ("CHK-1013", "guest checkout blocked for this e-mail", "The e-mail belongs to a blocked account (fraud team decision)."),
    ("CHK-1014", "cart total above the payment method limit", "Klarna above €1,500 or iDEAL above €50,000."),
    ("CHK-1015", "shipping quote unavailable", "ShippingQuoteService timed out; checkout cannot continue without a price."),
    ("CHK-1016", "invalid VAT number", "B2B VAT number failed the VIES check; VIES downtime returns CHK-1017 instead."),
]

PF_ALERTS = [
    ("BillingQueueBacklog", "billing.invoices queue length above 5,000 for 10 minutes", "Scale payments-worker or check for a stuck task in Flower."),
    ("PostgresReplicationLag", "pg-main-ro replay lag above 60 s for 5 minutes", "Reports may show stale data; check long-running queries on the replica."),
    ("PostgresConnectionsHigh", "more than 85% of max_connections in use", "Usually a service bypassing PgBouncer; check pg_stat_activity by application_name."),
    ("PgBouncerWaitingClients", "cl_waiting above 50 for 2 minutes", "The pool is too small or queries are slow; see the service's pool size."),
    ("CeleryWorkerDown", "no heartbeat from a worker deployment for 5 minutes", "Check the pod events for OOMKilled first."),
    ("RedisMemoryHigh", "ElastiCache memory above 80%", "Look for unbounded cache keys without TTL (redis-cli --bigkeys on the replica)."),
    ("HighErrorRate5xx", "5xx rate above 2% for 5 minutes on any ingress", "Check the latest deploy first; roll back if it correlates."),
    ("SLOBurnRateFast", "error budget burning at 14x for 1 hour", "Page the owning team; it is their SLO."),
    ("CertificateExpiry", "a TLS certificate expires within 14 days", "cert-manager should renew; check the Certificate resource events."),
    ("DiskUsageHigh", "RDS free storage below 15%", "Storage autoscaling is on, but check for bloat in events_event and audit_entry."),
    ("WebhookDeliveryFailures", "more than 20% of webhook deliveries failing for 15 minutes", "Usually one customer endpoint down; check webhooks_delivery by endpoint_id."),
    ("BeatNotRunning", "no celery beat heartbeat for 3 minutes", "Make sure exactly one beat pod is running."),
    ("SentryQuotaNearLimit", "Sentry event quota above 80% of the month", "Find the noisy issue and add it to ignore_errors or fix it."),
    ("LongRunningTransaction", "a transaction open longer than 15 minutes on the primary", "Blocks vacuum; find it in pg_stat_activity and ask the owner before terminating."),
    ("ArgoSyncFailed", "an Argo CD application is out of sync or degraded for 10 minutes", "Check the migrate PreSync job logs."),
    ("DeadLetterQueueGrowing", "tasks in the dead-letter queue increased in the last hour", "Inspect with manage.py celery_dlq list; requeue only after fixing the cause."),
]

FE_FLAGS = [
    ("newInbox", "the redesigned notification inbox", "on for internal users"),
    ("returnsV2", "the QR-code return flow", "on for 50% of customers"),
    ("invoiceBulkDownload", "downloading several invoices as a ZIP", "on"),
    ("commandMenu", "the Cmd+K quick navigation", "on"),
    ("darkMode", "the dark theme toggle in settings", "off (design review pending)"),
    ("paymentMethodsV2", "the new payment methods page", "on for account owners in NL"),
    ("teamManagement", "inviting team members to an account", "on for business accounts"),
    ("catalogCompare", "comparing up to 4 products", "off"),
    ("onboardingChecklist", "the onboarding checklist on the home page", "on for accounts younger than 14 days"),
    ("reportsBeta", "the self-service reports page", "on for the beta list"),
    ("liveChat", "the support chat widget", "on in production only"),
    ("addressAutocomplete", "postcode-based address autocomplete", "on"),
    ("subscriptionPause", "pausing a subscription for up to 3 months", "on for 20% of customers"),
    ("fileVersioning", "keeping previous versions of uploaded files", "off"),
]

FE_KNOWN_ISSUES = [
    ("ResizeObserver loop completed with undelivered notifications", "harmless browser warning from the DataTable column resizer", "Filtered out in Sentry's ignoreErrors; do not chase it."),
    ("Hydration-like flicker of the dark theme", "the theme class is applied after React mounts", "A blocking inline script in index.html sets the class before paint."),
    ("Safari date input shows yesterday", "new Date('2025-03-01') is parsed as UTC midnight", "Parse dates with parseISO from date-fns and format in the user's zone."),
    ("Double submit on slow networks", "users click Save twice before the mutation is pending", "Button takes loading={mutation.isPending} and is disabled while pending."),
    ("Blank PDF preview in Firefox", "the invoice PDF blob URL was revoked too early", "Revoke the URL on unmount, not after setting the iframe src."),
    ("Scroll position lost when going back to /orders", "the list re-renders before the data is restored", "ScrollRestoration is enabled in the root layout with getKey by pathname."),
    ("Keycloak silent renew fails in Safari", "third-party cookies blocked in the iframe", "Fall back to refresh tokens (useRefreshToken: true in oidc-client-ts)."),
    ("Toasts hidden behind the Sheet", "z-index ordering of overlays", "Use the z.toast token (60); never set z-index by hand."),
    ("Cmd+K opens the browser search in Firefox", "the shortcut handler did not call preventDefault", "Fixed in CommandMenu 2.1; update @acme/ui if it comes back."),
    ("Chart tooltip cut off in DataTable rows", "overflow: hidden on the table wrapper", "Render tooltips in a portal (Popover has portal by default)."),
    ("MSW warning: captured a request without a matching request handler", "a test calls an endpoint with no handler", "Add the handler in src/test/handlers.ts; onUnhandledRequest is 'error' in CI."),
    ("Vite HMR full reload loop", "a file exports both components and non-components", "Keep constants in a separate file so fast refresh works."),
]

DP_DASHBOARDS = [
    ("Executive Daily", "agg_daily_kpis, fct_revenue", "data-products", "06:00 Europe/Amsterdam"),
    ("Finance Revenue", "fct_revenue, fct_invoices, fct_refunds", "finance-analytics", "after finance_daily"),
    ("Marketing Spend & ROAS", "fct_marketing_spend, fct_orders, dim_campaigns", "marketing-analytics", "daily 07:00 UTC"),
    ("Product Analytics Funnels", "fct_sessions, fct_events", "data-products", "hourly"),
    ("Customer Support KPIs", "fct_support_tickets", "ops-analytics", "hourly"),
    ("Retention Cohorts", "agg_cohort_retention", "data-products", "daily"),
    ("Stock & Warehouse", "fct_stock_movements, dim_products", "ops-analytics", "every 30 minutes"),
    ("Churn Risk", "ml.churn_scores, dim_customers", "data-science", "daily 08:00 UTC"),
    ("Payments Health", "fct_payments, fct_refunds", "finance-analytics", "hourly"),
    ("Data Platform Costs", "snowflake account usage views", "data-eng", "daily 08:00 UTC"),
    ("Partner Feed Status", "rpt_partner_feed", "data-products", "daily"),
    ("Demand Forecast", "ml.demand_forecast", "data-science", "weekly on Monday"),
]

DP_DQ_ISSUES = [
    ("Stripe test charges in RAW", "Fivetran also syncs livemode = false charges", "stg_stripe__charges filters livemode = true."),
    ("Duplicate Zendesk tickets after merges", "merged tickets keep both ids", "Use the via.source.rel = 'merge' field to drop the closed duplicate."),
    ("Salesforce currency fields", "amounts are in the record's currency, not EUR", "Convert with the dated exchange rate on close_date."),
    ("Bot traffic in app events", "synthetic monitoring devices send events", "Device ids in the seed monitoring_devices.csv are excluded in stg_app__events."),
    ("ERP credit notes without invoice reference", "about 0.5% of credit notes are manual", "They are kept with invoice_id null and flagged is_manual_credit."),
    ("Timezone shift in WMS files", "the warehouse system writes local time without offset", "Staging converts from Europe/Amsterdam to UTC."),
    ("Google Ads cost restatements", "costs change for up to 3 days", "ingest_google_ads reloads the last 3 days every run."),
    ("Meta spend in account currency", "one ad account is billed in USD", "fct_marketing_spend converts with the ECB rate."),
    ("Null customer ids on guest orders", "guest checkouts have no customer id", "dim_customers has a synthetic 'guest' member with key -1."),
    ("Order status regressions", "the shop sometimes sends 'paid' after 'shipped'", "fct_orders keeps the furthest status using a status rank."),
    ("HubSpot deleted contacts", "deleted contacts stay in RAW with _fivetran_deleted = true", "Staging filters them out."),
    ("Events with future timestamps", "device clocks set wrong", "Events more than 1 day ahead of received_at use received_at instead."),
]

MB_CRASHES = [
    ("java.lang.IllegalStateException: Fragment not attached to a context", "legacy settings screen", "callback after the fragment was detached", "Settings moved to Compose; remaining fragment checks isAdded."),
    ("android.app.ForegroundServiceStartNotAllowedException", "download of invoices on Android 12+", "starting a foreground service from the background", "Downloads use WorkManager with setExpedited instead."),
    ("kotlinx.serialization.MissingFieldException: Field 'deliveredAt' is required", "order detail", "the API omits the field for undelivered orders", "The field is nullable with a default of null."),
    ("EXC_BAD_ACCESS in ScannerViewController", "iOS barcode scanner", "the capture session was stopped on a background queue while the view deallocated", "Session start/stop now run on a dedicated serial queue owned by the view model."),
    ("Fatal error: Unexpectedly found nil while unwrapping an Optional value (CartView.swift)", "iOS cart", "force-unwrap of the selected shipping option", "Replaced with a guard and an error state."),
    ("android.database.sqlite.SQLiteConstraintException: UNIQUE constraint failed: wishlist.sku", "wishlist merge after login", "local and remote lists both contained the item", "The merge uses INSERT OR IGNORE (OnConflictStrategy.IGNORE)."),
    ("java.net.SocketTimeoutException in CheckoutRepository", "checkout on slow networks", "30 s read timeout too short for 3DS result polling", "Polling uses its own client with a 60 s timeout."),
    ("NSInternalInconsistencyException: Invalid update: invalid number of rows", "legacy UIKit order list", "data source changed during a batch update", "The order list is SwiftUI now; the UIKit list remains only in iOS 15 fallback code."),
    ("androidx.compose.runtime.ComposeRuntimeError: Recomposer is closed", "widget preview", "using a disposed composition in the Glance widget", "The widget recreates the session on update."),
    ("Watchdog termination 0x8badf00d on launch", "iOS cold start", "synchronous keychain migration on the main thread", "Migration moved to a background task after first frame."),
    ("java.lang.OutOfMemoryError: Failed to allocate a 33177612 byte allocation", "product gallery", "full-size images decoded without size", "Coil requests use size(ViewSizeResolver) and the CDN ?w= parameter."),
    ("SKErrorDomain Code=2 (payment cancelled) logged as crash", "in-app gift cards", "cancellation treated as an error", "Cancellation is a normal result now, not reported to Crashlytics."),
]

MB_PUSH_TYPES = [
    ("order_shipped", "Your order is on its way", "opens OrderDetail", "transactional, always sent"),
    ("order_out_for_delivery", "Delivery today", "opens OrderDetail", "transactional; quiet hours 22:00-07:00"),
    ("return_received", "We received your return", "opens the return", "transactional"),
    ("refund_issued", "Refund on its way", "opens OrderDetail", "transactional"),
    ("back_in_stock", "Back in stock", "opens ProductDetail", "marketing; needs opt-in"),
    ("price_drop", "Price drop on your wishlist", "opens Wishlist", "marketing; at most 2 per week"),
    ("cart_reminder", "Still thinking it over?", "opens Cart", "marketing; once per cart"),
    ("loyalty_points", "You earned points", "opens LoyaltyCard", "marketing; only when loyalty_enabled"),
    ("campaign", "Campaign message from marketing", "opens a deep link from the payload", "marketing; sent through Braze"),
    ("security_alert", "New login on your account", "opens Account security", "transactional, cannot be turned off"),
    ("giftcard_received", "You received a gift card", "opens GiftCards", "transactional"),
    ("review_request", "How was your order?", "opens the review prompt", "marketing; 14 days after delivery"),
]

PA_HOME = [
    ("Wi-Fi", "Network 'Ziggo-Oost-5G'; the guest network is 'Oost-Gasten', password on the fridge.", "home"),
    ("Boiler service", "Remeha boiler, yearly service in September by Feenstra; last service noted in the calendar.", "home"),
    ("Bins", "Residual waste goes out Tuesday evening; paper and plastic containers are at the corner of the street.", "home"),
    ("Building management", "VvE managed by Hoekstra Beheer; repairs reported through their portal.", "home"),
    ("Spare key", "Spare key is with Marloes next door.", "home"),
    ("Washing machine", "Bosch Serie 6; the 40-degree wool programme for running gear, no fabric softener.", "home"),
    ("Bike", "Swapfiets Deluxe 7; report problems in the app, they come within 48 hours.", "transport"),
    ("Parking permit", "No car, but visitor parking is paid through the Amsterdam visitor-parking app (Maya has 40 hours/month at reduced rate).", "transport"),
    ("Plants", "Monstera on the balcony window, basil and thyme outside; water Wednesdays and Saturdays.", "home"),
    ("Furniture", "Sofa from IKEA (Vimle); cover washable at 40 degrees.", "home"),
    ("Municipal taxes", "Gemeentebelastingen paid in 10 monthly instalments from March.", "admin"),
    ("Tax return", "Income tax return done by Maya herself in March; the DigiD app is on her phone.", "admin"),
    ("Photos backup", "Phone photos back up to iCloud; a yearly export to the external SSD in January.", "admin"),
    ("Emergency contacts", "ICE contacts: Ruben first, then Sophie.", "health"),
]

PA_SHOPPING = [
    ("Running shoes", "Asics Novablast 4 for daily runs, replaced every 700 km; size 39.5.", "running"),
    ("Running clothes", "Prefers merino base layers in winter; no cotton socks.", "running"),
    ("Coffee beans", "Lot Sixty One, filter or espresso roast; buys 1 kg a month.", "food"),
    ("Groceries", "Albert Heijn for the weekly shop, Ekoplaza for tofu and tempeh.", "food"),
    ("Clothes", "Prefers second-hand (Vinted) or durable brands; no fast fashion.", "clothing"),
    ("Cosmetics", "Fragrance-free skincare (sensitive skin); sunscreen SPF 50 for runs.", "health"),
    ("Electronics", "Buys at Coolblue for the delivery and returns; no Amazon.", "electronics"),
    ("Books", "Library first, then the local bookshop Ravelijn, e-books from Kobo.", "reading"),
    ("Gifts", "Prefers experiences or consumables as gifts over objects.", "gifts"),
    ("Wine", "Natural wine from the shop Rechtstreex; Sophie likes orange wine.", "food"),
    ("Flowers", "Flowers from the Dappermarkt stall on Saturdays; no lilies (toxic for Miso).", "pets"),
    ("Kitchen", "Cast iron pan (Lodge) and a Staub cocotte; no non-stick coatings.", "cooking"),
]


def families_more():
    out = []
    for name, tid, trigger, note in WB_EMAILS:
        out.append(fam(f"wb.email.{slug(name)}", "project_fact", f"E-mail template {name}",
                       f"The {name} e-mail (SendGrid dynamic template {tid}) is sent when {trigger}. {note}",
                       [f"{name.lower()} email", f"{name.lower()} template"], ["email", "sendgrid"]))
    for code, meaning, detail in WB_ERROR_CODES:
        out.append(fam(f"wb.err.{slug(code)}", "fact", f"Checkout error {code}: {meaning}",
                       f"Checkout API error {code} means: {meaning}. {detail} Errors are returned as ProblemDetails with the code in extensions.code.",
                       [f"{code.lower()}", f"{meaning.lower()}"], ["checkout", "error-codes", "api"]))
    for alert, cond, action in PF_ALERTS:
        out.append(fam(f"pf.alert.{slug(alert)}", "procedure", f"Alert {alert}",
                       f"{alert} fires when {cond}. First step: {action} Runbook: runbooks/{slug(alert)}.md.",
                       [f"{alert.lower()} alert", f"{slug(alert).replace('-', ' ')}"], ["alerts", "runbook", "observability"], memory_type="procedural"))
    for flag, what, state in FE_FLAGS:
        out.append(fam(f"fe.flag.{slug(flag)}", "project_fact", f"Portal flag {flag}",
                       f"The portal flag {flag} turns on {what}. Current state: {state}. Read it with useFlag('{flag}') from src/lib/flags.",
                       [f"{flag.lower()} flag", f"{what.lower()}"], ["feature-flags", "portal"]))
    for symptom, cause, fix in FE_KNOWN_ISSUES:
        out.append(fam(f"fe.issue.{slug(symptom)[:40]}", "solution", f"Known issue: {symptom}",
                       f"Symptom: {symptom}. Cause: {cause}. Fix: {fix}",
                       [symptom.lower()[:110]], ["known-issues", "bugs"], memory_type="episodic"))
    for dash, models, owner, refresh in DP_DASHBOARDS:
        out.append(fam(f"dp.dash.{slug(dash)}", "project_fact", f"Looker dashboard {dash}",
                       f"The Looker dashboard \"{dash}\" reads {models}; owner {owner}; refreshed {refresh}. It is declared as a dbt exposure in models/exposures.yml.",
                       [f"{dash.lower()} dashboard"], ["looker", "exposures", slug(owner)]))
    for issue, cause, handling in DP_DQ_ISSUES:
        out.append(fam(f"dp.dq.{slug(issue)[:40]}", "gotcha", f"Data quality: {issue}",
                       f"{issue}: {cause}. Handling: {handling}",
                       [issue.lower()], ["data-quality", "known-issues"]))
    for sig, where, cause, fix in MB_CRASHES:
        out.append(fam(f"mb.crash.{slug(sig)[:40]}", "solution", f"Crash: {sig[:90]}",
                       f"Crash \"{sig}\" in {where}. Cause: {cause}. Fix: {fix}",
                       [sig.lower()[:110]], ["crashes", "known-issues"], memory_type="episodic"))
    for ptype, title, action, policy in MB_PUSH_TYPES:
        out.append(fam(f"mb.push.{ptype}", "fact", f"Push type {ptype}",
                       f"Push type {ptype} (\"{title}\") {action}; {policy}.",
                       [f"{ptype} push", f"{ptype.replace('_', ' ')} notification"], ["push", "notifications"]))
    for item, fact_text, area in PA_HOME:
        out.append(fam(f"pa.home.{slug(item)}", "fact", f"Household: {item}", fact_text,
                       [f"{item.lower()}"], ["household", area]))
    for item, pref, area in PA_SHOPPING:
        out.append(fam(f"pa.shop.{slug(item)}", "preference", f"Shopping: {item}", pref,
                       [f"{item.lower()} preference", f"where maya buys {item.lower()}"], ["shopping", area]))
    return out


PF_ENDPOINTS = [
    ("billing-api", "http://billing-api.billing.svc.cluster.local:8000", "/api/v2/invoices, /api/v2/payments", "https://billing-api.staging.acme.internal"),
    ("accounts", "http://accounts.identity.svc.cluster.local:8000", "/api/v2/auth, /api/v2/me", "https://accounts.staging.acme.internal"),
    ("notifications", "http://notifications.engagement.svc.cluster.local:8000", "/api/v2/notifications", "https://notifications.staging.acme.internal"),
    ("search-indexer", "no HTTP API (Celery only)", "none", "n/a"),
    ("audit-log", "http://audit-log.platform.svc.cluster.local:8000", "/api/v2/audit", "https://audit.staging.acme.internal"),
    ("reports", "http://reports.data-products.svc.cluster.local:8000", "/api/v2/reports", "https://reports.staging.acme.internal"),
    ("gateway", "https://api.acme.com (public ingress)", "all /api/v2/* routes", "https://api.staging.acme.com"),
    ("payments-worker", "no HTTP API except /webhooks/psp", "/webhooks/psp (PSP callbacks only)", "https://psp-hooks.staging.acme.com"),
    ("files", "http://files.platform.svc.cluster.local:8000", "/api/v2/files", "https://files.staging.acme.internal"),
    ("pricing", "http://pricing.commerce.svc.cluster.local:8000", "/api/v2/prices", "https://pricing.staging.acme.internal"),
    ("inventory-sync", "no HTTP API (Celery only)", "none", "n/a"),
    ("webhooks-out", "http://webhooks-out.integrations.svc.cluster.local:8000", "/api/v2/webhooks", "https://webhooks.staging.acme.internal"),
    ("subscriptions", "http://subscriptions.billing.svc.cluster.local:8000", "/api/v2/subscriptions", "https://subscriptions.staging.acme.internal"),
    ("tax-calc", "http://tax-calc.commerce.svc.cluster.local:8000", "internal only: /internal/tax/quote", "https://tax.staging.acme.internal"),
]

WB_ROLES = [
    ("ShopOps", "sg-webshop-ops", "Hangfire dashboard, health checks and cache flush"),
    ("CatalogEditor", "sg-webshop-catalog", "products, categories and images"),
    ("CustomerService", "sg-webshop-cs", "orders, customers (masked) and return requests"),
    ("Finance", "sg-webshop-finance", "refunds, sales reports and invoice exports"),
    ("Marketing", "sg-webshop-marketing", "promotions, coupons and banners"),
    ("Warehouse", "sg-webshop-warehouse", "read-only stock and shipment status"),
    ("Pricing", "sg-pricing", "bulk price edits (with the Admin.BulkPriceEdit flag)"),
    ("SuperAdmin", "sg-webshop-admins", "everything, including role assignment; at most 3 members"),
    ("FraudReview", "sg-webshop-fraud", "blocking customers and reviewing flagged orders"),
    ("ReadOnlyAudit", "sg-webshop-audit", "read access to the audit log for the yearly audit"),
]

FE_HTTP_HANDLING = [
    ("400", "show field errors from the problem+json errors map next to the inputs"),
    ("401", "renew the token silently once, retry, then redirect to /login with a returnTo parameter"),
    ("403", "render the NoAccess page with a link to the account owner; never retry"),
    ("404", "render the NotFound route element; for detail pages offer a link back to the list"),
    ("409", "reload the resource and show 'Someone else changed this' with the option to reapply your edits"),
    ("422", "treat like 400 but show business-rule messages at the top of the form"),
    ("429", "wait for Retry-After (capped at 10 s) and retry once; show a toast if it fails again"),
    ("500", "show the generic error with the request id from X-Request-ID for support"),
    ("502/503/504", "retry idempotent GETs twice with backoff (TanStack Query retry), then show the maintenance banner"),
    ("network error", "keep the cached data on screen and show the offline banner; mutations are not retried automatically"),
]

DP_SEEDS = [
    ("markets.csv", "market codes, currencies and VAT rates for NL, BE and DE", "finance-analytics"),
    ("monitoring_devices.csv", "device ids of synthetic monitoring, excluded from app events", "data-eng"),
    ("zendesk_custom_fields.csv", "the mapping of Zendesk custom field ids to readable names", "ops-analytics"),
    ("channel_mapping.csv", "the mapping of UTM source/medium pairs to marketing channels", "marketing-analytics"),
    ("dutch_holidays.csv", "Dutch public holidays used by dim_dates", "data-eng"),
    ("product_category_overrides.csv", "manual category fixes for products with a wrong ERP category", "data-products"),
    ("excluded_test_accounts.csv", "internal and test customer ids excluded from KPIs", "data-eng"),
    ("refund_reason_groups.csv", "the grouping of free-text refund reasons into 8 categories", "finance-analytics"),
]

DP_MACROS = [
    ("generate_schema_name", "puts models in the schema from their config in prod and in dbt_<user> in dev"),
    ("set_query_tag", "sets the Snowflake query tag to dbt:<model name> for cost attribution"),
    ("cents_to_eur", "divides integer cents by 100 and casts to number(18,2)"),
    ("to_utc", "wraps convert_timezone('UTC', ...) for source columns with a known local timezone"),
    ("limit_in_dev", "adds a 3-day filter on large sources when target.name = 'dev'"),
    ("grant_select_on_schemas", "is a post-hook that grants select to REPORTER on built schemas"),
    ("mask_pii", "applies the masking policy tag from the column meta"),
    ("star_except", "selects all columns except a list, wrapper around dbt_utils.star"),
    ("safe_divide", "returns null instead of failing when the denominator is zero"),
    ("lookback_filter", "holds the shared is_incremental() filter with the 3-day lookback"),
]

MB_LANES = [
    ("fastlane android internal", "builds the release AAB and uploads it to the Play internal track"),
    ("fastlane android promote", "promotes the internal build to production with a rollout percentage (rollout:0.1)"),
    ("fastlane android screenshots", "generates Play Store screenshots with the screengrab lane"),
    ("fastlane ios beta", "builds, signs with match and uploads to TestFlight"),
    ("fastlane ios release", "submits the approved TestFlight build for review with phased release"),
    ("fastlane ios certs", "runs match in readonly mode for local machines"),
    ("fastlane ios screenshots", "captures App Store screenshots with snapshot on 3 device sizes"),
    ("./gradlew :app:assembleDebug", "builds the debug APK with the staging API"),
    ("./gradlew detekt ktlintCheck", "runs the Android static checks CI runs"),
    ("./gradlew :shared:assembleAcmeSharedXCFramework", "builds the KMP XCFramework for iOS"),
    ("./gradlew verifyPaparazziDebug", "checks Compose screenshots against the recorded images"),
    ("./gradlew :app:bundleRelease", "builds the release AAB locally (needs the upload keystore from 1Password)"),
]

PA_PLACES_OFTEN = [
    ("Home", "Linnaeusstraat area, Amsterdam Oost", "default start point for directions"),
    ("Office", "Northwind office at Wibautstraat, 12 minutes by bike", "Maya goes in on Tuesdays and Wednesdays"),
    ("Parents' house", "Haarlem, near the Frans Hals Museum", "train to Haarlem then a 10-minute walk"),
    ("Sophie's place", "Utrecht, Lombok neighbourhood", "train to Utrecht Centraal, then bike from the station"),
    ("Running club start", "Amstelpark main entrance", "Sunday long runs start here"),
    ("Climbing gym", "Monk Amsterdam West", "20 minutes by bike"),
    ("GP practice", "Huisartsenpraktijk Oosterpark", "5 minutes walk"),
    ("Vet", "Dierenkliniek Oost, Linnaeusstraat", "walkable with the cat carrier"),
    ("Library", "OBA Oosterdok (central library)", "reservations picked up here"),
    ("Market", "Dappermarkt", "Saturday vegetables and flowers"),
]


def families_extra():
    out = []
    for name, internal, paths, staging in PF_ENDPOINTS:
        out.append(fam(f"pf.svc.{slug(name)}.endpoint", "project_fact", f"{name} endpoints",
                       f"{name}: in-cluster address {internal}; routes {paths}. Staging: {staging}.",
                       [f"{name} url", f"{name} endpoint"], ["endpoints", slug(name)]))
    for role, group, access in WB_ROLES:
        out.append(fam(f"wb.role.{slug(role)}", "fact", f"Admin role {role}",
                       f"The admin role {role} comes from Entra ID group {group} and grants access to {access}. Roles are mapped in AdminAuthorizationPolicies.cs; membership changes go through the IT portal.",
                       [f"{role.lower()} role", f"{group} group"], ["admin", "roles", "auth"]))
    for status, action in FE_HTTP_HANDLING:
        out.append(fam(f"fe.http.{slug(status)}", "standard", f"Handling HTTP {status} in the portal",
                       f"When an API call fails with {status}, apiFetch and the calling code {action}.",
                       [f"handling {status} responses", f"{status} error handling"], ["api", "error-handling"]))
    for seed, what, owner in DP_SEEDS:
        out.append(fam(f"dp.seed.{slug(seed)}", "fact", f"Seed {seed}",
                       f"The dbt seed {seed} holds {what}; owner {owner}. Edit it in a PR and run dbt seed -s {seed.removesuffix('.csv')}.",
                       [f"{seed} seed", f"{seed.removesuffix('.csv').replace('_', ' ')}"], ["dbt", "seeds"]))
    for macro, what in DP_MACROS:
        out.append(fam(f"dp.macro.{macro}", "fact", f"Macro {macro}",
                       f"The dbt macro {macro} (macros/{macro}.sql) {what}.",
                       [f"{macro} macro"], ["dbt", "macros"]))
    for lane, what in MB_LANES:
        out.append(fam(f"mb.lane.{slug(lane)}", "procedure", f"Command: {lane}",
                       f"{lane} {what}. Run it from the repository root with bundle exec for fastlane lanes.",
                       [lane.lower()], ["build", "commands"], memory_type="procedural"))
    for place, where, note in PA_PLACES_OFTEN:
        out.append(fam(f"pa.loc.{slug(place)}", "fact", f"Place: {place}",
                       f"{place}: {where}; {note}.",
                       [f"{place.lower()} location"], ["places", "travel"]))
    return out


# ---------------------------------------------------------------------------
# Multi-memory queries: "category | filter tags or - | relevant keys | query | active task"
# ---------------------------------------------------------------------------

TAG_QUERIES = r"""
tag | release | wb.slot_swap | what are the steps to get this out, and how do I undo it if it goes wrong? | shipping the new delivery-slot picker
tag | release | wb.release_freeze | is it ok to do this now? it's the week of the big November sale |
tag | mudblazor | wb.snackbar, wb.dialog_confirm | which kind of popup goes where? | adding feedback to the refunds page
tag | ef-core | wb.dbcontext_factory | my component crashes when it loads two things at the same time |
tag | hangfire | wb.hangfire_args | anything I should know before writing a new one? | adding a job that exports returns
tag | integration,postnl | wb.int.postnl.timeouts | how long do we wait and how often do we try again? |
tag | error-codes | wb.err.chk-1008 | a shopper says the total changed while paying; which one is that? |
tag | feature-flags | wb.flag.checkout-applepay | is the Apple wallet option switched on in production? |
tag | sendgrid | wb.email.passwordreset | how long is the link in that mail valid? | answering a customer who can't log in
tag | migrations | pf.lock_timeout, pf.not_null_column | I'm adding a required column to a busy table, what's the drill? |
tag | celery | pf.single_beat | the periodic stuff fired twice after the rollout |
tag | billing-api | pf.svc.billing-api.slo | what are we promising for it? | writing the quarterly reliability review
tag | alerts | pf.alert.pgbouncerwaitingclients | lots of clients are queuing at the connection pooler, what do I check first? |
tag | management-commands | pf.cmd.anonymise_user | someone asked us to erase their personal data |
tag | rate-limits | pf.rl.post-api-v2-auth-token | how many sign-in attempts before we start refusing? |
tag | postgres | pf.explain_replica | a query is slow, where do I start? |
tag | on-call | pf.svc.notifications.owner | who gets paged for the thing that sends texts and emails? |
tag | tanstack-query | fe.invalidate | the screen shows old data after I change something |
tag | testing | fe.act_warning | tests pass but spit out warnings about state updates at the end |
tag | components | fe.ui.combobox | I need a picker for the country field |
tag | components | fe.ui.toast, fe.ui.alertdialog | what should feedback look like after saving, and before deleting? |
tag | eslint | fe.lint.react-jsx-no-leaked-render | why is a stray 0 showing up on the page? |
tag | known-issues | fe.issue.safari-date-input-shows-yesterday | dates are off by one day for some users |
tag | env-vars | fe.env.vite-sentry-dsn | how do I keep error reporting off on my laptop? |
tag | feature-flags | fe.flag.darkmode | can customers switch to the dark look yet? |
tag | runbook | dp.dagrun.ingest_meta_ads | the Facebook ads load broke, what do I do? |
tag | dbt | dp.incremental_lookback, dp.merge_duplicates | setting up a model that only processes new rows: what's required and what usually breaks? |
tag | freshness | dp.src.erp-invoices | when does the ERP data count as stale? |
tag | known-issues | dp.dq.null-customer-ids-on-guest-orders | why do some orders have no customer? |
tag | looker | dp.dash.marketing-spend-roas | which dashboard shows return on ad spend and what feeds it? |
tag | snowflake | dp.adhoc_timeout, dp.wh.adhoc-wh | my query got killed, why? | exploring refunds in a worksheet
tag | airflow | dp.catchup_false | I turned on my new workflow and the scheduler queued a whole year of runs |
tag | permissions | dp.role.pii-reader | who can see real email addresses? |
tag | release | mb.rollout_halt | when do we pull the brakes? | update 5.42 is at 50%
tag | release | mb.android_release, mb.ios_release | what's the process to get a new version out on both stores? |
tag | crashes | mb.crash.java-lang-outofmemoryerror-failed-to-all | the photo gallery runs out of memory |
tag | remote-config | mb.rc.min_supported_version_android, mb.rc.min_supported_version_ios | how do we force people on old builds to update? |
tag | tracking-plan | mb.event.coupon_rejected | what do we log when a discount code doesn't work? |
tag | screens | mb.screen.scanner | which module holds the barcode thing? |
tag | push | mb.push.price_drop | how often can we tell people their saved items got cheaper? |
tag | ownership | mb.module.shared | who should review my change to the pricing rules code? |
tag | food | pa.nut_allergy, pa.coriander, pa.vegetarian | what should the caterer know about me? | team offsite lunch
tag | travel | pa.travel_seats | what do I prefer when flying? |
tag | schedule | pa.team_overlap, pa.meeting_hours | find a slot for a call with the Boston team next week |
tag | people | pa.person.finn | gift idea for my nephew? |
tag | recurring | pa.sched.spanish-lesson-with-lucia | what do I have on Wednesday at 8 pm? |
tag | subscriptions | pa.sub.ziggo-internet | which contract should I renegotiate before it runs out this autumn? |
tag | restaurants | pa.place.bar-fisk, pa.place.mama-makan | which of the usual places are a problem for someone vegetarian with a cashew allergy? |
tag | household | pa.home.spare-key | I'm locked out, where's the other key? |
"""

MIXED_QUERIES = r"""
mixed | - | wb.int.postnl.timeouts, wb.flag.shipping-dhlfallback, wb.config.shipping-postnl-timeoutseconds | how long do we wait for PostNL before giving up, and what happens to the label then? |
mixed | - | wb.admin_controllers, wb.records_dto | new endpoint for the back-office product grid: controller or minimal API, and what type for the response model? |
mixed | - | wb.no_records_entities, wb.decimal_precision | writing a new EF entity for gift-wrap options: class or record, and what precision for the price? |
mixed | - | wb.job.reindexproducts, wb.search_provider | which cron does ReindexProducts use and which index does it write to? |
mixed | - | wb.err.chk-1014, wb.flag.checkout-klarnapaylater | what does CHK-1014 mean for a Klarna order of 1,800 euro? |
mixed | - | wb.config.payments-adyen-merchantaccount, wb.int.adyen.sandbox | in staging, which Adyen merchant account and endpoint should the config point at? |
mixed | - | wb.page.orderhistory | which component and render mode serve the page where customers see their past orders? |
mixed | - | wb.page.refunds | the refunds page in the back office: who may open it and when is a second approver needed? |
mixed | - | wb.stock_concurrency, wb.config.cart-reservationminutes | how long is stock held during checkout, and how do we stop two shoppers reserving the last item? |
mixed | - | wb.ef_migration_add, wb.no_migrate_startup | where do schema changes get applied during a deploy? | adding a column for gift messages
mixed | - | pf.svc.billing-api.db | how many connections does billing-api get from PgBouncer? |
mixed | - | pf.svc.payments-worker.celery | which queues does payments-worker consume and with how many processes? |
mixed | - | pf.svc.reports.resources, pf.worker_sigkill | what's the memory limit on the reports pods? they keep getting killed |
mixed | - | pf.concurrently, pf.table.billing_invoice | I need another index on billing_invoice without downtime; what's on that table already? |
mixed | - | pf.table.events_event, pf.cmd.detach_old_partitions | which events_event partitions can go, and how do I detach them? |
mixed | - | pf.alert.pgbouncerwaitingclients, pf.svc.accounts.db | the waiting-clients alert fired for accounts; how big is its pool? |
mixed | - | pf.cmd.anonymise_user | a GDPR erasure ticket came in for one user: which command and what does it record? |
mixed | - | pf.rl.post-api-v2-subscriptions-id-cancel, pf.api_versioning | exposing cancellation in the public API: what rate limit applies and what if I change its response later? |
mixed | celery | pf.celery_on_commit, pf.celery_visibility | rules for a new task that generates statements right after an invoice is saved? |
mixed | - | fe.hook.useinvoices | what staleTime does useInvoices have and how are the filters handled? |
mixed | - | fe.hook.usecancelorder, fe.invalidate | after cancelling an order, how does the cache get updated? |
mixed | - | fe.route.billing-subscription | who owns /billing/subscription and who is allowed to open it? |
mixed | - | fe.issue.keycloak-silent-renew-fails-in-safari, fe.auth_oidc | Safari users get logged out because the silent renew fails |
mixed | - | fe.issue.toasts-hidden-behind-the-sheet, fe.token.z-toast | the confirmation toast ends up behind the side panel |
mixed | - | fe.ui.select | Select or Combobox for choosing one of three delivery speeds? |
mixed | - | fe.ui.currencyinput, fe.forms | new form with a money amount field: which input and how do I validate it? |
mixed | - | fe.r_test_runner.v0, fe.testing_library | how do I run the tests and mock the API in them? | writing tests for the returns list
mixed | - | fe.memo_table_columns, fe.memo_sparingly | should I wrap things in useMemo in the invoices grid component? |
mixed | - | dp.dag.ingest_erp_invoices, dp.dagrun.ingest_erp_invoices | when does ingest_erp_invoices run, and what about month-end? |
mixed | - | dp.model.fct_orders, dp.incremental_lookback, dp.late_events | what is the grain of fct_orders and why does it reprocess the last days? |
mixed | - | dp.src.stripe-charge, dp.fivetran_sync | stale Stripe charges warning in #data-alerts: what's the threshold and how often does the data land? |
mixed | - | dp.wh.reporting-wh, dp.role.reporter, dp.warehouses | which warehouse and role should Looker connect with? |
mixed | - | dp.dag.finance_daily, dp.dagrun.finance_daily | finance_daily is late: what does it build and who needs to hear about it? |
mixed | - | dp.future_grants, dp.fivetran_sync | we turned on a new HubSpot table; why can't dbt see it? |
mixed | - | dp.model.dim_products_history, dp.snapshots | what's the grain of dim_products_history and which snapshot strategy does it use? |
mixed | - | dp.dq.stripe-test-charges-in-raw, dp.model.stg_stripe__charges | revenue from Stripe looks too high in RAW; are test payments included downstream? |
mixed | - | mb.screen.orderdetail, mb.app_links | what link opens an order in the app, and which module renders it? |
mixed | - | mb.event.purchase_completed | which parameters does purchase_completed send? |
mixed | - | mb.rc.min_supported_version_ios, mb.remote_config | what's the default of min_supported_version_ios and how fast does a change reach users? |
mixed | - | mb.gson_r8, mb.kotlinx_serialization | checkout release build crashes parsing the cart; which JSON library is checkout on and what should new code use? |
mixed | - | mb.module.core-network | who reviews changes to :core:network and what lives there? |
mixed | - | mb.api.get-v2-orders | how long does the app cache the order list and when is it refreshed? |
mixed | - | mb.rc.offline_queue_max_age_hours, mb.offline_queue | returns requested offline: how are they sent later and how old can they get before being dropped? |
mixed | - | mb.webview_3ds, mb.screen.checkout | blank bank page during card payment: which module is that and what's the fix? |
mixed | - | pa.person.daan, pa.vegetarian, pa.nut_allergy | I'm cooking for Sophie's family on Saturday; what do I need to keep in mind food-wise? |
mixed | - | pa.person.oma-truus, pa.sched.visit-oma-truus | what should I bring grandma, and when can I visit? |
mixed | - | pa.partner, pa.sched.tempo-run, pa.sched.yoga | plan my Thursday around Ruben sleeping in; I also have training and a class |
mixed | - | pa.trip.ski-week-in-austria, pa.insurance | I want to do the ski week; what do I still need to arrange? |
mixed | - | pa.recipe.spinach-and-egg-fried-rice, pa.weeknight_cooking | what's a quick weeknight dinner I could make with the leftover rice? |
mixed | - | pa.person.thomas, pa.trip.thomas-s-wedding | my cousin's wedding: how am I getting there and what does he like as a gift? |
mixed | - | pa.r_manager.v0, pa.person.jake-morrison, pa.team_overlap, pa.r_work_hours.v0 | where is my manager based, and when do our working hours overlap? |
"""


# ---------------------------------------------------------------------------
# Parsing the hand-written blocks
# ---------------------------------------------------------------------------


def _split_query(text: str) -> tuple[str, str]:
    query, _, task = text.partition(" :: ")
    return query.strip(), task.strip()


def parse_core(block: str) -> tuple[list[dict], list[dict]]:
    mems: list[dict] = []
    queries: list[dict] = []
    cur: dict | None = None
    for raw in block.strip().splitlines():
        line = raw.rstrip()
        if not line:
            continue
        tag, _, rest = line.partition(" ")
        if line.startswith("@"):
            key, kind, mtype, rel = line[1:].split()
            cur = {"key": key, "kind": kind, "memory_type": mtype, "reliability": rel,
                   "title": "", "content_lines": [], "canonical_phrases": [], "tags": [], "origin": "core"}
            mems.append(cur)
        elif cur is None:
            raise ValueError(f"line outside a memory: {line!r}")
        elif tag == "T":
            cur["title"] = rest
        elif tag == "C":
            cur["content_lines"].append(rest)
        elif tag == "P":
            cur["canonical_phrases"] = [p.strip().lower() for p in rest.split(" | ")]
        elif tag == "G":
            cur["tags"] = rest.split()
        elif tag in ("E", "R"):
            rest, _, extra = rest.partition(" ++ ")
            q, task = _split_query(rest)
            keys = [cur["key"]] + [k.strip() for k in extra.split(",") if k.strip()]
            queries.append({"category": "exact" if tag == "E" else "paraphrase", "query": q,
                            "active_task": task, "tags": [], "keys": keys, "origin": "core"})
        else:
            raise ValueError(f"unknown line: {line!r}")
    for m in mems:
        m["content"] = "\n".join(m.pop("content_lines"))
    return mems, queries


def parse_recency(block: str) -> tuple[list[dict], list[dict]]:
    groups: list[dict] = []
    for raw in block.strip().splitlines():
        line = raw.rstrip()
        if not line:
            continue
        if line.startswith("@@"):
            key, kind, mtype = line[2:].split()
            groups.append({"key": key, "kind": kind, "memory_type": mtype})
            continue
        tag, _, rest = line.partition(" ")
        g = groups[-1]
        if tag == "V":
            g["variants"] = [[f.strip() for f in v.split(" ; ")] for v in rest.split(" | ")]
        elif tag == "Q":
            g["query"], g["task"] = _split_query(rest)
        else:
            g[tag] = rest
    mems: list[dict] = []
    queries: list[dict] = []
    for g in groups:
        for i, fields in enumerate(g["variants"]):
            mems.append({
                "key": f"{g['key']}.v{i}", "kind": g["kind"], "memory_type": g["memory_type"],
                "reliability": "confirmed", "title": g["T"].format(*fields),
                "content": g["C"].format(*fields),
                "canonical_phrases": [p.strip().lower() for p in g["P"].split(" | ")],
                "tags": g["G"].split(), "origin": "recency", "group": g["key"], "rank": i,
            })
        queries.append({"category": "recency", "query": g["query"], "active_task": g.get("task", ""),
                        "tags": [], "keys": [f"{g['key']}.v0"], "origin": "recency", "group": g["key"]})
    return mems, queries


def parse_query_lines(block: str) -> list[dict]:
    out = []
    for raw in block.strip().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 4:
            parts.append("")
        assert len(parts) == 5, line
        category, tags, keys, query, task = parts
        out.append({"category": category, "tags": [] if tags == "-" else tags.split(","),
                    "keys": [k.strip() for k in keys.split(",")], "query": query, "active_task": task,
                    "origin": "list"})
    return out


# ---------------------------------------------------------------------------
# Metadata: ages, usage, confidence, importance
# ---------------------------------------------------------------------------

BASE_IMPORTANCE = {
    "standard": 0.7, "decision": 0.7, "gotcha": 0.65, "solution": 0.6, "procedure": 0.6,
    "preference": 0.55, "pattern": 0.55, "style": 0.6, "fact": 0.45, "project_fact": 0.45, "topic": 0.4,
}
CONFIDENCE_RANGE = {
    "confirmed": (0.8, 0.98), "inferred": (0.55, 0.8), "unverified": (0.3, 0.65), "contested": (0.3, 0.55),
}


def assign_metadata(mems: list[dict], rng: random.Random) -> None:
    for m in sorted(mems, key=lambda m: m["key"]):
        imp = BASE_IMPORTANCE[m["kind"]] + rng.uniform(-0.2, 0.25)
        m["importance"] = round(min(1.0, max(0.0, imp)), 2)
        if m["origin"] == "recency":
            continue
        if m["origin"] == "family":
            m["reliability"] = rng.choices(
                ["confirmed", "inferred", "unverified", "contested"], weights=[78, 14, 6, 2]
            )[0]
        lo, hi = CONFIDENCE_RANGE[m["reliability"]]
        m["confidence_score"] = round(rng.uniform(lo, hi), 2)
        days_old = int(rng.choice([rng.randint(1, 60), rng.randint(30, 400), rng.randint(200, 1100)]))
        m["days_old"] = days_old
        if rng.random() < 0.12:
            m["days_since_used"] = None
        else:
            m["days_since_used"] = rng.randint(0, days_old)
    # Recency groups: v0 is new and recently used; older variants are older and used long ago.
    prev: dict | None = None
    for m in sorted((m for m in mems if m["origin"] == "recency"), key=lambda m: (m["group"], m["rank"])):
        if m["rank"] == 0:
            m["reliability"] = "confirmed"
            m["days_old"] = rng.randint(4, 90)
            m["days_since_used"] = rng.randint(0, min(6, m["days_old"]))
        else:
            assert prev is not None
            assert prev["group"] == m["group"]
            m["reliability"] = rng.choice(["confirmed", "confirmed", "inferred"])
            m["days_old"] = prev["days_old"] + rng.randint(120, 420)
            if rng.random() < 0.3:
                m["days_since_used"] = None
            else:
                floor = (prev["days_since_used"] or 0) + 45
                m["days_since_used"] = rng.randint(min(floor, m["days_old"]), m["days_old"])
        lo, hi = CONFIDENCE_RANGE[m["reliability"]]
        m["confidence_score"] = round(rng.uniform(lo, hi), 2)
        prev = m


# ---------------------------------------------------------------------------
# Assembly, self-check, output
# ---------------------------------------------------------------------------

STOPWORDS = set("""
a an the and or but if then else of to in on at by for with from into onto over under about as is are was were be been
being do does did done have has had having i me my we our you your it its this that these those there here what which
who whom whose when where why how can could should would will shall may might must not no yes so too very just only
also any all some each every more most less least than up down out off again once same other such own both few many
much new old get got make made use used using need needs want wants like still even after before while during
between without within again around why how's what's i'm it's don't can't doesn't isn't we're let's one two three
""".split())


def content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9_.+#-]*[a-z0-9]|[a-z0-9]", text.lower())
    return {w for w in words if len(w) >= 3 and w not in STOPWORDS}


def build(rng_seed: int = SEED) -> tuple[list[dict], list[dict]]:
    rng = random.Random(rng_seed)
    mems: list[dict] = []
    queries: list[dict] = []
    for block in (CORE_WB, CORE_PF, CORE_FE, CORE_DP, CORE_MB, CORE_PA):
        m, q = parse_core(block)
        mems += m
        queries += q
    m, q = parse_recency(RECENCY)
    mems += m
    queries += q
    for maker in (families_wb, families_pf, families_fe, families_dp, families_mb, families_pa, families_more,
                  families_extra):
        for f in maker():
            f["origin"] = "family"
            mems.append(f)
    queries += parse_query_lines(TAG_QUERIES)
    queries += parse_query_lines(MIXED_QUERIES)

    for mem in mems:
        prefix = mem["key"].split(".")[0]
        mem["space"] = SPACES[prefix][0]
        mem["tags"] = [t.lower() for t in mem["tags"]]
        mem["canonical_phrases"] = [p.lower() for p in mem["canonical_phrases"]]
    assign_metadata(mems, rng)

    order = list(range(len(mems)))
    rng.shuffle(order)
    for n, idx in enumerate(order, start=1):
        mems[idx]["id"] = f"c{n:05d}"
    mems.sort(key=lambda m: m["id"])
    by_key = {m["key"]: m for m in mems}
    if len(by_key) != len(mems):
        dupes = [k for k, c in Counter(m["key"] for m in mems).items() if c > 1]
        raise AssertionError(f"duplicate memory keys: {dupes}")

    for q in queries:
        missing = [k for k in q["keys"] if k not in by_key]
        if missing:
            raise AssertionError(f"query {q['query']!r} names unknown keys {missing}")
        q["space"] = by_key[q["keys"][0]]["space"]
        q["relevant"] = [by_key[k]["id"] for k in q["keys"]]
    rng.shuffle(queries)
    for n, q in enumerate(queries, start=1):
        q["qid"] = f"q{n:04d}"
    return mems, queries


MEMORY_FIELDS = ["id", "space", "title", "content", "canonical_phrases", "tags", "kind", "memory_type",
                 "reliability", "confidence_score", "importance", "days_since_used", "days_old"]
QUERY_FIELDS = ["qid", "space", "query", "active_task", "tags", "relevant", "category"]


def self_check(mems: list[dict], queries: list[dict]) -> dict:
    """Assert the corpus invariants; return a few statistics for the report."""
    ids = [m["id"] for m in mems]
    assert len(ids) == len(set(ids)), "memory ids are not unique"
    assert len(mems) >= 1000, f"only {len(mems)} memories"
    assert len(queries) >= 200, f"only {len(queries)} queries"
    by_id = {m["id"]: m for m in mems}
    spaces = {s for s, _ in SPACES.values()}
    seen_text = set()
    for m in mems:
        where = f"{m['id']} ({m['key']})"
        assert m["space"] in spaces, where
        assert 3 <= len(m["title"]) <= 120, f"title length {len(m['title'])}: {where}"
        assert 10 <= len(m["content"]) <= 2000, f"content length {len(m['content'])}: {where}"
        assert 1 <= len(m["canonical_phrases"]) <= 5, where
        for p in m["canonical_phrases"]:
            assert p == p.lower(), f"phrase not lowercase {p!r}: {where}"
            assert 3 <= len(p) <= 120, f"phrase length {p!r}: {where}"
        assert len(set(m["canonical_phrases"])) == len(m["canonical_phrases"]), f"duplicate phrase: {where}"
        assert 1 <= len(m["tags"]) <= 6, f"tags {m['tags']}: {where}"
        assert len(set(m["tags"])) == len(m["tags"]), f"duplicate tag: {where}"
        for t in m["tags"]:
            assert 2 <= len(t) <= 40, f"tag length {t!r}: {where}"
            assert TAG_RE.match(t), f"tag format {t!r}: {where}"
        assert m["kind"] in KINDS, f"kind {m['kind']}: {where}"
        assert m["memory_type"] in MEMORY_TYPES, where
        assert m["reliability"] in RELIABILITIES, where
        assert 0.3 <= m["confidence_score"] <= 0.98, where
        assert 0.0 <= m["importance"] <= 1.0, where
        assert isinstance(m["days_old"], int), where
        assert m["days_old"] >= 0, where
        dsu = m["days_since_used"]
        assert dsu is None or (isinstance(dsu, int) and 0 <= dsu <= m["days_old"]), where
        text_key = (m["title"], m["content"])
        assert text_key not in seen_text, f"duplicate memory text: {where}"
        seen_text.add(text_key)

    qids = [q["qid"] for q in queries]
    assert len(qids) == len(set(qids)), "query ids are not unique"
    texts = Counter((q["space"], q["query"].lower()) for q in queries)
    assert max(texts.values()) == 1, [t for t, c in texts.items() if c > 1]
    per_cat = Counter(q["category"] for q in queries)
    for cat in CATEGORIES:
        assert per_cat[cat] >= 35, f"category {cat} has only {per_cat[cat]} queries"
    tag_index: dict[tuple[str, str], set[str]] = defaultdict(set)
    for m in mems:
        for t in m["tags"]:
            tag_index[(m["space"], t)].add(m["id"])
    overlaps = []
    for q in queries:
        where = f"{q['qid']} {q['query']!r}"
        assert q["category"] in CATEGORIES, where
        assert q["query"].strip(), where
        assert 1 <= len(q["relevant"]) <= 4, where
        assert len(set(q["relevant"])) == len(q["relevant"]), where
        for rid in q["relevant"]:
            assert rid in by_id, where
            assert by_id[rid]["space"] == q["space"], f"relevant memory in another space: {where}"
        rel = [by_id[r] for r in q["relevant"]]
        asked = f"{q['query']} {q['active_task']}".lower()
        for t in q["tags"]:
            assert TAG_RE.match(t), where
            for m in rel:
                assert t in m["tags"], f"relevant {m['id']} lacks filter tag {t}: {where}"
        if q["category"] == "exact":
            assert any(p in asked for m in rel for p in m["canonical_phrases"]), f"no phrase verbatim: {where}"
        if q["category"] == "paraphrase":
            for m in rel:
                for p in m["canonical_phrases"]:
                    assert p not in asked, f"paraphrase contains phrase {p!r}: {where}"
            mem_words = set().union(*(content_words(f"{m['title']} {m['content']} {' '.join(m['canonical_phrases'])}") for m in rel))
            qw = content_words(asked)
            overlaps.append((len(qw & mem_words), len(qw), q))
        if q["category"] == "tag":
            assert q["tags"], f"tag query without tags: {where}"
            pool = set.intersection(*(tag_index[(q["space"], t)] for t in q["tags"]))
            assert len(pool) >= len(q["relevant"]) + 2, f"tag filter leaves only {len(pool)} memories: {where}"
        if q["category"] == "recency":
            assert len(q["relevant"]) == 1, where
            target = rel[0]
            group = [m for m in mems if m.get("group") == target.get("group")]
            assert len(group) >= 2, where
            for m in group:
                if m is target:
                    continue
                assert m["space"] == target["space"], where
                assert m["days_old"] > target["days_old"], where
                assert m["days_since_used"] is None or m["days_since_used"] > target["days_since_used"], where
    return {"paraphrase_overlaps": overlaps, "per_category": per_cat}


def write_outputs(mems: list[dict], queries: list[dict]) -> None:
    with open(OUT_DIR / "memories.jsonl", "w", encoding="utf-8") as fh:
        for m in mems:
            fh.write(json.dumps({k: m[k] for k in MEMORY_FIELDS}, ensure_ascii=False) + "\n")
    with open(OUT_DIR / "queries.jsonl", "w", encoding="utf-8") as fh:
        for q in sorted(queries, key=lambda q: q["qid"]):
            fh.write(json.dumps({k: q[k] for k in QUERY_FIELDS}, ensure_ascii=False) + "\n")


def table(rows: list[list], header: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def stats(mems: list[dict], queries: list[dict]) -> dict:
    space_names = [s for s, _ in SPACES.values()]
    origin = Counter((m["space"], m["origin"]) for m in mems)
    qcat = Counter((q["space"], q["category"]) for q in queries)
    return {
        "spaces": space_names,
        "mem_rows": [[s, origin[(s, "core")], origin[(s, "recency")], origin[(s, "family")],
                      sum(origin[(s, o)] for o in ("core", "recency", "family"))] for s in space_names],
        "kind_rows": sorted(Counter(m["kind"] for m in mems).items(), key=lambda kv: -kv[1]),
        "type_rows": sorted(Counter(m["memory_type"] for m in mems).items(), key=lambda kv: -kv[1]),
        "rel_rows": sorted(Counter(m["reliability"] for m in mems).items(), key=lambda kv: -kv[1]),
        "query_rows": [[s] + [qcat[(s, c)] for c in CATEGORIES] + [sum(qcat[(s, c)] for c in CATEGORIES)]
                       for s in space_names],
        "cat_totals": [sum(qcat[(s, c)] for s in space_names) for c in CATEGORIES],
        "rel_sizes": Counter(len(q["relevant"]) for q in queries),
    }


README_TEMPLATE = """# SAM recall evaluation corpus

A labelled corpus for measuring how well SAM's recall finds the right memory for a question
asked in the middle of a task. Six spaces, {n_mem} memories and {n_q} queries, each query with
the 1-4 memories that answer it.

Everything here is generated by `build_corpus.py` (standard library only, fixed seed
`{seed}`, no network, no model calls). Rerunning it rewrites `memories.jsonl`,
`queries.jsonl` and this README byte for byte:

```bash
.venv/bin/python bench/recall_corpus/build_corpus.py
```

The script asserts the invariants listed under "Self-check" before it writes anything, then
prints the counts and ten seeded query/answer pairs for a quick read.

## Files

`memories.jsonl`, one memory per line:

```json
{{"id": "c00001", "space": "platform-team", "title": "...", "content": "...",
 "canonical_phrases": ["..."], "tags": ["..."], "kind": "gotcha", "memory_type": "semantic",
 "reliability": "confirmed", "confidence_score": 0.91, "importance": 0.62,
 "days_since_used": 12, "days_old": 340}}
```

`days_old` is the memory's age in days and `days_since_used` the days since it was last used
(`null`: never used). A loader turns them into `created_at` / `last_used_at` relative to the
moment of loading. Ids are assigned after a seeded shuffle, so they say nothing about space,
origin or relevance.

`queries.jsonl`, one query per line:

```json
{{"qid": "q0001", "space": "data-pipeline", "query": "...", "active_task": "...",
 "tags": [], "relevant": ["c00412"], "category": "exact"}}
```

A query is meant to be run inside its `space`, with `active_task` as context (empty string
when there is none) and `tags` as a filter that all returned memories must carry (empty: no
filter). `relevant` lists every memory that answers it; all are in the query's space.

## Spaces

{space_table}

## How the memories were made

Three sources, all of them in `build_corpus.py`:

1. **Core memories** ({n_core}), written by hand one by one: coding preferences, decisions with
   their reasons, error -> fix pairs quoting real error messages ("CREATE INDEX CONCURRENTLY
   cannot run inside a transaction block", "A second operation was started on this context
   instance", "Duplicate row detected during DML action", "Publishing changes from background
   threads is not allowed"), procedures and checklists, gotchas, standards, project facts and, in
   the personal space, facts and preferences about one user. Library names, commands and
   configuration keys are real; the organisations, people, hosts and incidents are invented.
   Several pairs give opposite advice in the same space on purpose, separated by context:
   records for DTOs vs no records for EF Core entities; "don't sprinkle useMemo" vs "memoise
   TanStack Table columns"; Minimal APIs for the storefront vs controllers for the OData admin
   API; snackbar for confirmations vs dialog for destructive actions.
2. **Recency groups** ({n_groups} groups, {n_recency} memories): the same fact written down at
   different times with a different value (target framework net9.0 / net8.0 / net7.0, the
   staging database host, the free-shipping threshold, the user's manager ...). Titles and
   phrases are identical within a group and the texts are equally plausible; only the value,
   `days_old` and `days_since_used` differ. The first variant of each group is the current one:
   it is the newest and the most recently used. Nothing in the text marks the older variants as
   outdated (no "deprecated", no "as of").
3. **Families** ({n_family}): systematic variations built from hand-written tables: one kind of
   fact for many entities (the SLO, pool size, Celery queues, owner and pod resources of 14
   services; 24 Airflow DAGs with their runbooks; 30 dbt models; routes, feature flags,
   settings, entities, analytics events, Remote Config keys, people, recipes, subscriptions
   ...). Each table row is written by hand; the sentence around it comes from a template. They
   are the near-duplicate distractors: many memories share a template and differ only in the
   entity name and its values.

Kinds:

{kind_table}

Memory types: {type_list}. Reliability: {rel_list}.

`confidence_score` follows `reliability` (confirmed 0.80-0.98, inferred 0.55-0.80, unverified
0.30-0.65, contested 0.30-0.55). `importance` is a per-kind base (standards and decisions
higher, plain facts lower) plus seeded noise. Outside the recency groups, `days_old` is drawn
from a mix of recent (1-60 days), mid (30-400) and old (200-1100) and `days_since_used` is
uniform below it, with 12% never used; so for the other categories the relevant memory is not
systematically newer than its distractors.

## Queries

{query_table}

Relevant-set sizes: {rel_sizes}.

- **exact** - the query or active task contains one of the relevant memory's canonical phrases
  verbatim ("getting 'relation does not exist' after the migration in CI"). Checked by the
  script.
- **paraphrase** - the same need in other words, written to share as few content words with
  the memory as possible ("how should I show a quick confirmation toast after saving?" for
  "Use MudSnackbar for transient notifications"). The script asserts that no canonical phrase
  of the relevant memory appears in the query or task and reports the word overlap (below).
- **tag** - a vague query run with a tag filter (`"tags": ["release"]`: "what are the steps
  to get this out, and how do I undo it if it goes wrong?"). Relevant are the memories carrying the tag(s) that answer the
  vague query; the script asserts that each of them carries every filter tag and that the
  filter alone leaves at least two more memories than the relevant set.
- **recency** - one query per recency group. The query cannot tell the variants apart; the
  relevant memory is the current variant, i.e. the one with the smallest `days_old` and the
  smallest `days_since_used`. A ranker that ignores time can at best guess among
  near-identical texts, so this category measures the time-aware part of scoring.
- **mixed** - realistic questions that need more than one signal: an entity name plus an
  attribute among many look-alikes ("how many connections does billing-api get from
  PgBouncer?" among 14 services x 5 attributes), a question whose answer spans two or three
  memories (a decision and the gotcha behind it), a hard negative that shares the vocabulary of
  a wrong memory, or a tag filter combined with a specific question.

Paraphrase word overlap (content words of query + task that also occur in the relevant
memory's title, content or phrases; stopwords removed): mean {para_mean:.2f}, median
{para_median}, maximum {para_max}; {para_zero} of {n_para} paraphrase queries share no content
word at all.

## How relevance was decided

By hand, while writing each query against a specific memory. For every query the author
looked for other memories in the same space that would also answer it; when one did, it was
either added to `relevant` (queries with 2-4 answers) or the query was made more specific
until only the intended memories answered it. Family distractors were kept unambiguous by
naming the entity (service, DAG, model, route, person) in the query. To find ambiguities that
reading alone missed, every query was also ranked against its space with BM25 and with SAM's
local embedding model (all-MiniLM-L6-v2), and the top non-relevant hits were read; where one
of them answered the query it was added to `relevant` or the query was reworded. That check
is not part of `build_corpus.py` (it needs the model) and no numbers from it are used here.
Recency relevance is mechanical (the current variant of the group). There is a single
annotator and no second opinion; see the limits below.

## Self-check

`build_corpus.py` asserts, before writing:

- ids are unique; at least 1,000 memories and 200 queries; every category has at least 35
  queries;
- every memory field is present with its type and limits (title 3-120 chars, content
  10-2000, 1-5 lowercase phrases of 3-120 chars, 1-6 lowercase hyphenated tags of 2-40 chars,
  known kind / memory type / reliability, confidence 0.3-0.98, importance 0-1, `days_since_used`
  null or between 0 and `days_old`); no two memories have the same title and content;
- every query has 1-4 relevant ids, all existing and in the query's space, no duplicates, and no
  two queries in a space have the same text;
- exact queries contain a relevant canonical phrase verbatim; paraphrase queries contain
  none; relevant memories carry every filter tag; tag filters are not answers by themselves;
  recency targets are strictly newer and more recently used than every other member of their
  group.

## Known limits

- **Templated parts.** {n_family} of {n_mem} memories come from families, and within a family the
  sentence frame is the same: retrieval on them is largely entity-name matching, which favours
  lexical search. They are realistic as "many similar facts" (a team really has 14 services with
  an SLO each) but not as varied prose. Recency groups are templated the same way.
- **Vocabulary overlap.** Exact queries share a phrase with their memory by construction, and
  even paraphrase queries keep some domain nouns (mean overlap above) because a question about
  Celery or dbt can hardly avoid the word. Paraphrase scores are therefore an upper bound on
  true semantic-only recall.
- **One author, one style.** Memories and queries were written by the same hand in a similar
  register; real agent traffic is noisier (typos, pasted stack traces, several questions in
  one). Queries are short (one or two sentences).
- **Relevance is binary and incomplete by design.** Graded relevance is not recorded; a memory
  that helps a little (a related standard) is not listed. Metrics that punish a "relevant but
  unlisted" result will be somewhat pessimistic, mostly for broad tag and mixed queries.
- **Recency is synthetic.** The stale variants are neither archived nor marked superseded, as
  they would often be in a curated SAM store; the category tests ranking on `days_old` /
  `days_since_used` alone, and a retriever that ignores time can only guess among 3-4
  near-identical variants.
- **Balance.** Spaces have different sizes and the personal space is mostly facts and
  preferences; kinds are uneven (facts and project facts dominate through the families).
- **English only**, apart from Dutch and Spanish names and a few words in the personal space.
"""


def render_readme(mems: list[dict], queries: list[dict], check: dict) -> str:
    st = stats(mems, queries)
    n_core = sum(1 for m in mems if m["origin"] == "core")
    n_rec = sum(1 for m in mems if m["origin"] == "recency")
    n_fam = sum(1 for m in mems if m["origin"] == "family")
    groups = {m["group"] for m in mems if m["origin"] == "recency"}
    space_rows = []
    for (_prefix, (s, desc)), row in zip(SPACES.items(), st["mem_rows"], strict=True):
        assert row[0] == s
        space_rows.append([f"`{s}`", desc, row[1], row[2], row[3], row[4]])
    space_rows.append(["total", "", n_core, n_rec, n_fam, len(mems)])
    qrows = [[f"`{r[0]}`", *r[1:]] for r in st["query_rows"]]
    qrows.append(["total", *st["cat_totals"], len(queries)])
    overlaps = sorted(o for o, _, _ in check["paraphrase_overlaps"])
    return README_TEMPLATE.format(
        n_mem=len(mems), n_q=len(queries), seed=SEED, n_core=n_core, n_recency=n_rec,
        n_family=n_fam, n_groups=len(groups),
        space_table=table(space_rows, ["space", "domain", "core", "recency", "family", "memories"]),
        kind_table=table([[k, v] for k, v in st["kind_rows"]], ["kind", "memories"]),
        type_list=", ".join(f"{k} {v}" for k, v in st["type_rows"]),
        rel_list=", ".join(f"{k} {v}" for k, v in st["rel_rows"]),
        query_table=table(qrows, ["space", *CATEGORIES, "total"]),
        rel_sizes=", ".join(f"{k} relevant: {v} queries" for k, v in sorted(st["rel_sizes"].items())),
        para_mean=sum(overlaps) / len(overlaps), para_median=overlaps[len(overlaps) // 2],
        para_max=overlaps[-1], para_zero=sum(1 for o in overlaps if o == 0), n_para=len(overlaps),
    )


def print_summary(mems: list[dict], queries: list[dict], check: dict, samples: int = 10) -> None:
    st = stats(mems, queries)
    print(f"memories: {len(mems)}  queries: {len(queries)}")
    print("\nmemories per space (core / recency / family / total):")
    for row in st["mem_rows"]:
        print(f"  {row[0]:<16} {row[1]:>4} {row[2]:>4} {row[3]:>4} {row[4]:>5}")
    print("\nqueries per space x category (" + " / ".join(CATEGORIES) + " / total):")
    for row in st["query_rows"]:
        print(f"  {row[0]:<16} " + " ".join(f"{c:>4}" for c in row[1:]))
    print(f"  {'total':<16} " + " ".join(f"{c:>4}" for c in st["cat_totals"]) + f" {len(queries):>4}")
    print("\nkinds:", ", ".join(f"{k} {v}" for k, v in st["kind_rows"]))
    overlaps = [o for o, _, _ in check["paraphrase_overlaps"]]
    print(f"paraphrase content-word overlap: mean {sum(overlaps) / len(overlaps):.2f}, max {max(overlaps)}")
    by_id = {m["id"]: m for m in mems}
    pick = random.Random(SEED + 1).sample(sorted(queries, key=lambda q: q["qid"]), samples)
    print(f"\n{samples} seeded sample pairs:")
    for q in pick:
        print(f"\n[{q['qid']}] {q['category']} / {q['space']}" + (f" / tags={q['tags']}" if q["tags"] else ""))
        print(f"  query: {q['query']}")
        if q["active_task"]:
            print(f"  task:  {q['active_task']}")
        for rid in q["relevant"]:
            m = by_id[rid]
            extra = f" (days_old={m['days_old']}, days_since_used={m['days_since_used']})" if q["category"] == "recency" else ""
            print(f"  -> {rid} [{m['kind']}] {m['title']}{extra}")
            print(f"     {m['content'][:160].replace(chr(10), ' ')}{'...' if len(m['content']) > 160 else ''}")


def main(argv: list[str]) -> int:
    mems, queries = build()
    check = self_check(mems, queries)
    write_outputs(mems, queries)
    (OUT_DIR / "README.md").write_text(render_readme(mems, queries, check), encoding="utf-8")
    print_summary(mems, queries, check)
    if "--overlap" in argv:
        print("\nparaphrase queries with the highest overlap:")
        for o, n, q in sorted(check["paraphrase_overlaps"], key=lambda t: -t[0])[:25]:
            print(f"  {o}/{n} {q['qid']} {q['query']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
