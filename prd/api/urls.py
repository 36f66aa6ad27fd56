from rest_framework.routers import SimpleRouter

from prd.api import views

router = SimpleRouter(trailing_slash=True)
router.register("prd/executions", views.PRDExecutionViewSet, basename="prd-execution")
router.register("thinking-chains", views.ThinkingChainViewSet, basename="thinking-chain")

urlpatterns = router.urls
