"""``wiretap scrub``: making a recording safe to share."""
