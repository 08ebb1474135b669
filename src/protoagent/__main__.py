"""``python -m protoagent`` runs the CLI."""

from protoagent.interfaces.cli.app import main

main()
