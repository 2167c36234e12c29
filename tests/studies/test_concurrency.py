"""Race-safe assignment on PostgreSQL: real concurrent connections, one per thread.

The claim is ``entry.join_study``, what the entry link's POST (agree, or Start) calls; the last test
races that POST itself after the workers have only opened the link.

200 entries start together on 40 threads (PostgreSQL's default
max_connections is 100, shared with other test runs), many of them repeats
of the same worker ids, some into a second study of the same task at the
same moment, some from workers who took part before.
"""

import random
import threading
from collections import Counter, defaultdict

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.test import Client

from annotation.models import Participation, ParticipationEvent, Study, Worker
from annotation.services.admission import entry
from annotation.services.admission.entry import Outcome
from annotation.services.studies import studies
from tests.factories import ParticipationFactory, WorkerFactory, make_classification_task
from tests.studies.conftest import inhouse
from tests.threads import bounded_barrier, join_all, start_threads

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
State = Participation.State
THREADS = 40
ENTRIES = 200


def _open_study(task, slug, workers=3):
    study = studies.create_standard_design(task=task, split_number=1, slug=slug, workers_per_condition=workers)
    return studies.change_status(study=study, to_status=Study.Status.OPEN)


def _run_concurrently(entries: list[tuple[int, str]]) -> list[tuple[int, str, object]]:
    """Each (study id, worker id) entry on one of THREADS threads, all released at once."""
    barrier = bounded_barrier(THREADS)
    results, errors = [], []
    lock = threading.Lock()
    shares = [entries[i::THREADS] for i in range(THREADS)]

    def work(share):
        try:
            barrier.wait()
            for study_id, worker_id in share:
                result = entry.join_study(study=Study.objects.get(pk=study_id), params=inhouse(worker_id))
                with lock:
                    results.append((study_id, worker_id, result))
        except Exception as exc:
            with lock:
                errors.append(repr(exc))
        finally:
            connection.close()

    join_all(start_threads(work, [(share,) for share in shares]))
    assert errors == []
    assert len(results) == len(entries)
    return results


def test_two_hundred_simultaneous_entries_fill_exactly_n_per_condition():
    task = make_classification_task(slug="race")
    main, twin = _open_study(task, "main"), _open_study(task, "twin")
    veteran_ids = [f"old{i}" for i in range(5)]
    earlier = _open_study(task, "earlier")
    for slot, wid in enumerate(veteran_ids):
        ParticipationFactory(
            condition=earlier.conditions.get(shots=(0, 10, 20, 30)[slot % 4]),
            slot_index=slot // 4,
            worker=WorkerFactory(external_id=wid),
            state=State.ABANDONED,
        )
    rng = random.Random(7)
    fresh_ids = [f"w{i:02d}" for i in range(45)]
    entries = [(main.pk, rng.choice(fresh_ids + veteran_ids)) for _ in range(ENTRIES - 40)]
    # The same people, into the other study: 24 of them, each at least once. Whichever 12 the main study
    # takes first, 12 are left for the twin, so both must fill whatever the interleaving.
    twin_ids = fresh_ids[:24]
    entries += [(twin.pk, wid) for wid in twin_ids] + [(twin.pk, rng.choice(twin_ids)) for _ in range(16)]
    assert len(entries) == ENTRIES
    assert len({wid for sid, wid in entries if sid == main.pk and wid in fresh_ids}) >= 24
    rng.shuffle(entries)

    results = _run_concurrently(entries)

    # Exactly N holding participations per condition, each slot number once.
    for study in (main, twin):
        per_condition = Counter(
            Participation.objects.filter(study=study, state__in=Participation.HOLDING_STATES).values_list(
                "condition__shots", flat=True
            )
        )
        assert per_condition == {0: 3, 10: 3, 20: 3, 30: 3}, (study.slug, per_condition)
        slots = list(Participation.objects.filter(study=study).values_list("condition_id", "slot_index"))
        assert len(slots) == len(set(slots)) == 12 and {s for _, s in slots} == {0, 1, 2}

    # No worker in two conditions or studies of the task; no duplicate workers; one claim event each.
    in_task = list(Participation.objects.filter(task=task).values_list("worker_id", flat=True))
    assert len(in_task) == len(set(in_task)) == 24 + len(veteran_ids)
    assert Worker.objects.count() == Worker.objects.values("platform", "external_id").distinct().count()
    claims = Counter(
        ParticipationEvent.objects.filter(to_state=State.CLAIMED).values_list("participation_id", flat=True)
    )
    assert set(claims.values()) == {1} and len(claims) == 24

    # Everyone else was told politely: full, already took part, or (same study, same person) resumed.
    joined = {(r.study.pk, wid): r.participation.pk for sid, wid, r in results if r.outcome == Outcome.JOINED}
    assert len(joined) == 24
    by_outcome = defaultdict(int)
    for study_id, wid, result in results:
        by_outcome[result.outcome] += 1
        if result.outcome == Outcome.RESUMED:
            assert joined[(study_id, wid)] == result.participation.pk
        elif result.outcome == Outcome.ALREADY_TOOK_PART:
            assert wid in veteran_ids or any(w == wid for (_, w) in joined)
        else:
            assert result.outcome in (Outcome.JOINED, Outcome.FULL)
    assert all(wid not in veteran_ids for (_, wid) in joined)
    print(f"\n200 concurrent entries on {THREADS} connections: {dict(by_outcome)}")


def test_the_database_alone_refuses_a_fourth_holding_worker_in_a_full_condition():
    task = make_classification_task(slug="guard")
    study = _open_study(task, "guard")
    condition = study.conditions.get(shots=0)
    for slot in range(3):
        ParticipationFactory(condition=condition, slot_index=slot, state=State.TEST)
    for slot in range(3):
        with pytest.raises(IntegrityError), transaction.atomic():
            ParticipationFactory(condition=condition, slot_index=slot, state=State.CLAIMED)
    released = ParticipationFactory(condition=condition, slot_index=1, state=State.ABANDONED)
    with pytest.raises(IntegrityError), transaction.atomic():  # nor by bringing a released one back
        Participation.objects.filter(pk=released.pk).update(state=State.TEST)
    assert Participation.objects.filter(condition=condition, state__in=Participation.HOLDING_STATES).count() == 3


def test_the_database_alone_refuses_a_second_participation_of_a_worker_in_a_task():
    task = make_classification_task(slug="once")
    first, second = _open_study(task, "once-a"), _open_study(task, "once-b")
    worker = WorkerFactory()
    ParticipationFactory(condition=first.conditions.get(shots=0), worker=worker, state=State.EXCLUDED)
    with pytest.raises(IntegrityError), transaction.atomic():
        ParticipationFactory(condition=second.conditions.get(shots=30), worker=worker, state=State.CLAIMED)
    with pytest.raises(IntegrityError), transaction.atomic():
        ParticipationFactory(condition=first.conditions.get(shots=10), worker=worker, state=State.CLAIMED)


def test_simultaneous_first_entries_of_one_worker_into_two_studies_end_with_one_worker_row():
    task_a, task_b = make_classification_task(slug="ta"), make_classification_task(slug="tb")
    study_a, study_b = _open_study(task_a, "sa", workers=30), _open_study(task_b, "sb", workers=30)
    entries = [(s.pk, f"p{i}") for i in range(20) for s in (study_a, study_b)] * 2
    results = _run_concurrently(entries)
    assert Worker.objects.count() == 20
    assert Participation.objects.count() == 40
    assert Counter(r.outcome for _, _, r in results) == {Outcome.JOINED: 40, Outcome.RESUMED: 40}


def test_racing_consent_posts_after_many_looks_fill_exactly_n_per_condition():
    """The entry's POST is the claim: 40 workers open the link (nothing held), then all agree at once."""
    task = make_classification_task(slug="looks")
    study = studies.study_create(
        task=task, slug="looks", split_number=1, workers_per_condition=2, consent_required=True, consent_text="Ok?"
    )
    study = studies.change_status(study=study, to_status=Study.Status.OPEN)
    names = [f"look{i:02d}" for i in range(THREADS)]
    looker = Client()
    for name in names:
        assert looker.get(f"/join/looks/?worker_id={name}").status_code == 200
    assert Participation.objects.count() == 0 and Worker.objects.count() == 0
    barrier = bounded_barrier(THREADS)
    codes, errors = [], []
    lock = threading.Lock()

    def agree(name):
        try:
            client = Client()
            barrier.wait()
            response = client.post(f"/join/looks/?worker_id={name}", {"choice": "agree"})
            with lock:
                codes.append(response.status_code)
        except Exception as exc:
            with lock:
                errors.append(repr(exc))
        finally:
            connections.close_all()

    join_all(start_threads(agree, [(name,) for name in names]))
    assert errors == []
    assert Counter(codes) == {302: 8, 409: THREADS - 8}  # 8 slots, the rest told the study is full
    holding = Participation.objects.filter(study=study, state__in=Participation.HOLDING_STATES)
    assert Counter(holding.values_list("condition__shots", flat=True)) == {0: 2, 10: 2, 20: 2, 30: 2}
    assert holding.filter(consented_at__isnull=False).count() == 8
    assert ParticipationEvent.objects.filter(to_state=State.CLAIMED).count() == 8
