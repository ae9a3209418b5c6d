"""What the tests share: where their files are, how real peers are built, how wiretap is run."""
