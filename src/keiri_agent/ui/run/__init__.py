"""The 実行 page (seed 002 §3, §8.2, §9.3), one module per idea: ``page`` (the page: choose,
fill in, run, see the outcome, reopen a past run), ``plan_choice`` (which plans it offers and
the bundled examples' sample data), ``inputs`` (the ``ui.interactive_input`` nodes a person
answers and the answers handed to the runner), ``plan_vars`` (the plan's 設定値), ``live`` (a
run followed while it lasts), ``shown_run`` (what the page keeps of a run), ``digest`` (a run's
log read once, in bounded memory), ``results`` (result tables and the run's outputs), ``files``
(reports and downloads) and ``history`` (the plan's past runs).

Importing this package imports none of them (the navigation imports ``page`` when the page is
first shown).
"""
