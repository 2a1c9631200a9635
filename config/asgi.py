"""ASGI entry point: HTTP through Django, websockets through the follower's routing.

HTTP requests run at most ``HTTP_CONCURRENCY`` at once per process (``config.concurrency``);
the follower's websockets are not bounded.

What the process imported and built until here (Django, the apps, the URL patterns: most of
its objects, and none of them garbage) is moved out of the garbage collector's view
(``gc.freeze``), so its full collections, which stop the event loop and with it the follower's
hub, walk only what the process made since: 12–60 ms instead of 58–88 ms in a Daphne process
serving 200 tabs (docs/design.md, "The server process's garbage collection").

The follower's websocket accepts only the site's own pages (``follower.origin``: scheme, host
and port), whatever ``ALLOWED_HOSTS`` is.
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from config.body_limit import BodyLimitMiddleware  # noqa: E402
from config.concurrency import ConcurrencyLimitMiddleware  # noqa: E402
from follower.origin import SiteOriginValidator  # noqa: E402
from follower.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodyLimitMiddleware(
            ConcurrencyLimitMiddleware(django_asgi_app, limit=settings.HTTP_CONCURRENCY),
            limit=lambda: settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        ),
        "websocket": SiteOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
gc.collect()
gc.freeze()
