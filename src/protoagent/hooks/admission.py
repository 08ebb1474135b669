"""``ContextAdmissionHook``: fits every request into the context window before it is sent."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from protoagent.context.admission import LOW_WATER, AdmissionReport, admission_window, admit_request
from protoagent.context.compaction import Compactor
from protoagent.context.record_view import RecordView, advance_view
from protoagent.context.tokens import EstimatingCounter, TokenCounter, counter_for
from protoagent.events.types import Event
from protoagent.hooks.order import HookOwner
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.profile import PromptProfile
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig
from protoagent.models.types import ModelRequest

ADMISSION_OWNER: HookOwner = "context-admission"

TaskRecordSource = Callable[[frozenset[str]], str | None]
"""Returns the current compact TaskRecord text as shown to an agent that declares these tools
(a line about a tool only the lead has never reaches a worker), or ``None`` when there is none yet."""


class ContextAdmissionHook:
    """Evicts old observations so the request fits; shows the task record once and appends its
    updates (the prefix stays byte-stable); fails loudly.

    ``window`` is the provider's known context window; ``None`` means unknown, which caps
    small profiles at 8192 tokens and leaves other profiles uncapped (the record is still
    inserted). Raises ``ContextOverflow`` when the mandatory input cannot fit; ``compactor``
    is what the agent loop then uses to replace the oldest turns by a summary.
    ``last_report`` keeps what the latest request went through.
    """

    def __init__(
        self,
        *,
        window: int | None = None,
        profile: PromptProfile = "standard",
        counter: TokenCounter | None = None,
        task_record: TaskRecordSource | None = None,
        low_water: float = LOW_WATER,
        summarizer: ModelProvider | None = None,
    ) -> None:
        self.window = admission_window(window, profile)
        self.counter: TokenCounter = counter if counter is not None else EstimatingCounter()
        self.compactor = Compactor(self.counter, self.window, summarizer if profile != "small" else None)
        """Makes room when the mandatory part does not fit: the small profile summarizes without a
        model call, others with ``summarizer`` (falling back to the deterministic digest)."""
        self.task_record = task_record
        self.low_water = low_water
        self.last_report: AdmissionReport | None = None
        self._boundaries: dict[str, tuple[str, int]] = {}
        """Per agent: the conversation's first message and its eviction boundary."""
        self._views: dict[str, RecordView] = {}
        """Per agent: what its conversation has been shown of the task record (append-only)."""

    @classmethod
    def for_provider(
        cls,
        provider: object,
        config: ModelConfig,
        profile: PromptProfile,
        task_record: TaskRecordSource | None = None,
    ) -> ContextAdmissionHook:
        """Count with the provider's tokenizer when it has one; use the configured window; the
        provider writes compaction summaries (unless the profile is small)."""
        summarizer = provider if isinstance(provider, ModelProvider) else None
        return cls(
            window=config.context_window,
            profile=profile,
            counter=counter_for(provider),
            task_record=task_record,
            summarizer=summarizer,
        )

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        agent = request.agent_role
        declared = frozenset(t.name for t in request.tools)
        record = self.task_record(declared) if self.task_record is not None else None
        anchor = request.messages[0].content if request.messages else ""
        known_anchor, boundary = self._boundaries.get(agent, (anchor, 0))
        if known_anchor != anchor or boundary > len(request.messages):
            boundary = 0  # A different conversation under the same role (a new assignment): start afresh.
        view = advance_view(self._views.get(agent), request.messages, record) if record is not None else None
        admitted, report = self._admit(request, view, boundary)
        if view is not None and view.updates and report.boundary > boundary:
            # This eviction changes the prefix anyway: show the current record whole again.
            view = view.consolidated(view.shown)
            admitted, report = self._admit(request, view, boundary)
        if view is not None:
            self._views[agent] = view
        self._boundaries[agent] = (anchor, report.boundary)
        self.last_report = report
        return admitted

    def _admit(
        self, request: ModelRequest, view: RecordView | None, boundary: int
    ) -> tuple[ModelRequest, AdmissionReport]:
        return admit_request(
            request,
            window=self.window,
            counter=self.counter,
            task_record=view.base if view is not None else None,
            record_updates=view.updates if view is not None else (),
            boundary=boundary,
            low_water=self.low_water,
        )

    def registration(self) -> HookRegistration:
        return HookRegistration(ADMISSION_OWNER, self)
