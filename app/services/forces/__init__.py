"""Crusade forces and their cards: the Order of Battle, entering units by hand, buying
Requisitions, a card's battles, the force pages' views, and the boundary between rows and
rule values (``convert``)."""
