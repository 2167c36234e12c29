"""Taking part through a study's entry link, as a worker's browser does: the start page's form posts back to
the link (agree to the consent text, or Take part), and that claims the slot (annotation.views.entry)."""

from urllib.parse import urlencode

from annotation.models import Study
from annotation.services.admission import consent


def choice_for(study: Study | None) -> str:
    """The start page's button that takes part: agree where the study asks for consent, else Take part."""
    return "agree" if study is not None and consent.is_asked(study) else "start"


def take_part(client, slug: str, params: dict | None = None, **extra):
    """POST the start page's form for the worker the link's ``params`` name; returns the response."""
    study = Study.objects.filter(slug=slug).first()
    query = f"?{urlencode(params)}" if params else ""
    return client.post(f"/join/{slug}/{query}", {"choice": choice_for(study)}, **extra)
