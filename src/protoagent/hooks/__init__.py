"""Before-model hooks: each reshapes a request just before the provider sees it, or stops it.

``HookPipeline`` runs the mounted hooks in the one order ``hooks.order.HOOK_ORDER`` lists, each
under its one semantic owner: the phase offer, skills, projection, workspace instructions and the
compact protocol shape the request, admission fits it into the window, durable skills come back
after it, and the workflow's yields run last. A yield raises ``YieldControl`` with a typed signal
(``workflow.signals``); the agent loop ends the turn with it instead of calling the model.
"""
