"""Context for model requests: token estimates, admission (eviction), compaction (summaries of the
oldest turns), projection of old results, stale reads."""

from protoagent.context.admission import (
    SMALL_PROFILE_WINDOW,
    AdmissionReport,
    ContextOverflow,
    admission_window,
    admit_request,
)
from protoagent.context.compaction import Compactor, plan_compaction, summary_budget
from protoagent.context.projected import recovery_for, render_receipt
from protoagent.context.projection import ProjectionSettings, ProjectionState, project_request, settings_for
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
    "Compactor",
    "ContextOverflow",
    "EstimatingCounter",
    "ProjectionSettings",
    "ProjectionState",
    "ProviderCounter",
    "RequestEstimate",
    "TokenCounter",
    "admission_window",
    "admit_request",
    "common_prefix_ratio",
    "counter_for",
    "estimate_request",
    "plan_compaction",
    "project_request",
    "recovery_for",
    "render_prompt",
    "render_receipt",
    "settings_for",
    "summary_budget",
]
