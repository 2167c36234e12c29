from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Studies and annotations"

    def ready(self) -> None:
        # The one upward call of the services, inverted: the slot lifecycle (state) tells the Prolific
        # places sync (prolific) of each slot taken or freed through a listener registered here.
        from annotation.services.prolific import places
        from annotation.services.state import lifecycle

        lifecycle.on_slot_change(places.on_slot_change)
