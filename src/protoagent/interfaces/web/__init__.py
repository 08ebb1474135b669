"""The web UI: a FastAPI server with server-sent events and a small dependency-free page.

``protoagent serve`` wires it up; ``create_app`` builds the ASGI app for tests and scripts.
"""
