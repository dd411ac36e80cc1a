"""What every JSON API route passes through but none owns: the access rule table, operation
ids, the documented responses, keyset paging, Idempotency-Key, token rate limits, the
Order of Battle body cache."""
