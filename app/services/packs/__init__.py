"""Rule packs: attaching them to a campaign, the rulebook a campaign plays with (the core
with its packs applied), and pack thresholds fired outside a battle."""
