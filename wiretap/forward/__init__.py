"""Forward mode: wiretap as the client's HTTP(S) proxy, intercepting the hosts it is told to."""
