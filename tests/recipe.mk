# ---- recipe loader and factor vocabulary tests
# test_recipe loads tests/recipes/good/* field by field and checks that every
# tests/recipes/bad/*.yaml prints exactly its .err file; recipe_errors.sh feeds
# the same bad recipes to `matrix expand`.
check_PROGRAMS += tests/unit/plan/test_recipe
tests_unit_plan_test_recipe_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
TESTS += tests/unit/plan/test_recipe tests/e2e/recipe_errors.sh
EXTRA_DIST += \
	tests/e2e/recipe_errors.sh \
	tests/recipes/bad/alias_bomb.err \
	tests/recipes/bad/alias_bomb.yaml \
	tests/recipes/bad/alias_loop.err \
	tests/recipes/bad/alias_loop.yaml \
	tests/recipes/bad/all_excluded.err \
	tests/recipes/bad/all_excluded.yaml \
	tests/recipes/bad/all_excluded_large.err \
	tests/recipes/bad/all_excluded_large.yaml \
	tests/recipes/bad/bad_duration.err \
	tests/recipes/bad/bad_duration.yaml \
	tests/recipes/bad/bad_names.err \
	tests/recipes/bad/bad_names.yaml \
	tests/recipes/bad/binary.err \
	tests/recipes/bad/binary.yaml \
	tests/recipes/bad/command_missing.err \
	tests/recipes/bad/command_missing.yaml \
	tests/recipes/bad/command_not_command_engine.err \
	tests/recipes/bad/command_not_command_engine.yaml \
	tests/recipes/bad/command_placeholder.err \
	tests/recipes/bad/command_placeholder.yaml \
	tests/recipes/bad/command_wrong_type.err \
	tests/recipes/bad/command_wrong_type.yaml \
	tests/recipes/bad/comments_only.err \
	tests/recipes/bad/comments_only.yaml \
	tests/recipes/bad/container_unknown_level.err \
	tests/recipes/bad/container_unknown_level.yaml \
	tests/recipes/bad/container_without_containers.err \
	tests/recipes/bad/container_without_containers.yaml \
	tests/recipes/bad/containers_errors.err \
	tests/recipes/bad/containers_errors.yaml \
	tests/recipes/bad/duplicate_key.err \
	tests/recipes/bad/duplicate_key.yaml \
	tests/recipes/bad/duplicate_level.err \
	tests/recipes/bad/duplicate_level.yaml \
	tests/recipes/bad/empty.err \
	tests/recipes/bad/empty.yaml \
	tests/recipes/bad/empty_levels.err \
	tests/recipes/bad/empty_levels.yaml \
	tests/recipes/bad/engine_both.err \
	tests/recipes/bad/engine_both.yaml \
	tests/recipes/bad/exclude_unknown_factor.err \
	tests/recipes/bad/exclude_unknown_factor.yaml \
	tests/recipes/bad/exclude_unknown_level.err \
	tests/recipes/bad/exclude_unknown_level.yaml \
	tests/recipes/bad/factors_sequence.err \
	tests/recipes/bad/factors_sequence.yaml \
	tests/recipes/bad/grid_repeat_overflow.err \
	tests/recipes/bad/grid_repeat_overflow.yaml \
	tests/recipes/bad/invalid_utf8.err \
	tests/recipes/bad/invalid_utf8.yaml \
	tests/recipes/bad/invalid_yaml.err \
	tests/recipes/bad/invalid_yaml.yaml \
	tests/recipes/bad/measure_min_over_max.err \
	tests/recipes/bad/measure_min_over_max.yaml \
	tests/recipes/bad/missing_keys.err \
	tests/recipes/bad/missing_keys.yaml \
	tests/recipes/bad/multiple_documents.err \
	tests/recipes/bad/multiple_documents.yaml \
	tests/recipes/bad/nesting_too_deep.err \
	tests/recipes/bad/nesting_too_deep.yaml \
	tests/recipes/bad/no_cascade.err \
	tests/recipes/bad/no_cascade.yaml \
	tests/recipes/bad/not_a_mapping.err \
	tests/recipes/bad/not_a_mapping.yaml \
	tests/recipes/bad/references.err \
	tests/recipes/bad/references.yaml \
	tests/recipes/bad/repeat_zero.err \
	tests/recipes/bad/repeat_zero.yaml \
	tests/recipes/bad/tab.err \
	tests/recipes/bad/tab.yaml \
	tests/recipes/bad/too_many_errors.err \
	tests/recipes/bad/too_many_errors.yaml \
	tests/recipes/bad/unknown_factor.err \
	tests/recipes/bad/unknown_factor.yaml \
	tests/recipes/bad/unknown_factor_far.err \
	tests/recipes/bad/unknown_factor_far.yaml \
	tests/recipes/bad/unknown_key.err \
	tests/recipes/bad/unknown_key.yaml \
	tests/recipes/bad/unknown_level.err \
	tests/recipes/bad/unknown_level.yaml \
	tests/recipes/bad/wrong_types.err \
	tests/recipes/bad/wrong_types.yaml \
	tests/recipes/good/command.yaml \
	tests/recipes/good/engine_factor.yaml \
	tests/recipes/good/full.yaml \
	tests/recipes/good/minimal.yaml \
	tests/recipes/good/switches.yaml
