"""Replace every stored copy of an identifier, in every text and JSON column of every table.

Walking the columns, not a list of known places, means a field added later is covered without anyone
remembering this module; the test of withdrawal searches the same way for what is left."""

from collections.abc import Iterator
from typing import Any

from django.apps import apps
from django.db import models
from django.db.models.functions import Cast

_TEXT = (models.CharField, models.TextField)


def text_columns() -> Iterator[tuple[type[models.Model], models.Field]]:
    """Every concrete text or JSON column of every installed model (file paths and keys excluded)."""
    for model in apps.get_models():
        if model._meta.proxy or not model._meta.managed:
            continue
        for field in model._meta.concrete_fields:
            if field.is_relation or field.primary_key or isinstance(field, models.FileField):
                continue
            if isinstance(field, (*_TEXT, models.JSONField)):
                yield model, field


def rows_containing(model: type[models.Model], field: models.Field, needle: str) -> models.QuerySet:
    """The rows of ``model`` whose ``field`` holds ``needle`` somewhere (in a JSON column, in any value)."""
    rows = model._base_manager.all()
    if isinstance(field, models.JSONField):
        return rows.annotate(_as_text=Cast(field.name, models.TextField())).filter(_as_text__contains=needle)
    return rows.filter(**{f"{field.name}__contains": needle})


def _replace(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    if isinstance(value, dict):
        return {_replace(k, old, new): _replace(v, old, new) for k, v in value.items()}
    return value


def replace_everywhere(old: str, new: str) -> dict[str, int]:
    """Replace ``old`` by ``new`` in every stored copy; returns "table.column" -> rows changed."""
    changed: dict[str, int] = {}
    for model, field in text_columns():
        count = 0
        for row in rows_containing(model, field, old).only("pk", field.name):
            value = _replace(getattr(row, field.attname), old, new)
            if isinstance(field, _TEXT) and field.max_length:
                value = value[: field.max_length]
            model._base_manager.filter(pk=row.pk).update(**{field.attname: value})
            count += 1
        if count:
            changed[f"{model._meta.db_table}.{field.column}"] = count
    return changed


def count_everywhere(needle: str) -> dict[str, int]:
    """Where ``needle`` is stored: "table.column" -> rows (what a withdrawal's dry run shows)."""
    found = {}
    for model, field in text_columns():
        n = rows_containing(model, field, needle).count()
        if n:
            found[f"{model._meta.db_table}.{field.column}"] = n
    return found
