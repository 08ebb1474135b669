"""``protoagent acp``: serve the Agent Client Protocol on stdin/stdout until the editor leaves."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import TYPE_CHECKING, cast

from protoagent.tools.approvals import Policy

if TYPE_CHECKING:
    from acp.interfaces import Agent


def serve_acp(model: str, approval: Policy) -> int:
    """Run the ACP agent over stdio. Stdout carries only protocol messages; logs go to stderr."""
    from acp import run_agent

    from protoagent.api import become_subreaper, data_home, open_store, stop_descendants
    from protoagent.interfaces.acp.agent import AcpConfig, ProtoAgentAcp
    from protoagent.settings import OPTIONAL_AGENTS, agent_enabled

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    home = data_home()
    with open_store() as store:
        agents = {name: agent_enabled(home, name) for name in OPTIONAL_AGENTS}
        agent = ProtoAgentAcp(AcpConfig(model, approval, store, home, agents))
        become_subreaper()  # commands that leave their process group are still stopped at the end
        try:
            # The package routes only the methods an agent defines; the rest answer 'method not found'.
            asyncio.run(run_agent(cast("Agent", agent)))
        except KeyboardInterrupt:
            return 130
        finally:
            stop_descendants()
    return 0
