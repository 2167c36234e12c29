import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

# A server started without DJANGO_SETTINGS_MODULE runs hardened or refuses to start (DEBUG on, no SECRET_KEY).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.production")
application = get_wsgi_application()

# Load the URLconf, and with it every view, now instead of on the first request; then take everything
# loaded so far out of the garbage collector's reach: it lives as long as the process, and each
# whole-heap collection would walk it again (tens of milliseconds with every thread stopped).
_ = get_resolver().url_patterns  # the access is what imports the URLconf
gc.freeze()
