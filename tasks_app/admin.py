"""Admin for the catalog: tasks and labels are editable; imported data is read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from tasks_app.models import Example, ExampleSet, ExampleSetItem, Label, Task, TrainingSplit

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class _ExampleCount(TypedDict):
    _examples: int


class _ItemCount(TypedDict):
    _items: int


class LabelForm(forms.ModelForm):
    class Meta:
        model = Label
        fields = ("name", "definition", "example", "position")
        # Sized to share a laptop-wide row: the default 40x10 textarea and a 300-character input overflowed.
        widgets = {
            "name": forms.TextInput(attrs={"size": 14}),
            "definition": forms.Textarea(attrs={"rows": 3, "cols": 36}),
            "example": forms.Textarea(attrs={"rows": 3, "cols": 36}),
            "position": forms.NumberInput(attrs={"style": "width: 4em"}),
        }


class LabelInline(admin.TabularInline):
    model = Label
    form = LabelForm
    extra = 0
    fields = ("name", "definition", "example", "position")


TASK_FIELDS = (
    "slug",
    "name",
    "worker_title",
    "kind",
    "group",
    "description",
    "worker_question",
    "instructions",
    "multiple_spans",
    "overlapping_spans",
    "empty_answer_allowed",
    "question_types",
    "display_order",
)


class QuestionTypesField(forms.CharField):
    """Question types as lines ``CODE | Name | Question`` instead of raw JSON (stored as the same list)."""

    widget = forms.Textarea(attrs={"rows": 4, "cols": 90})

    def prepare_value(self, value: object) -> object:
        if isinstance(value, list):
            return "\n".join(f"{qt.get('code', '')} | {qt.get('name', '')} | {qt.get('question', '')}" for qt in value)
        return value

    def to_python(self, value: object) -> list[dict[str, str]]:  # type: ignore[override]
        text = super().to_python(value) or ""
        types: list[dict[str, str]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            parts = [part.strip() for part in line.split("|")]
            if len(parts) != 3 or not all(parts):
                raise forms.ValidationError(
                    f"Line {number}: write CODE | Name | Question (three parts, none empty), not {line.strip()!r}."
                )
            code, name, question = parts
            if any(qt["code"] == code for qt in types):
                raise forms.ValidationError(f"Line {number}: the code {code!r} is used twice.")
            types.append({"code": code, "name": name, "question": question})
        return types


class TaskForm(forms.ModelForm):
    question_types = QuestionTypesField(
        required=False,
        help_text="One question type per line: CODE | Name | Question, e.g. "
        "PER | Person | List all the people names in the context. Empty for tasks with one question.",
    )

    class Meta:
        model = Task
        fields = TASK_FIELDS


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    form = TaskForm
    list_display = ("name", "slug", "kind", "group", "multiple_spans", "example_count", "display_order")
    list_filter = ("kind", "group")
    search_fields = ("name", "slug")
    inlines = [LabelInline]
    fields = TASK_FIELDS

    def get_queryset(self, request: HttpRequest) -> QuerySet[Task]:
        return super().get_queryset(request).annotate(_examples=Count("examples"))

    @admin.display(description="examples", ordering="_examples")
    def example_count(self, obj: WithAnnotations[Task, _ExampleCount]) -> int:
        return obj._examples

    def get_readonly_fields(self, request: HttpRequest, obj: Task | None = None) -> tuple[str, ...]:
        # The slug and kind are what imported data and studies refer to.
        return ("slug", "kind") if obj else ()


@admin.register(Example)
class ExampleAdmin(admin.ModelAdmin):
    list_display = ("source_id", "task", "question_type", "short_question", "gold_answers")
    list_filter = ("task", "question_type")
    search_fields = ("=source_id", "source_id")
    list_select_related = ("task",)
    readonly_fields = (
        "task",
        "source_id",
        "fingerprint",
        "context",
        "question",
        "question_type",
        "gold_answers",
        "gold_spans",
        "alternative_answers",
        "extra",
    )

    @admin.display(description="question")
    def short_question(self, obj: Example) -> str:
        return obj.question if len(obj.question) <= 60 else obj.question[:59] + "…"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # examples come from the importer


class ExampleSetItemInline(admin.TabularInline):
    model = ExampleSetItem
    extra = 0
    fields = ("position", "example")
    readonly_fields = ("position", "example")
    can_delete = False
    ordering = ("position",)

    def has_add_permission(self, request: HttpRequest, obj: ExampleSet | None = None) -> bool:
        return False


@admin.register(ExampleSet)
class ExampleSetAdmin(admin.ModelAdmin):
    list_display = ("__str__", "task", "role", "split", "shots", "item_count", "source_file")
    list_filter = ("task", "role", "shots")
    list_select_related = ("task", "split")
    readonly_fields = ("task", "role", "split", "shots", "source_file", "content_hash")
    inlines = [ExampleSetItemInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ExampleSet]:
        return super().get_queryset(request).annotate(_items=Count("items"))

    @admin.display(description="items", ordering="_items")
    def item_count(self, obj: WithAnnotations[ExampleSet, _ItemCount]) -> int:
        return obj._items

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(TrainingSplit)
class TrainingSplitAdmin(admin.ModelAdmin):
    list_display = ("__str__", "task", "number", "is_nested", "nested_built")
    list_filter = ("task", "is_nested", "nested_built")
    readonly_fields = ("task", "number", "is_nested", "nested_built")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
