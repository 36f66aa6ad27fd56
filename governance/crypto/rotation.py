"""Key rotation: re-wrap data keys under a new master key, give spaces new data keys,
re-encrypt what old data keys sealed, and destroy data keys nothing needs any more.

Every step commits in small batches and picks up where it stopped, so each can be
interrupted and run again safely (docs/security.md has the runbook).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from core.models import Space
from core.sealing import _SealedField
from governance.crypto import cipher, datakeys, keyring
from governance.crypto.events import key_changed
from governance.models import DataKey, DataKeyState

Progress = Callable[[str], None]


def _audit(action: str, **kwargs) -> None:
    key_changed.send(sender=DataKey, action=action, **kwargs)


# --- what the apps above register -------------------------------------------------------
# Re-sealing rewrites rows of every app's models; some need more than save(). They say so
# as they start (memories.apps), so this module never names them.

@dataclass(frozen=True)
class Reseal:
    # Relations to load with the rows (what sealing_space_id() reads).
    select_related: tuple[str, ...] = ()
    # Called with each re-sealed batch (rows of the model registered with this hook): to
    # rewrite what derives from the sealed values.
    after: Callable[[list[Any]], None] | None = None


_reseal_hooks: dict[type[Model], Reseal] = {}
# Binary columns holding sealed values that are never rewritten (the audit log's payloads,
# registered by governance.audit): a retired key they still need is kept.
_kept_sealed: list[tuple[type[Model], str]] = []


def register_reseal(model: type[Model], hook: Reseal) -> None:
    _reseal_hooks[model] = hook


def register_kept_sealed(model: type[Model], column: str) -> None:
    _kept_sealed.append((model, column))


def rewrap(*, progress: Progress = lambda _: None) -> int:
    """Wrap every data key under the primary master key. Returns how many moved."""
    primary = keyring.primary()
    moved = 0
    for key_id in DataKey.objects.exclude(master_key_id=primary.key_id).values_list("pk", flat=True):
        with transaction.atomic():
            key = DataKey.objects.select_for_update().get(pk=key_id)
            if key.master_key_id == primary.key_id:
                continue
            raw = datakeys.unwrap(key.wrapped, key.space_id, key.master_key_id)
            old = key.master_key_id
            key.wrapped = datakeys.wrap(raw, key.space_id, primary)
            key.master_key_id = primary.key_id
            key.save(update_fields=["wrapped", "master_key_id"])
            _audit("key_rotate", space=key.space, target=key,
                   before={"master_key": old}, after={"master_key": primary.key_id})
        moved += 1
        progress(f"data key {key_id}: re-wrapped from '{old}' to '{primary.key_id}'")
    return moved


@transaction.atomic
def rotate_data_key(space_id: int | None) -> int:
    """Retire the space's active data key and make a new one. Returns the new key's id."""
    # The stubs refuse space_id=None / pk=None, which Django reads as IS NULL.
    old = (DataKey.objects.select_for_update()
           .filter(space_id=space_id, state=DataKeyState.ACTIVE).first())  # type: ignore[misc]
    if old is not None:
        old.state = DataKeyState.RETIRED
        old.retired_at = timezone.now()
        old.save(update_fields=["state", "retired_at"])
    new_id = datakeys.create(space_id)
    datakeys.forget_cached(space_id)
    _audit("key_rotate", space=Space.objects.filter(pk=space_id).first(),  # type: ignore[misc]
           target_type="datakey", target_id=str(new_id),
           before={"data_key": old.pk if old else None}, after={"data_key": new_id})
    return new_id


def sealed_models() -> Iterator[tuple[type[Model], list[_SealedField]]]:
    """Every model with sealed columns, to rewrite. (The append-only audit log keeps its
    sealed payloads in a plain binary column, so it is never one of them.)"""
    for model in apps.get_models():
        fields = [f for f in model._meta.concrete_fields if isinstance(f, _SealedField)]
        if fields:
            yield model, fields


def _retired_prefixes() -> list[bytes]:
    ids = DataKey.objects.filter(state=DataKeyState.RETIRED).values_list("pk", flat=True)
    return [cipher.HEADER.pack(cipher.VERSION, pk) for pk in ids]


def _sealed_with(table: str, columns: list[str], prefixes: list[bytes], pk: str, limit: int,
                 after: object = None) -> list:
    quote = connection.ops.quote_name
    where = " OR ".join(f"substring({quote(c)} from 1 for {cipher.HEADER.size}) = ANY(%s)"
                        for c in columns)
    params: list = [prefixes] * len(columns)
    sql = f"SELECT {quote(pk)} FROM {quote(table)} WHERE ({where})"
    if after is not None:
        sql += f" AND {quote(pk)} > %s"
        params.append(after)
    sql += f" ORDER BY {quote(pk)} LIMIT %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        return [row[0] for row in cursor.fetchall()]


@dataclass
class ReencryptReport:
    rows: dict[str, int] = field(default_factory=dict)
    destroyed: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)


def reencrypt(*, batch: int = 200, progress: Progress = lambda _: None) -> ReencryptReport:
    """Re-seal every value still sealed with a retired data key, then destroy the retired
    keys nothing references. Safe to interrupt: each batch commits on its own."""
    report = ReencryptReport()
    prefixes = _retired_prefixes()
    if prefixes:
        datakeys.forget_cached()
        for model, fields in sealed_models():
            columns = [f.column for f in fields]
            done, last = 0, None
            while ids := _sealed_with(model._meta.db_table, columns, prefixes, model._meta.pk.column,
                                      batch, last):
                with transaction.atomic():
                    _reseal(model, fields, ids)
                done += len(ids)
                last = ids[-1]
                progress(f"{model._meta.label}: {done} rows re-encrypted")
            report.rows[model._meta.label] = done
    for key_id in DataKey.objects.filter(state=DataKeyState.RETIRED).values_list("pk", flat=True):
        if _still_used(key_id):
            report.kept.append(key_id)
        else:
            destroy_key(key_id, reason="retired and re-encrypted")
            report.destroyed.append(key_id)
    return report


def _reseal(model: type[Model], fields: list[_SealedField], ids: list) -> None:
    hook = _reseal_hooks.get(model, Reseal())
    queryset = model._base_manager.select_for_update().filter(pk__in=ids)
    if hook.select_related:
        queryset = queryset.select_related(*hook.select_related)
    objects = list(queryset)
    for obj in objects:
        # save_base: append-only logs refuse save(), but re-sealing changes only the
        # envelope of a value, never the value, so they are re-sealed like the rest.
        obj.save_base(update_fields=[f.name for f in fields])
    if hook.after is not None:
        hook.after(objects)


def _still_used(key_id: int) -> bool:
    prefix = [cipher.HEADER.pack(cipher.VERSION, key_id)]
    tables = [(m._meta.db_table, [f.column for f in fs], m._meta.pk.column) for m, fs in sealed_models()]
    tables += [(m._meta.db_table, [column], m._meta.pk.column) for m, column in _kept_sealed]
    return any(_sealed_with(table, columns, prefix, pk, 1) for table, columns, pk in tables)


def destroy_key(key_id: int, *, reason: str) -> None:
    """Delete a data key: whatever it sealed, wherever a copy survives, is unreadable."""
    with transaction.atomic():
        key = DataKey.objects.select_for_update().filter(pk=key_id).first()
        if key is None:
            return
        space = key.space
        key.delete()
        _audit("key_destroy", space=space, target_type="datakey", target_id=str(key_id),
               note=reason)
    datakeys.forget_cached()
    cipher.forget_ciphers()
