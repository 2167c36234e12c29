"""The six CLUES tasks' worker-facing texts in German, in ``Task.translations`` form (tasks_app.texts).

``install_clues_tasks`` gives a task these texts where it has no German entry yet; the data migration
``0010_clues_german_texts`` installed a frozen copy of them. Label *names* stay the data contract: a label's
``name`` here is only the word the worker reads on its badge.
"""

from __future__ import annotations

_NER_QUESTION_TYPES = {"PER": "Personen", "ORG": "Organisationen", "LOC": "Orte"}
_NER_QUESTIONS = {
    "PER": "Markieren Sie alle Namen von Personen im Text",
    "ORG": "Markieren Sie alle Namen von Organisationen im Text",
    "LOC": "Markieren Sie alle Namen von Orten im Text",
}

GERMAN: dict[str, dict] = {
    "sst2": {
        "worker_title": "Stimmung in Filmkritiken",
        "worker_question": "Ist der Text positiv oder negativ?",
        "description": (
            "Jede Aufgabe ist ein kurzes Stück einer Filmkritik (auf Englisch): manchmal ein ganzer Satz, oft nur "
            "ein paar Wörter. Entscheiden Sie, ob der Verfasser den Film positiv oder negativ sieht."
        ),
        "instructions": (
            "Lesen Sie den Text und wählen Sie die Stimmung, die er ausdrückt. Auch Bruchstücke zählen: "
            "beurteilen Sie die Wörter, die Sie sehen."
        ),
        "labels": {
            "positive": {
                "name": "positiv",
                "definition": "Der Text lobt den Film oder drückt Freude an ihm aus.",
                "example": "eine warmherzige, witzige Geschichte, die mich noch tagelang begleitet hat",
            },
            "negative": {
                "name": "negativ",
                "definition": "Der Text kritisiert den Film oder drückt Enttäuschung aus.",
                "example": "zwei Stunden abgestandene Witze und hölzernes Schauspiel",
            },
        },
    },
    "mnli": {
        "worker_title": "Wie hängen zwei Sätze zusammen?",
        # The two sentences' headings, as the description and the help name them (not "Satz 1 / Satz 2").
        "segment_titles": ["Prämisse", "Hypothese"],
        "worker_question": "Wie hängen diese beiden Sätze zusammen?",
        "description": (
            "Jede Aufgabe ist ein Satzpaar (auf Englisch): eine Prämisse und eine Hypothese. Entscheiden Sie, ob "
            "die Prämisse die Hypothese wahr macht (folgt daraus), sie falsch macht (Widerspruch) oder keines "
            "von beiden (weder noch)."
        ),
        "instructions": (
            "Nehmen Sie an, die Prämisse sei wahr. Fragen Sie dann: Muss die Hypothese wahr sein, muss sie "
            "falsch sein, oder ist beides möglich?"
        ),
        "labels": {
            "entailment": {
                "name": "folgt daraus",
                "definition": "Wenn die Prämisse wahr ist, muss auch die Hypothese wahr sein.",
                "example": (
                    "Prämisse: Der Laden schließt jeden Abend um sechs. Hypothese: Um Mitternacht ist der Laden "
                    "nicht geöffnet."
                ),
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
        "description": (
            "Jede Aufgabe ist ein Satz aus einer Nachrichtenmeldung (auf Englisch) und eine Frage nach einer Art "
            "von Namen: Personen, Organisationen oder Orte. Markieren Sie jeden Namen dieser Art im Satz."
        ),
        "instructions": (
            "Markieren Sie jeden passenden Namen als Abschnitt des Satzes; ein Name kann mehrmals vorkommen. "
            "Gibt es keinen, antworten Sie, dass es keinen gibt."
        ),
        "question_types": dict(_NER_QUESTION_TYPES),
        "questions": dict(_NER_QUESTIONS),
    },
    "wikiann": {
        "worker_title": "Namen in kurzen Texten finden",
        "description": (
            "Jede Aufgabe ist ein kurzes Stück einer Wikipedia-Seite (auf Englisch) und eine Frage nach einer Art "
            "von Namen: Personen, Organisationen oder Orte. Markieren Sie jeden Namen dieser Art im Text."
        ),
        "instructions": (
            "Markieren Sie jeden passenden Namen als Abschnitt; nehmen Sie den ganzen Namen (etwa den vollen "
            "Namen eines Teams oder Albums). Gibt es keinen, antworten Sie, dass es keinen gibt."
        ),
        "question_types": dict(_NER_QUESTION_TYPES),
        "questions": dict(_NER_QUESTIONS),
    },
    "squad2": {
        "worker_title": "Fragen zu einem Absatz beantworten",
        "description": (
            "Jede Aufgabe ist ein Absatz aus Wikipedia (auf Englisch) und eine Frage dazu. Markieren Sie den Teil "
            "des Absatzes, der die Frage beantwortet, oder sagen Sie, dass der Absatz sie nicht beantwortet."
        ),
        "instructions": (
            "Markieren Sie den Teil des Absatzes, der die Frage beantwortet. Eine Antwort gilt oft in mehreren "
            "Fassungen, einer kürzeren und einer längeren (etwa „1794 and 1802“ und „between 1794 and 1802“): "
            "für die volle Punktzahl markieren Sie jede Fassung (Markierungen dürfen sich überlappen), und jede "
            "Antwort, wenn es mehrere gibt. Manche Fragen haben im Absatz keine Antwort: dann antworten Sie, "
            "dass es keine gibt, statt zu raten."
        ),
    },
    "record": {
        "worker_title": "Den fehlenden Namen einsetzen",
        "description": (
            "Jede Aufgabe ist ein Nachrichtenartikel (auf Englisch) mit seinen Kernpunkten und ein Satz, in dem "
            "ein Name durch @placeholder ersetzt wurde. Finden Sie im Artikel den Namen, der an die Stelle von "
            "@placeholder gehört."
        ),
        "instructions": (
            "Markieren Sie eine Erwähnung der Person, des Ortes oder der Sache im Artikel, die @placeholder ausfüllt."
        ),
    },
}
