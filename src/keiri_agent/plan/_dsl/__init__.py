"""The Plan DSL: models, loader and source map, references, expressions, issue codes, migration."""
