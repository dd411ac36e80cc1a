"""Rosters from list builders (BattleScribe, New Recruit): reading the file, filling its
sub-faction placeholders, previewing and importing it as Crusade cards."""
