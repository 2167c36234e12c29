"""The team's permissions and roles: the vocabulary below the models (docs/team.md).

``STUDY_PERMISSIONS`` is what ``Study.Meta.permissions`` declares (app label ``annotation``); the three roles
are Django groups holding some of them and some of the admin's model permissions. Which operation needs which
permission is annotation.services.roles. It sits this low because migrations 0037 and 0039 create the groups
from it (``migrate_groups``).
"""

from __future__ import annotations

from typing import Any

WATCH_DASHBOARD = "watch_dashboard"
PREVIEW_STUDY = "preview_study"
CONFIGURE_STUDY = "configure_study"
REHEARSE_STUDY = "rehearse_study"
EXPORT_RESULTS = "export_results"
EXPORT_IDENTIFIERS = "export_identifiers"
PAY_PARTICIPANTS = "pay_participants"
WITHDRAW_PARTICIPANTS = "withdraw_participants"
OVERRIDE_VERDICTS = "override_verdicts"
MESSAGE_PARTICIPANTS = "message_participants"
VIEW_AUDIT = "view_auditentry"  # the audit trail model's own view permission: the admin checks it too

# (codename, name): the admin's user and group pages show the name.
STUDY_PERMISSIONS: tuple[tuple[str, str], ...] = (
    (WATCH_DASHBOARD, "Watch the dashboards (progress, tables, plots, statements)"),
    (PREVIEW_STUDY, "Preview a study as a worker"),
    (CONFIGURE_STUDY, "Configure studies: create, edit, open, pause, close; Prolific places and group"),
    (REHEARSE_STUDY, "Rehearse a study"),
    (EXPORT_RESULTS, "Export results that hold no participant identifier"),
    (EXPORT_IDENTIFIERS, "Export or list data that hold participants' identifiers"),
    (PAY_PARTICIPANTS, "Pay participants: approve submissions, bonuses, mark payments"),
    (WITHDRAW_PARTICIPANTS, "Withdraw a participant (erase their data)"),
    (OVERRIDE_VERDICTS, "Override rules: readmit, exclude, block workers, open despite launch blockers"),
    (MESSAGE_PARTICIPANTS, "Message participants through Prolific"),
)

# --- The three roles: Django groups, made by migrations 0037 and 0039 and kept current by ``ensure_admin --role`` ---

PI, RESEARCHER, ASSISTANT = "pi", "researcher", "assistant"
GROUP_NAMES = {PI: "principal investigator", RESEARCHER: "researcher", ASSISTANT: "assistant"}

VIEW: tuple[str, ...] = ("view",)
ALL: tuple[str, ...] = ("add", "change", "delete", "view")
_TASKS_VIEW: dict[str, tuple[str, ...]] = {
    m: VIEW for m in ("task", "label", "example", "trainingsplit", "exampleset", "examplesetitem")
}
# The admin's model permissions of each role besides its own (app label -> model -> actions); the PI holds
# every permission of both apps, whatever models are added later.
_WATCHED: dict[str, tuple[str, ...]] = {
    "study": VIEW,
    "condition": VIEW,
    "attentioncheck": VIEW,
    "modelrun": VIEW,
    "rehearsaljob": VIEW,
}
MODEL_PERMISSIONS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    ASSISTANT: {"annotation": {**_WATCHED, "exportjob": VIEW}, "tasks_app": _TASKS_VIEW},
    RESEARCHER: {
        "annotation": {
            **{m: VIEW for m in _WATCHED},
            "study": ("add", "change", "view"),  # deleting a study with its data is the PI's
            "condition": ALL,
            "attentioncheck": ALL,
            "modelrun": ("add", "change", "view"),
            "exportjob": ("add", "view"),
            **{
                m: VIEW
                for m in (
                    "worker",
                    "participation",
                    "participationevent",
                    "filterdecision",
                    "surveyresponse",
                    "attentiondecision",
                    "integritydecision",
                    "launchoverride",
                    "withdrawal",
                    "prolificaction",
                    "prolificcall",
                    "prolificgroup",
                    "prolificevent",
                    "prolificjob",
                    "prolificsubscription",
                )
            },
        },
        "tasks_app": _TASKS_VIEW,
    },
}
OWN_PERMISSIONS: dict[str, tuple[str, ...]] = {
    ASSISTANT: (WATCH_DASHBOARD, PREVIEW_STUDY, EXPORT_RESULTS),
    RESEARCHER: (WATCH_DASHBOARD, PREVIEW_STUDY, EXPORT_RESULTS, CONFIGURE_STUDY, REHEARSE_STUDY, EXPORT_IDENTIFIERS),
    PI: tuple(codename for codename, _ in STUDY_PERMISSIONS),
}
PI_APPS = ("annotation", "tasks_app")


def role_permissions(role: str) -> set[tuple[str, str]]:
    """(app label, codename) of every permission a role's group holds, except the PI's whole apps."""
    wanted = {("annotation", codename) for codename in OWN_PERMISSIONS[role]}
    for app_label, models in MODEL_PERMISSIONS.get(role, {}).items():
        wanted |= {(app_label, f"{action}_{model}") for model, actions in models.items() for action in actions}
    return wanted


def sync_groups(apps: Any) -> None:
    """Create the three groups, or set their permissions to what this module says.

    ``apps``: an app registry (the migration's historical one, or django.apps.apps); the permissions must exist.
    """
    group_model, permission_model = apps.get_model("auth", "Group"), apps.get_model("auth", "Permission")
    for role, name in GROUP_NAMES.items():
        group, _ = group_model.objects.get_or_create(name=name)
        if role == PI:
            permissions = permission_model.objects.filter(content_type__app_label__in=PI_APPS)
        else:
            wanted = role_permissions(role)
            permissions = [
                p
                for p in permission_model.objects.filter(
                    content_type__app_label__in={a for a, _ in wanted}
                ).select_related("content_type")
                if (p.content_type.app_label, p.codename) in wanted
            ]
            found = {(p.content_type.app_label, p.codename) for p in permissions}
            if found != wanted:  # a model renamed or removed: say so rather than give a role less than it says
                raise LookupError(f"role {role}: no such permission(s) {sorted(wanted - found)}")
        group.permissions.set(permissions)


def migrate_groups(apps: Any, schema_editor: Any = None) -> None:
    """A migration's RunPython (0037, 0039): the permissions of every app, then ``sync_groups``.

    Django creates permissions after the last migration (post_migrate); the groups need them now, so they are
    created here first, with the same call (idempotent). The historical registry's app configs have no models
    module, which ``create_permissions`` takes for an app without models: one is pretended for the call.
    """
    from django.contrib.auth.management import create_permissions  # not at import: the models import this module

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    sync_groups(apps)
