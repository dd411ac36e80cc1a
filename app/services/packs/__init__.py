"""Rule packs: attaching them to a campaign, the rulebook a campaign plays with (the core
with its packs applied), pack thresholds fired outside a battle, and what a campaign's packs
count in a battle, in words for the wizard (``pack_watch``), and the example packs shipped
with the tracker (``examples``)."""
