"""The standard design can be built for all six CLUES tasks from the real release."""

import pytest
from django.core.management import call_command

from annotation.models import Condition, Study


@pytest.mark.clues
@pytest.mark.django_db
def test_six_standard_studies_from_the_real_release_with_nested_training_sets(clues_dir, capsys):
    call_command("import_clues", str(clues_dir), "--split", "1", "--build-nested")
    call_command("create_clues_studies", "--split", "1", "--open", "--posted-reward", "1.50")
    assert Study.objects.filter(status=Study.Status.OPEN).count() == 6
    for study in Study.objects.all():
        sets = {
            c.shots: set(c.training_set.items.values_list("example_id", flat=True))
            for c in Condition.objects.filter(study=study, shots__gt=0)
        }
        assert sorted(sets) == [10, 20, 30]
        assert sets[10] < sets[20] < sets[30], study.slug
    assert "skipped" not in capsys.readouterr().err
