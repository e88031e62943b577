"""arbor's components: spec -> plan -> providers -> concern components -> layer components (DESIGN.md)."""
