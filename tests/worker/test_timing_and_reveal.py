"""Time on item (capped idle gaps) and the reveal service's verdicts."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Participation, Response
from annotation.services.session import answers, reveal, steps, timing
from tests.worker.conftest import make_participation, make_task_with_items

State = Participation.State


def test_gaps_count_up_to_the_idle_cap():
    now = timezone.now()
    assert timing.capped_gap_ms(now - timedelta(seconds=12), now) == 12_000
    assert timing.capped_gap_ms(now - timedelta(hours=3), now) == timing.IDLE_CAP_MS == 60_000
    assert timing.capped_gap_ms(now + timedelta(seconds=5), now) == 0  # a clock step back adds nothing
    assert timing.capped_gap_ms(None, now) == 0


@pytest.mark.django_db
def test_time_on_item_adds_each_capped_gap_from_shown_to_submit(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    item = steps.current_item(participation=p)
    t0 = timezone.now() - timedelta(minutes=30)
    timing.mark_shown(item, now=t0)
    for seconds, kind in ((10, "heartbeat"), (25, "heartbeat"), (600, "blur"), (605, "focus")):
        item.refresh_from_db()
        timing.record_event(participation=p, response=item, kind=kind, now=t0 + timedelta(seconds=seconds))
    answers.submit(participation=p, item_id=item.pk, label="positive", confidence=3, now=t0 + timedelta(seconds=615))
    item.refresh_from_db()
    # 10 + 15 + 60 (575 s idle, capped) + 5 + 10
    assert item.active_ms == 100_000 and item.blur_count == 1
    assert item.shown_at == t0 and item.submitted_at == t0 + timedelta(seconds=615)


@pytest.mark.django_db
def test_an_unknown_event_kind_is_refused(sst_task):
    p = make_participation(sst_task, state=State.TEST)
    item = steps.current_item(participation=p)
    with pytest.raises(ValueError):
        timing.record_event(participation=p, response=item, kind="scroll")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "gold, picked, verdict, score",
    [
        (["Ada Lovelace", "Charles Babbage"], ["Ada Lovelace"], "partly correct", 2 / 3),
        (["Ada Lovelace", "Charles Babbage"], ["Ada Lovelace", "Charles Babbage"], "correct", 1.0),
        (["Ada Lovelace"], [], "incorrect", 0.0),
        ([], [], "correct", 1.0),
    ],
)
def test_the_reveal_shows_gold_beside_the_answer_with_the_items_s1(db, gold, picked, verdict, score):
    context = "Ada Lovelace met Charles Babbage ."
    task = make_task_with_items(slug="rv", test=[(context, gold)], train=[(context, gold)])
    p = make_participation(task, shots=10, state=State.TRAINING)
    item = steps.current_item(participation=p)
    spans = [{"start": context.index(t), "end": context.index(t) + len(t), "text": t} for t in picked]
    result = answers.submit(participation=p, item_id=item.pk, spans=spans, no_answer=not picked, confidence=3)
    shown = reveal.reveal_payload(result.response, result.spans)
    assert shown["verdict"] == verdict and shown["score"] == pytest.approx(score)
    assert shown["gold"]["answers"] == gold and shown["gold"]["empty"] is (not gold)
    assert [s["text"] for s in shown["gold"]["spans"]] == gold
    assert shown["your_answer"]["answer"] == picked
    assert reveal.reveal(participation=p, item_id=item.pk)["score"] == pytest.approx(score)


@pytest.mark.django_db
def test_the_reveal_refuses_pending_test_and_foreign_items(ner_task):
    trainee = make_participation(ner_task, shots=10, state=State.TRAINING)
    tester = make_participation(ner_task, state=State.TEST)
    pending = steps.current_item(participation=trainee)
    test_item = steps.current_item(participation=tester)
    answers.submit(participation=tester, item_id=test_item.pk, no_answer=True, confidence=3)
    with pytest.raises(reveal.NotLockedYet):
        reveal.reveal(participation=trainee, item_id=pending.pk)
    with pytest.raises(reveal.RevealNotAllowed):
        reveal.reveal(participation=tester, item_id=test_item.pk)
    with pytest.raises(answers.NotYourItem):
        reveal.reveal(participation=trainee, item_id=test_item.pk)
    assert Response.objects.get(pk=pending.pk).revealed_at is None
