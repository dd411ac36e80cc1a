"""Accounts and who may do what: users, sessions, API tokens, PINs; the one access
decision every route names; the records behind Idempotency-Key."""
