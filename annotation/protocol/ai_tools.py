"""The standard instruction to workers about AI tools, in every language the worker pages ship.

A study's own ``ai_instruction`` (with its ``translations``) is what workers read; ``configure_study
--ai-instruction-standard`` fills it with these texts, one per shipped language, so that no worker reads it
in a language other than their pages'. Keys are ``settings.LANGUAGES`` codes.
"""

from __future__ import annotations

DEFAULT_LANGUAGE = "en"
STANDARD: dict[str, str] = {
    "en": "Please answer on your own. Do not use AI assistants (such as ChatGPT), chatbots, translation tools "
    "or search engines for this task: we want to know how people answer.",
    "de": "Bitte antworten Sie selbst. Verwenden Sie für diese Aufgabe keine KI-Assistenten (wie ChatGPT), "
    "Chatbots, Übersetzungsprogramme oder Suchmaschinen: Wir möchten wissen, wie Menschen antworten.",
    "zh-hans": "请独立作答。完成本任务时请勿使用人工智能助手（如 ChatGPT）、聊天机器人、翻译工具或搜索引擎："
    "我们想了解人是如何作答的。",
}
