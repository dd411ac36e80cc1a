"""A campaign as a whole: members and invites, standings and the progress chart (and the
totals kept up to date for them, ``kept_totals``), the map, battle reports and photos,
what waits for a player, catching up, export and import, the demo campaign."""
