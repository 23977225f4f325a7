"""The compiled graph of a validated plan: dependency edges, order, static scopes."""
