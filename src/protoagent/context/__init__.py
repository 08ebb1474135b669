"""Context for model requests: token estimates, admission (eviction) and projection of old results."""

from protoagent.context.admission import (
    SMALL_PROFILE_WINDOW,
    AdmissionReport,
    admission_window,
    admit_request,
)
from protoagent.context.projection import ProjectionSettings, project_request, receipt
from protoagent.context.tokens import (
    EstimatingCounter,
    ProviderCounter,
    RequestEstimate,
    TokenCounter,
    common_prefix_ratio,
    counter_for,
    estimate_request,
    render_prompt,
)

__all__ = [
    "SMALL_PROFILE_WINDOW",
    "AdmissionReport",
    "EstimatingCounter",
    "ProjectionSettings",
    "ProviderCounter",
    "RequestEstimate",
    "TokenCounter",
    "admission_window",
    "admit_request",
    "common_prefix_ratio",
    "counter_for",
    "estimate_request",
    "project_request",
    "receipt",
    "render_prompt",
]
