import os

from django.core.asgi import get_asgi_application

# As annotation.wsgi: production settings unless DJANGO_SETTINGS_MODULE says otherwise.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.production")
application = get_asgi_application()
