from rest_framework.routers import SimpleRouter

from prd.api import views
from prd.sessions.api import views as session_views

router = SimpleRouter(trailing_slash=True)
router.register("prd/executions", views.PRDExecutionViewSet, basename="prd-execution")
router.register("thinking-chains", views.ThinkingChainViewSet, basename="thinking-chain")
router.register("sessions", session_views.SessionViewSet, basename="session")
router.register("cards", session_views.CardViewSet, basename="card")

urlpatterns = router.urls
