"""``SkillIndex``: discovered variants and the two projections over them (runtime and management)."""

from __future__ import annotations

from dataclasses import dataclass

from protoagent.skills.model import AppMode, Diagnostic, SkillBundle


@dataclass(frozen=True, slots=True)
class SkillIndex:
    """Every discovered variant in precedence order, and discovery-wide diagnostics."""

    variants: tuple[SkillBundle, ...]
    diagnostics_found: tuple[Diagnostic, ...] = ()

    def runtime(self, mode: AppMode) -> tuple[SkillBundle, ...]:
        """The valid, mode-aware projection every runtime path uses: per name, the first valid
        variant available in ``mode`` (an invalid higher-precedence bundle never replaces it)."""
        winners: dict[str, SkillBundle] = {}
        for bundle in self.variants:
            if bundle.valid and bundle.available_in(mode) and bundle.name not in winners:
                winners[bundle.name] = bundle
        return tuple(sorted(winners.values(), key=lambda b: b.name))

    def management(self, mode: AppMode | None = None) -> tuple[SkillBundle, ...]:
        """The settings projection. Unscoped: the actual precedence winner per name, invalid or not.
        Scoped: the mode's runtime winner, else the invalid winner so it can be repaired."""
        first: dict[str, SkillBundle] = {}
        for bundle in self.variants:
            first.setdefault(bundle.name, bundle)
        if mode is None:
            return tuple(sorted(first.values(), key=lambda b: b.name))
        chosen = {b.name: b for b in self.runtime(mode)}
        for name, bundle in first.items():
            if name not in chosen and not bundle.valid:
                chosen[name] = bundle
        return tuple(sorted(chosen.values(), key=lambda b: b.name))

    def preference_target(self, name: str, mode: AppMode | None = None) -> SkillBundle | None:
        """The variant a preference change for ``name`` applies to. Unscoped: the management
        winner. Scoped: the variant ``mode``'s runtime uses; when none is available there, the
        first valid one (enabling it makes it that runtime's winner), else the invalid winner."""
        named = self.variants_named(name)
        if mode is None or not named:
            return named[0] if named else None
        used = self.find(name, mode)
        return used or next((b for b in named if b.valid), named[0])

    def find(self, name: str, mode: AppMode) -> SkillBundle | None:
        """The runtime winner called exactly ``name`` in ``mode``."""
        return next((b for b in self.runtime(mode) if b.name == name), None)

    def variants_named(self, name: str) -> tuple[SkillBundle, ...]:
        return tuple(b for b in self.variants if b.name == name)

    def implicit(self, mode: AppMode) -> tuple[SkillBundle, ...]:
        """Runtime winners eligible for the catalog and the implicit resolver."""
        return tuple(b for b in self.runtime(mode) if b.implicit)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Discovery diagnostics, each variant's own, and collisions between same-name variants."""
        out = list(self.diagnostics_found)
        winners: dict[str, SkillBundle] = {}
        for bundle in self.variants:
            out.extend(bundle.diagnostics)
            if bundle.name in winners:
                shadow = winners[bundle.name]
                out.append(
                    Diagnostic(
                        str(bundle.directory),
                        f"collision: {bundle.name!r} is also defined at "
                        f"{str(shadow.directory)!r}, which takes precedence",
                    )
                )
            else:
                winners[bundle.name] = bundle
        return tuple(out)
