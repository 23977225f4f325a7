"""入金消込: bank deposits matched to open invoices, as ``table.match_payments`` does it.

One idea per module:

- :mod:`.model`: customers, invoices (their balance falls as lines apply), bank lines, outcomes;
- :mod:`.tables`: the 請求一覧, the deposits, the customer master and learned names read by
  their Japanese headers, every unreadable cell located;
- :mod:`.directory`: the customers a payer may be (code, learned name, name index);
- :mod:`.book`: the open invoices by customer, balance and number;
- :mod:`.identify`: who paid, or the candidates and why nobody can tell;
- :mod:`.search` and :mod:`.amounts`: which invoices a transfer pays (bounded subset search,
  smallest set and oldest due dates first, fees, partial and over payments);
- :mod:`.allocation`: a transfer applied to a set of invoices;
- :mod:`.confirm`: the questions asked about 要確認 lines and the answers read back;
- :mod:`.matcher`: every line of a run, in order;
- :mod:`.results`: the output tables and the summary;
- :mod:`.learned`: the learned payer names kept between runs.
"""
