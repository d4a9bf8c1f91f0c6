# fragment: see Makefile.am
