"""The strict plan validator: the checker's walk over a plan and its rules."""
