"""Django's template engine, except that a rendered page's context is freed by reference counting.

Each layer of a template ``Context`` (a ``ContextDict``) points back at the
context, so every page rendered with a request left the context, the request
and what the view loaded in a reference cycle that only the garbage
collector could free (57 objects per worker page). After rendering, the
context drops its layers (copies, such as the test client's, keep theirs).
"""

from __future__ import annotations

from django.template import TemplateDoesNotExist
from django.template.backends import django as django_backend
from django.template.context import make_context


class Template(django_backend.Template):
    def render(self, context=None, request=None):
        context = make_context(context, request, autoescape=self.backend.engine.autoescape)
        try:
            return self.template.render(context)
        except TemplateDoesNotExist as exc:
            django_backend.reraise(exc, self.backend)
        finally:
            context.dicts = []


class DjangoTemplates(django_backend.DjangoTemplates):
    def from_string(self, template_code):
        return Template(self.engine.from_string(template_code), self)

    def get_template(self, template_name):
        try:
            return Template(self.engine.get_template(template_name), self)
        except TemplateDoesNotExist as exc:
            django_backend.reraise(exc, self)
