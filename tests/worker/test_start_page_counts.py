"""The start page a recruited worker decides on counts the items of the condition they would get: a FewCLUE
condition's own samples (N training + K test), not the whole release; the page after it says the same."""

import math
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from tests import entry_link
from tests.conftest import FEWCLUE_FIXTURE

pytestmark = pytest.mark.django_db
CLASSIFICATION_SECONDS = 15  # the default seconds per item of a classification task without figures of its own


def test_a_fewclue_start_page_promises_the_conditions_items_and_their_time():
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())
    # The fixture's EPRSTMT has 10 items in dev_few_all and 3 in its test set: the release's 13.
    call_command(
        "create_fewclue_studies",
        "--training-items", "3",
        "--test-sample", "2",
        "--tasks", "eprstmt",
        "--seed", "5",
        "--language", "",
        "--posted-reward", "0.50",
        "--open",
        stdout=StringIO(),
        stderr=StringIO(),
    )  # fmt: skip
    minutes = math.ceil((3 + 2) * CLASSIFICATION_SECONDS / 60)
    client = Client()
    page = client.get("/join/fewclue-eprstmt-paper/?worker_id=w1").content.decode()
    assert "Up to 5 items in all (3 training examples, 2 task items)." in page
    assert f"About {minutes} minutes in all." in page and "13 items" not in page

    assert entry_link.take_part(client, "fewclue-eprstmt-paper", {"worker_id": "w1"}).status_code == 302
    home = client.get("/work/").content.decode()
    assert "5 items in all (3 training examples, 2 task items)." in home and f"About {minutes} minutes" in home
