"""The common messages to participants, in every language the worker pages ship in (settings.LANGUAGES).

Each template is a broadcast's subject and a body. The bodies name no amount, date or person: what is
particular to a study goes into a message written for it (``--text``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    subject: str
    body: str


TEMPLATES: dict[str, dict[str, Template]] = {
    "bonus": {
        "en": Template(
            "A bonus is coming",
            "Thank you for taking part in our study. Your time is paid in full: a bonus on top of the reward "
            "will reach your Prolific account in the next few days. There is nothing you need to do.",
        ),
        "de": Template(
            "Ein Bonus ist unterwegs",
            "Vielen Dank für Ihre Teilnahme an unserer Studie. Ihre Zeit wird vollständig bezahlt: Ein Bonus "
            "zusätzlich zur Vergütung geht in den nächsten Tagen auf Ihrem Prolific-Konto ein. Sie müssen "
            "nichts weiter tun.",
        ),
        "zh-hans": Template(
            "奖金即将发放",
            "感谢您参与我们的研究。您的时间将得到全额报酬：报酬之外的奖金将在几天内到达您的 Prolific 账户。"
            "您无需做任何事。",
        ),
    },
    "paused": {
        "en": Template(
            "The study is paused",
            "We have paused our study for a short while. If you have already started, your place is kept and "
            "you will be paid for the time you spent. We will write again when it opens.",
        ),
        "de": Template(
            "Die Studie ist pausiert",
            "Wir haben unsere Studie für kurze Zeit pausiert. Wenn Sie bereits begonnen haben, bleibt Ihr Platz "
            "erhalten, und die aufgewendete Zeit wird bezahlt. Wir melden uns, sobald sie wieder offen ist.",
        ),
        "zh-hans": Template(
            "研究已暂停",
            "我们已将研究暂停一段时间。如果您已经开始，您的名额会被保留，您所花的时间也会得到报酬。"
            "研究重新开放时我们会再通知您。",
        ),
    },
    "thanks": {
        "en": Template(
            "Thank you",
            "Thank you for taking part in our study. Your answers help measure how well people and models "
            "understand language. If you have a question, reply to this message.",
        ),
        "de": Template(
            "Vielen Dank",
            "Vielen Dank für Ihre Teilnahme an unserer Studie. Ihre Antworten helfen zu messen, wie gut Menschen "
            "und Modelle Sprache verstehen. Wenn Sie eine Frage haben, antworten Sie auf diese Nachricht.",
        ),
        "zh-hans": Template(
            "感谢您",
            "感谢您参与我们的研究。您的回答有助于衡量人与模型理解语言的能力。如有疑问，请回复此消息。",
        ),
    },
}
