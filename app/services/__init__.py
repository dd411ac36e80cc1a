# The totals hook (standings, progress chart, card battle lists) is registered with every
# Session as soon as any service is imported, so no change to a card can skip it.
from app.services.campaigns import kept_totals as kept_totals
