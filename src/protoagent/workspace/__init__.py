"""The workspace layer: path confinement beneath the root, revisions, exact edits, listing, search.

The tools live in ``protoagent.workspace.tools`` (``WORKSPACE_TOOLS``).
"""
