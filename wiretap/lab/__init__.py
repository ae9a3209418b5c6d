"""The lab: probe servers and agents whose tools and skills are the conditions of an investigation."""
