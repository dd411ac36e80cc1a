"""The campaign's history and who hears of it: the append-only history, the event feed
bots read, webhooks and the worker that delivers them."""
