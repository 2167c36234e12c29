"""Each protected operation and the permission it needs: the one table the admin, the dashboard, the API and
the background jobs all read (docs/team.md).

The permissions and which role holds which are annotation.protocol.roles. A superuser (the server's
operator) holds every permission; a management command run on the server checks none.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from django.contrib.auth.models import PermissionsMixin

from annotation.errors import ServiceError
from annotation.protocol import roles

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser


class Operation(StrEnum):
    WATCH = "watch"  # the dashboards, the API's reads of studies, conditions and reports without identifiers
    PREVIEW = "preview"  # a staff preview of a study as a worker
    CONFIGURE = "configure"  # create, edit, delete studies, conditions and attention checks
    CHANGE_STATUS = "change_status"  # open, pause, close
    OPEN_DESPITE_BLOCKERS = "open_despite_blockers"  # the launch check's override
    REHEARSE = "rehearse"
    EXPORT_RESULTS = "export_results"  # an export that holds no participant identifier
    EXPORT_IDENTIFIERS = "export_identifiers"  # one that does, and the lists of participations and workers
    PROLIFIC_REVIEW = "prolific_review"  # approve submissions: the reward is paid
    PROLIFIC_BONUS = "prolific_bonus"
    PROLIFIC_GROUP = "prolific_group"  # add the task's participants to its Prolific group
    PROLIFIC_PLACES = "prolific_places"  # places follow the design
    MARK_PAYMENT = "mark_payment"  # the admin's mark paid / not paid of a Prolific action
    WITHDRAW = "withdraw"  # a participant's withdrawal and erasure
    READMIT = "readmit"  # the training filter's override, either way
    EXCLUDE = "exclude"
    BLOCK = "block"  # block or unblock a worker from every study
    MESSAGE = "message"  # write to participants through Prolific (one, bulk, broadcast)
    AUDIT = "audit"  # read and export the audit trail


PERMISSIONS: dict[Operation, str] = {
    Operation.WATCH: roles.WATCH_DASHBOARD,
    Operation.PREVIEW: roles.PREVIEW_STUDY,
    Operation.CONFIGURE: roles.CONFIGURE_STUDY,
    Operation.CHANGE_STATUS: roles.CONFIGURE_STUDY,
    Operation.OPEN_DESPITE_BLOCKERS: roles.OVERRIDE_VERDICTS,
    Operation.REHEARSE: roles.REHEARSE_STUDY,
    Operation.EXPORT_RESULTS: roles.EXPORT_RESULTS,
    Operation.EXPORT_IDENTIFIERS: roles.EXPORT_IDENTIFIERS,
    Operation.PROLIFIC_REVIEW: roles.PAY_PARTICIPANTS,
    Operation.PROLIFIC_BONUS: roles.PAY_PARTICIPANTS,
    Operation.PROLIFIC_GROUP: roles.CONFIGURE_STUDY,
    Operation.PROLIFIC_PLACES: roles.CONFIGURE_STUDY,
    Operation.MARK_PAYMENT: roles.PAY_PARTICIPANTS,
    Operation.WITHDRAW: roles.WITHDRAW_PARTICIPANTS,
    Operation.READMIT: roles.OVERRIDE_VERDICTS,
    Operation.EXCLUDE: roles.OVERRIDE_VERDICTS,
    Operation.BLOCK: roles.OVERRIDE_VERDICTS,
    Operation.MESSAGE: roles.MESSAGE_PARTICIPANTS,
    Operation.AUDIT: roles.VIEW_AUDIT,
}

PROLIFIC: dict[str, Operation] = {  # the Prolific operations (services.prolific.operations.OPERATIONS)
    "review": Operation.PROLIFIC_REVIEW,
    "bonus": Operation.PROLIFIC_BONUS,
    "group": Operation.PROLIFIC_GROUP,
    "places": Operation.PROLIFIC_PLACES,
}

WHAT = {  # for the refusal's sentence: "... may not <what>"
    Operation.WATCH: "watch the dashboards",
    Operation.PREVIEW: "preview studies",
    Operation.CONFIGURE: "configure studies",
    Operation.CHANGE_STATUS: "open, pause or close studies",
    Operation.OPEN_DESPITE_BLOCKERS: "open a study despite the launch check",
    Operation.REHEARSE: "rehearse studies",
    Operation.EXPORT_RESULTS: "export results",
    Operation.EXPORT_IDENTIFIERS: "export or list participants' identifiers",
    Operation.PROLIFIC_REVIEW: "approve submissions (pay rewards)",
    Operation.PROLIFIC_BONUS: "pay bonuses",
    Operation.PROLIFIC_GROUP: "change the Prolific participant group",
    Operation.PROLIFIC_PLACES: "change the Prolific places",
    Operation.MARK_PAYMENT: "mark payments",
    Operation.WITHDRAW: "withdraw participants",
    Operation.READMIT: "readmit participants",
    Operation.EXCLUDE: "exclude participants",
    Operation.BLOCK: "block or unblock workers",
    Operation.MESSAGE: "message participants",
    Operation.AUDIT: "read the audit trail",
}


ARTICLES = {roles.ASSISTANT: "an", roles.RESEARCHER: "a", roles.PI: "a"}


def holders(operation: Operation) -> str:
    """The roles that may do ``operation``, in words: "a researcher or a principal investigator" (the note a
    page shows where a role without the right would have found the control)."""
    needed = ("annotation", PERMISSIONS[operation])
    names = [
        f"{ARTICLES[role]} {roles.GROUP_NAMES[role]}"
        for role in (roles.ASSISTANT, roles.RESEARCHER, roles.PI)
        if role == roles.PI or needed in roles.role_permissions(role)  # the PI holds every permission
    ]
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def permission(operation: Operation) -> str:
    """The permission ``operation`` needs, as ``user.has_perm`` takes it."""
    return f"annotation.{PERMISSIONS[operation]}"


def prolific_operation(name: str) -> Operation:
    """The operation of a Prolific operation's name; an unknown name is refused as the caller would (KeyError)."""
    return PROLIFIC[name]


def may(user: AbstractBaseUser | AnonymousUser | None, operation: Operation) -> bool:
    """Whether ``user`` may do ``operation``: active staff holding its permission (a superuser holds all)."""
    if not isinstance(user, PermissionsMixin) or not user.is_active or not getattr(user, "is_staff", False):
        return False  # anonymous, or not on the team
    return user.has_perm(permission(operation))


class Refused(ServiceError):
    """A background job whose requester lacks the right: it fails with this reason and does nothing."""

    code = "permission_denied"
    status = 403


def check_job(requested_by: AbstractBaseUser | None, operation: Operation) -> None:
    """Called first by a job that a user queued: the requester must still hold the right when it runs.

    ``requested_by`` None: a job queued by an operator's command on the server (unrestricted).
    """
    if requested_by is not None and not may(requested_by, operation):
        name = requested_by.get_username()
        raise Refused(f"{name} may not {WHAT[operation]}: the job was not run")
