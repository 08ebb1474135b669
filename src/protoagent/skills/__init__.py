"""Skills: SKILL.md bundles discovered, validated, disclosed in three tiers, resolved and activated."""

from protoagent.skills.activation import Activation, activate, assigned_bundles, mentioned_skills
from protoagent.skills.catalog import Catalog, build_catalog, catalog_cap
from protoagent.skills.discovery import discover_skills, load_skills
from protoagent.skills.index import SkillIndex
from protoagent.skills.model import Diagnostic, SkillBundle
from protoagent.skills.resolver import Decision, resolve_skill
from protoagent.skills.runtime import SkillRuntime

__all__ = [
    "Activation",
    "Catalog",
    "Decision",
    "Diagnostic",
    "SkillBundle",
    "SkillIndex",
    "SkillRuntime",
    "activate",
    "assigned_bundles",
    "build_catalog",
    "catalog_cap",
    "discover_skills",
    "load_skills",
    "mentioned_skills",
    "resolve_skill",
]
