from wiretap.cli import main

main()
