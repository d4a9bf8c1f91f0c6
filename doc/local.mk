# ---- documentation: manual pages and the recipe reference (issue 21) -----------
# doc/matrix.1, doc/matrix-engine.1 and doc/matrix-recipe.5 are written by
# hand and checked against 'matrix help CMD', 'matrix-engine --help' and the
# recipe loader by tests/doc/manpages.sh; doc/recipe.md says what
# matrix-recipe.5 says, with more examples.
dist_man_MANS = doc/matrix.1 doc/matrix-engine.1 doc/matrix-recipe.5
dist_doc_DATA = doc/recipe.md
TESTS += tests/doc/manpages.sh
EXTRA_DIST += tests/doc/manpages.sh tests/doc/check_docs.py
