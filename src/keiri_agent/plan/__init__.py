"""Plan DSL: models, loader, expressions, validator, dry-run, runner."""
