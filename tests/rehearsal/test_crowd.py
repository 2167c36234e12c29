"""The simulated crowd's reading of pages and items (the whole walk is in test_rehearse_study)."""

from annotation.rehearsal.crowd import form_fields, read_instruction

START_PAGE = """<main>
<form method="post" action="/join/s/?PROLIFIC_PID=p1&amp;STUDY_ID=S" class="consent-form" id="entry-form">
<input type="hidden" name="text_hash" value="abc123">
<button type="submit" name="choice" value="agree">I agree</button>
<button type="submit" name="choice" value="decline">I do not agree</button></form></main>"""


def test_the_start_page_form_gives_its_action_hidden_fields_and_choices():
    action, hidden, choices = form_fields(START_PAGE, "entry-form")
    assert action == "/join/s/?PROLIFIC_PID=p1&STUDY_ID=S"
    assert hidden == {"text_hash": "abc123"} and choices == ["agree", "decline"]
    assert form_fields(START_PAGE, "survey-form") is None


def _item(question, context, kind="label"):
    return {"question": question, "context": context, "answer_kind": kind}


def test_an_attention_check_is_answered_from_what_it_asks():
    label = read_instruction(_item("To show you are reading, choose 'negative'.", "A check."), ["positive", "negative"])
    assert label is not None and label.body == {"label": "negative"}
    span = read_instruction(
        _item("Select the word 'river' (and nothing else).", "We walked by the river.", "spans"), []
    )
    assert span is not None and span.body["spans"] == [{"start": 17, "end": 22, "text": "river"}]


def test_a_check_whose_instruction_is_not_shown_cannot_be_read():
    shown = _item("What is the relationship between these sentences?", ["This item checks reading.", "Fine."])
    assert read_instruction(shown, ["entailment", "neutral", "contradiction"]) is None
