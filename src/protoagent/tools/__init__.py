"""Tools and the one pipeline every call goes through.

A ``Tool[Input, State]`` (``tools.base``) validates its pydantic input, ``prepare`` builds the
preview the approver sees and a ``Prepared[State]`` that ``execute`` runs from, typed end to end.
Calls see their session through ``ToolContext``; what the session shares with its tools and
agents is ``RunServices`` (``tools.services``): one frozen value with a typed, optional field per
service (process and preview registries, the log, check plan, interpreter, sandbox, skills, MCP
broker, task board, workers, compactor), provided by the run and the session, never looked up by
a string key. ``ToolPipeline`` (``tools.pipeline``) runs a call: arguments, pre-execute hooks,
guards, approval, execute, post-execute, one ``tool.ended`` receipt.
"""
