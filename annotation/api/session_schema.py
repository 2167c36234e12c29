"""OpenAPI shapes of the worker's session API (annotation.api.session), for drf-spectacular only.

The views validate through the services (to give stable error codes), so
these serializers describe the JSON; they do not parse it.
"""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

from annotation.api.errors import ErrorSerializer
from annotation.services.session import signals, timing

ERROR = ErrorSerializer  # the API's one error shape (component Error)
SPAN = inline_serializer(
    "SpanInput",
    {
        "start": serializers.IntegerField(help_text="Start offset, inclusive."),
        "end": serializers.IntegerField(help_text="End offset, exclusive."),
        "text": serializers.CharField(help_text="Must equal context[start:end]."),
    },
)
_SIGNAL_TEXTS = {
    "visible_ms": "Time the item was visible (the page not hidden), ms.",
    "hidden_count": "How often the page lost focus or was hidden while the item was open.",
    "hidden_ms": "Total time away (unfocused or hidden), ms.",
    "copy_count": "How often text of the item was copied (never what).",
}


def _signals(name: str) -> serializers.Serializer:
    fields: dict[str, serializers.Field] = {
        key: serializers.IntegerField(min_value=0, max_value=signals.MAXIMUM[key], help_text=_SIGNAL_TEXTS[key])
        for key in signals.FIELDS
    }
    return inline_serializer(
        name,
        fields,
        required=False,
        help_text="Optional integrity signals (docs/session-api.md): exactly these four keys; an unknown or "
        "missing key, or a value that is not a whole number in range, is refused (400 invalid_signals).",
    )


SUBMIT = inline_serializer(
    "SubmitInput",
    {
        "item": serializers.IntegerField(help_text="The current item's id."),
        "label": serializers.CharField(required=False, help_text="Classification: one of the task's labels."),
        "spans": serializers.ListField(child=SPAN, required=False, help_text="Span tasks: the selected spans."),
        "offset_unit": serializers.ChoiceField(
            ["codepoint", "utf16"],
            required=False,
            default="codepoint",
            help_text="codepoint: Python str indices (default); utf16: JavaScript string offsets.",
        ),
        "no_answer": serializers.BooleanField(required=False, default=False, help_text="Span tasks: the empty answer."),
        "confidence": serializers.IntegerField(
            min_value=1, max_value=5, help_text="1 strongly disagree .. 5 strongly agree."
        ),
        "signals": _signals("SubmitSignals"),
    },
)
SKIP = inline_serializer(
    "SkipInput",
    {
        "item": serializers.IntegerField(),
        "confidence": serializers.IntegerField(required=False, min_value=1, max_value=5),
        "signals": _signals("SkipSignals"),
    },
)
EVENT = inline_serializer(
    "EventInput",
    {"item": serializers.IntegerField(), "type": serializers.ChoiceField(list(timing.EVENT_KINDS))},
)


def _obj(name: str, fields: dict[str, serializers.Field], **kwargs: Any) -> serializers.Serializer:
    return inline_serializer(name, fields, **kwargs)


SPAN_OUT = _obj(
    "SpanOutput",
    {
        "start": serializers.IntegerField(help_text="Python str index, inclusive."),
        "end": serializers.IntegerField(help_text="Python str index, exclusive."),
        "text": serializers.CharField(),
        "utf16_start": serializers.IntegerField(help_text="The same offset in UTF-16 code units (JavaScript)."),
        "utf16_end": serializers.IntegerField(),
    },
)
STORED = _obj(
    "StoredAnswer",
    {
        "item": serializers.IntegerField(),
        "phase": serializers.ChoiceField(["training", "test"]),
        "status": serializers.ChoiceField(["answered", "no_answer", "skipped"]),
        "label": serializers.CharField(),
        "answer": serializers.ListField(child=serializers.CharField(), help_text="The answer set as strings."),
        "spans": SPAN_OUT.__class__(many=True),
        "confidence": serializers.IntegerField(allow_null=True),
        "submitted_at": serializers.DateTimeField(),
    },
)
PROGRESS = _obj(
    "Progress",
    {
        "phase": serializers.CharField(),
        "done": serializers.IntegerField(),
        "total": serializers.IntegerField(),
        "number": serializers.IntegerField(),
        "finished": serializers.BooleanField(),
        "text": serializers.CharField(help_text='e.g. "Item 37 of 210".'),
    },
)
LABEL = _obj(
    "LabelHelp",
    {
        "name": serializers.CharField(),
        "definition": serializers.CharField(),
        "example": serializers.CharField(),
        "key": serializers.CharField(help_text="Keyboard key on the page."),
    },
)
OPTION = _obj(
    "ItemOption",
    {
        "name": serializers.CharField(help_text='The label to submit for this option ("0", "1", ...).'),
        "text": serializers.CharField(help_text="What the option says (e.g. one of a CHID item's idioms)."),
        "key": serializers.CharField(help_text="Keyboard key on the page."),
    },
)
MARK = _obj(
    "ContextMark",
    {
        "start": serializers.IntegerField(help_text="Python str index, inclusive."),
        "end": serializers.IntegerField(help_text="Python str index, exclusive."),
        "text": serializers.CharField(),
        "role": serializers.CharField(help_text='What the span is, e.g. "span1", "span2".'),
        "utf16_start": serializers.IntegerField(),
        "utf16_end": serializers.IntegerField(),
    },
)
TASK = _obj(
    "SessionTask",
    {
        "name": serializers.CharField(help_text="The neutral title workers see (never the dataset's name)."),
        "kind": serializers.CharField(),
        "description": serializers.CharField(),
        "instructions": serializers.CharField(),
        "multiple_spans": serializers.BooleanField(),
        "labels": LABEL.__class__(many=True),
    },
)
ITEM = _obj(
    "SessionItem",
    {
        "item": serializers.IntegerField(help_text="Send this id with submit, skip and events."),
        "phase": serializers.ChoiceField(["training", "test"]),
        "position": serializers.IntegerField(),
        "question": serializers.CharField(),
        "question_type": serializers.CharField(),
        "question_type_name": serializers.CharField(),
        "context": serializers.JSONField(help_text="A string, or [sentence 1, sentence 2] for sentence pairs."),
        "context_kind": serializers.ChoiceField(["text", "pair"]),
        "segment_titles": serializers.ListField(
            child=serializers.CharField(), help_text="The title of each part of a list context ([] for a string)."
        ),
        "marks": MARK.__class__(many=True, help_text="Spans of a string context to show highlighted."),
        "options": OPTION.__class__(
            many=True,
            help_text="The item's own options (its label i names options[i]); [] when the task's labels are them.",
        ),
        "answer_kind": serializers.ChoiceField(["label", "spans"]),
        "multiple_spans": serializers.BooleanField(),
        "overlapping_spans": serializers.BooleanField(help_text="May spans overlap (nested names)?"),
        "empty_answer_allowed": serializers.BooleanField(
            help_text="May the answer be 'no answer'? False for a span task whose gold is never empty "
            "(ReCoRD) and for classification; submit then refuses no_answer (400 no_answer_not_allowed)."
        ),
        "max_spans": serializers.IntegerField(
            help_text="The most spans an answer to this item takes (50, or fewer for a short context)."
        ),
        "skip_allowed": serializers.BooleanField(),
        "locked": serializers.BooleanField(),
        "your_answer": STORED.__class__(required=False, help_text="Only for a locked item."),
    },
    allow_null=True,
)
COMPLETION = _obj(
    "Completion",
    {
        "code": serializers.CharField(),
        "kind": serializers.ChoiceField(["redirect", "form_post", "code"]),
        "url": serializers.CharField(),
        "fields": serializers.DictField(child=serializers.CharField()),
        "outcome": serializers.ChoiceField(
            ["completed", "screened_out", "attention_failed", "declined"],
            help_text="Which of the study's codes this is (annotation.services.state.outcomes).",
        ),
    },
    allow_null=True,
)
CONSENT_TEXT = _obj(
    "ConsentText",
    {
        "text": serializers.CharField(help_text="The consent text (plain text or Markdown)."),
        "text_hash": serializers.CharField(help_text="SHA-256 of the text: send it back when agreeing."),
    },
    allow_null=True,
)
SURVEY_QUESTION = _obj(
    "SurveyQuestion",
    {
        "key": serializers.CharField(),
        "type": serializers.ChoiceField(["single", "multiple", "number", "text"]),
        "label": serializers.CharField(),
        "options": serializers.ListField(child=serializers.CharField(), required=False),
        "required": serializers.BooleanField(required=False),
        "min": serializers.FloatField(required=False),
        "max": serializers.FloatField(required=False),
    },
)
SURVEY_DUE = _obj(
    "SurveyDue",
    {
        "placement": serializers.ChoiceField(["before_training", "after_test"]),
        "questions": SURVEY_QUESTION.__class__(many=True),
    },
    allow_null=True,
)
CONSENT = inline_serializer(
    "ConsentInput",
    {
        "agree": serializers.BooleanField(help_text="true: agree; false: decline (ends the participation)."),
        "text_hash": serializers.CharField(required=False, help_text="Required to agree: the shown text's hash."),
    },
)
SURVEY = inline_serializer(
    "SurveyInput",
    {
        "answers": serializers.DictField(
            child=serializers.JSONField(), help_text="Question key -> answer (text, number or list of options)."
        )
    },
)
COMPREHENSION = inline_serializer(
    "ComprehensionInput",
    {
        "answers": serializers.DictField(
            child=serializers.JSONField(), help_text="Question key -> the option chosen (a list where multiple)."
        )
    },
)
COMPREHENSION_QUESTION = _obj(
    "ComprehensionQuestion",
    {
        "key": serializers.CharField(),
        "label": serializers.CharField(),
        "options": serializers.ListField(child=serializers.CharField()),
        "multiple": serializers.BooleanField(help_text="true: choose every right option; false: one."),
    },
)
COMPREHENSION_DUE = _obj(
    "ComprehensionDue",
    {
        "questions": COMPREHENSION_QUESTION.__class__(many=True),
        "attempt": serializers.IntegerField(help_text="1, or 2 after a failed first attempt (the last chance)."),
        "wrong": serializers.ListField(
            child=serializers.CharField(), help_text="The keys the failed first attempt got wrong."
        ),
    },
    allow_null=True,
)
SESSION = _obj(
    "Session",
    {
        "state": serializers.CharField(),
        "shots": serializers.IntegerField(),
        "task": TASK,
        "progress": PROGRESS.__class__(allow_null=True),
        "item": ITEM,
        "completion": COMPLETION,
        "closes_at": serializers.DateTimeField(
            allow_null=True,
            help_text="Once the study has been closed: until when the worker's answers are taken (then 409 "
            "study_closed). Null while the study is not closed.",
        ),
        "pending": serializers.ChoiceField(
            ["consent", "comprehension", "survey"],
            allow_null=True,
            help_text="What the worker must do first: answer the consent text, then pass the comprehension "
            "check, then a survey that is due.",
        ),
        "consent": CONSENT_TEXT,
        "comprehension": COMPREHENSION_DUE,
        "survey": SURVEY_DUE,
    },
)
REVEAL = _obj(
    "Reveal",
    {
        "item": serializers.IntegerField(),
        "your_answer": STORED,
        "gold": _obj(
            "Gold",
            {
                "answers": serializers.ListField(child=serializers.CharField()),
                "texts": serializers.ListField(
                    child=serializers.CharField(),
                    help_text="What each gold answer says on this item: an option's text where the item has "
                    "its own options, else the answer.",
                ),
                "spans": SPAN_OUT.__class__(many=True),
                "empty": serializers.BooleanField(help_text="The gold answer is the empty set."),
            },
        ),
        "matches": _obj("Match", {"text": serializers.CharField(), "in_gold": serializers.BooleanField()}, many=True),
        "score": serializers.FloatField(help_text="The item's S1 (shown small, for researchers)."),
        "feedback": _obj(
            "RevealFeedback",
            {
                "unit": serializers.ChoiceField(
                    ["label", "name", "answer"], help_text="What one answer is called on the page."
                ),
                "gold": serializers.IntegerField(help_text="How many answers the gold has (0: the empty set)."),
                "yours": serializers.IntegerField(help_text="How many answers the worker gave."),
                "found": serializers.IntegerField(help_text="How many of the worker's answers are in the gold."),
            },
            help_text='The counts the page puts in words ("3 of 4 names right"), as S1 compares the sets.',
        ),
        "verdict": serializers.ChoiceField(["correct", "partly correct", "incorrect"]),
        "correct": serializers.BooleanField(),
    },
)
LOCKED = _obj(
    "Locked",
    {
        "answer": STORED,
        "step_finished": serializers.BooleanField(),
        "state": serializers.CharField(help_text="The participation's state after this answer."),
        "reveal": REVEAL.__class__(required=False, help_text="Training items only."),
        "next": _obj(
            "NextItem",
            {"progress": PROGRESS, "item": ITEM},
            required=False,
            help_text="Test items only, unless it was the last: the next item, already marked as shown "
            "(the page renders it without another request).",
        ),
    },
)
PROGRESS_BOTH = _obj(
    "SessionProgress",
    {
        "state": serializers.CharField(),
        "training": PROGRESS.__class__(allow_null=True),
        "test": PROGRESS.__class__(allow_null=True),
    },
)
RECORDED = _obj("EventRecorded", {"recorded": serializers.BooleanField(help_text="False for a locked item.")})
ERRORS = {400: ERROR, 403: ERROR, 409: ERROR}
# Routes with an id in the path: an id that is not an integer matches no route (annotation.api.urls' not_found).
NOT_FOUND = OpenApiResponse(ERROR, description="No such route (an item id that is not an integer)")
