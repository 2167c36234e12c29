"""Admin for the catalog: tasks and labels are editable; imported data is read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.conf import settings
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from tasks_app.models import Example, ExampleSet, ExampleSetItem, Label, Task, TrainingSplit
from tasks_app.texts import LABEL_FIELDS, TEXT_FIELDS, validate_translations

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
    "segment_titles",
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


def translated_languages() -> list[tuple[str, str]]:
    """The languages a task's texts can be given in besides its own (the worker UI's other languages)."""
    return [(code, name) for code, name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]


class TaskForm(forms.ModelForm):
    """The task, and its worker-facing texts per language (``Task.translations``) as one field per text.

    The translation fields are named ``<code>__description``, ``<code>__instructions``,
    ``<code>__question_types`` (lines ``CODE | Name``), ``<code>__segment_titles`` (one title a line) and
    ``<code>__label<i>__definition`` / ``__example``
    for the task's saved labels (a label added in the same save gets its fields on the next edit).
    Empty fields are left out: the worker then reads the task's own text.
    """

    question_types = QuestionTypesField(
        required=False,
        help_text="One question type per line: CODE | Name | Question, e.g. "
        "PER | Person | List all the people names in the context. Empty for tasks with one question.",
    )

    class Meta:
        model = Task
        fields = TASK_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        task = self.instance
        self.label_names = list(task.labels.values_list("name", flat=True)) if task.pk else []
        given = task.translations if isinstance(task.translations, dict) else {}
        for code, language in translated_languages():
            own = given.get(code) or {}
            for name in TEXT_FIELDS:
                self.fields[f"{code}__{name}"] = forms.CharField(
                    required=False,
                    widget=forms.Textarea(attrs={"rows": 4, "cols": 90}),
                    label=f"{name.replace('_', ' ').capitalize()} ({language})",
                    initial=own.get(name, ""),
                )
            self.fields[f"{code}__question_types"] = forms.CharField(
                required=False,
                widget=forms.Textarea(attrs={"rows": 3, "cols": 90}),
                label=f"Question type names ({language})",
                help_text="One per line: CODE | Name | Question (the question optional), for the codes above.",
                initial="\n".join(
                    " | ".join(filter(None, (c, n, (own.get("questions") or {}).get(c, ""))))
                    for c, n in (own.get("question_types") or {}).items()
                ),
            )
            titles = own.get("segment_titles")
            self.fields[f"{code}__segment_titles"] = forms.CharField(
                required=False,
                widget=forms.Textarea(attrs={"rows": 2, "cols": 90}),
                label=f"Segment titles ({language})",
                help_text="One per line, in the order of the segment titles above.",
                initial="\n".join(t for t in titles if isinstance(t, str)) if isinstance(titles, list) else "",
            )
            labels = own.get("labels") or {}
            for i, name in enumerate(self.label_names):
                for part in LABEL_FIELDS:
                    self.fields[f"{code}__label{i}__{part}"] = forms.CharField(
                        required=False,
                        widget=forms.Textarea(attrs={"rows": 2, "cols": 90}),
                        label=f"Label {name}: {part} ({language})",
                        initial=(labels.get(name) or {}).get(part, ""),
                    )

    @classmethod
    def translation_fieldsets(cls, task: Task | None) -> list[tuple[str, dict[str, Any]]]:
        label_count = task.labels.count() if task is not None and task.pk else 0
        fieldsets = []
        for code, language in translated_languages():
            names = [*(f"{code}__{name}" for name in TEXT_FIELDS), f"{code}__question_types", f"{code}__segment_titles"]
            names += [f"{code}__label{i}__{part}" for i in range(label_count) for part in LABEL_FIELDS]
            description = (
                f"The texts a worker of a study in {language} reads; an empty one shows the task's own text. "
                "The task's name and the examples are not translated."
            )
            fieldsets.append((f"Texts in {language}", {"fields": names, "description": description}))
        return fieldsets

    def _translations(self) -> dict[str, Any]:
        data = self.cleaned_data
        given = self.instance.translations if isinstance(self.instance.translations, dict) else {}
        result = {code: texts for code, texts in given.items() if code not in dict(translated_languages())}
        for code, _language in translated_languages():
            texts: dict[str, Any] = {}
            for name in TEXT_FIELDS:
                if (data.get(f"{code}__{name}") or "").strip():
                    texts[name] = data[f"{code}__{name}"].strip()
            types: dict[str, str] = {}
            questions: dict[str, str] = {}
            for number, line in enumerate((data.get(f"{code}__question_types") or "").splitlines(), start=1):
                if not line.strip():
                    continue
                qt_code, sep, rest = (part.strip() for part in line.partition("|"))
                name, _, question = (part.strip() for part in rest.partition("|"))
                if not sep or not qt_code or not name:
                    raise forms.ValidationError(
                        f"Question type names ({code}), line {number}: write CODE | Name, not {line.strip()!r}."
                    )
                types[qt_code] = name
                if question:
                    questions[qt_code] = question
            if types:
                texts["question_types"] = types
            titles = [line.strip() for line in (data.get(f"{code}__segment_titles") or "").splitlines()]
            while titles and not titles[-1]:
                titles.pop()
            if titles:
                texts["segment_titles"] = titles
            if questions:
                texts["questions"] = questions
            labels: dict[str, dict[str, str]] = {}
            for i, label in enumerate(self.label_names):
                own = {
                    p: data[f"{code}__label{i}__{p}"].strip()
                    for p in LABEL_FIELDS
                    if data.get(f"{code}__label{i}__{p}", "").strip()
                }
                if own:
                    labels[label] = own
            if labels:
                texts["labels"] = labels
            if texts:
                result[code] = texts
        return result

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        translations = self._translations()
        codes = [qt.get("code", "") for qt in cleaned.get("question_types") or self.instance.question_types or []]
        try:
            validate_translations(translations, label_names=self.label_names, question_type_codes=codes)
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages) from None  # not a form field's: the form's own errors
        self.instance.translations = translations  # a model field outside Meta.fields: set here, saved with it
        return cleaned


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    form = TaskForm
    list_display = ("name", "slug", "kind", "group", "multiple_spans", "example_count", "display_order")
    list_filter = ("kind", "group")
    search_fields = ("name", "slug")
    inlines = [LabelInline]

    def get_fieldsets(self, request: HttpRequest, obj: Task | None = None) -> Any:
        return [(None, {"fields": TASK_FIELDS}), *TaskForm.translation_fieldsets(obj)]

    def get_form(self, request: HttpRequest, obj: Task | None = None, change: bool = False, **kwargs: Any) -> Any:
        # The translation fields are the form's own (one per saved label), not model fields: build the form
        # from the model's fields only, and let the fieldsets place the rest.
        kwargs["fields"] = [f for f in TASK_FIELDS if f not in self.get_readonly_fields(request, obj)]
        return super().get_form(request, obj, change=change, **kwargs)

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
        "choices",
        "marks",
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
    list_display = ("__str__", "task", "role", "name", "split", "shots", "item_count", "source_file")
    list_filter = ("task", "role", "shots")
    list_select_related = ("task", "split")
    readonly_fields = ("task", "role", "name", "split", "shots", "source_file", "content_hash")
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
