"""The coding workflow: task record, run contract, roles, the Graph, evidence.

``workflow.run.run_task`` composes a run: it provides the session's ``RunServices`` (check plan,
interpreter, sandbox, skills, MCP broker; the task board, workers and compactor once the session
exists) and mounts the before-model hooks. The Graph (``workflow.graph``) drives the edit phase:
baseline, the Architect's turns, final verification, at most two repairs. Hooks hand control back
to it with typed signals (``workflow.signals``: ``Verified``, ``FinalCheckFailed``, ``Denied``,
``LeadStuck``, ``WorkerTurnLimit``, ``Reported``), carried in ``TurnOutcome.signal``; after each
Architect turn one ``match`` over the turn's end decides whether work continues, final checks
run, or the phase stops. Evidence is computed from the session log alone.
"""
