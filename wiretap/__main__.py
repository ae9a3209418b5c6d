from wiretap.entry import main

main()
