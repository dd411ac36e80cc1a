"""Use cases, as packages by domain (docs/architecture.md): accounts, battles, forces,
rosters, campaigns, packs, feed. Importing this package switches nothing on: the totals
kept for standings are installed by name (campaigns.kept_totals.install_kept_totals) where
the process is assembled."""
