from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Studies and annotations"

    def ready(self) -> None:
        from django.conf import settings

        # A rehearsal's processes read the clock the rehearsal moves (annotation/rehearsal/clock.py); only the
        # rehearsal settings define the file, so this never runs in production.
        clock_file = getattr(settings, "REHEARSAL_CLOCK_FILE", "")
        if clock_file:
            from annotation.rehearsal import clock

            clock.install(clock_file)

        # The upward calls of the services, inverted: the slot lifecycle (state) and a study's status changes
        # (studies) tell the Prolific places sync (prolific) of each slot taken or freed and each status
        # change through listeners registered here, as is the freeze of a launched study's analysis plan.
        from annotation.reporting import analysis_plan, warming
        from annotation.services.prolific import places
        from annotation.services.state import lifecycle
        from annotation.services.studies import studies

        lifecycle.on_slot_change(places.on_slot_change)
        studies.on_status_change(places.on_status_change)
        # A study opened for its full launch freezes its analysis plan (reporting owns the analysis).
        studies.on_status_change(analysis_plan.on_status_change)
        # A completed worker's data changed: a Celery worker computes the study page's kept figures again.
        lifecycle.on_finished_change(warming.on_finished_change)
