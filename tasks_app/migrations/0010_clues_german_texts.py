"""The six CLUES tasks' German texts, and SQuAD's instructions that say what S1 scores (a frozen copy).

A task that already has German texts keeps them; SQuAD's English texts change only where they are still
the catalog's old ones (an admin's edit is kept).
"""

from django.db import migrations

GERMAN = {
    "sst2": {
        "worker_title": "Stimmung in Filmkritiken",
        "worker_question": "Ist der Text positiv oder negativ?",
        "description": "Jede Aufgabe ist ein kurzes Stück einer Filmkritik (auf Englisch): manchmal ein "
        "ganzer Satz, oft nur ein paar Wörter. Entscheiden Sie, ob der Verfasser den Film "
        "positiv oder negativ sieht.",
        "instructions": "Lesen Sie den Text und wählen Sie die Stimmung, die er ausdrückt. Auch "
        "Bruchstücke zählen: beurteilen Sie die Wörter, die Sie sehen.",
        "labels": {
            "positive": {
                "name": "positiv",
                "definition": "Der Text lobt den Film oder drückt Freude an ihm aus.",
                "example": "a warm, funny story that stayed with me for days",
            },
            "negative": {
                "name": "negativ",
                "definition": "Der Text kritisiert den Film oder drückt Enttäuschung aus.",
                "example": "two hours of tired jokes and wooden acting",
            },
        },
    },
    "mnli": {
        "worker_title": "Wie hängen zwei Sätze zusammen?",
        "worker_question": "Wie hängen diese beiden Sätze zusammen?",
        "description": "Jede Aufgabe ist ein Satzpaar (auf Englisch): eine Prämisse und eine Hypothese. "
        "Entscheiden Sie, ob die Prämisse die Hypothese wahr macht (folgt daraus), sie "
        "falsch macht (Widerspruch) oder keines von beiden (weder noch).",
        "instructions": "Nehmen Sie an, die Prämisse sei wahr. Fragen Sie dann: Muss die Hypothese wahr "
        "sein, muss sie falsch sein, oder ist beides möglich?",
        "labels": {
            "entailment": {
                "name": "folgt daraus",
                "definition": "Wenn die Prämisse wahr ist, muss auch die Hypothese wahr sein.",
                "example": "Prämisse: Der Laden schließt jeden Abend um sechs. "
                "Hypothese: Um Mitternacht ist der Laden nicht geöffnet.",
            },
            "neutral": {
                "name": "weder noch",
                "definition": "Die Hypothese kann wahr oder falsch sein; die Prämisse entscheidet es nicht.",
                "example": "Prämisse: Maya nahm den frühen Zug zur Arbeit. Hypothese: Maya arbeitet gern.",
            },
            "contradiction": {
                "name": "Widerspruch",
                "definition": "Wenn die Prämisse wahr ist, muss die Hypothese falsch sein.",
                "example": "Prämisse: Der See ist letzte Nacht zugefroren. Hypothese: Der See ist nie zugefroren.",
            },
        },
    },
    "conll03": {
        "worker_title": "Namen in Nachrichtensätzen finden",
        "description": "Jede Aufgabe ist ein Satz aus einer Nachrichtenmeldung (auf Englisch) und eine "
        "Frage nach einer Art von Namen: Personen, Organisationen oder Orte. Markieren "
        "Sie jeden Namen dieser Art im Satz.",
        "instructions": "Markieren Sie jeden passenden Namen als Abschnitt des Satzes; ein Name kann "
        "mehrmals vorkommen. Gibt es keinen, antworten Sie, dass es keinen gibt.",
        "question_types": {"PER": "Personen", "ORG": "Organisationen", "LOC": "Orte"},
        "questions": {
            "PER": "Markieren Sie alle Namen von Personen im Text",
            "ORG": "Markieren Sie alle Namen von Organisationen im Text",
            "LOC": "Markieren Sie alle Namen von Orten im Text",
        },
    },
    "wikiann": {
        "worker_title": "Namen in kurzen Texten finden",
        "description": "Jede Aufgabe ist ein kurzes Stück einer Wikipedia-Seite (auf Englisch) und eine "
        "Frage nach einer Art von Namen: Personen, Organisationen oder Orte. Markieren "
        "Sie jeden Namen dieser Art im Text.",
        "instructions": "Markieren Sie jeden passenden Namen als Abschnitt; nehmen Sie den ganzen Namen "
        "(etwa den vollen Namen eines Teams oder Albums). Gibt es keinen, antworten "
        "Sie, dass es keinen gibt.",
        "question_types": {"PER": "Personen", "ORG": "Organisationen", "LOC": "Orte"},
        "questions": {
            "PER": "Markieren Sie alle Namen von Personen im Text",
            "ORG": "Markieren Sie alle Namen von Organisationen im Text",
            "LOC": "Markieren Sie alle Namen von Orten im Text",
        },
    },
    "squad2": {
        "worker_title": "Fragen zu einem Absatz beantworten",
        "description": "Jede Aufgabe ist ein Absatz aus Wikipedia (auf Englisch) und eine Frage dazu. "
        "Markieren Sie den Teil des Absatzes, der die Frage beantwortet, oder sagen Sie, "
        "dass der Absatz sie nicht beantwortet.",
        "instructions": "Markieren Sie den Teil des Absatzes, der die Frage beantwortet. Eine Antwort "
        "gilt oft in mehreren Fassungen, einer kürzeren und einer längeren (etwa „1794 "
        "and 1802“ und „between 1794 and 1802“): für die volle Punktzahl markieren Sie "
        "jede Fassung (Markierungen dürfen sich überlappen), und jede Antwort, wenn es "
        "mehrere gibt. Manche Fragen haben im Absatz keine Antwort: dann antworten Sie, "
        "dass es keine gibt, statt zu raten.",
    },
    "record": {
        "worker_title": "Den fehlenden Namen einsetzen",
        "description": "Jede Aufgabe ist ein Nachrichtenartikel (auf Englisch) mit seinen Kernpunkten "
        "und ein Satz, in dem ein Name durch @placeholder ersetzt wurde. Finden Sie im "
        "Artikel den Namen, der an die Stelle von @placeholder gehört.",
        "instructions": "Markieren Sie eine Erwähnung der Person, des Ortes oder der Sache im Artikel, "
        "die @placeholder ausfüllt.",
    },
}

# The catalog's earlier texts (0002's and a later catalog's): only these are replaced.
SQUAD_OLD = {
    "description": (
        "Each item is a paragraph from Wikipedia and a question about it. Mark the shortest part of the "
        "paragraph that answers the question, or say that the paragraph does not answer it.",
    ),
    "instructions": (
        "Select one span of the paragraph. Some questions have no answer in the paragraph: then answer that "
        "there is none rather than guessing.",
        "Select the span of the paragraph that answers the question; if several parts of it answer it, "
        "select each. Some questions have no answer in the paragraph: then answer that there is none "
        "rather than guessing.",
    ),
}
SQUAD_NEW = {
    "description": "Each item is a paragraph from Wikipedia and a question about it. Mark the part of the paragraph that answers the question, or say that the paragraph does not answer it.",
    "instructions": 'Select the part of the paragraph that answers the question. An answer is often accepted in several wordings, a shorter and a longer one (e.g. "1794 and 1802" and "between 1794 and 1802"): for full credit, select each wording (selections may overlap), and each answer if there are several. Some questions have no answer in the paragraph: then answer that there is none rather than guessing.',
}


def install(apps, schema_editor):
    Task = apps.get_model("tasks_app", "Task")
    for task in Task.objects.filter(slug__in=GERMAN):
        translations = task.translations if isinstance(task.translations, dict) else {}
        if not translations.get("de"):
            task.translations = {**translations, "de": GERMAN[task.slug]}
        if task.slug == "squad2":
            for name, old in SQUAD_OLD.items():
                if getattr(task, name) in old:
                    setattr(task, name, SQUAD_NEW[name])
        task.save()


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_app", "0009_task_segment_titles"),
    ]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
