/* profiles.h - the per-op profiles of a run (recipe 'profile: on'): each
 * point's DIR/profiles/ID.csv (engine/profile.h's columns) as two report
 * tables (report_profiles.c); a merged directory's from each run's copy
 * runs/N/profiles/, for the points the merged study has. Above model.h and
 * rtable.h. */
#ifndef MATRIX_REPORT_PROFILES_H
#define MATRIX_REPORT_PROFILES_H

#include "model.h"
#include "rtable.h"

/* The profiled points, in plan order: at most PROFILES_TOP ops each by
 * total time ("profile_top"), and the ops side by side over the first
 * PROFILES_SIDE points ("profile_side": each op's share of the step in each
 * point, the PROFILES_SIDE_OPS ops with the largest share anywhere). *top and
 * *side are NULL when the run has no profile. */
#define PROFILES_TOP 5
#define PROFILES_SIDE 8
#define PROFILES_SIDE_OPS 12
void profiles_tables(const struct run *run, struct rtable **top, struct rtable **side);

#endif
