"""The battle flow: muster, the result for both sides (``lifecycle``), confirmation by the
opponent, the decisions a battle leaves, the website wizard's saved drafts, and what a
battle did (gains, the ``battle_recorded`` news)."""
