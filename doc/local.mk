# ---- documentation: manual pages and the recipe reference (issue 21) -----------
# doc/matrix.1, doc/matrix-engine.1 and doc/matrix-recipe.5 are written by
# hand and checked against 'matrix help CMD', 'matrix-engine --help' and the
# recipe loader by tests/doc/manpages.sh; doc/recipe.md says what
# matrix-recipe.5 says, with more examples.
dist_man_MANS = doc/matrix.1 doc/matrix-engine.1 doc/matrix-recipe.5
dist_doc_DATA = doc/recipe.md
TESTS += tests/doc/manpages.sh tests/doc/doc_recipes.sh
EXTRA_DIST += tests/doc/manpages.sh tests/doc/check_docs.py tests/doc/doc_recipes.sh

# ---- the release tarball: the README's commands in an unpacked `make dist`
# (minutes: not part of make check; .ci/run does not run it either)
EXTRA_DIST += tests/dist/readme.sh tests/dist/files.sh
TESTS += tests/dist/files.sh
dist-readme-check: dist
	top_builddir='$(abs_top_builddir)' $(SHELL) $(srcdir)/tests/dist/readme.sh '$(abs_top_builddir)/$(PACKAGE)-$(VERSION).tar.gz'
.PHONY: dist-readme-check

# ---- bash completion: share/bash-completion/completions/matrix and, the same
# file, matrix-engine (bash-completion loads a command's file by its name)
bashcompdir = $(datadir)/bash-completion/completions
dist_bashcomp_DATA = contrib/bash-completion/matrix
install-data-hook: install-bashcomp-engine
install-bashcomp-engine:
	$(INSTALL_DATA) $(srcdir)/contrib/bash-completion/matrix '$(DESTDIR)$(bashcompdir)/matrix-engine'
uninstall-hook:
	rm -f '$(DESTDIR)$(bashcompdir)/matrix-engine'
.PHONY: install-bashcomp-engine

# ---- zsh completion: share/zsh/site-functions/_matrix (#compdef matrix
# matrix-engine), a directory on zsh's $fpath for the prefixes /usr/local and /usr
zshcompdir = $(datadir)/zsh/site-functions
dist_zshcomp_DATA = contrib/zsh-completion/_matrix
